"""The culprit seam of `device-mismatch`, part five: values that cross a `return` or a tuple -- the pair a
helper returns (`return (torch.zeros(...), torch.zeros(...))`: the item the op saw, and every other item made
the same way on the odd device, which would fail next), a name unpacked from a tuple (`h, c = state`:
`state[0]`), and a result with no name that a module of the user's returned (`x + self.embed_positions(t)`:
followed into its `forward`, to the kept tensor it slices).

Evidence is what ran: the frames' variables and the live objects they reach (the tuple the caller holds, the
module the call runs), and the functions' own code. Each spot is a `Move` of the chain's Movers.
May touch: frames' variables, live objects' dicts and types (metadata only, no user code runs), the user's
cells' ast. No wording.
"""
from __future__ import annotations

import ast
import types
from typing import TYPE_CHECKING, Any, Optional

import torch

from ..kit import dotted
from ..places import Place, function_place, item_returned
from .culprit import Party, same_device
from .culprit_line import made, taken_from
from .culprit_origins import Mover
from .culprit_paths import callee, resolve, static
from .culprit_scopes import binds, placed

if TYPE_CHECKING:
    from .culprit_chain import Chain


def unpacked(m: Mover, p: Party, root: str, scope: ast.AST) -> Optional[bool]:
    """`h_cur, c_cur = state`: `h_cur` is `state[0]` -- followed as that (to the caller, into the helper that
    made the pair). None when the last statement that bound `root` is no such unpacking."""
    found = [s for s in m.cell.bindings(scope) if binds(s, root) and s.lineno < m.lineno]
    last = max(found, key=lambda s: s.lineno) if found else None
    if not isinstance(last, ast.Assign) or len(last.targets) != 1 or not isinstance(last.targets[0], ast.Tuple):
        return None
    names = [e.id if isinstance(e, ast.Name) else None for e in last.targets[0].elts]
    source = dotted(last.value)
    if source is None or names.count(root) != 1 or "[" in source:
        return None
    return m.move(Party(f"{source}[{names.index(root)}]", p.device, p.obj, None, p.shape, p.dtype))


def siblings(inner: Mover, place: Place, key: int, items: Any, device: str) -> bool:
    """The other items of the tuple a helper returns (`return h, c` / `return (torch.zeros(...), ...)`) that
    are on the odd device in the tuple the caller holds: each made on the target device too. False when one
    of them has no spot (then no fix: it would fail next)."""
    if not isinstance(items, (tuple, list)):
        return True
    for value in item_returned(place, None):
        if not isinstance(value, (ast.Tuple, ast.List)) or len(value.elts) != len(items):
            continue
        for i, (elt, obj) in enumerate(zip(value.elts, items)):
            if i == key or not isinstance(obj, torch.Tensor) or not same_device(str(obj.device), device):
                continue
            if isinstance(elt, ast.Name):
                moved = inner.move(Party(elt.id, device, obj))
            elif isinstance(elt, ast.Call) and inner.is_factory(elt.func) and not placed(elt):
                moved = made(inner, elt, device)
            else:
                moved = False
            if not moved:
                return False
    return True


def returned_by(chain: "Chain", m: Mover, call: ast.Call, device: str) -> Optional[bool]:
    """An operand with no name that a call of the user's code returned (`self.embed_positions(tokens)`):
    into the function (a module's `forward`), when the value it returns is taken from a tensor on the odd
    device (`self.weights[:n].unsqueeze(0)`) -- that tensor is moved where it is kept. None when the call
    is not the user's or what it returns does not say."""
    fn, instance = callee(m.ctx, call.func)
    if isinstance(fn, torch.nn.Module):
        fn, instance = static(fn, "forward"), fn
    place = function_place(m.ctx, fn) if isinstance(fn, types.FunctionType) else None
    values = item_returned(place, None) if place is not None else []
    if len(values) != 1:
        return None
    args = place.node.args.posonlyargs + place.node.args.args
    variables = {args[0].arg: instance} if instance is not None and args else {}
    inner = chain.place(place.ctx.record.filename, values[0].lineno, fn.__qualname__, variables)
    source = taken_from(inner, values[0]) or _kept(inner, values[0])
    obj = resolve(inner.ctx, source) if source is not None else None
    if not isinstance(obj, torch.Tensor) or not same_device(str(obj.device), device):
        return None
    return inner.move(Party(source, device, obj))


_SIZES = frozenset({"size", "shape", "dim", "ndim", "numel", "device", "dtype"})
_SLICES = frozenset({"unsqueeze", "squeeze", "expand", "view", "reshape", "repeat", "transpose", "permute",
                     "contiguous", "clone", "detach", "float", "flatten"})


def _kept(m: Mover, value: ast.AST) -> Optional[str]:
    """`self.weights[: tokens.size(1)].unsqueeze(0)` -> `self.weights`: a kept tensor (a dotted name) sliced or
    reshaped, where the other tensors on the line only give sizes (`tokens.size(1)`, `x.shape[1]`)."""
    node = value
    while isinstance(node, ast.Subscript) or isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in _SLICES:
        node = node.value if isinstance(node, ast.Subscript) else node.func.value
    base = dotted(node) if node is not value else None
    if base is None or "." not in base or placed(value):
        return None
    sizes = {id(n) for a in ast.walk(value) if isinstance(a, ast.Attribute) and a.attr in _SIZES
             for n in ast.walk(a.value)}
    others = [n for n in ast.walk(value) if isinstance(n, ast.Name) and id(n) not in sizes and n.id != base.split(".")[0]
              and isinstance(resolve(m.ctx, n.id), torch.Tensor)]
    return base if not others and isinstance(resolve(m.ctx, base), torch.Tensor) else None
