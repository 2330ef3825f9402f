"""The inplace family's fix: the in-place op's own syntax at its spot, made out of place -- `x = x + y` for
`x += y` (`xs[i] = xs[i] + y` for an item of a list), `x = x.add(y)` for `x.add_(y)`, `inplace=False` (a
positional `True` dropped: `F.relu(x)`), `out=` dropped -- or `x = x.clone()` on the line before the write (before its `no_grad` block, where a rebind would drop the
graph). The cell may be another than the running one (the view the card was made from).

Pure: the spot (culprit_spot.py) and the cell's text and ast -> minimal edits, checked to parse by
`make_fix`; the descriptions come from the catalog. No name lookups.
"""
from __future__ import annotations

import ast
from typing import List, Optional

from ...cell import assignments_to, cell_tree, enclosing_statement, indent_of, node_span, segment, split_lines
from ...edits import apply_edits, insert_line_before, make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from ..kit import (appended, dotted, function_around, grad_off_blocks, line_code, parenthesised, quote,
                   starts_line)
from .culprit_spot import AUG, InPlaceSpot


def spot_fix(ctx: RuleContext, spot: InPlaceSpot, through_view: bool) -> Optional[Fix]:
    """The out-of-place form of the op at `spot`; `through_view`: the op wrote through a view (no fix)."""
    src = ctx.record.source
    if spot.form in ("keyword", "positional"):
        return flag_fix(ctx, spot)
    if spot.target is None or through_view:
        return None  # NB: writing through a view means to change its base: rebinding would not
    if _writes_the_callers_tensor(spot):
        return None  # NB: `def normalise_(t): t -= ...`: the caller's tensor is what the write is for
    guard = _no_grad_block(spot.tree, spot.stmt)
    if spot.form == "element":  # `laterals[i] += y` -> `laterals[i] = laterals[i] + y`: the item rebound
        return _rebind_element(ctx, spot) if guard is None else None
    if guard is not None:  # a rebind under no_grad would drop the graph: copy before the block
        return _clone_before(ctx, spot, guard)
    if spot.form == "augassign" and isinstance(spot.node.target, (ast.Name, ast.Attribute)):
        value = parenthesised(segment(src, spot.node.value) or "", spot.node.value)
        text = f"{spot.target} = {spot.target} {AUG[type(spot.node.op)][1]} {value}"
        return _rebind(ctx, spot, [TextEdit(*node_span(src, spot.stmt), text)])
    if spot.form in ("method", "function") and spot.twin and _is_whole_statement(spot):
        start, _ = node_span(src, spot.stmt)
        _, end = node_span(src, spot.node.func)
        edits = [TextEdit(start, start, f"{spot.target} = "), TextEdit(end - 1, end, "")]
        return _rebind(ctx, spot, edits)
    if spot.form == "out" and _is_whole_statement(spot):
        return _without_out(ctx, spot)
    return _clone_before(ctx, spot, spot.stmt)


def flag_fix(ctx: RuleContext, spot: InPlaceSpot) -> Optional[Fix]:
    """`inplace=True` -> `inplace=False`; a positional `True` given last is dropped (`F.relu(x, True)` ->
    `F.relu(x)`, `nn.LeakyReLU(0.2, True)` -> `nn.LeakyReLU(0.2)`), one given before others becomes `False`."""
    src, flag, call = ctx.record.source, spot.node, spot.call
    start, end = node_span(src, flag)
    edits = [TextEdit(start, end, "False")]
    if spot.form == "positional" and call is not None and call.args and call.args[-1] is flag \
            and not call.keywords:
        before = call.args[-2] if len(call.args) > 1 else None
        cut = node_span(src, before)[1] if before is not None else node_span(src, call.func)[1] + 1
        if before is not None or src[cut - 1:cut] == "(":
            return make_fix(src, [TextEdit(cut, end, "")], ctx.say("inplace.saved.fix_flag_dropped",
                                                                    lineno=flag.lineno))
    return make_fix(src, edits, ctx.say("inplace.saved.fix_keyword", lineno=flag.lineno))


def _writes_the_callers_tensor(spot: InPlaceSpot) -> bool:
    """`x` is still the parameter of a function other than `forward()` when written: a copy or a rebind would
    leave the caller's tensor, which the write is meant to change, as it was."""
    function = function_around(spot.tree, spot.stmt.lineno)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.name == "forward":
        return False
    a = function.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}
    return spot.target in params and not any(
        isinstance(s, (ast.Assign, ast.AnnAssign, ast.For)) and s.lineno < spot.stmt.lineno
        for s in assignments_to(function, spot.target))  # type: ignore[arg-type]


def combined(source: str, fixes: List[Fix], description: str) -> Optional[Fix]:
    """One fix of `source` made of the edits of several (each computed on the same text), when none overlap."""
    edits = sorted(dict.fromkeys(e for f in fixes for e in f.edits), key=lambda e: (e.start, e.end))
    if any(b.start < a.end or b.start == a.start for a, b in zip(edits, edits[1:])):
        return None
    return make_fix(source, edits, description)


def _rebind_element(ctx: RuleContext, spot: InPlaceSpot) -> Optional[Fix]:
    """`laterals[i - 1] += up` -> `laterals[i - 1] = laterals[i - 1] + up`: a container's item (never a tensor's
    slice, culprit_spot.py made sure) bound to the out-of-place result."""
    src, stmt = ctx.record.source, spot.node
    item = segment(src, stmt.target) or ""
    value = parenthesised(segment(src, stmt.value) or "", stmt.value)
    text = f"{item} = {item} {AUG[type(stmt.op)][1]} {value}"
    return _rebind(ctx, spot, [TextEdit(*node_span(src, spot.stmt), text)]) if item else None


def _is_whole_statement(spot: InPlaceSpot) -> bool:
    return isinstance(spot.stmt, ast.Expr) and spot.stmt.value is spot.node


def _rebind(ctx: RuleContext, spot: InPlaceSpot, edits: List[TextEdit]) -> Optional[Fix]:
    src = ctx.record.source
    fixed = split_lines(apply_edits(src, edits))
    code = line_code(fixed[spot.stmt.lineno - 1]) if spot.stmt.lineno <= len(fixed) else ""
    return make_fix(src, edits, ctx.say("inplace.saved.fix_rebind", lineno=spot.stmt.lineno, code=code))


def _without_out(ctx: RuleContext, spot: InPlaceSpot) -> Optional[Fix]:
    """`torch.add(a, b, out=x)` -> `x = torch.add(a, b)`."""
    src = ctx.record.source
    call = spot.node
    args = [*call.args, *call.keywords]
    i = next(i for i, a in enumerate(args) if isinstance(a, ast.keyword) and a.arg == "out")
    if i == 0:
        return None
    _, cut_from = node_span(src, args[i - 1])
    _, cut_to = node_span(src, args[i])
    start, _ = node_span(src, spot.stmt)
    edits = [TextEdit(start, start, f"{spot.target} = "), TextEdit(cut_from, cut_to, "")]
    return make_fix(src, edits, ctx.say("inplace.saved.fix_out", lineno=spot.stmt.lineno, name=quote(spot.target)))


def _clone_before(ctx: RuleContext, spot: InPlaceSpot, anchor: ast.stmt) -> Optional[Fix]:
    """`x = x.clone()` on a line of its own before `anchor` (the write, or the no_grad block around it)."""
    src = ctx.record.source
    if not starts_line(src, anchor):
        return None  # NB: `a = 1; x[0] = 0`: a line inserted before would not sit just before the write
    if any(anchor.lineno <= a.lineno < spot.stmt.lineno for a in assignments_to(spot.tree, spot.target)):
        return None  # NB: the name is bound again between the copy and the write
    indent = indent_of(split_lines(src)[anchor.lineno - 1])
    text = f"{indent}{spot.target} = {spot.target}.clone()"
    return make_fix(src, [insert_line_before(src, anchor.lineno, text)],
                    ctx.say("inplace.saved.fix_clone", lineno=anchor.lineno, name=quote(spot.target)))


def _no_grad_block(tree: ast.Module, stmt: ast.stmt) -> Optional[ast.stmt]:
    """The outermost `with torch.no_grad():` (inference_mode, set_grad_enabled(False)) around `stmt` in its
    function (or the cell)."""
    blocks = grad_off_blocks(function_around(tree, stmt.lineno), stmt.lineno)
    return blocks[0] if blocks else None  # type: ignore[return-value]


def clone_input_fix(ctx: RuleContext, called: Optional[str], lineno: int) -> Optional[Fix]:
    """`self.dropout(h.clone())`: the one call of the in-place module on the line gets a copy of its input, which
    it overwrites instead of the tensor autograd saved (a module made in place after it was built: no `True`
    to turn off where it was made). The values are the same."""
    src = ctx.record.source
    tree = cell_tree(src)
    stmt = enclosing_statement(tree, lineno) if tree is not None and called else None
    calls = [c for c in ast.walk(stmt) if isinstance(c, ast.Call) and dotted(c.func) == called
             and len(c.args) == 1 and not c.keywords and not isinstance(c.args[0], ast.Starred)] if stmt else []
    if len(calls) != 1:
        return None
    return make_fix(src, appended(src, calls[0].args[0], ".clone()"),
                    ctx.say("inplace.saved.fix_clone_input", module=called, lineno=lineno))
