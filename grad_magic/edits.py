"""Minimal fixes: small text edits on the user's own cell text, checked to still parse.

Find the spot with `ast` positions (cell.py), replace only those characters, leave every other character
alone. Never regenerate source with `ast.unparse`. A fix that does not parse is no fix (None).
"""
from __future__ import annotations

import ast
from typing import Iterable, List, Optional, Sequence

from .cell import body_indent, indent_of, line_offsets, python_of_cell, split_lines
from .model import Fix, TextEdit


def apply_edits(source: str, edits: Iterable[TextEdit]) -> str:
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for a, b in zip(ordered, ordered[1:]):
        assert a.end <= b.start, f"overlapping edits {a} and {b}"
    out, at = [], 0
    for e in ordered:
        out.append(source[at:e.start])
        out.append(e.text)
        at = e.end
    out.append(source[at:])
    return "".join(out)


def parses(cell: str) -> bool:
    try:
        # NB: compiled, not only parsed: `f(device=a, device=b)` parses but does not compile
        compile(python_of_cell(cell), "<fix>", "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def make_fix(source: str, edits: Sequence[TextEdit], description: str) -> Optional[Fix]:
    """The fixed cell, or None when the edits do nothing or the result would not parse."""
    if not edits:
        return None
    fixed = apply_edits(source, edits)
    if fixed == source or not parses(fixed):
        return None
    return Fix(description=description, source=fixed, edits=tuple(edits))


def insert_line_before(cell: str, lineno: int, text: str) -> TextEdit:
    """Insert `text` (one line, no newline) before line `lineno`."""
    at = line_offsets(cell)[lineno - 1]
    return TextEdit(at, at, text + "\n")


def wrap_in_block(cell: str, first: int, last: int, header: str) -> List[TextEdit]:
    """Put lines first..last under `header:` (e.g. `with torch.no_grad()`), indenting them one level."""
    lines = split_lines(cell, keepends=True)
    offs = line_offsets(cell)
    indent = indent_of(lines[first - 1])
    step = body_indent(cell, first)[len(indent):] or "    "
    edits = [TextEdit(offs[first - 1], offs[first - 1], f"{indent}{header}:\n")]
    for n in range(first, last + 1):
        if lines[n - 1].strip():
            at = offs[n - 1] + len(indent)
            edits.append(TextEdit(at, at, step))
    # NB: with no indentation the header and the first step share an offset; apply_edits' stable sort
    # keeps the header first.
    return edits
