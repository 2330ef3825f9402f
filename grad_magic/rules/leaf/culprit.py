"""The leaf family's culprits: which trained leaf was written in place, by which statement, and what stands
around it (the updates beside it, a backward() that still needs the old value); which `.grad` the cell read
on a tensor that is not a leaf, and how that name was bound.

May touch: the run record (the failed op), the cell's ast and source text; live objects through the
NameIndex, torch metadata only. Never runs user code; makes no fix and no sentence.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Collection, List, Optional, Sequence, Tuple

import torch

from ...cell import cell_tree, enclosing_statement
from ...record import OpEvent
from ..context import RuleContext
from ..kit import (callee_name, dotted, failed_op, function_around, grad_fn_name, grad_off_around, is_leaf,
                   lookup, scope_statements, starts_line, torch_name)
from ..places import function_place, global_assignment, item_returned

# in-place ops that set or update values (parameter updates, initialisation): safe under no_grad
UPDATES = frozenset({
    "add_", "sub_", "mul_", "div_", "copy_", "zero_", "fill_", "clamp_", "clamp_min_", "clamp_max_", "clip_",
    "normal_", "uniform_", "addcmul_", "addcdiv_", "lerp_", "masked_fill_", "index_fill_", "index_add_",
    "index_copy_", "scatter_", "scatter_add_", "fill_diagonal_", "bernoulli_", "random_", "exponential_",
    "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "true_divide_", "set_"})


# -- leaf-modified-in-place: the write --

@dataclass(frozen=True)
class LeafWrite:
    """The in-place write to a trained leaf: the leaf (live, when the tracker saw it), its name, the statement."""

    leaf: Optional[torch.Tensor]
    name: str  # "" when neither the names nor the statement tell
    tree: Optional[ast.Module]
    stmt: Optional[ast.stmt]


def leaf_write(ctx: RuleContext) -> LeafWrite:
    lineno = ctx.record.error_lineno
    leaf = _leaf_of(failed_op(ctx, lineno=lineno))
    tree = cell_tree(ctx.record.source)
    stmt = enclosing_statement(tree, lineno) if tree is not None and lineno else None
    name = (ctx.names.name_for(leaf) if leaf is not None else None) or static_target(stmt) or ""
    return LeafWrite(leaf, name, tree, stmt)


def _leaf_of(event: Optional[OpEvent]) -> Optional[torch.Tensor]:
    """The leaf the failed op's first target that requires grad is, or is a view of."""
    for snap in event.targets if event is not None else ():
        t = snap.ref() if snap.ref is not None else None
        if isinstance(t, torch.Tensor) and t.requires_grad:
            base = t if is_leaf(t) else t._base
            return base if isinstance(base, torch.Tensor) else None
    return None


def static_target(stmt: Optional[ast.stmt]) -> Optional[str]:
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
    return (dotted(node) or _indexed_chain(node)) if node is not None else None


def _indexed_chain(node: ast.AST) -> Optional[str]:
    """`model.layers[layer].output.dense.weight`: attributes and indexes on a name, as written (a key to
    compare writes by, never an edit); None for anything else (a call in the chain)."""
    inner = node
    while isinstance(inner, (ast.Attribute, ast.Subscript)):
        inner = inner.value
    return ast.unparse(node) if isinstance(inner, ast.Name) and isinstance(node, ast.Attribute) else None


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
    target = static_target(stmt)
    if target is None:
        return False
    if ".grad." in target + ".":
        return True
    obj = ctx.names.lookup(target)
    if isinstance(obj, torch.Tensor):
        base = obj if is_leaf(obj) else obj._base
        return isinstance(base, torch.Tensor) and bool(is_leaf(base)) and base.requires_grad
    return isinstance(stmt, ast.AugAssign) and reads_grad_of(stmt.value, target)


def reads_grad_of(expr: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "grad" and dotted(n.value) == name
               for n in ast.walk(expr))


def siblings_of(tree: ast.AST, stmt: ast.stmt) -> Tuple[List[ast.stmt], int]:
    """The statement list that holds `stmt`, and its index there."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and any(s is stmt for s in body):
                return body, next(i for i, s in enumerate(body) if s is stmt)
    return [stmt], 0


def own_lines(source: str, siblings: Sequence[ast.stmt], k: int) -> bool:
    """Whether statement k starts its line and shares none of its lines with another statement."""
    s = siblings[k]
    before = siblings[k - 1].end_lineno if k > 0 else 0
    after = siblings[k + 1].lineno if k + 1 < len(siblings) else 10 ** 9
    return starts_line(source, s) and (before or 0) < s.lineno and (s.end_lineno or s.lineno) < after


def update_run(ctx: RuleContext, siblings: Sequence[ast.stmt], i: int) -> Optional[List[ast.stmt]]:
    """The failing update and the updates / grad-clearing lines right around it, each on lines of its own."""
    def alone(k: int) -> bool:
        return own_lines(ctx.record.source, siblings, k)

    def belongs(k: int) -> bool:
        # NB: the very expression the failing write wrote into (`model.layers[i].dense.weight[:, p]`) is a leaf
        return alone(k) and is_update(siblings[k]) and (
            _touches_trained(ctx, siblings[k]) or static_target(siblings[k]) == static_target(siblings[i]))

    if not alone(i):
        return None
    first = last = i
    while first > 0 and belongs(first - 1):
        first -= 1
    while last + 1 < len(siblings) and belongs(last + 1):
        last += 1
    return list(siblings[first:last + 1])


def same_writes(ctx: RuleContext, tree: ast.Module, stmt: ast.stmt, run: Sequence[ast.stmt]
                ) -> Optional[List[List[ast.stmt]]]:
    """In a function (a weight-init helper, an update step of an earlier cell): the other runs of in-place
    updates to what the failing one writes into (`module.weight.fill_`, then `module.bias.zero_()` in another
    branch), outside any grad-off block: the run would reach them next. None when one of them shares its
    line with another statement (no clean block for it: then no fix at all)."""
    function = function_around(tree, stmt.lineno)
    root = (static_target(stmt) or "").split(".")[0]
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or not root:
        return []
    found: List[List[ast.stmt]] = []
    for other in scope_statements(function):
        if other in run or any(other in r for r in found) or not is_update(other) or \
                (static_target(other) or "").split(".")[0] != root or grad_off_around(other, function) is not None:
            continue
        siblings, i = siblings_of(tree, other)
        if not own_lines(ctx.record.source, siblings, i):
            return None
        more = [other]
        while i + 1 < len(siblings) and siblings[i + 1] not in run and is_update(siblings[i + 1]) and \
                (static_target(siblings[i + 1]) or "").split(".")[0] == root and own_lines(ctx.record.source, siblings, i + 1):
            i += 1
            more.append(siblings[i])
        found.append(more)
    return found


def pending_backward(tree: ast.AST, stmt: ast.stmt, name: str) -> Optional[int]:
    """The line that used `name` in a graph a later backward() still needs (`c = a * b; a.add_(1);
    c.backward()`), else None."""
    siblings, i = siblings_of(tree, stmt)
    if not any(has_backward(s) for s in siblings[i + 1:]):
        return None
    for s in reversed(siblings[:i]):
        if has_backward(s):
            return None
        reads = any(isinstance(n, ast.Name) and n.id == name.split(".")[0] and isinstance(n.ctx, ast.Load)
                    for n in ast.walk(s))
        if reads and not isinstance(s, (ast.With, ast.AsyncWith)) and not (
                isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
            return s.lineno
    return None


def has_backward(stmt: ast.stmt) -> bool:
    for n in ast.walk(stmt):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward":
            return True
        if isinstance(n, ast.Call) and (dotted(n.func) or "").endswith(("autograd.grad", "autograd.backward")):
            return True
    return False


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


# -- non-leaf-grad: the `.grad` read --

def non_leaf_reads(ctx: RuleContext, tree: Optional[ast.AST], warned: Collection[int]
                   ) -> List[Tuple[str, int, torch.Tensor]]:
    """(name, line, tensor) of each `.grad` the cell reads on a tensor with a grad_fn, the `warned` lines first."""
    # NB: warned lines first, but every read: Python shows a warning once per location, and torch's are
    # all located at the tracker's line, so a second non-leaf read in the run is not warned about again
    reads = sorted(_grad_reads(tree) if tree is not None else [], key=lambda r: r[1] not in warned)
    return [(name, line, obj) for name, line in reads for obj in [ctx.names.lookup(name)]
            if isinstance(obj, torch.Tensor) and grad_fn_name(obj)]


def _grad_reads(tree: ast.AST) -> List[Tuple[str, int]]:
    """(`w`, line) for every `w.grad` the cell reads (not assignments to it), in line order."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Load):
            name = dotted(node.value)
            if name:
                found.append((name, node.lineno))
    return sorted(set(found), key=lambda r: (r[1], r[0]))


def bindings(tree: ast.AST, name: str) -> List[ast.Assign]:
    """Plain `name = ...` assignments, in line order."""
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and dotted(n.targets[0]) == name]
    return sorted(found, key=lambda n: n.lineno)


def reads_name(expr: ast.AST, name: str) -> bool:
    return any(dotted(n) == name for n in ast.walk(expr) if isinstance(n, (ast.Name, ast.Attribute)))


def makes_leaf(value: ast.AST) -> bool:
    """`torch.zeros(3, requires_grad=True)`, `nn.Parameter(...)`, `....requires_grad_()`: a new leaf."""
    if not isinstance(value, ast.Call):
        return False
    return callee_name(value) in ("requires_grad_", "Parameter") or any(
        k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in value.keywords)


def wrapped_leaf(value: ast.AST) -> Optional[ast.keyword]:
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


def made_in_helper(ctx: RuleContext, tree: ast.AST, name: str) -> Optional[Tuple[RuleContext, ast.Assign, int]]:
    """`w1, b1 = make_params()`: in a view on the helper's cell (an earlier cell, usually), the first plain
    assignment of the name the helper returns at `name`'s position -- where that tensor was made -- and the
    line of this cell that called the helper."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)
                and isinstance(node.targets[0], (ast.Tuple, ast.List))):
            continue
        targets = [dotted(e) for e in node.targets[0].elts]
        if name not in targets:
            continue
        place = function_place(ctx, lookup(ctx, node.value.func))
        values = item_returned(place, targets.index(name)) if place is not None else []
        made = bindings(place.node, values[0].id) if len(values) == 1 and isinstance(values[0], ast.Name) else []
        if made:
            return place.ctx, made[0], node.lineno
    return None


def made_before(ctx: RuleContext, tree: ast.AST, name: str) -> Optional[Tuple[RuleContext, ast.Assign, int]]:
    """Where a tensor the cell reads but never binds was made: through a helper's return (`made_in_helper`),
    else by a plain top-level `name = ...` of an earlier cell (the namespace's very tensor); the call line is 0
    for the latter."""
    found = made_in_helper(ctx, tree, name)
    if found is not None:
        return found
    obj = ctx.names.lookup(name)
    place = global_assignment(ctx, name) if "." not in name and obj is not None and \
        ctx.namespace.get(name) is obj else None
    stmt = place.node if place is not None else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and dotted(stmt.targets[0]) == name:
        return place.ctx, stmt, 0
    return None
