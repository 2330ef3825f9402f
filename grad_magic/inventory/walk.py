"""`%grad_device`'s walk: breadth first from the namespace's names to every tensor they reach.

May touch: the namespace's objects, read-only, and of a tensor only its METADATA (shape, dtype, device,
requires_grad, is_leaf, grad_fn, element size, storage identity and size). Never tensor data: no `.item()`,
no `repr(tensor)`, no `bool(tensor)`, no `==` / `in` on tensors -- identity only. Never `getattr` on a
name an object may answer through `__getattr__`: plain objects are read through their `__dict__` only.
Why an object was not looked into is said in the report's language (catalog keys `inventory.skip.*`).
"""
from __future__ import annotations

import types
from collections import deque
from dataclasses import fields as dataclass_fields, is_dataclass
from typing import Any, Deque, Dict, List, Optional, Tuple

import torch

from .. import catalog
from .report import (ROLE_BUFFER, ROLE_GRAD, ROLE_PARAMETER, ROLE_STATE, ROLE_TENSOR, DeviceOptions,
                     DeviceWarning, Found, Skipped, TensorRow)
from .warnings import module_spans, state_off, will_collide

MAX_SKIPPED = 200  # skipped objects listed one by one; the rest are only counted
MAX_OBJECTS = 2_000_000  # containers opened in one walk whatever the depth, so a walk always ends
_SCALARS = frozenset({int, float, bool, str, bytes, complex, type(None)})  # never looked into, fast path
_NOT_LOOKED_INTO = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                    types.MethodType, types.MethodWrapperType, types.WrapperDescriptorType,
                    types.MethodDescriptorType, property, classmethod, staticmethod, set, frozenset,
                    str, bytes, bytearray, int, float, complex, range, memoryview)
# The notebook's own machinery, never holding a user's tensor: the shell (reachable from `ip =
# get_ipython()`) and grad_magic itself (earlier reports sit in `Out`; they hold strings only).
_MACHINERY = frozenset({"IPython", "ipykernel", "traitlets", "jupyter_client", "zmq", "tornado", "logging",
                        "grad_magic"})
_MODULE_OWN = frozenset(vars(torch.nn.Module()))  # nn.Module's bookkeeping: _parameters, hooks, training...


def _safe_kind(cls: type) -> str:
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
    if issubclass(cls, _NOT_LOOKED_INTO) or str(cls.__module__).partition(".")[0] in _MACHINERY:
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


def _key_text(key: Any, path_of: Dict[int, str]) -> str:
    """A dict key as it would be typed; other objects by type name, never by repr (a tensor's reads data)."""
    if type(key) in _SCALARS:
        text = repr(key)
        return text if len(text) <= 80 else text[:79] + "…"
    if type(key) is tuple and all(type(k) in _SCALARS for k in key):
        return repr(key)
    return path_of.get(id(key), f"<{type(key).__name__}>")


def _module_path(path: str, dotted: str) -> str:
    """`model` + `layers.0.weight` -> `model.layers[0].weight`: the name Python would accept."""
    parts = [f"[{part}]" if part.isdigit() else f".{part}" for part in dotted.split(".")]
    return path + "".join(parts)


class Walk:
    """The state of one walk, breadth first so each tensor is named by its shortest path.

    NB: every id kept here is of an object reachable from the namespace, which outlives the walk, so ids
    cannot be reused while it runs. Tensors are compared by identity only (`==` would read their data).
    """

    def __init__(self, options: DeviceOptions, language: str = "en") -> None:
        self.options = options
        self.language = language  # of the reasons objects are skipped
        self.kinds: Dict[type, str] = {}  # NB: per walk: a global cache would keep every Mock class alive
        self.seen: set = set()  # ids of the containers and tensors already reached
        self.path_of: Dict[int, str] = {}  # tensor id -> the path of its row
        self.owned: set = set()  # ids of tensors held by a module or an optimizer
        self.models: List[Tuple[str, int, Dict[str, List[str]]]] = []  # (path, id, device -> paths)
        self.submodules: set = set()
        self.optimizers: List[Tuple[str, Any]] = []
        self.state_off: Dict[Tuple[str, str, str], List[str]] = {}  # (optimizer, state dev, param dev)
        self.skipped: List[Skipped] = []
        self.skipped_more = 0
        self.storage_bytes: Dict[Any, int] = {}  # storage key -> its nbytes()
        self.names: Dict[Any, Any] = {}  # torch.dtype -> (name, itemsize); torch.device -> name
        self.queue: Deque[Tuple[Any, str, int, str, bool]] = deque()
        self.found: List[Found] = []
        self.tensors = self.objects = 0
        self.keep = True
        self.full = False

    def phase(self, names: List[Tuple[str, Any]], keep: bool) -> List[Found]:
        """Walk these names; what they reach first is returned (and counted in warnings if `keep`)."""
        self.keep, self.found = keep, []
        for name, value in names:
            self.child(value, name, 0, False)
        while self.queue and not self.full:
            self.open(*self.queue.popleft())
        self.queue.clear()
        for path, optimizer in self.optimizers:
            self.guarded(path, self.open_optimizer, optimizer, path)
        self.optimizers = []
        return self.found

    def child(self, obj: Any, path: str, depth: int, owned: bool) -> None:
        cls = type(obj)
        if cls in _SCALARS:
            return
        kind = self.kinds.get(cls) or self.kinds.setdefault(cls, _safe_kind(cls))
        if kind == "tensor" or kind == "parameter":
            self.tensor(obj, path, kind, owned)
        elif kind != "ignore" and id(obj) not in self.seen:
            self.seen.add(id(obj))
            if kind == "proxy":
                self.skip(path, "inventory.skip.proxy", cls=cls.__name__)
            elif depth >= self.options.depth:
                self.skip(path, "inventory.skip.depth", depth=self.options.depth)
            else:
                self.queue.append((obj, path, depth, kind, owned))

    def open(self, obj: Any, path: str, depth: int, kind: str, owned: bool) -> None:
        self.objects += 1
        if self.objects > MAX_OBJECTS:
            self.stop(path, "inventory.skip.objects", count=f"{MAX_OBJECTS:,}")
        elif kind == "optimizer":
            self.optimizers.append((path, obj))  # NB: after the phase, once its parameters have paths
        else:
            self.guarded(path, getattr(self, "open_" + kind), obj, path, depth + 1, owned)

    def guarded(self, path: str, opener: Any, *args: Any) -> None:
        try:
            opener(*args)
        except Exception as e:  # a hostile object must not stop the walk, only be reported
            self.skip(path, "inventory.skip.raised", error=type(e).__name__)

    def open_dict(self, obj: dict, path: str, depth: int, owned: bool) -> None:
        for key, value in list(dict.items(obj)):
            if type(value) not in _SCALARS:
                self.child(value, f"{path}[{_key_text(key, self.path_of)}]", depth, owned)

    def open_sequence(self, obj: Any, path: str, depth: int, owned: bool) -> None:
        base = next(b for b in (list, tuple, deque) if issubclass(type(obj), b))
        for i, value in enumerate(list(base.__iter__(obj))):  # NB: the base's own: no override runs
            if type(value) not in _SCALARS:
                self.child(value, f"{path}[{i}]", depth, owned)

    def open_namedtuple(self, obj: Any, path: str, depth: int, owned: bool) -> None:
        for name, value in zip(type(obj)._fields, tuple.__iter__(obj)):
            self.child(value, f"{path}.{name}", depth, owned)

    def open_dataclass(self, obj: Any, path: str, depth: int, owned: bool) -> None:
        attributes = _instance_dict(obj) or {}
        for f in dataclass_fields(type(obj)):
            if f.name in attributes:
                self.child(attributes[f.name], f"{path}.{f.name}", depth, owned)
            else:  # __slots__ dataclass: a known field name, so no __getattr__ involved
                self.guarded(f"{path}.{f.name}", lambda n=f.name: self.child(
                    object.__getattribute__(obj, n), f"{path}.{n}", depth, owned))

    def open_object(self, obj: Any, path: str, depth: int, owned: bool) -> None:
        for name, value in list((_instance_dict(obj) or {}).items()):
            if type(value) not in _SCALARS and type(name) is str and self.public(name):
                self.child(value, f"{path}.{name}", depth, owned)

    def public(self, name: str) -> bool:
        if not name.startswith("_"):
            return True
        return self.options.include_private and not name.endswith("__")

    def open_module(self, module: torch.nn.Module, path: str, depth: int, owned: bool) -> None:
        devices: Dict[str, List[str]] = {}
        for name, p in module.named_parameters():
            self.member(p, _module_path(path, name), ROLE_PARAMETER, devices)
        for name, b in module.named_buffers():
            self.member(b, _module_path(path, name), ROLE_BUFFER, devices)
        for name, sub in module.named_modules():
            if sub is not module:
                self.submodules.add(id(sub))
            self.module_attributes(sub, _module_path(path, name) if name else path, depth, devices)
        if self.keep:
            self.models.append((path, id(module), devices))

    def module_attributes(self, sub: Any, path: str, depth: int, devices: Dict[str, List[str]]) -> None:
        """Tensors kept as plain attributes: `.to(device)` leaves them behind, so they count too."""
        for name, value in list((_instance_dict(sub) or {}).items()):
            if type(value) in _SCALARS or type(name) is not str or name in _MODULE_OWN:
                continue
            if not self.public(name):
                continue
            if _is_tensor(value):
                self.member(value, f"{path}.{name}", ROLE_TENSOR, devices)
            else:
                self.child(value, f"{path}.{name}", depth, True)

    def member(self, t: torch.Tensor, path: str, role: str, devices: Dict[str, List[str]]) -> None:
        devices.setdefault(self.device_name(t.device), []).append(path)
        self.tensor(t, path, role, True)

    def open_optimizer(self, optimizer: Any, path: str) -> None:
        attributes = _instance_dict(optimizer) or {}
        fallback: Dict[int, str] = {}
        for g, group in enumerate(attributes.get("param_groups") or ()):
            for i, p in enumerate(dict.__getitem__(group, "params")):
                fallback[id(p)] = f"{path}.param_groups[{g}]['params'][{i}]"
                self.tensor(p, fallback[id(p)], ROLE_PARAMETER, True)
        for p, entries in list(dict.items(attributes.get("state") or {})):
            name = self.path_of.get(id(p)) or fallback.get(id(p), f"<{type(p).__name__}>")
            for key, value in list(dict.items(entries)):
                if _is_tensor(value):
                    self.state(value, f"{path}.state[{name}][{_key_text(key, self.path_of)}]", p, path)

    def state(self, value: torch.Tensor, path: str, param: Any, optimizer: str) -> None:
        self.tensor(value, path, ROLE_STATE, True)
        here = self.device_name(value.device)
        there = self.device_name(param.device) if _is_tensor(param) else here
        # NB: a 0-dim `step` counter lives on the CPU by design (torch.optim keeps it there).
        if here != there and not (here == "cpu" and value.dim() == 0) and self.keep:
            self.state_off.setdefault((optimizer, here, there), []).append(path)

    def tensor(self, t: torch.Tensor, path: str, kind: str, owned: bool) -> None:
        tid = id(t)
        if owned:
            self.owned.add(tid)
        if tid in self.seen or self.full:
            return
        self.seen.add(tid)
        if self.tensors >= self.options.max_tensors:
            self.stop(path, "inventory.skip.tensors", count=f"{self.options.max_tensors:,}")
            return
        self.tensors += 1
        try:
            row, key, nbytes = self.describe(t, path, ROLE_TENSOR if kind == "tensor" else kind)
            grad = t.grad if row.is_leaf else None  # NB: .grad of a non-leaf warns; leaves only
        except Exception as e:
            self.skip(path, "inventory.skip.metadata", error=type(e).__name__)
            return
        self.found.append((row, tid, key, nbytes))
        self.path_of[tid] = path
        if grad is not None:
            self.tensor(grad, path + ".grad", ROLE_GRAD, owned)

    def describe(self, t: torch.Tensor, path: str, role: str) -> Tuple[TensorRow, Any, int]:
        """The row, storage key and storage bytes. Metadata only: a few attribute reads; dtype and
        device names cached (str() costs more). This and `tensor` are the walk's per-tensor cost."""
        names = self.names
        dtype, device, grad_fn = t.dtype, t.device, t.grad_fn
        dtype_name, itemsize = names.get(dtype) or names.setdefault(
            dtype, (str(dtype).replace("torch.", "", 1), dtype.itemsize))
        nbytes = t.numel() * itemsize
        row = TensorRow(path, role, tuple(t.shape), dtype_name, names.get(device) or self.device_name(device),
                        t.requires_grad, t.is_leaf, None if grad_fn is None else type(grad_fn).__name__,
                        nbytes)
        try:
            key = storage_key(t)
        except (NotImplementedError, RuntimeError):  # sparse and other storage-less layouts
            return row, ("tensor", id(t)), nbytes
        storage_bytes = self.storage_bytes.get(key)
        if storage_bytes is None:
            try:
                storage_bytes = self.storage_bytes[key] = t.untyped_storage().nbytes()
            except (NotImplementedError, RuntimeError):
                return row, ("tensor", id(t)), nbytes
        return row, key, storage_bytes

    def device_name(self, device: torch.device) -> str:
        name = self.names.get(device)
        if name is None:
            name = self.names[device] = str(device)
        return name

    def skip(self, path: str, key: str, **params: object) -> None:
        """`path` not looked into, for the reason the catalog's `key` says."""
        if len(self.skipped) < MAX_SKIPPED:
            self.skipped.append(Skipped(path, catalog.message(key, self.language, **params)))
        else:
            self.skipped_more += 1

    def stop(self, path: str, key: str, **params: object) -> None:
        self.full = True
        self.skip(path, "inventory.skip.stopped", reason=catalog.message(key, self.language, **params))

    def skipped_list(self) -> Tuple[Skipped, ...]:
        more = [Skipped("…", catalog.message("inventory.skip.more", self.language, count=f"{self.skipped_more:,}"))
                ] if self.skipped_more else []
        return tuple(self.skipped + more)

    def warnings(self, rows: List[Found]) -> List[DeviceWarning]:
        models = [(path, devices) for path, mid, devices in self.models
                  if devices and mid not in self.submodules]
        return (module_spans(models, self.language) + state_off(self.state_off, self.language)
                + will_collide(models, rows, self.owned, self.language))


def _storage_cdata(t: torch.Tensor) -> int:
    return t.untyped_storage()._cdata


# The address of the tensor's StorageImpl: shared by all its views, unique while it lives.
# NB: not data_ptr() (0 on every meta tensor), and not id() of the `untyped_storage()` wrapper: torch 2.x
# happens to keep that wrapper alive, but older versions made it anew, and making it costs. Same number
# as `untyped_storage()._cdata`; torch's `_storage_id` (where it exists) reads it without the wrapper.
storage_key = getattr(torch._C, "_storage_id", None) or _storage_cdata


def _is_tensor(obj: Any) -> bool:
    return issubclass(type(obj), torch.Tensor)  # NB: type(), not isinstance: Mock(spec=...) lies


def _instance_dict(obj: Any) -> Optional[dict]:
    """`vars(obj)` without asking the object: no __getattr__, no properties of its own making."""
    try:
        attributes = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return None
    return attributes if type(attributes) is dict else None
