"""The fixes of the requires_grad family: for missing-requires-grad one per cause (`requires_grad=True` where a
leaf is made, the forward moved out of its `no_grad` block, a `.detach()` / `.data` cut dropped, a copy that
keeps the graph); for integer-requires-grad a floating-point dtype on the creating call.

Pure: the cause (culprit.py's records, the trace's path) and the cell's text and ast -> minimal edits, checked
to parse by `make_fix`; the descriptions come from the catalog. No name lookups.
"""
from __future__ import annotations

import ast
from typing import Any, List, Optional, Sequence, Set, Tuple

import torch

from ... import catalog
from ...cell import enclosing_statement, indent_of, line_offsets, node_span, split_lines
from ...edits import make_fix
from ...facts import dtype_name
from ...model import Fix, TextEdit
from ..context import RuleContext
from ..kit import appended, argument, callee_name, code_text, dotted, quote, spans
from .culprit import COPIES, CUT_METHODS, LEAF, TAKES_REQUIRES_GRAD, Cause, cut_kind, short_cut

MAX_LEAVES = 4  # NB: more gradless leaves than this and marking them all would be a guess


# -- a leaf made without requires_grad=True --

def leaf_fix(ctx: RuleContext, chosen: Sequence[Cause], aliases: Set[str]) -> Optional[Fix]:
    """`requires_grad=True` on each chosen leaf's creating call (`aliases`: the cell's names for torch)."""
    if not chosen or len(chosen) > MAX_LEAVES or any(c.kind != LEAF for c in chosen):
        return None
    edits: List[TextEdit] = []
    for c in chosen:
        if isinstance(c.obj, torch.Tensor) and not (c.obj.is_floating_point() or c.obj.is_complex()):
            return None  # NB: requires_grad=True on an integer tensor would raise
        found = leaf_edits(ctx.record.source, c.node, aliases)
        if not found:
            return None
        edits += found
    lines = sorted({str(c.lineno) for c in chosen if c.lineno}, key=int)
    names = catalog.listing([quote(c.name) or f"`{code_text(ctx.record.source, c.node)}`" for c in chosen],
                            ctx.language)
    where = ctx.say("missing_rg.on_line" if len(lines) == 1 else "missing_rg.on_lines",
                    lines=catalog.listing(lines, ctx.language))
    return make_fix(ctx.record.source, edits, ctx.say("missing_rg.fix_leaf", names=names, where=where))


def leaf_edits(source: str, value: Optional[ast.AST], aliases: Set[str]) -> List[TextEdit]:
    """`torch.zeros(3)` -> `torch.zeros(3, requires_grad=True)`; any other value `v` -> `v.requires_grad_()`."""
    if not isinstance(value, ast.expr):
        return []
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
            value.func.attr in TAKES_REQUIRES_GRAD and isinstance(value.func.value, ast.Name) and \
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
    return appended(source, value, ".requires_grad_()")


# -- a forward under no_grad --

def no_grad_fix(ctx: RuleContext, path: Set[ast.stmt], site_line: Optional[int], fn: Optional[ast.AST],
                block: ast.AST) -> Optional[Fix]:
    """Move the forward out of the grad-disabling block: dedent those lines (the trace's `path` in the cell,
    and the backward() line when it is in it), keep the rest in the block; for a decorator of `fn` (the
    function the whole step, or the forward the loss came through, runs in), drop it."""
    if isinstance(block, ast.expr):
        return _drop_decorator(ctx, fn, block)
    src = ctx.record.source
    lines = split_lines(src, keepends=True)
    offs = line_offsets(src)
    if len(block.items) != 1 or block.body[0].lineno == block.lineno or \
            block.items[0].context_expr.end_lineno != block.lineno:
        return None
    body = block.body
    inside = [i for i, s in enumerate(body) if any(spans(s, p.lineno) for p in path) or spans(s, site_line)]
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


def _drop_decorator(ctx: RuleContext, fn: Optional[ast.AST], block: ast.expr) -> Optional[Fix]:
    """Drop a `@torch.no_grad()` line of `fn`."""
    src = ctx.record.source
    if block not in getattr(fn, "decorator_list", ()) or block.lineno != block.end_lineno or \
            split_lines(src)[block.lineno - 1].strip() != "@" + code_text(src, block):
        return None
    offs = line_offsets(src)
    edit = TextEdit(offs[block.lineno - 1], offs[block.lineno], "")
    return make_fix(src, [edit], ctx.say("missing_rg.fix_decorator", lineno=block.lineno))


# -- a cut --

def cut_fix(ctx: RuleContext, tree: ast.Module, cause: Cause, stackable: bool) -> Tuple[Optional[Fix], str]:
    """(fix, the key of the sentence saying what to do): drop the cut, make a manual update's result a leaf
    again, or copy with the graph (`stackable`: a `torch.tensor([...])` of tensors)."""
    src, node, stmt = ctx.record.source, cause.node, cause.stmt
    kind = cut_kind(node)
    if kind == "copy" and isinstance(node, ast.Call) and cause.inner is not None:
        return _round_trip_fix(ctx, node, cause.inner)
    if kind == "copy" and isinstance(node, ast.Call):
        return _copy_fix(ctx, node, stackable)
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
    container = enclosing_statement(tree, node.lineno)
    if container is None or _cut_below(container, node):
        return None, "missing_rg.why_cut_no_fix"
    _, inner_end = node_span(src, inner)
    _, end = node_span(src, node)
    fix = make_fix(src, [TextEdit(inner_end, end, "")],
                   ctx.say("missing_rg.fix_cut", cut=short_cut(node), lineno=cause.lineno))
    return fix, "missing_rg.why_cut_fix"


def _copy_fix(ctx: RuleContext, call: ast.Call, stackable: bool) -> Tuple[Optional[Fix], str]:
    """`torch.tensor([a, b])` -> `torch.stack([a, b])`; `torch.tensor(t)` -> `t.clone()`: copies that keep the graph."""
    src = ctx.record.source
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "tensor" and isinstance(func.value, ast.Name)) or \
            len(call.args) != 1 or call.keywords:
        return None, "missing_rg.why_cut_no_fix"
    arg = call.args[0]
    if isinstance(arg, (ast.List, ast.Tuple)):
        if not stackable:
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


def _round_trip_fix(ctx: RuleContext, call: ast.Call, tensor: ast.AST) -> Tuple[Optional[Fix], str]:
    """`torch.tensor(x.detach().cpu().numpy())` -> `x`: the tensor itself, whose graph the round trip dropped."""
    src = ctx.record.source
    text = code_text(src, tensor)
    if not isinstance(tensor, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        text = f"({text})"
    fix = make_fix(src, [TextEdit(*node_span(src, call), text)],
                   ctx.say("missing_rg.fix_round_trip", code=text, lineno=call.lineno))
    return fix, ("missing_rg.why_cut_round_trip_fix" if fix is not None else "missing_rg.why_cut_no_fix")


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
                callee_name(n) in CUT_METHODS | COPIES or callee_name(n) in ("float", "int", "array"))):
            return True
    return False


# -- an op without a gradient --

def soft_argmax_fix(ctx: RuleContext, unit: Any, cause: Cause) -> Optional[Fix]:
    """`x.argmax(dim=d)` whose result is used as a number (`.float()`, arithmetic) -> the softmax-weighted
    average of the indices: `(x.softmax(dim=d).movedim(d, -1) * torch.arange(x.size(d), ...)).sum(-1)`, the
    differentiable argmax computed from the scores. None for any other use (an index, a comparison, a loss of
    its own): there the loss must be rewritten on the scores, which no edit can guess."""
    call = cause.node
    if not isinstance(call, ast.Call) or callee_name(call) != "argmax" or not isinstance(call.func, ast.Attribute):
        return None
    method = not (isinstance(call.func.value, ast.Name) and call.func.value.id in unit.torch)
    scores = call.func.value if method else (call.args[0] if call.args else None)
    dim = argument(call, 0 if method else 1, "dim")
    if not isinstance(scores, (ast.Name, ast.Attribute)) or dotted(scores) is None or not (
            isinstance(dim, ast.Constant) and type(dim.value) is int) or any(k.arg == "keepdim" for k in call.keywords):
        return None
    if not _used_as_number(unit.tree, call, cause.name):
        return None
    x, d, t = dotted(scores), dim.value, "torch" if "torch" in unit.torch else sorted(unit.torch)[0]
    text = (f"({x}.softmax(dim={d}).movedim({d}, -1) * {t}.arange({x}.size({d}), dtype={x}.dtype, "
            f"device={x}.device)).sum(-1)")
    src = ctx.record.source
    return make_fix(src, [TextEdit(*node_span(src, call), text)],
                    ctx.say("missing_rg.fix_soft_argmax", name=quote(cause.name) or "`argmax`", lineno=call.lineno))


def soft_threshold_fix(ctx: RuleContext, unit: Any, cause: Cause) -> Optional[Fix]:
    """`(probs > t).float()` (or `.type(...)` / `.to(...)` / `.double()`), `probs` a probability (culprit_soft.py)
    -> `probs`: the loss computed from the probabilities, not from a 0/1 mask that has no gradient."""
    compare, probs = cause.node, cause.inner
    if not isinstance(compare, ast.Compare) or probs is None:
        return None
    parents = {id(c): p for p in ast.walk(unit.tree) for c in ast.iter_child_nodes(p)}
    attr = parents.get(id(compare))
    call = parents.get(id(attr))
    if not (isinstance(attr, ast.Attribute) and attr.attr in ("float", "double", "half", "type", "to")
            and isinstance(call, ast.Call) and call.func is attr):
        return None
    src = ctx.record.source
    text = code_text(src, probs)
    return make_fix(src, [TextEdit(*node_span(src, call), text)],
                    ctx.say("missing_rg.fix_soft_threshold", code=text, lineno=compare.lineno))


def _used_as_number(tree: ast.AST, call: ast.Call, name: str) -> bool:
    """The argmax's value (or the name it is assigned to, everywhere in its function) only goes into `.float()`
    / `.double()` / `.to(...)` or arithmetic: a coordinate or a count, not an index or a class."""
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    uses: List[ast.AST] = [call]
    if name:
        scope = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and spans(n, call.lineno)), tree)
        uses = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    if not uses:
        return False
    for use in uses:
        parent = parents.get(id(use))
        if isinstance(parent, ast.Attribute) and parent.attr in ("float", "double", "to", "type"):
            continue
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            continue
        return False
    return True


# -- an integer tensor asked for requires_grad --

def float_fix(ctx: RuleContext, call: ast.Call, subject: str, more: Sequence[ast.Call] = ()) -> Optional[Fix]:
    """Give the creating call a floating-point dtype: add `dtype=torch.float32`, or replace an integer one; the
    same for `more` (the integer factories after it that ask requires_grad too: the run reaches each)."""
    src = ctx.record.source
    edits: List[TextEdit] = []
    for one in (call, *more):
        found = _float_edits(src, one)
        if not found:
            return None
        edits += found
    dtype = f"{call.func.value.id}.{dtype_name(torch.get_default_dtype())}"  # type: ignore[attr-defined]
    key, lines = ("int_rg.fix", call.lineno) if not more else \
        ("int_rg.fix_all", catalog.listing([str(c.lineno) for c in (call, *more)], ctx.language))
    return make_fix(src, edits, ctx.say(key, lineno=lines, dtype=dtype, name=subject))


def _float_edits(src: str, call: ast.Call) -> List[TextEdit]:
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in TAKES_REQUIRES_GRAD or \
            not isinstance(call.func.value, ast.Name):
        return []
    dtype = f"{call.func.value.id}.{dtype_name(torch.get_default_dtype())}"
    edits: List[TextEdit] = []
    for k in call.keywords:
        if k.arg == "dtype":
            edits = [TextEdit(*node_span(src, k.value), dtype)]
        elif k.arg is None:
            return []
    return edits or _dtype_edits(src, call, dtype)


def frozen_parameter_fix(ctx: RuleContext, call: ast.Call, subject: str) -> Optional[Fix]:
    """`nn.Parameter(mask)` -> `nn.Parameter(mask, requires_grad=False)`: integer data kept, never trained."""
    src = ctx.record.source
    _, end = node_span(src, call.args[-1])
    return make_fix(src, [TextEdit(end, end, ", requires_grad=False")],
                    ctx.say("int_rg.fix_constant", lineno=call.lineno, name=subject))


def _dtype_edits(src: str, call: ast.Call, dtype: str) -> List[TextEdit]:
    """`dtype=...` added before `requires_grad=` when the call has one, else after its last argument."""
    args = call.args + [k.value for k in call.keywords]
    if not args:
        return []
    anchor = next((k for k in call.keywords if k.arg == "requires_grad"), None)
    if anchor is None:
        _, end = node_span(src, args[-1])
        return [TextEdit(end, end, f", dtype={dtype}")]
    start, _ = node_span(src, anchor.value)
    at = start - len("requires_grad=")
    if src[at:start] != "requires_grad=":
        return []
    return [TextEdit(at, at, f"dtype={dtype}, ")]
