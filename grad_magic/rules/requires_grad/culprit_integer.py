"""Which integer tensor was asked for requires_grad (integer-requires-grad): the call that made it, its name,
its live tensor, and the dtype the call gives.

May touch: the cell's ast; live objects through the NameIndex, torch metadata only. Never runs user code.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, List, Optional, Set, Tuple

import torch

from ...cell import cell_tree, enclosing_statement
from ...facts import dtype_name
from ..context import RuleContext
from ..kit import callee_name, dotted, scope_statements, torch_aliases
from ..places import global_assignment
from .culprit import FACTORIES, binds


@dataclass(frozen=True)
class IntegerTensor:
    """The integer tensor of the failing statement, as far as it is known."""

    call: Optional[ast.Call]  # the torch call that made it
    name: str  # its name in the cell ("" when unnamed)
    tensor: Any  # the live tensor, when the name holds one
    dtype: Optional[str]  # its dtype: the live tensor's, else the one the creating call gives
    # `self.mask = nn.Parameter(mask)` of a tensor made elsewhere, whose class only compares, masks or indexes
    # with `self.mask`: integer data kept as a parameter, never trained (its fix: `requires_grad=False`)
    constant: Optional[ast.Call] = None
    attr: str = ""  # `self.mask`, when `constant`
    at: Optional[RuleContext] = None  # the view on the earlier cell whose top level made it (`call` is there)
    # the integer factories of the statements after the failing one, in its block, that ask requires_grad the
    # same way: the run would stop at each in turn, so a fix gives them all a floating-point dtype
    more: Tuple[ast.Call, ...] = ()


def integer_tensor(ctx: RuleContext) -> IntegerTensor:
    lineno = ctx.record.error_lineno
    tree = cell_tree(ctx.record.source)
    stmt = enclosing_statement(tree, lineno) if tree is not None and lineno else None
    aliases = (torch_aliases(tree) if tree is not None else set()) | {"torch"}
    aliases |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and ctx.names.lookup(n.id) is torch} \
        if tree is not None else set()  # NB: `import torch as t` in an earlier cell
    found = _creation(ctx, tree, stmt, aliases) if stmt is not None else None
    call, name, obj = found if found is not None else (None, "", None)
    dtype = dtype_name(obj.dtype) if isinstance(obj, torch.Tensor) else literal_dtype(call)
    constant = constant_parameter(tree, stmt) if call is None and stmt is not None else None
    attr = (dotted(stmt.targets[0]) or "") if constant is not None else ""  # type: ignore[union-attr]
    at = None
    if call is None and constant is None and name and isinstance(obj, torch.Tensor) and ctx.namespace.get(name) is obj:
        place = global_assignment(ctx, name)  # NB: made by a top-level statement of an earlier cell
        value = getattr(place.node, "value", None) if place is not None else None
        if isinstance(value, ast.Call) and is_torch_factory(value, torch_aliases(place.tree) | {"torch"}):
            call, at = value, place.ctx
    more = tuple(_same_after(ctx, tree, stmt, aliases)) if call is not None and at is None else ()
    return IntegerTensor(call, name, obj, dtype, constant, attr, at, more)


def _same_after(ctx: RuleContext, tree: ast.Module, stmt: ast.stmt, aliases: Set[str]) -> List[ast.Call]:
    """The integer factory calls of the statements after `stmt` in its block that ask requires_grad of them
    (`torch.tensor(1, requires_grad=True)`, `Variable(torch.arange(3), requires_grad=True)`)."""
    block = next((getattr(n, f) for n in ast.walk(tree) for f in ("body", "orelse", "finalbody")
                  if isinstance(getattr(n, f, None), list) and stmt in getattr(n, f)), [])
    found = []
    for later in block[block.index(stmt) + 1:] if stmt in block else []:
        made = _creation(ctx, tree, later, aliases) if isinstance(later, (ast.Assign, ast.Expr)) else None
        call = made[0] if made is not None else None
        if call is not None and _integer_literal(call) and _asks_grad(later):
            found.append(call)
    return found


def _integer_literal(call: ast.Call) -> bool:
    """The call makes an integer tensor by its text alone: an integer dtype written out, `randint` / `randperm`,
    or `tensor` / `arange` of int literals only."""
    if any(k.arg == "dtype" for k in call.keywords):
        return literal_dtype(call) in ("int64", "int32", "int16", "int8", "uint8", "bool")
    name = callee_name(call)
    if name in ("randint", "randperm"):
        return True
    values = [n for a in call.args for n in ast.walk(a)]
    return name in ("tensor", "arange") and bool(values) and all(
        isinstance(n, (ast.Constant, ast.List, ast.Tuple, ast.UnaryOp, ast.USub, ast.Load)) for n in values) and all(
        type(n.value) is int for n in values if isinstance(n, ast.Constant))


def _asks_grad(stmt: ast.stmt) -> bool:
    """`requires_grad=True` given (not False) somewhere in the statement, or `.requires_grad_()`."""
    for n in ast.walk(stmt):
        if isinstance(n, ast.keyword) and n.arg == "requires_grad" and not (
                isinstance(n.value, ast.Constant) and n.value.value is False):
            return True
        if isinstance(n, ast.Call) and callee_name(n) == "requires_grad_":
            return True
    return False


def constant_parameter(tree: ast.Module, stmt: ast.stmt) -> Optional[ast.Call]:
    """The `nn.Parameter(x)` of `self.<attr> = nn.Parameter(x)` (no requires_grad given) when every other use
    of `self.<attr>` in the class is a comparison, a mask or an index: data, not a weight."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)
            and callee_name(stmt.value) == "Parameter" and len(stmt.value.args) == 1 and not stmt.value.keywords):
        return None
    attr = dotted(stmt.targets[0]) or ""
    cls = next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.lineno <= stmt.lineno <= (
        n.end_lineno or n.lineno)), None)
    if not attr.startswith("self.") or attr.count(".") != 1 or cls is None:
        return None
    parents = {id(c): p for p in ast.walk(cls) for c in ast.iter_child_nodes(p)}
    uses = [n for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)
            and dotted(n) == attr]
    return stmt.value if uses and all(_as_data(n, parents.get(id(n))) for n in uses) else None


def _as_data(node: ast.AST, parent: Optional[ast.AST]) -> bool:
    """`self.mask == 0`, `x.masked_fill(self.mask, v)`, `x[self.mask]`: the value is not differentiated."""
    if isinstance(parent, ast.Compare):
        return True
    if isinstance(parent, ast.Subscript) and parent.slice is node:
        return True
    return isinstance(parent, ast.Call) and callee_name(parent) in ("masked_fill", "masked_fill_", "where",
                                                                     "masked_select") and parent.args[:1] == [node]


def _creation(ctx: RuleContext, tree: ast.Module, stmt: ast.stmt, aliases: Set[str]
              ) -> Optional[Tuple[Optional[ast.Call], str, Any]]:
    """(the call that made the integer tensor, its name, the live tensor) for the failing statement."""
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
    name = (dotted(target) or "") if target is not None else ""
    for call in calls:  # `torch.tensor([1, 2], requires_grad=True)`
        if is_torch_factory(call, aliases) and any(k.arg == "requires_grad" for k in call.keywords):
            return call, name, None
    for call in calls:  # `Variable(torch.arange(3), requires_grad=True)` (torch.autograd.Variable, any alias)
        if call.args and isinstance(call.args[0], ast.Call) and is_torch_factory(call.args[0], aliases) and \
                any(k.arg == "requires_grad" for k in call.keywords) and \
                ctx.names.lookup(dotted(call.func) or "") is torch.autograd.Variable:
            return call.args[0], name, None
    subject: Optional[ast.AST] = None
    for call in calls:  # `x.requires_grad_()`, `nn.Parameter(x)`
        if callee_name(call) == "requires_grad_" and isinstance(call.func, ast.Attribute):
            subject = call.func.value
        elif callee_name(call) == "Parameter" and call.args:
            subject = call.args[0]
    if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                                            for t in stmt.targets):  # `x.requires_grad = True`
        subject = next(t.value for t in stmt.targets if isinstance(t, ast.Attribute))
    if isinstance(subject, ast.Call) and is_torch_factory(subject, aliases):
        return subject, name, None
    if isinstance(subject, ast.Name):
        obj = ctx.names.lookup(subject.id)
        made = [s for s in scope_statements(tree) if isinstance(s, ast.Assign) and binds(s, subject.id)
                and s.lineno < stmt.lineno]
        value = made[-1].value if made else None
        if isinstance(value, ast.Call) and is_torch_factory(value, aliases):
            return value, subject.id, obj
        return None if obj is None else (None, subject.id, obj)
    return None


def is_torch_factory(call: ast.Call, aliases: Set[str]) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in FACTORIES and isinstance(func.value, ast.Name) \
        and func.value.id in aliases


def literal_dtype(call: Optional[ast.Call]) -> Optional[str]:
    """The dtype a creating call gives, read from its text (`dtype=`, or the kind of its literal)."""
    if call is None:
        return None
    for k in call.keywords:
        if k.arg == "dtype":
            spelled = getattr(torch, (dotted(k.value) or "").split(".")[-1] or "_", None)
            return dtype_name(spelled) if isinstance(spelled, torch.dtype) else None
    values = [n.value for a in call.args[:1] for n in ast.walk(a) if isinstance(n, ast.Constant)]
    if callee_name(call) == "tensor" and values and all(isinstance(v, bool) for v in values):
        return "bool"
    return "int64" if callee_name(call) in ("arange", "randint", "randperm", "tensor") else None
