"""The culprit seam of `device-mismatch`, what a model holds: a tensor kept as a plain attribute (made a
buffer in `__init__`), layers kept in a plain list or dict (made an nn.ModuleList / nn.ModuleDict there), a
loss's weight (moved where the loss is made), a model made in an earlier cell and never moved (moved there).
Functions of a Chain (culprit_chain.py), which follows the tensor to the model that holds it.

May touch: modules' dicts and types (no user code runs), the user's cells' text. No wording.
"""
from __future__ import annotations

import ast
import types
from typing import TYPE_CHECKING, Any, Optional

import torch

from ..kit import one_line
from ..places import function_place, global_assignment, self_assignments
from .culprit import Party, same_device
from .culprit_origins import Move, Mover
from .culprit_paths import callee, owner_of, resolve, root_of

if TYPE_CHECKING:  # NB: culprit_chain imports this module
    from .culprit_chain import Chain


def attribute(chain: Chain, m: Mover, p: Party, owner: torch.nn.Module, attr: str) -> bool:
    """A tensor kept as a plain attribute (`self.pe = ...`): `.to()` moves parameters and buffers only.
    Every plain tensor attribute of the same module on the odd device that the failing function reads
    becomes a buffer too."""
    reads = {n.attr for n in ast.walk(m.cell.scope(m.lineno)) if isinstance(n, ast.Attribute)
             and isinstance(n.ctx, ast.Load)} if m.tree is not None else set()
    names = [attr] + sorted(a for a in reads - {attr} if plain_tensor(owner, a)
                            and same_device(str(owner.__dict__[a].device), p.device))
    owner_path = owner_of(p.name)[0]
    return all(buffer(chain, owner, a, f"{owner_path}.{a}", p.device) for a in names)


def buffer(chain: Chain, owner: torch.nn.Module, attr: str, path: str, device: str) -> bool:
    """`self.<attr> = value` in the first `__init__` of the module's classes that sets it, made
    `self.register_buffer("<attr>", value)` (every such statement there)."""
    found = set_in_init(chain, owner, attr)
    if found is None:
        return False
    inner, sets = found
    return inner.done(Move("buffer", (path,), sets[0].lineno, device, "", tuple(sets), attr))


def set_in_init(chain: Chain, owner: Any, attr: str) -> Any:
    """(a Mover on that `__init__`, its `self.<attr> = ...` statements): the first `__init__` of the
    module's classes that sets the attribute; None when none does, not with plain assignments, or before
    `super().__init__()` (a buffer or a ModuleList cannot be registered there), or when a class of the
    module has an attribute of that name (register_buffer would refuse it)."""
    classes = type(owner).__mro__ if isinstance(owner, torch.nn.Module) else ()
    if any(attr in vars(cls) for cls in classes):
        return None
    for cls in classes:
        if cls is torch.nn.Module:
            break
        place = function_place(chain.base, vars(cls).get("__init__"))
        sets = self_assignments(place, attr) if place is not None else []
        if not sets:
            continue
        plain = [s for s in sets if isinstance(s, ast.Assign) and len(s.targets) == 1]
        inits = [c.lineno for c in ast.walk(place.node) if isinstance(c, ast.Call)
                 and isinstance(c.func, ast.Attribute) and c.func.attr == "__init__"]
        if len(plain) != len(sets) or place.node.args.args[:1] and place.node.args.args[0].arg != "self" \
                or not inits or min(inits) > plain[0].lineno:
            return None
        inner = chain.place(place.ctx.record.filename, plain[0].lineno, vars(cls)["__init__"].__qualname__,
                           {"self": owner})
        return inner, plain
    return None


def module(chain: Chain, m: Mover, p: Party, scope: ast.AST) -> Optional[bool]:
    """A parameter of a model made in an earlier cell and never moved: `.to(device)` where it is made
    (only when a device variable says where models belong)."""
    root = root_of(p.module)
    if chain.target.reason != "variable" or m.cell.bound_before(root, m.lineno) is not None:
        return None
    found = made_where(chain, m, p, root, resolve(m.ctx, root))
    if not isinstance(found, tuple):
        return found
    where, stmt = found
    expr = where.device_expr(stmt.lineno)
    if root in where.moved or expr is None:
        return True if root in where.moved else None
    return where.done(Move("module", (root,), stmt.lineno, p.device, expr, (stmt.value,)))


def loss_weight(chain: Chain, m: Mover, p: Party, owner_path: str, owner: Any, attr: str) -> Optional[bool]:
    """`criterion = nn.CrossEntropyLoss(weight=w)`: the weight moves where the loss is made."""
    found = made_where(chain, m, p, owner_path, owner)
    if not isinstance(found, tuple):
        return found
    where, stmt = found
    call = stmt.value
    arg = next((k.value for k in call.keywords if k.arg == attr), None)
    if arg is None and attr == "weight" and call.args:
        arg = call.args[0]
    expr = where.device_expr(stmt.lineno)
    if arg is None or expr is None:
        return None
    return where.done(Move("weight", (p.name,), stmt.lineno, p.device, expr, (arg,), one_line(where.src, arg)))


def made_where(chain: Chain, m: Mover, p: Party, name: str, obj: Any) -> Any:
    """Where the module `name` (a plain name) was made by calling its class: (Mover, the assignment) --
    in this scope, or the last earlier cell that assigned it at its top level; a parameter is followed
    to the caller (True/False: what that gave). None when not found."""
    if name != root_of(name) or "." in name:
        return None
    scope = m.cell.scope(m.lineno)
    if chain.is_parameter(m, scope, name):
        return chain.outward(m, p)
    stmt, where = m.cell.last_binding(scope, name, m.lineno), m
    if stmt is None and m.cell.bound_before(name, m.lineno) is None:
        found = global_assignment(chain.base, name)
        if found is None or not isinstance(found.node, ast.Assign):
            return None
        stmt = found.node
        where = chain.place(found.ctx.record.filename, stmt.lineno, "<module>", None)
    if stmt is None or not isinstance(stmt.value, ast.Call):
        return None
    made = callee(where.ctx, stmt.value.func)[0]
    if made is not type(obj):
        return made_by_helper(chain, where, made, obj)
    return where, stmt


def made_by_helper(chain: Chain, m: Mover, fn: Any, obj: Any) -> Any:
    """`criterion = get_loss(...)`: a function of the user's made it -- (Mover, the one `return` of the
    helper that calls the module's class with a keyword argument, `return nn.CrossEntropyLoss(weight=w)`);
    None when not exactly one does."""
    place = function_place(m.ctx, fn) if isinstance(fn, types.FunctionType) else None
    if place is None:
        return None
    found = [r for r in ast.walk(place.node) if isinstance(r, ast.Return) and isinstance(r.value, ast.Call)
             and r.value.keywords and callee(place.ctx, r.value.func)[0] is type(obj)]
    if len(found) != 1:
        return None
    return chain.place(place.ctx.record.filename, found[0].lineno, fn.__qualname__, None), found[0]


def plain_tensor(owner: torch.nn.Module, attr: str) -> bool:
    """A tensor in the module's `__dict__`, not in its registries."""
    try:
        own = object.__getattribute__(owner, "__dict__")
    except Exception:
        return False
    return isinstance(own.get(attr), torch.Tensor) and not isinstance(own.get(attr), torch.nn.Parameter)


def loss_buffer(owner: torch.nn.Module, attr: str) -> bool:
    """A loss module's buffer (`weight`, `pos_weight`): what its constructor was given."""
    return isinstance(owner, torch.nn.modules.loss._Loss) and attr in (owner.__dict__.get("_buffers") or {})
