"""The fix seam of `device-mismatch`: the moves culprit_origins.py found -> the edits that make them -> a Fix.

`device=` on a factory call, a `names = names.to(device)` line at the top of a loop, `.to(device)` after each
use on the op's line or after the value a model is made from. Pure: the cell's text and the moves' ast nodes
only; the description comes from the card.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence

from ...cell import cell_tree, indent_of, node_span, split_lines
from ...edits import insert_line_before, keyword_added, make_fix
from ...model import CellFix, Fix, TextEdit
from ..kit import appended
from .culprit_origins import Move


def move_edits(source: str, move: Move) -> List[TextEdit]:
    """The edits of one move ("taken" has none: the tensor it is taken from moves)."""
    if move.how in ("factory", "made"):
        return [device_keyword(source, move.nodes[0], move.expr)]
    if move.how == "loop":
        first = move.nodes[0]
        indent = indent_of(split_lines(source)[first.lineno - 1])
        moved = ", ".join(f"{n}.to({move.expr})" for n in move.names)
        return [insert_line_before(source, first.lineno, f"{indent}{', '.join(move.names)} = {moved}")]
    if move.how in ("use", "earlier"):
        return [TextEdit(end, end, f".to({move.expr})") for end in (node_span(source, n)[1] for n in move.nodes)]
    if move.how in ("module", "weight", "comprehension", "operand"):
        return appended(source, move.nodes[0], f".to({move.expr})")
    if move.how == "dict_loop":
        first, name = move.nodes[0], move.names[0]
        indent = indent_of(split_lines(source)[first.lineno - 1])
        line = f"{indent}{name} = {{k: v.to({move.expr}) for k, v in {name}.items()}}"
        return [insert_line_before(source, first.lineno, line)]
    if move.how == "kept":
        start, _ = node_span(source, move.nodes[0])
        return [TextEdit(start, start, f"{move.names[0]} = ")]
    if move.how == "buffer":
        return [e for stmt in move.nodes for e in buffer_edits(source, stmt, move.code)]
    return []


def buffer_edits(source: str, stmt: ast.Assign, attr: str) -> List[TextEdit]:
    """`self.pe = value` -> `self.register_buffer("pe", value)`: the value's text kept as it is."""
    target = stmt.targets[0]
    start, _ = node_span(source, target)
    owner_start, owner_end = node_span(source, target.value)
    value_start, value_end = node_span(source, stmt.value)
    head = f'{source[owner_start:owner_end]}.register_buffer("{attr}", '
    return [TextEdit(start, value_start, head), TextEdit(value_end, value_end, ")")]


def device_keyword(source: str, call: ast.Call, expr: str) -> TextEdit:
    """`device=<expr>` added as the call's last argument."""
    return keyword_added(source, call, f"device={expr}")


def moves_fix(source: str, moves: Sequence[Move], description: str) -> Optional[Fix]:
    """The fixed cell, or None when the moves make no edit or the result would not compile."""
    fix = make_fix(source, _edits(source, moves), description)
    return fix if fix is not None and compiles(fix.source) else None


def compiles(cell: str) -> bool:
    """Whether the fixed cell compiles: parsing alone lets `f(device=a, device=b)` through."""
    tree = cell_tree(cell)
    try:
        compile(tree, "<fix>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError, TypeError):
        return False
    return True


def _edits(source: str, moves: Sequence[Move]) -> List[TextEdit]:
    """Each move's edits, an edit two moves make only once."""
    return list(dict.fromkeys(e for m in moves for e in move_edits(source, m)))


def cells_fix(texts: Dict[str, str], moves: Sequence[Move], running: str, cells: Dict[str, Optional[int]],
              description: str) -> Optional[Fix]:
    """The moves of several cells (by compiled name, `texts` their text as typed): the running cell's fixed
    text, and a fixed copy of each other cell. None when a cell's edits would not parse."""
    fixed = {}
    for name in dict.fromkeys(m.file for m in moves):
        edits = _edits(texts[name], [m for m in moves if m.file == name])
        if not edits:
            continue
        fix = make_fix(texts[name], edits, description)
        if fix is None or not compiles(fix.source):
            return None
        fixed[name] = fix
    if not fixed:
        return None
    here = fixed.pop(running, None)
    others = tuple(CellFix(cells.get(name), "" if cells.get(name) is not None else name, texts[name], f.source,
                           f.edits) for name, f in fixed.items())
    return Fix(description, here.source if here else "", here.edits if here else (), others)
