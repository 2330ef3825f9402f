"""Rules of the leaf family: a tensor the user trains (a leaf that requires grad) changed the wrong way.

Kinds:
- `leaf-modified-in-place` (error): RuntimeError "a leaf Variable that requires grad is being used in an
  in-place operation." and "a view of a leaf Variable ..." (before torch 1.5: "... has been used in an
  in-place operation."). Forms: `w -= lr * w.grad`, `w += 1`, `w[0] = 1`, `w.copy_(...)`, `w.add_(1)`,
  `torch.sigmoid_(w)`. Fix: put the update (and the grad-clearing lines right beside it) under
  `with torch.no_grad():`; when a graph built from the leaf still waits for its backward() after the
  change, rebind instead (`a = a.add(1)`), as no_grad would break that backward.
- `non-leaf-grad` (warning): torch's UserWarning "The .grad attribute of a Tensor that is not a leaf Tensor
  is being accessed" (emitted on every access; Python shows it once per location, and under the capture the
  location is the tracker's, so one record per run). The `.grad` read in the cell whose tensor is not a
  leaf is named, with why: rebound out of place (`w = w + 1` on line N: `w` is no longer the leaf, its
  `.grad` stays None; fix, only for a manual update: `with torch.no_grad(): w += 1`), made by an op on a
  fresh leaf (`torch.randn(3, requires_grad=True) * 0.01`; fix: `(torch.randn(3) * 0.01).requires_grad_()`),
  or an intermediate result (fix: `out.retain_grad()` after it is computed).
  Note: the article's claim that `w = w + 1` raises "leaf variable has been moved into the graph interior"
  does not hold for torch 2.x: nothing is raised, only this warning when `.grad` is read.
"""
from __future__ import annotations

import ast
import re
from typing import List, Optional, Sequence, Set, Tuple

import torch

from ..cell import body_indent, cell_tree, enclosing_statement, indent_of, node_span
from ..edits import insert_line_before, make_fix, wrap_in_block
from ..model import ERROR, WARNING, Diagnosis, Fix, TextEdit
from ..record import OpEvent
from .context import RuleContext
from .registry import rule
from .requires_grad import code_text, dotted_text, fact_for, grad_fn_name, is_leaf, join, quote, torch_name

KIND = "leaf-modified-in-place"
WARN_KIND = "non-leaf-grad"
LEAF_INPLACE = re.compile(r"a (?P<view>view of a )?leaf Variable that requires grad (?:is being|has been) used "
                          r"in an in-place operation")
NON_LEAF_GRAD = re.compile(r"The \.grad attribute of a Tensor that is not a leaf Tensor is being accessed")
# in-place ops that set or update values (parameter updates, initialisation): safe under no_grad
UPDATES = frozenset({
    "add_", "sub_", "mul_", "div_", "copy_", "zero_", "fill_", "clamp_", "clamp_min_", "clamp_max_", "clip_",
    "normal_", "uniform_", "addcmul_", "addcdiv_", "lerp_", "masked_fill_", "index_fill_", "index_add_",
    "index_copy_", "scatter_", "scatter_add_", "fill_diagonal_", "bernoulli_", "random_", "exponential_",
    "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "true_divide_", "set_"})
_AUG = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


def match_leaf_inplace(message: str) -> Optional[bool]:
    """None when `message` is not the leaf error; else whether it is the "view of a leaf" variant."""
    m = LEAF_INPLACE.search(message)
    return None if m is None else bool(m["view"])


def match_non_leaf_grad(message: str) -> bool:
    return NON_LEAF_GRAD.search(message) is not None


# -- leaf-modified-in-place --

@rule(KIND, matches=(
    "a leaf Variable that requires grad is being used in an in-place operation.",
    "a view of a leaf Variable that requires grad is being used in an in-place operation.",
), fix="the update wrapped in `with torch.no_grad():`")
def leaf_modified_in_place(ctx: RuleContext) -> Optional[Diagnosis]:
    """A leaf tensor that requires grad (a parameter) was changed in place outside torch.no_grad()."""
    if not isinstance(ctx.exception, RuntimeError):
        return None
    view = match_leaf_inplace(ctx.error_message)
    if view is None:
        return None
    lineno = ctx.record.error_lineno
    event = _failed_op(ctx, lineno)
    leaf, written = _leaf_of(event)
    tree = cell_tree(ctx.record.source)
    stmt = enclosing_statement(tree, lineno) if tree is not None and lineno else None
    name = (ctx.names.name_for(leaf) if leaf is not None else None) or _static_target(stmt) or ""
    shown = quote(name) or ctx.say("leaf.a_leaf")
    code = code_text(ctx.record.source, stmt) if stmt is not None else ""
    why = [ctx.say("leaf.why_view" if view else "leaf.why", name=shown)]
    fix, key, extra = _leaf_fix(ctx, tree, stmt, name)
    why.append(ctx.say(key, name=shown, lineno=lineno, line=extra, code=code))
    facts = [f for f in [fact_for(name, leaf)] if f is not None] if leaf is not None and name else []
    return ctx.diagnosis(
        KIND, ERROR, title=ctx.say("leaf.title_view" if view else "leaf.title", name=shown),
        summary=ctx.say("leaf.summary", name=shown, lineno=lineno, code=code),
        what=ctx.say("leaf.what_view" if view else "leaf.what", name=shown, lineno=lineno, code=code),
        why=" ".join(why), where=ctx.where(lineno), lines=sorted({n for n in (extra or None, lineno) if n}),
        names=[name] if name else [], tensors=facts, fix=fix)


def _failed_op(ctx: RuleContext, lineno: Optional[int]) -> Optional[OpEvent]:
    ops = [e for e in ctx.record.failed_ops if e.lineno == lineno] or ctx.record.failed_ops
    return ops[-1] if ops else None


def _leaf_of(event: Optional[OpEvent]) -> Tuple[Optional[torch.Tensor], Optional[torch.Tensor]]:
    """(the leaf, the tensor written: the leaf or a view of it) from the failed op's first target."""
    for snap in event.targets if event is not None else ():
        t = snap.ref() if snap.ref is not None else None
        if isinstance(t, torch.Tensor) and t.requires_grad:
            base = t if is_leaf(t) else t._base
            return (base if isinstance(base, torch.Tensor) else None), t
    return None, None


def _static_target(stmt: Optional[ast.stmt]) -> Optional[str]:
    """The name the statement writes to: `w -= ...`, `w[0] = ...`, `w.add_(...)`, `torch.relu_(w)`."""
    node: Optional[ast.AST] = None
    if isinstance(stmt, ast.AugAssign):
        node = stmt.target
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        node = stmt.targets[0]
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        func = call.func
        node = call.args[0] if isinstance(func, ast.Attribute) and func.value.__class__ is ast.Name and \
            func.value.id in ("torch", "F") and call.args else getattr(func, "value", None)
    while isinstance(node, (ast.Subscript, ast.Call)):
        node = node.value if isinstance(node, ast.Subscript) else getattr(node.func, "value", None)
    return dotted_text(node) if node is not None else None


def _leaf_fix(ctx: RuleContext, tree: Optional[ast.Module], stmt: Optional[ast.stmt], name: str
              ) -> Tuple[Optional[Fix], str, Optional[int]]:
    """(fix, the sentence saying what to do, a line the sentence names)."""
    if tree is None or stmt is None or not name:
        return None, "leaf.why_no_fix", None
    if _static_target(stmt) is None:  # NB: the write happened in code this line calls, outside the cell
        return None, "leaf.why_elsewhere", None
    pending = pending_backward(tree, stmt, name)
    if pending is not None:
        fix = rebind_fix(ctx, stmt, name)
        return fix, "leaf.why_pending" if fix is not None else "leaf.why_pending_no_fix", pending
    if not is_update(stmt):
        return None, "leaf.why_not_update", None
    siblings, i = siblings_of(tree, stmt)
    run = update_run(ctx, siblings, i)
    header = no_grad_header(ctx, tree)
    if header is None or run is None:
        return None, "leaf.why_no_fix", None
    first, last = run[0].lineno, run[-1].end_lineno or run[-1].lineno
    edits = wrap_in_block(ctx.record.source, first, last, header)
    key = "leaf.fix_wrap" if first == last else "leaf.fix_wrap_lines"
    fix = make_fix(ctx.record.source, edits, ctx.say(key, first=first, last=last, header=header))
    return fix, "leaf.why_wrap" if fix is not None else "leaf.why_no_fix", None


def is_update(stmt: ast.stmt) -> bool:
    """`w -= ...`, `w[0] = ...`, `w.copy_(...)`, `w.grad.zero_()`, `w.grad = None`: sets values, no graph."""
    if isinstance(stmt, ast.AugAssign):
        return True
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        return isinstance(target, ast.Subscript) or isinstance(target, ast.Attribute) and target.attr == "grad"
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        return method in UPDATES
    return False


def _touches_trained(ctx: RuleContext, stmt: ast.stmt) -> bool:
    """Whether `stmt` writes to a leaf that requires grad, or to a `.grad`."""
    target = _static_target(stmt)
    if target is None:
        return False
    if ".grad." in target + ".":
        return True
    obj = ctx.names.lookup(target)
    if isinstance(obj, torch.Tensor):
        base = obj if is_leaf(obj) else obj._base
        return isinstance(base, torch.Tensor) and bool(is_leaf(base)) and base.requires_grad
    return isinstance(stmt, ast.AugAssign) and _reads_grad_of(stmt.value, target)


def _reads_grad_of(expr: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "grad" and dotted_text(n.value) == name
               for n in ast.walk(expr))


def siblings_of(tree: ast.AST, stmt: ast.stmt) -> Tuple[List[ast.stmt], int]:
    """The statement list that holds `stmt`, and its index there."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and any(s is stmt for s in body):
                return body, next(i for i, s in enumerate(body) if s is stmt)
    return [stmt], 0


def update_run(ctx: RuleContext, siblings: Sequence[ast.stmt], i: int) -> Optional[List[ast.stmt]]:
    """The failing update and the updates / grad-clearing lines right around it, each on lines of its own."""
    def alone(k: int) -> bool:
        return own_lines(ctx.record.source, siblings, k)

    def belongs(k: int) -> bool:
        return alone(k) and is_update(siblings[k]) and _touches_trained(ctx, siblings[k])

    if not alone(i):
        return None
    first = last = i
    while first > 0 and belongs(first - 1):
        first -= 1
    while last + 1 < len(siblings) and belongs(last + 1):
        last += 1
    return list(siblings[first:last + 1])


def own_lines(source: str, siblings: Sequence[ast.stmt], k: int) -> bool:
    """Whether statement k starts its line and shares none of its lines with another statement."""
    s = siblings[k]
    line = source.splitlines()[s.lineno - 1]
    starts = len(line.encode("utf-8")) - len(line.lstrip().encode("utf-8")) == s.col_offset
    before = siblings[k - 1].end_lineno if k > 0 else 0
    after = siblings[k + 1].lineno if k + 1 < len(siblings) else 10 ** 9
    return starts and (before or 0) < s.lineno and (s.end_lineno or s.lineno) < after


def no_grad_header(ctx: RuleContext, tree: Optional[ast.AST]) -> Optional[str]:
    """`with torch.no_grad()`, spelled with the cell's name for torch (or its imported `no_grad`)."""
    module = torch_name(ctx, tree)
    if module is not None:
        return f"with {module}.no_grad()"
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.ImportFrom) and node.module == "torch":
            for alias in node.names:
                if alias.name == "no_grad":
                    return f"with {alias.asname or alias.name}()"
    return None


def pending_backward(tree: ast.AST, stmt: ast.stmt, name: str) -> Optional[int]:
    """The line that used `name` in a graph a later backward() still needs (`c = a * b; a.add_(1);
    c.backward()`), else None."""
    siblings, i = siblings_of(tree, stmt)
    if not any(_has_backward(s) for s in siblings[i + 1:]):
        return None
    for s in reversed(siblings[:i]):
        if _has_backward(s):
            return None
        reads = any(isinstance(n, ast.Name) and n.id == name.split(".")[0] and isinstance(n.ctx, ast.Load)
                    for n in ast.walk(s))
        if reads and not isinstance(s, (ast.With, ast.AsyncWith)) and not (
                isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
            return s.lineno
    return None


def _has_backward(stmt: ast.stmt) -> bool:
    for n in ast.walk(stmt):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward":
            return True
        if isinstance(n, ast.Call) and (dotted_text(n.func) or "").endswith(("autograd.grad", "autograd.backward")):
            return True
    return False


def rebind_fix(ctx: RuleContext, stmt: ast.stmt, name: str) -> Optional[Fix]:
    """`a += 1` -> `a = a + 1`; `a.add_(1)` -> `a = a.add(1)`: a new tensor, the leaf left as it was."""
    src = ctx.record.source
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and type(stmt.op) in _AUG:
        value = code_text(src, stmt.value)
        value = value if isinstance(stmt.value, _ATOMS) else f"({value})"
        text = f"{name} = {name} {_AUG[type(stmt.op)]} {value}"
        return make_fix(src, [TextEdit(*node_span(src, stmt), text)],
                        ctx.say("leaf.fix_rebind", lineno=stmt.lineno, code=text))
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and dotted_text(func.value) == name and func.attr.endswith("_") \
                and hasattr(torch.Tensor, func.attr[:-1]) and "." not in name:
            start, _ = node_span(src, stmt)
            _, end = node_span(src, func)
            edits = [TextEdit(start, start, f"{name} = "), TextEdit(end - 1, end, "")]
            text = f"{name} = {name}.{func.attr[:-1]}(...)"
            return make_fix(src, edits, ctx.say("leaf.fix_rebind", lineno=stmt.lineno, code=text))
    return None


# -- non-leaf-grad (warning) --

@rule(WARN_KIND, severity=WARNING, matches=(
    "UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed",
), fix="update the leaf in place under `torch.no_grad()` instead of rebinding it (`w = w - …`)")
def non_leaf_grad(ctx: RuleContext) -> Optional[Diagnosis]:
    """`.grad` was read on a tensor that is not a leaf (often a leaf rebound by `w = w + 1`): it is None."""
    warned = [w for w in ctx.record.warnings if match_non_leaf_grad(w.message)]
    if not warned:
        return None
    tree = cell_tree(ctx.record.source)
    here = {w.lineno for w in warned if w.filename == ctx.record.filename}
    # NB: warned lines first, but every read: Python shows a warning once per location, and torch's are
    # all located at the tracker's line, so a second non-leaf read in the run is not warned about again
    reads = sorted(_grad_reads(tree) if tree is not None else [], key=lambda r: r[1] not in here)
    found = [(name, line, obj) for name, line in reads for obj in [ctx.names.lookup(name)]
             if isinstance(obj, torch.Tensor) and grad_fn_name(obj)]
    if not found:
        return _unnamed(ctx)
    name, read_line, obj = found[0]
    names = list(dict.fromkeys(n for n, _, _ in found))
    return _explain_non_leaf(ctx, tree, name, read_line, obj, names)


def _grad_reads(tree: ast.AST) -> List[Tuple[str, int]]:
    """(`w`, line) for every `w.grad` the cell reads (not assignments to it), in line order."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Load):
            name = dotted_text(node.value)
            if name:
                found.append((name, node.lineno))
    return sorted(set(found), key=lambda r: (r[1], r[0]))


def _unnamed(ctx: RuleContext) -> Diagnosis:
    return ctx.diagnosis(
        WARN_KIND, WARNING, title=ctx.say("nonleaf.title_unnamed"), summary=ctx.say("nonleaf.summary_unnamed"),
        what=ctx.say("nonleaf.what_unnamed"), why=ctx.say("nonleaf.why_leaf_only"), where=ctx.where(None))


def _explain_non_leaf(ctx: RuleContext, tree: ast.Module, name: str, read_line: int, obj: torch.Tensor,
                      names: List[str]) -> Diagnosis:
    src = ctx.record.source
    shown = name  # NB: the nonleaf messages put it in backticks themselves
    binds = _bindings(tree, name)
    rebinds = [s for s in binds if _reads_name(s.value, name)]
    grad_fn = grad_fn_name(obj) or "?"
    why = [ctx.say("nonleaf.why_leaf_only")]
    lines: List[Optional[int]] = [read_line]
    fix: Optional[Fix] = None
    if rebinds and (binds[0] in rebinds or _makes_leaf(binds[0].value)):
        r = rebinds[0]
        lines.append(r.lineno)
        why.append(ctx.say("nonleaf.why_rebound", name=shown, lineno=r.lineno, code=code_text(src, r)))
        fix = update_fix(ctx, tree, r, name, names)
        why.append(ctx.say("nonleaf.why_rebound_fix" if fix is not None else "nonleaf.why_rebound_no_fix",
                           name=shown))
        title = ctx.say("nonleaf.title_rebound", name=shown, lineno=r.lineno)
    elif binds and _wrapped_leaf(binds[0].value) is not None:
        b = binds[0]
        lines.append(b.lineno)
        why.append(ctx.say("nonleaf.why_made", name=shown, lineno=b.lineno, code=code_text(src, b),
                           grad_fn=grad_fn))
        fix = made_fix(ctx, b, name)
        title = ctx.say("nonleaf.title_made", name=shown, lineno=b.lineno)
    else:
        b = binds[-1] if binds else None
        lines.append(b.lineno if b is not None else None)
        why.append(ctx.say("nonleaf.why_intermediate", name=shown, grad_fn=grad_fn))
        fix = retain_fix(ctx, tree, b, name, read_line) if b is not None else None
        title = ctx.say("nonleaf.title_intermediate", name=shown)
    return ctx.diagnosis(
        WARN_KIND, WARNING, title=title,
        summary=ctx.say("nonleaf.summary", name=shown, lineno=read_line),
        what=ctx.say("nonleaf.what", name=shown, lineno=read_line, grad_fn=grad_fn), why=" ".join(why),
        where=ctx.where(read_line), lines=sorted({n for n in lines if n}), names=names,
        tensors=[f for f in [fact_for(name, obj)] if f is not None], fix=fix)


def _bindings(tree: ast.AST, name: str) -> List[ast.Assign]:
    """Plain `name = ...` assignments, in line order."""
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and dotted_text(n.targets[0]) == name]
    return sorted(found, key=lambda n: n.lineno)


def _reads_name(expr: ast.AST, name: str) -> bool:
    return any(dotted_text(n) == name for n in ast.walk(expr) if isinstance(n, (ast.Name, ast.Attribute)))


def _makes_leaf(value: ast.AST) -> bool:
    """`torch.zeros(3, requires_grad=True)`, `nn.Parameter(...)`, `....requires_grad_()`: a new leaf."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    method = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return method in ("requires_grad_", "Parameter") or any(
        k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in value.keywords)


def _wrapped_leaf(value: ast.AST) -> Optional[ast.keyword]:
    """The `requires_grad=True` of a creating call buried in a larger expression (`randn(.., requires_grad=True)
    * 0.01`, `.to(device)`), else None: such a value is the op's result, not the leaf."""
    if isinstance(value, ast.Call) and any(k.arg == "requires_grad" for k in value.keywords):
        return None
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            for k in n.keywords:
                if k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True:
                    return k
    return None


def update_fix(ctx: RuleContext, tree: ast.Module, stmt: ast.Assign, name: str, names: List[str]
               ) -> Optional[Fix]:
    """`w = w - lr * w.grad` -> `with torch.no_grad(): w -= lr * w.grad` (+ `w.grad.zero_()` in a loop), only
    for a manual update: after a backward(), or reading `w.grad`."""
    if not _is_update_rebind(stmt, name) or not (_reads_grad_of(stmt.value, name) or _after_backward(tree, stmt)):
        return None
    siblings, i = siblings_of(tree, stmt)
    first = last = i
    others = set(names) - {name}
    while first > 0 and _sibling_rebind(siblings[first - 1], others):
        first -= 1
    while last + 1 < len(siblings) and _sibling_rebind(siblings[last + 1], others):
        last += 1
    run = siblings[first:last + 1]
    header = no_grad_header(ctx, tree)
    src = ctx.record.source
    if header is None or any(s.lineno != s.end_lineno or not own_lines(src, siblings, k)
                             for k, s in enumerate(siblings) if first <= k <= last):
        return None
    edits = wrap_in_block(src, run[0].lineno, run[-1].lineno, header)
    for s in run:
        target = dotted_text(s.targets[0]) or ""
        right = code_text(src, s.value.right)
        edits.append(TextEdit(*node_span(src, s), f"{target} {_AUG[type(s.value.op)]}= {right}"))
    clear = [dotted_text(s.targets[0]) for s in run if _reads_grad_of(s.value, dotted_text(s.targets[0]) or "")
             and _in_loop(tree, s) and not _clears_grad(tree, dotted_text(s.targets[0]) or "")]
    if clear:
        line = src.splitlines()[run[-1].lineno - 1]
        inner = indent_of(line) + _step(src, run[-1].lineno)
        _, end = node_span(src, run[-1])
        edits.append(TextEdit(end, end, "".join(f"\n{inner}{n}.grad.zero_()" for n in clear)))
    updated = [dotted_text(s.targets[0]) or "" for s in run]
    return make_fix(src, edits, ctx.say("nonleaf.fix_update", names=join(ctx, [quote(n) for n in updated]),
                                        lineno=stmt.lineno, header=header))


def _step(src: str, lineno: int) -> str:
    line = src.splitlines()[lineno - 1]
    return body_indent(src, lineno)[len(indent_of(line)):] or "    "


def _is_update_rebind(stmt: ast.stmt, name: str) -> bool:
    """`w = w - lr * w.grad`, `w = w + 1`: the same as `w -= ...` but for the new tensor it makes."""
    value = getattr(stmt, "value", None)
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and dotted_text(stmt.targets[0]) == name \
        and isinstance(value, ast.BinOp) and type(value.op) in _AUG and dotted_text(value.left) == name


def _sibling_rebind(stmt: ast.stmt, names: Set[str]) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and (dotted_text(stmt.targets[0]) or "") in names \
        and _is_update_rebind(stmt, dotted_text(stmt.targets[0]) or "") and stmt.lineno == stmt.end_lineno


def _after_backward(tree: ast.AST, stmt: ast.stmt) -> bool:
    """A backward() ran before `stmt`: earlier in the cell, or earlier in a loop around it."""
    return any(_has_backward(s) and s.lineno < stmt.lineno and not _contains(s, stmt) for s in
               (n for n in ast.walk(tree) if isinstance(n, ast.stmt)))


def _contains(outer: ast.stmt, inner: ast.stmt) -> bool:
    return outer is not inner and outer.lineno <= inner.lineno <= (outer.end_lineno or outer.lineno)


def _in_loop(tree: ast.AST, stmt: ast.stmt) -> bool:
    return any(isinstance(n, (ast.For, ast.While)) and _contains(n, stmt) for n in ast.walk(tree))


def _clears_grad(tree: ast.AST, name: str) -> bool:
    """`w.grad.zero_()`, `w.grad = None`, or an optimizer's / module's `zero_grad()` somewhere in the cell."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and (
                n.func.attr == "zero_grad" or n.func.attr == "zero_" and name + ".grad" in (dotted_text(n.func.value) or "")):
            return True
        if isinstance(n, ast.Assign) and any(dotted_text(t) == name + ".grad" for t in n.targets):
            return True
    return False


def made_fix(ctx: RuleContext, stmt: ast.Assign, name: str) -> Optional[Fix]:
    """`w = torch.randn(3, requires_grad=True) * 0.01` -> `w = (torch.randn(3) * 0.01).requires_grad_()`."""
    src = ctx.record.source
    keyword = _wrapped_leaf(stmt.value)
    call = next((n for n in ast.walk(stmt.value) if isinstance(n, ast.Call) and keyword in n.keywords), None)
    if keyword is None or call is None:
        return None
    items = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
    k = items.index(keyword)
    if k == 0:
        return None  # NB: `f(requires_grad=True)` alone: nothing to keep the comma against
    _, prev_end = node_span(src, items[k - 1])
    _, kw_end = node_span(src, keyword)
    start, end = node_span(src, stmt.value)
    edits = [TextEdit(prev_end, kw_end, "")]
    if isinstance(stmt.value, (ast.Call, ast.Attribute, ast.Subscript)):
        edits.append(TextEdit(end, end, ".requires_grad_()"))
    else:
        edits += [TextEdit(start, start, "("), TextEdit(end, end, ").requires_grad_()")]
    return make_fix(src, edits, ctx.say("nonleaf.fix_made", name=name, lineno=stmt.lineno))


def retain_fix(ctx: RuleContext, tree: ast.Module, stmt: ast.Assign, name: str, read_line: int) -> Optional[Fix]:
    """`out.retain_grad()` right after `out = ...`, when a backward() between them and the read fills it."""
    src = ctx.record.source
    lines = src.splitlines()
    end = stmt.end_lineno or stmt.lineno
    if not stmt.lineno < read_line or end >= len(lines) or stmt.col_offset != len(indent_of(lines[stmt.lineno - 1])):
        return None
    if not any(_has_backward(s) and end < s.lineno <= read_line for s in ast.walk(tree) if isinstance(s, ast.stmt)):
        return None
    siblings, i = siblings_of(tree, stmt)
    if i + 1 < len(siblings) and siblings[i + 1].lineno == end:
        return None  # NB: `out = f(x); loss = ...` on one line
    text = f"{indent_of(lines[stmt.lineno - 1])}{name}.retain_grad()"
    return make_fix(src, [insert_line_before(src, end + 1, text)],
                    ctx.say("nonleaf.fix_retain", name=name, lineno=end + 1))
