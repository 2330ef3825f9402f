"""What the walk (walk.py) reads objects with, decided from types alone: how to look inside an instance of a
class, a dict key as typed, a model's modules from its `_modules` dicts, a storage's identity.

May touch: classes, dicts Python keeps, tensor metadata (storage identity) -- never user code.
"""
from __future__ import annotations

import types
from collections import deque
from dataclasses import is_dataclass
from typing import Any, Dict, List, Tuple

import torch

from ..names import instance_dict

MAX_MODULES = 2_000_000  # modules of one model read, whatever its depth

SCALARS = frozenset({int, float, bool, str, bytes, complex, type(None)})  # never looked into, fast path
NOT_LOOKED_INTO = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                    types.MethodType, types.MethodWrapperType, types.WrapperDescriptorType,
                    types.MethodDescriptorType, property, classmethod, staticmethod, set, frozenset,
                    str, bytes, bytearray, int, float, complex, range, memoryview)
# The notebook's own machinery, never holding a user's tensor: the shell (reachable from `ip =
# get_ipython()`) and grad_magic itself (earlier reports sit in `Out`; they hold strings only).
MACHINERY = frozenset({"IPython", "ipykernel", "traitlets", "jupyter_client", "zmq", "tornado", "logging",
                        "grad_magic"})
MODULE_OWN = frozenset(vars(torch.nn.Module()))  # nn.Module's bookkeeping: _parameters, hooks, training...


def kind_of(cls: type) -> str:
    """How to look inside an instance of `cls` (`_kind`); "ignore" when the class refuses to say."""
    try:
        return _kind(cls)
    except Exception:  # a metaclass that raises on class attribute lookups: leave its instances alone
        return "ignore"


def _kind(cls: type) -> str:
    """How to look inside an instance of `cls`, decided from the class alone (never the instance)."""
    if issubclass(cls, torch.Tensor):
        return "parameter" if issubclass(cls, torch.nn.Parameter) else "tensor"
    if issubclass(cls, dict):
        return "dict"
    if issubclass(cls, tuple):
        return "namedtuple" if isinstance(getattr(cls, "_fields", None), tuple) else "sequence"
    if issubclass(cls, (list, deque)):
        return "sequence"
    if issubclass(cls, NOT_LOOKED_INTO) or str(cls.__module__).partition(".")[0] in MACHINERY:
        return "ignore"
    if issubclass(cls, torch.nn.Module):
        return "module"
    if issubclass(cls, torch.optim.Optimizer):
        return "optimizer"
    if is_dataclass(cls):
        return "dataclass"
    if any("__getattr__" in vars(c) for c in cls.__mro__):
        return "proxy"  # Mock and friends answer any name: reading them would invent attributes
    return "object" if getattr(cls, "__dictoffset__", 0) else "ignore"  # no __dict__: nothing to read


def key_text(key: Any, path_of: Dict[int, str]) -> str:
    """A dict key as it would be typed; other objects by type name, never by repr (a tensor's reads data)."""
    if type(key) in SCALARS:
        text = repr(key)
        return text if len(text) <= 80 else text[:79] + "…"
    if type(key) is tuple and all(type(k) in SCALARS for k in key):
        return repr(key)
    return path_of.get(id(key), f"<{type(key).__name__}>")


def module_path(path: str, dotted: str) -> str:
    """`model` + `layers.0.weight` -> `model.layers[0].weight`: the name Python would accept."""
    parts = [f"[{part}]" if part.isdigit() else f".{part}" for part in dotted.split(".")]
    return path + "".join(parts)


def _storage_cdata(t: torch.Tensor) -> int:
    return t.untyped_storage()._cdata


# The address of the tensor's StorageImpl: shared by all its views, unique while it lives.
# NB: not data_ptr() (0 on every meta tensor), and not id() of the `untyped_storage()` wrapper: torch 2.x
# happens to keep that wrapper alive, but older versions made it anew, and making it costs. Same number
# as `untyped_storage()._cdata`; torch's `_storage_id` (where it exists) reads it without the wrapper.
storage_key = getattr(torch._C, "_storage_id", None) or _storage_cdata


def is_tensor(obj: Any) -> bool:
    return issubclass(type(obj), torch.Tensor)  # NB: type(), not isinstance: Mock(spec=...) lies


def submodules(module: Any) -> List[Tuple[str, Any, Dict[str, Any]]]:
    """(dotted name, module, its attribute dict) for the module and each module under it, once each, in
    `named_modules()`'s order -- read from the `_modules` dicts, bounded by MAX_MODULES."""
    found: List[Tuple[str, Any, Dict[str, Any]]] = []
    seen: set = set()
    stack: List[Tuple[str, Any]] = [("", module)]
    while stack and len(found) < MAX_MODULES:
        dotted, sub = stack.pop()
        if id(sub) in seen:
            continue
        seen.add(id(sub))
        own = instance_dict(sub) or {}
        found.append((dotted, sub, own))
        children = [(f"{dotted}.{key}" if dotted else key, child)
                    for key, child in list((own.get("_modules") or {}).items())
                    if type(key) is str and issubclass(type(child), torch.nn.Module)]
        stack.extend(reversed(children))
    return found


def root_of(path: str) -> str:
    """`model.fc.weight` -> `model`; `batch['x']` -> `batch`."""
    for i, c in enumerate(path):
        if c in ".[":
            return path[:i]
    return path
