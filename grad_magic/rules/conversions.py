"""Rules of the conversions family: a tensor turned into something else (a NumPy array, a Python bool).

Reads the error message, the traceback (only to tell whether the conversion happened on the cell's own
line or inside a library it called) and the cell's syntax; tensors are known by name, metadata only.
Fixes are insertions on the failing line: `.detach()` / `.cpu()` before `.numpy()` (or after the argument
of `np.array(...)`), and `(cond).all()` / `.any()` around an ambiguous comparison.
"""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import torch

from ..facts import fact_for, shape_text
from ..cell import cell_tree, enclosing_statement, node_span, segment
from ..edits import make_fix
from ..model import ERROR, Diagnosis, Fix, TextEdit
from .context import RuleContext
from .registry import rule

GRAD_KIND = "numpy-on-grad-tensor"
DEVICE_KIND = "numpy-on-device-tensor"
BOOL_KIND = "bool-ambiguous"

# NB: the version ranges of the older wordings come from user reports, not from running each release.
# torch 2.13 (reproduced, also through np.array / np.asarray, which call Tensor.__array__) and reports since 2022:
#   "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
# older releases (reports with torch 1.1 and 1.3.1): "... on Variable that requires grad. Use var.detach()..."
NEEDS_DETACH = re.compile(r"Can't call numpy\(\) on (?:Tensor|Variable) that requires grad")
# reports since late 2020 and torch 2.13 (CUDA builds): "can't convert cuda:0 device type tensor to numpy. Use
#   Tensor.cpu() to copy the tensor to host memory first." (reproduced on 2.13 with "meta"; "mps:0" alike)
# older releases (reports from 2019): "can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy ..."
NEEDS_CPU = re.compile(r"can't convert (?P<device>[A-Za-z_]{1,40}(?::\d{1,6})?)(?: device type)? tensor to numpy")
# torch 2.13 (reproduced): "Boolean value of Tensor with more than one value is ambiguous", and for an empty
#   tensor "... with no values is ambiguous"; older releases (reports from 2018 to 2021): "bool value of ..."
AMBIGUOUS = re.compile(r"(?:Boolean|bool) value of Tensor with (?P<what>more than one value|no values) "
                       r"is ambiguous")

try:  # NB: numpy is optional for torch, and so for grad_magic
    import numpy as np
except ImportError:  # pragma: no cover - without numpy nothing in a cell can call np.array
    np = None
# NB: known by identity: reading `__name__` or `__module__` of a user object could run its code
_ARRAY_MAKERS = frozenset(id(f) for f in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray,
                                          np.asfortranarray)) if np is not None else frozenset()
_INTERNALS = tuple(os.path.dirname(m.__file__) + os.sep for m in (torch, np) if m is not None) + (
    os.path.dirname(os.path.dirname(__file__)) + os.sep,)


# -- where the conversion happened --

def converted_on_the_line(ctx: RuleContext) -> bool:
    """True when, after the cell's innermost frame, the traceback runs only through torch, numpy and
    grad_magic: the conversion is on the cell's line, not inside a library the line called."""
    tb, after = getattr(ctx.exception, "__traceback__", None), []
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        after = [] if name == ctx.record.filename else after + [name]
        tb = tb.tb_next
    return all(name.startswith(_INTERNALS) for name in after)


def statement_exprs(ctx: RuleContext, lineno: Optional[int]) -> Tuple[Optional[ast.stmt], List[ast.expr]]:
    """The statement on the failing line and the expressions it evaluates there (a compound statement's
    header only: `if t > 0:` gives `t > 0`, not its body)."""
    tree = cell_tree(ctx.record.source) if lineno else None
    stmt = enclosing_statement(tree, lineno) if tree is not None else None
    if stmt is None:
        return None, []
    if isinstance(stmt, (ast.If, ast.While)):
        return stmt, [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return stmt, [stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return stmt, [i.context_expr for i in stmt.items]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try)):
        return stmt, []
    return stmt, [n for n in ast.iter_child_nodes(stmt) if isinstance(n, ast.expr)]


def dotted(node: ast.AST) -> Optional[str]:
    """`model.fc.weight` for a Name/Attribute chain; None for anything else."""
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def lookup(ctx: RuleContext, node: ast.AST) -> Any:
    name = dotted(node)
    return ctx.names.lookup(name) if name else None


# -- numpy conversions --

@dataclass(frozen=True)
class Conversion:
    """One tensor turned into an array on the failing line: `x.numpy()`, `np.array(x)`, `plot(x)`."""

    node: ast.expr  # the tensor expression converted
    text: str
    call: str  # how: "numpy()", "np.asarray", "plot"
    tensor: Optional[torch.Tensor]  # when `node` names a tensor


def conversions(ctx: RuleContext, exprs: Sequence[ast.expr], on_line: bool) -> List[Conversion]:
    """The conversions on the line, in source order. A call into a library (`on_line` False) counts only
    with tensors passed by name."""
    src = ctx.record.source
    found: List[Conversion] = []
    for call in sorted((n for e in exprs for n in ast.walk(e) if isinstance(n, ast.Call)),
                       key=lambda n: (n.lineno, n.col_offset)):
        func = segment(src, call.func) or ""
        if isinstance(call.func, ast.Attribute) and call.func.attr == "numpy":
            if not any(k.arg == "force" for k in call.keywords):
                found.append(_conversion(ctx, call.func.value, "numpy()"))
            continue
        # NB: an expression (`np.array(a * b)`) counts only as the first argument of an array maker on the line
        maker = on_line and id(lookup(ctx, call.func)) in _ARRAY_MAKERS
        for i, arg in enumerate(_arguments(call)):
            value = lookup(ctx, arg)
            if isinstance(value, torch.Tensor) or (maker and i == 0 and value is None):
                found.append(_conversion(ctx, arg, func))
    return found


def _conversion(ctx: RuleContext, node: ast.expr, call: str) -> Conversion:
    value = lookup(ctx, node)
    text = " ".join((segment(ctx.record.source, node) or "").split())
    return Conversion(node, text, call, value if isinstance(value, torch.Tensor) else None)


def _arguments(call: ast.Call) -> Iterator[ast.expr]:
    """Positional and keyword arguments, and the items of a list or tuple passed (`np.stack([a, b])`)."""
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        if isinstance(arg, (ast.List, ast.Tuple)):
            yield from arg.elts
        elif not isinstance(arg, ast.Starred):
            yield arg


_PRIMARY = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)


def insertion(ctx: RuleContext, node: ast.expr, text: str) -> List[TextEdit]:
    """`text` (".detach()") appended to the expression `node`, parenthesised when it is not a primary."""
    start, end = node_span(ctx.record.source, node)
    if isinstance(node, _PRIMARY):
        return [TextEdit(end, end, text)]
    return [TextEdit(start, start, "("), TextEdit(end, end, ")" + text)]


def _numpy_diagnosis(ctx: RuleContext, kind: str, key: str, found: List[Conversion], fix: Optional[Fix],
                     why: List[str], **params: object) -> Diagnosis:
    lineno = ctx.record.error_lineno
    first = found[0] if found else None
    expr = f"`{first.text}`" if first is not None else ctx.say("conversions.a_tensor")
    call = first.call if first is not None else "numpy()"
    tensors = [fact_for(c.text, c.tensor) for c in found if c.tensor is not None]
    sep = "" if ctx.language == "zh" else " "
    return ctx.diagnosis(
        kind, ERROR, title=ctx.say(f"{key}.title", expr=expr, **params),
        summary=ctx.say(f"{key}.summary_meta" if params.get("device") == "meta" else f"{key}.summary", **params),
        what=ctx.say(f"{key}.what", expr=expr, call=call, lineno=lineno or "?", **params),
        why=sep.join(why), where=ctx.where(lineno), lines=[lineno],
        names=[c.text for c in found if c.tensor is not None], tensors=[t for t in tensors if t], fix=fix)


@rule(GRAD_KIND, matches=(
    "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
    "Can't call numpy() on Variable that requires grad. Use var.detach().numpy() instead. (older releases)",
), fix="`.detach()` before `.numpy()` (or on the tensor given to `np.array` / a plotting call)")
def numpy_on_grad_tensor(ctx: RuleContext) -> Optional[Diagnosis]:
    """`.numpy()` (or `np.array`) on a tensor that autograd is still tracking."""
    if not isinstance(ctx.exception, RuntimeError) or not NEEDS_DETACH.search(ctx.error_message):
        return None
    on_line = converted_on_the_line(ctx)
    _, exprs = statement_exprs(ctx, ctx.record.error_lineno)
    found = [c for c in conversions(ctx, exprs, on_line)
             if c.tensor is None or c.tensor.requires_grad] if ctx.record.error_lineno else []
    if not on_line:  # inside a library: only the tensors we can name are known to need it
        found = [c for c in found if c.tensor is not None]
    why = [ctx.say("conversions.grad.why")]
    fix = None
    if found:
        edits = [e for c in found for e in insertion(ctx, c.node, ".detach()")]
        names = ", ".join(f"`{c.text}`" for c in found)
        fix = make_fix(ctx.record.source, edits, ctx.say("conversions.grad.fix", names=names,
                                                         lineno=ctx.record.error_lineno))
    if fix is None:
        why.append(ctx.say("conversions.grad.no_fix"))
    elif not on_line and found[0].call != "numpy()":
        why.append(ctx.say("conversions.via_library", call=found[0].call))
    return _numpy_diagnosis(ctx, GRAD_KIND, "conversions.grad", found, fix, why)


@rule(DEVICE_KIND, matches=(
    "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.",
    "can't convert meta device type tensor to numpy. … (any non-CPU device: mps:0, xpu:0, meta)",
    "can't convert CUDA tensor to numpy. Use Tensor.cpu() … (older releases)",
), fix="`.cpu()` (`.detach().cpu()` when it may require grad) before `.numpy()`; none for meta tensors")
def numpy_on_device_tensor(ctx: RuleContext) -> Optional[Diagnosis]:
    """`.numpy()` (or `np.array`) on a tensor that lives on a GPU (or another non-CPU device)."""
    m = NEEDS_CPU.search(ctx.error_message) if isinstance(ctx.exception, TypeError) else None
    if m is None:
        return None
    device = m["device"].lower()
    on_line = converted_on_the_line(ctx)
    _, exprs = statement_exprs(ctx, ctx.record.error_lineno)
    found = [c for c in conversions(ctx, exprs, on_line)
             if c.tensor is None or c.tensor.device.type != "cpu"] if ctx.record.error_lineno else []
    if not on_line:
        found = [c for c in found if c.tensor is not None]
    why = [ctx.say("conversions.device.meta" if device == "meta" else "conversions.device.why", device=device)]
    fix = None
    if device == "meta":
        pass  # NB: a meta tensor has no data: .cpu() would fail too, so there is nothing to propose
    elif found:
        edits = [e for c in found for e in insertion(ctx, c.node, _to_host(c))]
        names = ", ".join(f"`{c.text}`" for c in found)
        detach = any(_to_host(c) != ".cpu()" for c in found)
        fix = make_fix(ctx.record.source, edits, ctx.say(
            "conversions.device.fix_detach" if detach else "conversions.device.fix", names=names,
            lineno=ctx.record.error_lineno))
        if fix is not None and detach:
            known = [f"`{c.text}`" for c in found if c.tensor is not None and c.tensor.requires_grad]
            why.append(ctx.say("conversions.device.why_detach_known", names=", ".join(known)) if known
                       else ctx.say("conversions.device.why_detach"))
    if fix is None and device != "meta":
        why.append(ctx.say("conversions.device.no_fix"))
    return _numpy_diagnosis(ctx, DEVICE_KIND, "conversions.device", found, fix, why, device=device)


def _to_host(c: Conversion) -> str:
    """torch checks the device before requires_grad: `.cpu()` alone would meet the grad error next."""
    if c.tensor is not None and not c.tensor.requires_grad:
        return ".cpu()"
    return ".detach().cpu()"


# -- a tensor where Python needs one True or False --

_FLIP_TO_ANY = (ast.NotEq,)
_OPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


@dataclass(frozen=True)
class BoolSite:
    """An expression Python asks for one truth value: an `if`/`while`/`assert` test, an `and`/`or`/`not`
    operand, a conditional expression's test."""

    node: ast.expr
    text: str
    statement: str  # "if", "while", "assert" (a conditional expression or a comprehension's test: "if")
    shape: Optional[Tuple[int, ...]]  # None when not known without running code


def bool_sites(ctx: RuleContext, stmt: Optional[ast.stmt], exprs: Sequence[ast.expr]) -> List[BoolSite]:
    """The truth tests on the failing line, in the order Python evaluates them."""
    tests: List[Tuple[ast.expr, str]] = []
    if isinstance(stmt, (ast.If, ast.While)):
        tests.append((stmt.test, "while" if isinstance(stmt, ast.While) else "if"))
    elif isinstance(stmt, ast.Assert):
        tests.append((stmt.test, "assert"))
        exprs = [e for e in exprs if e is not stmt.test]
    for e in exprs:
        for n in ast.walk(e):
            if isinstance(n, ast.IfExp) or (isinstance(n, ast.comprehension) and n.ifs):
                tests.extend((t, "if") for t in ([n.test] if isinstance(n, ast.IfExp) else n.ifs))
    sites: List[BoolSite] = []
    for test, kind in tests:
        for node in _truth_operands(test):
            text = " ".join((segment(ctx.record.source, node) or "").split())
            sites.append(BoolSite(node, text, kind, _shape(ctx, node)))
    return sites


def _truth_operands(node: ast.expr) -> Iterator[ast.expr]:
    """`a > 0 and not m` -> `a > 0`, `m`: what bool() is called on."""
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _truth_operands(value)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield from _truth_operands(node.operand)
    else:
        yield node


def _shape(ctx: RuleContext, node: ast.expr) -> Optional[Tuple[int, ...]]:
    """The shape an expression of names, numbers and element-wise operators has (metadata only)."""
    if isinstance(node, ast.Constant) or isinstance(node, ast.Compare) and \
            all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
        return ()  # NB: a literal, or an identity test: a Python value, never a tensor
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _shape(ctx, node.operand)
    if isinstance(node, (ast.Compare, ast.BinOp)) and not isinstance(getattr(node, "op", None), ast.MatMult):
        parts = [node.left, *node.comparators] if isinstance(node, ast.Compare) else [node.left, node.right]
        shapes = [_shape(ctx, p) for p in parts]
        if any(s is None for s in shapes):
            return None
        try:
            return tuple(torch.broadcast_shapes(*shapes))
        except RuntimeError:
            return None
    value = lookup(ctx, node)
    if isinstance(value, torch.Tensor):
        return tuple(int(n) for n in value.shape)
    if isinstance(value, (int, float, bool)):
        return ()
    return None


def _numel(shape: Tuple[int, ...]) -> int:
    total = 1
    for n in shape:
        total *= n
    return total


def pinned_site(sites: List[BoolSite], empty: bool) -> Optional[BoolSite]:
    """The test that raised: the first whose shape is known to be wrong, every test before it known to
    hold one value; or the only test on the line."""
    for site in sites:
        if site.shape is None:
            return site if len(sites) == 1 else None
        numel = _numel(site.shape)
        if (numel == 0) if empty else (numel > 1):
            return site
        if numel != 1:
            return None
    return None


@rule(BOOL_KIND, matches=(
    "Boolean value of Tensor with more than one value is ambiguous",
    "Boolean value of Tensor with no values is ambiguous",
    "bool value of Tensor with more than one value is ambiguous (older releases)",
), fix="`if (t > 0).all():` / `while (loss > tol).any():` / `assert torch.equal(a, b)` for a comparison "
       "the line tests")
def bool_ambiguous(ctx: RuleContext) -> Optional[Diagnosis]:
    """A tensor of several values used where Python needs one True or False (`if t > 0:`, `assert a == b`)."""
    m = AMBIGUOUS.search(ctx.error_message) if isinstance(ctx.exception, RuntimeError) else None
    if m is None:
        return None
    empty = m["what"] == "no values"
    lineno = ctx.record.error_lineno
    stmt, exprs = statement_exprs(ctx, lineno)
    on_line = converted_on_the_line(ctx)
    site = pinned_site(bool_sites(ctx, stmt, exprs), empty) if on_line else None
    name = dotted(site.node) if site is not None else None
    why = [ctx.say("conversions.bool.why_empty" if empty else "conversions.bool.why", name=name or "t")]
    fix = None
    if site is not None and not empty:
        fix, key = _bool_fix(ctx, site)
        why.append(ctx.say(key, expr=site.text))
    elif site is None:
        why.append(ctx.say("conversions.bool.not_on_line" if not on_line else "conversions.bool.unsure"))
    expr = f"`{site.text}`" if site is not None else ctx.say("conversions.a_tensor")
    shape = ctx.say("conversions.bool.shape", shape=shape_text(site.shape)) \
        if site is not None and site.shape is not None else ""
    tensors = [fact_for(n, lookup(ctx, node)) for n, node in _named_tensors(ctx, site)]
    sep = "" if ctx.language == "zh" else " "
    return ctx.diagnosis(
        BOOL_KIND, ERROR, title=ctx.say("conversions.bool.title_empty" if empty else "conversions.bool.title",
                                        expr=expr),
        summary=ctx.say("conversions.bool.summary_empty" if empty else "conversions.bool.summary"),
        what=ctx.say("conversions.bool.what_unknown" if site is None else "conversions.bool.what_empty" if empty
                     else "conversions.bool.what", expr=expr, shape=shape, lineno=lineno or "?",
                     statement=site.statement if site is not None else "if"),
        why=sep.join(why), where=ctx.where(lineno), lines=[lineno],
        names=[n for n, _ in _named_tensors(ctx, site)], tensors=[t for t in tensors if t], fix=fix)


def _named_tensors(ctx: RuleContext, site: Optional[BoolSite]) -> List[Tuple[str, ast.AST]]:
    if site is None:
        return []
    seen: List[Tuple[str, ast.AST]] = []
    for node in ast.walk(site.node):
        name = dotted(node)
        if name and isinstance(lookup(ctx, node), torch.Tensor) and \
                all(name != s and not s.startswith(name + ".") for s, _ in seen):
            seen.append((name, node))
    return seen


def _bool_fix(ctx: RuleContext, site: BoolSite) -> Tuple[Optional[Fix], str]:
    """(the fix, the catalog key of the sentence explaining its choice or why there is none)."""
    node = site.node
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _OPS)):
        return None, "conversions.bool.no_fix_shape"
    src, lineno = ctx.record.source, ctx.record.error_lineno
    op = node.ops[0]
    left, right = lookup(ctx, node.left), lookup(ctx, node.comparators[0])
    if site.statement == "assert" and isinstance(op, ast.Eq) and isinstance(left, torch.Tensor) and \
            isinstance(right, torch.Tensor) and left.shape == right.shape and ctx.names.lookup("torch") is torch:
        start, end = node_span(src, node)
        a, b = (segment(src, n) for n in (node.left, node.comparators[0]))
        edits = [TextEdit(start, end, f"torch.equal({a}, {b})")]
        key, how = "conversions.bool.fix_equal", "conversions.bool.why_equal"
    else:
        any_ = isinstance(op, _FLIP_TO_ANY) or (site.statement == "while" and not isinstance(op, ast.Eq))
        method = ".any()" if any_ else ".all()"
        edits = insertion(ctx, node, method)
        key = "conversions.bool.fix_any" if any_ else "conversions.bool.fix_all"
        how = {("while", True): "conversions.bool.why_while_any"}.get(
            (site.statement, any_), "conversions.bool.why_any" if any_ else "conversions.bool.why_all")
    fix = make_fix(src, edits, ctx.say(key, expr=site.text, lineno=lineno))
    return fix, how if fix is not None else "conversions.no_parse"
