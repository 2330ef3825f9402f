"""The fixes of `missing-requires-grad`, one per cause: `requires_grad=True` where a leaf is made, the
forward moved out of its `no_grad` block, a `.detach()` / `.data` cut dropped, a copy that keeps the graph.

May touch: the cell's source text (minimal edits, checked to parse by `make_fix`), its ast, and the trace
(`Tracer.path`); of live objects, torch metadata only.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

import torch

from ...cell import enclosing_statement, indent_of, line_offsets, node_span
from ...edits import make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from .causes import LEAF, BackwardSite, Cause, Tracer, _cut_kind, _short_cut
from .shared import _COPIES, _CUT_METHODS, _TAKES_REQUIRES_GRAD, _callee_name, _contains_line, code_text, join, quote

MAX_LEAVES = 4  # NB: more gradless leaves than this and marking them all would be a guess


def _leaf_fix(ctx: RuleContext, tracer: Tracer, chosen: List[Cause]) -> Optional[Fix]:
    if not chosen or len(chosen) > MAX_LEAVES or any(c.kind != LEAF for c in chosen):
        return None
    edits: List[TextEdit] = []
    for c in chosen:
        if isinstance(c.obj, torch.Tensor) and not (c.obj.is_floating_point() or c.obj.is_complex()):
            return None  # NB: requires_grad=True on an integer tensor would raise
        found = leaf_edits(ctx.record.source, c.node, tracer.torch)
        if not found:
            return None
        edits += found
    lines = sorted({str(c.lineno) for c in chosen if c.lineno}, key=int)
    names = join(ctx, [quote(c.name) or f"`{code_text(ctx.record.source, c.node)}`" for c in chosen])
    where = ctx.say("missing_rg.on_line" if len(lines) == 1 else "missing_rg.on_lines", lines=join(ctx, lines))
    return make_fix(ctx.record.source, edits, ctx.say("missing_rg.fix_leaf", names=names, where=where))


def leaf_edits(source: str, value: Optional[ast.AST], aliases: Set[str]) -> List[TextEdit]:
    """`torch.zeros(3)` -> `torch.zeros(3, requires_grad=True)`; any other value `v` -> `v.requires_grad_()`."""
    if not isinstance(value, ast.expr):
        return []
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
            value.func.attr in _TAKES_REQUIRES_GRAD and isinstance(value.func.value, ast.Name) and \
            value.func.value.id in aliases:
        for k in value.keywords:
            if k.arg == "requires_grad":
                return [TextEdit(*node_span(source, k.value), "True")]
            if k.arg is None:
                return []  # NB: **kwargs may already hold requires_grad
        last = (value.args + [k.value for k in value.keywords])
        if not last:
            return []
        _, end = node_span(source, last[-1])
        return [TextEdit(end, end, ", requires_grad=True")]
    start, end = node_span(source, value)
    if isinstance(value, (ast.Call, ast.Name, ast.Attribute, ast.Subscript)):
        return [TextEdit(end, end, ".requires_grad_()")]
    return [TextEdit(start, start, "("), TextEdit(end, end, ").requires_grad_()")]


def no_grad_fix(ctx: RuleContext, tracer: Tracer, site: BackwardSite, block: ast.AST) -> Optional[Fix]:
    """Move the forward out of the grad-disabling block: dedent those lines, keep the rest in the block."""
    src = ctx.record.source
    lines = src.splitlines(keepends=True)
    offs = line_offsets(src)
    if isinstance(block, ast.expr):  # a decorator: drop its line when the whole step runs in that function
        fn = site.scope.node
        if block not in getattr(fn, "decorator_list", ()) or block.lineno != block.end_lineno or \
                lines[block.lineno - 1].strip() != "@" + code_text(src, block):
            return None
        edit = TextEdit(offs[block.lineno - 1], offs[block.lineno], "")
        return make_fix(src, [edit], ctx.say("missing_rg.fix_decorator", lineno=block.lineno))
    if len(block.items) != 1 or block.body[0].lineno == block.lineno or \
            block.items[0].context_expr.end_lineno != block.lineno:
        return None
    body = block.body
    inside = [i for i, s in enumerate(body) if any(_contains_line(s, p.lineno) for p in tracer.path)
              or _contains_line(s, site.stmt.lineno)]
    if not inside:
        return None
    first, last = min(inside), max(inside)
    head = lines[block.lineno - 1]
    outer, inner = indent_of(head), indent_of(lines[body[0].lineno - 1])
    if not inner.startswith(outer) or inner == outer:
        return None
    step = len(inner) - len(outer)
    start, end = body[first].lineno, body[last].end_lineno or body[last].lineno
    edits = [TextEdit(offs[n - 1], offs[n - 1] + step, "") for n in range(start, end + 1)
             if lines[n - 1].startswith(inner)]
    if first == 0:
        edits.append(TextEdit(offs[block.lineno - 1], offs[block.lineno], ""))
    if last < len(body) - 1:
        edits.append(TextEdit(offs[body[last + 1].lineno - 1], offs[body[last + 1].lineno - 1],
                              head if head.endswith("\n") else head + "\n"))
    key = "missing_rg.fix_no_grad_line" if start == end else "missing_rg.fix_no_grad"
    return make_fix(src, edits, ctx.say(key, start=start, end=end, header=head.strip().rstrip(":")))


def cut_fix(ctx: RuleContext, tracer: Tracer, cause: Cause) -> Tuple[Optional[Fix], str]:
    """(fix, the sentence saying what to do): drop the cut, or make a manual update's result a leaf again."""
    src, node, stmt = ctx.record.source, cause.node, cause.stmt
    kind = _cut_kind(node)
    if kind == "copy" and isinstance(node, ast.Call):
        return _copy_fix(ctx, node)
    if kind not in ("detach", "data") or stmt is None:
        return None, "missing_rg.why_cut_no_fix"
    target = cause.name
    value = getattr(stmt, "value", None)
    inner = node.func.value if kind == "detach" else node.value  # type: ignore[union-attr]
    if kind == "detach" and value is node and target and _reads(inner, target, grad=True):
        # NB: `w = (w - lr * w.grad).detach()`: a manual update that rebuilds the leaf, minus requires_grad
        _, end = node_span(src, node)
        fix = make_fix(src, [TextEdit(end, end, ".requires_grad_()")],
                       ctx.say("missing_rg.fix_update_leaf", name=quote(target), lineno=cause.lineno))
        return fix, "missing_rg.why_cut_update"
    container = enclosing_statement(tracer.tree, node.lineno)
    if container is None or _cut_below(container, node):
        return None, "missing_rg.why_cut_no_fix"
    _, inner_end = node_span(src, inner)
    _, end = node_span(src, node)
    fix = make_fix(src, [TextEdit(inner_end, end, "")],
                   ctx.say("missing_rg.fix_cut", cut=_short_cut(node), lineno=cause.lineno))
    return fix, "missing_rg.why_cut_fix"


def _copy_fix(ctx: RuleContext, call: ast.Call) -> Tuple[Optional[Fix], str]:
    """`torch.tensor([a, b])` -> `torch.stack([a, b])`; `torch.tensor(t)` -> `t.clone()`: copies that keep the graph."""
    src = ctx.record.source
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "tensor" and isinstance(func.value, ast.Name)) or \
            len(call.args) != 1 or call.keywords:
        return None, "missing_rg.why_cut_no_fix"
    arg = call.args[0]
    if isinstance(arg, (ast.List, ast.Tuple)):
        if not arg.elts or not all(isinstance(ctx.names.lookup(_root(e) or ""), torch.Tensor) for e in arg.elts):
            return None, "missing_rg.why_cut_no_fix"
        edit = TextEdit(*node_span(src, func), f"{func.value.id}.stack")
        text = f"{func.value.id}.stack(...)"
    else:
        inner = code_text(src, arg)
        text = f"{inner}.clone()" if isinstance(arg, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else \
            f"({inner}).clone()"
        edit = TextEdit(*node_span(src, call), text)
    fix = make_fix(src, [edit], ctx.say("missing_rg.fix_copy", code=text, lineno=call.lineno))
    return fix, ("missing_rg.why_cut_copy_fix" if fix is not None else "missing_rg.why_cut_no_fix")


def _root(expr: ast.AST) -> Optional[str]:
    """`a` for `a`, `a.sum()`, `a[0]`, `a.b.mean(1)`: the name an expression is computed from, if one."""
    while isinstance(expr, (ast.Attribute, ast.Call, ast.Subscript)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _reads(expr: ast.AST, name: str, grad: bool = False) -> bool:
    """Whether `expr` reads `name` (with `grad`: reads `name.grad`)."""
    for n in ast.walk(expr):
        if grad and isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.value, ast.Name) \
                and n.value.id == name:
            return True
        if not grad and isinstance(n, ast.Name) and n.id == name:
            return True
    return False


def _cut_below(value: ast.AST, cut: ast.AST) -> bool:
    """Another cut (`.numpy()`, `.item()`, `torch.tensor(...)`) wraps `cut` inside `value`: dropping it alone breaks."""
    for n in ast.walk(value):
        if n is cut or not isinstance(n, (ast.Call, ast.Attribute)):
            continue
        wraps = any(c is cut for c in ast.walk(n))
        if wraps and (isinstance(n, ast.Attribute) and n.attr == "data" or isinstance(n, ast.Call) and (
                _callee_name(n) in _CUT_METHODS | _COPIES or _callee_name(n) in ("float", "int", "array"))):
            return True
    return False
