"""Where a Dataset was handed the callable that made its samples: `transform=ToTensor()` in the cell that built
`trainset`, when the run saw the sample made inside that transform.

The evidence: the op that made a sample ran under a DataLoader's fetch (provenance.py followed the batch into
its samples); the user frames of that op lie inside the code of a callable the Dataset holds in its own
attributes (a function, an object whose class's `__call__` is the user's, or one held in such an object's list:
`Compose([...])`). The attribute's name comes from that match, never from how it is spelled. Reading the
statement that bound the Dataset then turns the attribute into a line: the keyword of that name (or the
argument `__init__` stores in it).

`handed_array` does the same for a tensor a Dataset holds (`TensorDataset.tensors`): the `torch.from_numpy(a)` call
of the statement that built it whose array is the tensor's memory.

May touch: the Dataset's own attribute dict (never a property), the NameIndex, the cells' ast, a NumPy array's
address. Never runs user code.
"""
from __future__ import annotations

import ast
import inspect
import sys
import types
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import torch

from ..names import instance_dict
from .context import RuleContext
from .kit import dotted, lookup
from .places import Place, code_of, global_assignment, method_place, root, view_on
from .samples import loop_loader

Site = Tuple[str, int]  # (filename, line) of a user frame, as provenance records an op's frames


@dataclass(frozen=True)
class Configured:
    """The line that gave a Dataset its `attribute` (the view on that cell, the line, its code)."""

    at: RuleContext
    lineno: int
    dataset: str  # the user's name for the Dataset: `trainset`
    attribute: str  # `transform`
    code: str  # how the statement hands it over: `transform=ToTensor()`


def configured_at(ctx: RuleContext, frames: Sequence[Site]) -> Optional[Configured]:
    """Where the Dataset behind the loop in `frames` (innermost first) got the callable whose code the inner
    frames ran, when that is one attribute and the statement that built the Dataset hands it over."""
    top = root(ctx)
    for k in range(len(frames) - 1, -1, -1):  # NB: outermost first
        view = view_on(top, *frames[k])
        loader = loop_loader(view, frames[k][1]) if view is not None else None
        if loader is not None:
            return _configured(top, _dataset(loader), frames[:k])
    return None


def _configured(top: RuleContext, dataset: Any, inner: Sequence[Site]) -> Optional[Configured]:
    """With user frames inside the fetch (`inner`), the attribute whose code they ran. With none, a library's
    Dataset made the sample in its own code: the one callable the user handed it (a keyword of the statement
    that built it, kept under the same name), since the rest of what that code runs is the library's."""
    own = instance_dict(dataset) if dataset is not None else None
    if not own:
        return None
    library = not inner and method_place(top, type(dataset), "__getitem__") is None
    if not inner and not library:
        return None
    ran = [name for name, value in list(own.items()) if isinstance(name, str) and _runs(value, inner)]
    for name in top.names.names_for(dataset):
        if name.isidentifier() and top.namespace.get(name) is dataset:
            place = global_assignment(top, name)
            call = getattr(place.node, "value", None) if place is not None else None
            if not isinstance(call, ast.Call):
                continue
            if library:
                ran = [k.arg for k in call.keywords if k.arg in own and _handed(own[k.arg])]
            given = _given(top, type(dataset), call, ran[0]) if len(ran) == 1 else None
            if given is not None:
                return Configured(place.ctx, given.lineno, name, ran[0], _spelled(place.ctx, call, given))
    return None


def _handed(value: Any) -> bool:
    """Whether a Dataset's attribute holds code the user handed it: a callable object or function, not a class
    and not data."""
    return callable(value) and not isinstance(value, type)


def handed_array(ctx: RuleContext, frames: Sequence[Site], tensor: torch.Tensor) -> Optional[Tuple[Place, ast.Call]]:
    """The statement that built the Dataset behind the loop in `frames` and handed it `tensor` (held in its own
    attributes, as `TensorDataset.tensors`), and the `torch.from_numpy(a)` / `torch.as_tensor(a)` call there whose
    NumPy array `a` is the memory the tensor has: `TensorDataset(torch.from_numpy(x_train), ...)`."""
    top = root(ctx)
    for filename, lineno in reversed(frames):
        view = view_on(top, filename, lineno)
        loader = loop_loader(view, lineno) if view is not None else None
        dataset = _dataset(loader) if loader is not None else None
        if dataset is None or not _holds(dataset, tensor):
            continue
        memory = tensor.untyped_storage().data_ptr() if not tensor.is_meta else 0
        for name in top.names.names_for(dataset):
            place = global_assignment(top, name) if name.isidentifier() and top.namespace.get(name) is dataset else None
            call = getattr(place.node, "value", None) if place is not None else None
            found = [c for c in ast.walk(call) if isinstance(c, ast.Call) and c.args and memory and
                     dotted(c.func) in ("torch.from_numpy", "torch.as_tensor") and
                     _memory_of(lookup(place.ctx, c.args[0])) == memory] if isinstance(call, ast.Call) else []
            if len(found) == 1:
                return place, found[0]
    return None


def _holds(dataset: Any, tensor: torch.Tensor) -> bool:
    """Whether the Dataset's own attributes hold `tensor`, directly or in a tuple or list."""
    for value in list((instance_dict(dataset) or {}).values()):
        if value is tensor or type(value) in (tuple, list) and any(v is tensor for v in value):
            return True
    return False


def _memory_of(array: Any) -> Optional[int]:
    """The address of a NumPy array's own data. NB: numpy is no dependency: an array exists only where the user
    imported it."""
    np = sys.modules.get("numpy")
    return array.__array_interface__["data"][0] if np is not None and type(array) is np.ndarray else None


def _dataset(loader: torch.utils.data.DataLoader) -> Any:
    """The Dataset a loader reads, through torch's `Subset` wrappers (`random_split`)."""
    dataset = instance_dict(loader).get("dataset") if instance_dict(loader) else None
    while isinstance(dataset, torch.utils.data.Subset):
        dataset = (instance_dict(dataset) or {}).get("dataset")
    return dataset


def _runs(value: Any, inner: Sequence[Site]) -> bool:
    """Whether one of the frames `inner` ran in the code of the callable `value` holds."""
    return any(_contains(code, site) for code in _codes(value, 2) for site in inner)


def _codes(value: Any, depth: int) -> Iterator[types.CodeType]:
    """The code a callable runs when called: a function's own; an object's class's `__call__` (a module's
    `forward`; read from the class, without running a descriptor); then, one level down, what its lists and
    tuples hold (`Compose`)."""
    code = code_of(value)
    if code is not None:
        yield code
        return
    if isinstance(value, type) or depth == 0:
        return
    # NB: a module's `__call__` is torch's; what it runs of the user's is `forward` (torchvision's transforms are
    # modules)
    call = inspect.getattr_static(type(value), "forward" if isinstance(value, torch.nn.Module) else "__call__", None)
    code = code_of(call) if isinstance(call, types.FunctionType) else None
    if code is None:
        return
    yield code
    for held in list((instance_dict(value) or {}).values()):
        if type(held) in (list, tuple):
            for item in held:
                yield from _codes(item, depth - 1)


def _contains(code: types.CodeType, site: Site) -> bool:
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return code.co_filename == site[0] and bool(lines) and code.co_firstlineno <= site[1] <= max(lines)


def _given(top: RuleContext, cls: type, call: ast.Call, attribute: str) -> Optional[ast.expr]:
    """The argument of `call` (the Dataset's construction) that becomes `attribute`: the keyword of that name,
    else the one `__init__` stores there (`self.tf = transform`), by keyword or position."""
    by_name = {k.arg: k.value for k in call.keywords if k.arg is not None}
    if attribute in by_name:
        return by_name[attribute]
    init = method_place(top, cls, "__init__")
    node = init.node if init is not None else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    stored = _stored(node, attribute)
    if stored is None:
        return None
    if stored in by_name:
        return by_name[stored]
    params = [a.arg for a in node.args.posonlyargs + node.args.args][1:]  # NB: without `self`
    plain = [a for a in call.args if not isinstance(a, ast.Starred)]
    at = params.index(stored) if stored in params else len(plain)
    return plain[at] if len(plain) == len(call.args) and at < len(plain) else None


def _spelled(view: RuleContext, call: ast.Call, given: ast.expr) -> str:
    """`transform=ToTensor()` for a keyword, the argument's text for a positional one (on one line)."""
    text = " ".join((ast.get_source_segment(view.record.source, given) or "").split())
    keyword = [k.arg for k in call.keywords if k.value is given]
    return f"{keyword[0]}={text}" if keyword and keyword[0] else text


def _stored(init: ast.FunctionDef, attribute: str) -> Optional[str]:
    """The parameter `__init__` assigns to `self.<attribute>`, when every such assignment assigns that one."""
    me = init.args.args[0].arg if init.args.args else "self"
    found: List[str] = []
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr == attribute and isinstance(t.value, ast.Name)
                and t.value.id == me for t in node.targets):
            found.append(node.value.id if isinstance(node.value, ast.Name) else "")
    return found[0] if len(set(found)) == 1 and found[0] else None
