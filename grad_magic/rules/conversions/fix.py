"""The conversions family's fixes: insertions on the failing line, from the culprits and the cell's text.

`.detach()` / `.cpu()` before `.numpy()` (or after the argument of `np.array(...)`), `(cond).all()` /
`.any()` around an ambiguous comparison, `torch.equal(a, b)` for `assert a == b`. May touch: the cell's text
and ast, and what the culprits found out (no NameIndex); each edit is checked to parse (edits.make_fix).
"""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from ... import catalog
from ...cell import node_span, segment
from ...edits import make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from ..kit import appended
from .culprit import Conversion
from .culprit_lists import ListFill
from .culprit_bool import BoolSite

_FLIP_TO_ANY = (ast.NotEq,)
_OPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _names(ctx: RuleContext, found: List[Conversion]) -> str:
    return catalog.listing((f"`{c.text}`" for c in found), ctx.language)


def detach_fix(ctx: RuleContext, found: List[Conversion]) -> Optional[Fix]:
    """`.detach()` on every tensor converted."""
    edits = [e for c in found for e in appended(ctx.record.source, c.node, ".detach()")]
    lines = sorted({c.node.lineno for c in found})
    said = ctx.say("conversions.grad.fix", names=_names(ctx, found), lineno=ctx.record.error_lineno) \
        if len(lines) < 2 else ctx.say("conversions.grad.fix_lines", names=_names(ctx, found),
                                       lines=catalog.listing(map(str, lines), ctx.language))
    return make_fix(ctx.record.source, edits, said)


def list_fix(ctx: RuleContext, fill: ListFill) -> Optional[Fix]:
    """`losses.append(loss.item())` at every append of the list (or `.detach()` on a comprehension's item)."""
    src = ctx.record.source
    edits = [e for node in fill.items for e in appended(src, node, fill.suffix)]
    items = catalog.listing((f"`{segment(src, n)}`" for n in fill.items), ctx.language)
    lines = ", ".join(str(n) for n in sorted({n.lineno for n in fill.items}))
    return make_fix(src, edits, ctx.say("conversions.grad.fix_list", suffix=fill.suffix, items=items, lines=lines))


def to_host(c: Conversion) -> str:
    """torch checks the device before requires_grad: `.cpu()` alone would meet the grad error next."""
    if c.tensor is not None and not c.tensor.requires_grad:
        return ".cpu()"
    return ".detach().cpu()"


def host_fix(ctx: RuleContext, found: List[Conversion]) -> Optional[Fix]:
    """`.cpu()` on every tensor converted, `.detach().cpu()` on those that may require grad."""
    edits = [e for c in found for e in appended(ctx.record.source, c.node, to_host(c))]
    detach = any(to_host(c) != ".cpu()" for c in found)
    return make_fix(ctx.record.source, edits, ctx.say(
        "conversions.device.fix_detach" if detach else "conversions.device.fix", names=_names(ctx, found),
        lineno=ctx.record.error_lineno))


def bool_fix(ctx: RuleContext, site: BoolSite, equal: bool) -> Tuple[Optional[Fix], str]:
    """(the fix, the catalog key of the sentence explaining its choice or why there is none); `equal`: the
    test is `assert a == b` on tensors of one shape, which `torch.equal(a, b)` says."""
    node = site.node
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _OPS)):
        return None, "conversions.bool.no_fix_shape"
    src, lineno = ctx.record.source, ctx.record.error_lineno
    op = node.ops[0]
    if equal:
        start, end = node_span(src, node)
        a, b = (segment(src, n) for n in (node.left, node.comparators[0]))
        edits = [TextEdit(start, end, f"torch.equal({a}, {b})")]
        key, how = "conversions.bool.fix_equal", "conversions.bool.why_equal"
    else:
        any_ = isinstance(op, _FLIP_TO_ANY) or (site.statement == "while" and not isinstance(op, ast.Eq))
        edits = appended(src, node, ".any()" if any_ else ".all()")
        key = "conversions.bool.fix_any" if any_ else "conversions.bool.fix_all"
        how = {("while", True): "conversions.bool.why_while_any"}.get(
            (site.statement, any_), "conversions.bool.why_any" if any_ else "conversions.bool.why_all")
    fix = make_fix(src, edits, ctx.say(key, expr=site.text, lineno=lineno))
    return fix, how if fix is not None else "conversions.no_parse"


def build_then_call_fix(ctx: RuleContext, call: ast.Call, description: str) -> Optional[Fix]:
    """`nn.CrossEntropyLoss(logits, y)` -> `nn.CrossEntropyLoss()(logits, y)`: `()` right after the class."""
    src = ctx.record.source
    _, end = node_span(src, call.func)
    return make_fix(src, [TextEdit(end, end, "()")], description)
