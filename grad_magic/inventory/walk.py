"""`%grad_device`'s walk: breadth first from the namespace's names to every tensor they reach.

May touch: the namespace's objects, read-only, and of a tensor only its METADATA (shape, dtype, device,
requires_grad, is_leaf, grad_fn, element size, storage identity and size). Never tensor data: no `.item()`,
no `repr(tensor)`, no `bool(tensor)`, no `==` / `in` on tensors -- identity only. Never user code: no
`getattr` on a name an object may answer through `__getattr__` or a property (plain objects are read
through the dict Python keeps their attributes in, `names.instance_dict`, never a `__dict__` property);
a model through its registries (`_parameters`, `_buffers`, `_modules`), never `named_parameters()` or
`named_modules()` a subclass may override; a tensor with torch functions off (build.py), never a
subclass's `__torch_function__`. Bounded: containers, tensors and seconds (`DeviceOptions`); where it
stopped, and the names it did not walk, are said. Why an object was not looked into is said in the
report's language (catalog keys `inventory.skip.*`).
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import fields as dataclass_fields
from typing import Any, Deque, Dict, List, Tuple

import torch

from .. import catalog
from ..names import instance_dict
from .kinds import SCALARS, MODULE_OWN, is_tensor, key_text, kind_of, module_path, root_of, storage_key, submodules
from .report import (ROLE_BUFFER, ROLE_GRAD, ROLE_PARAMETER, ROLE_STATE, ROLE_TENSOR, DeviceOptions,
                     DeviceWarning, Found, Skipped, TensorRow)
from .warnings import module_spans, state_off, will_collide

MAX_SKIPPED = 200  # skipped objects listed one by one; the rest are only counted
MAX_OBJECTS = 2_000_000  # containers opened in one walk whatever the depth, so a walk always ends
CLOCK_EVERY = 1024  # objects reached between two looks at the clock
MAX_UNWALKED = 5  # names not walked (the time or object limit hit) named one by one
MAX_SCANNED = 10_000  # objects not walked read for their names
class Walk:
    """The state of one walk, breadth first so each tensor is named by its shortest path.

    NB: every id kept here is of an object reachable from the namespace, which outlives the walk, so ids
    cannot be reused while it runs. Tensors are compared by identity only (`==` would read their data).
    """

    def __init__(self, options: DeviceOptions, language: str = "en", started: float = 0.0) -> None:
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
        self.stopped: List[Skipped] = []  # why the walk stopped, listed first whatever else was skipped
        self.unwalked: Dict[str, None] = {}  # the first names the walk stopped before finishing, in order
        self.unwalked_count = 0  # objects left unwalked in all
        self.deadline = (started or time.monotonic()) + options.time_limit
        self.ticks = 0

    def phase(self, names: List[Tuple[str, Any]], keep: bool) -> List[Found]:
        """Walk these names; what they reach first is returned (and counted in warnings if `keep`)."""
        self.keep, self.found = keep, []
        for i, (name, value) in enumerate(names):
            if self.full:
                self.not_walked([name for name, _ in names[i:i + MAX_SCANNED]], len(names) - i)
                break
            self.child(value, name, 0, False)
        while self.queue and not self.full:
            self.open(*self.queue.popleft())
        queue = self.queue
        self.not_walked([queue[i][1] for i in range(min(len(queue), MAX_SCANNED))], len(queue))
        queue.clear()
        for path, optimizer in self.optimizers:
            self.guarded(path, self.open_optimizer, optimizer, path)
        self.optimizers = []
        return self.found

    def child(self, obj: Any, path: str, depth: int, owned: bool) -> None:
        cls = type(obj)
        if cls in SCALARS:
            return
        self.ticks += 1
        if (not self.ticks % CLOCK_EVERY and self.late(path)) or self.full:
            self.not_walked([path], 1)
            return
        kind = self.kinds.get(cls) or self.kinds.setdefault(cls, kind_of(cls))
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

    def late(self, path: str) -> bool:
        """Whether the time limit has passed; then the walk stops there."""
        if time.monotonic() < self.deadline:
            return False
        self.stop(path, "inventory.skip.time", seconds=f"{self.options.time_limit:g}")
        return True

    def not_walked(self, paths: List[str], count: int) -> None:
        """`count` objects the walk stopped before reaching: the names they belong to (the first part of
        each of `paths`) are said, the first few."""
        self.unwalked_count += count
        for path in paths:
            if len(self.unwalked) >= MAX_UNWALKED:
                return
            self.unwalked.setdefault(root_of(path), None)

    def open(self, obj: Any, path: str, depth: int, kind: str, owned: bool) -> None:
        self.objects += 1
        if self.objects > MAX_OBJECTS:
            self.stop(path, "inventory.skip.objects", count=f"{MAX_OBJECTS:,}")
            self.not_walked([path], 1)
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
            if self.full:
                break
            if type(value) not in SCALARS:
                self.child(value, f"{path}[{key_text(key, self.path_of)}]", depth, owned)

    def open_sequence(self, obj: Any, path: str, depth: int, owned: bool) -> None:
        base = next(b for b in (list, tuple, deque) if issubclass(type(obj), b))
        for i, value in enumerate(list(base.__iter__(obj))):  # NB: the base's own: no override runs
            if self.full:
                break
            if type(value) not in SCALARS:
                self.child(value, f"{path}[{i}]", depth, owned)

    def open_namedtuple(self, obj: Any, path: str, depth: int, owned: bool) -> None:
        for name, value in zip(type(obj)._fields, tuple.__iter__(obj)):
            self.child(value, f"{path}.{name}", depth, owned)

    def open_dataclass(self, obj: Any, path: str, depth: int, owned: bool) -> None:
        attributes = instance_dict(obj) or {}
        for f in dataclass_fields(type(obj)):
            if f.name in attributes:
                self.child(attributes[f.name], f"{path}.{f.name}", depth, owned)
            else:  # __slots__ dataclass: a known field name, so no __getattr__ involved
                self.guarded(f"{path}.{f.name}", lambda n=f.name: self.child(
                    object.__getattribute__(obj, n), f"{path}.{n}", depth, owned))

    def open_object(self, obj: Any, path: str, depth: int, owned: bool) -> None:
        attributes = instance_dict(obj)
        if attributes is None:  # NB: `__dict__` is a property of its class's own making: not called
            self.skip(path, "inventory.skip.no_dict", cls=type(obj).__name__)
            return
        for name, value in list(attributes.items()):
            if type(value) not in SCALARS and type(name) is str and self.public(name):
                self.child(value, f"{path}.{name}", depth, owned)

    def public(self, name: str) -> bool:
        if not name.startswith("_"):
            return True
        return self.options.include_private and not name.endswith("__")

    def open_module(self, module: torch.nn.Module, path: str, depth: int, owned: bool) -> None:
        """Parameters, buffers (each once, in `named_parameters()`'s order), then every module's plain
        attributes -- all read from the registries' dicts."""
        devices: Dict[str, List[str]] = {}
        modules = submodules(module)
        for registry, role in (("_parameters", ROLE_PARAMETER), ("_buffers", ROLE_BUFFER)):
            once: set = set()
            for dotted, _, own in modules:
                for key, t in list((own.get(registry) or {}).items()):
                    if is_tensor(t) and id(t) not in once and type(key) is str:
                        once.add(id(t))
                        self.member(t, module_path(path, f"{dotted}.{key}" if dotted else key), role, devices)
        for dotted, sub, own in modules:
            if sub is not module:
                self.submodules.add(id(sub))
            self.module_attributes(own, module_path(path, dotted) if dotted else path, depth, devices)
        if self.keep:
            self.models.append((path, id(module), devices))

    def module_attributes(self, own: Dict[str, Any], path: str, depth: int, devices: Dict[str, List[str]]) -> None:
        """Tensors kept as plain attributes: `.to(device)` leaves them behind, so they count too."""
        for name, value in list(own.items()):
            if type(value) in SCALARS or type(name) is not str or name in MODULE_OWN:
                continue
            if not self.public(name):
                continue
            if is_tensor(value):
                self.member(value, f"{path}.{name}", ROLE_TENSOR, devices)
            else:
                self.child(value, f"{path}.{name}", depth, True)

    def member(self, t: torch.Tensor, path: str, role: str, devices: Dict[str, List[str]]) -> None:
        devices.setdefault(self.device_name(t.device), []).append(path)
        self.tensor(t, path, role, True)

    def open_optimizer(self, optimizer: Any, path: str) -> None:
        attributes = instance_dict(optimizer) or {}
        fallback: Dict[int, str] = {}
        for g, group in enumerate(attributes.get("param_groups") or ()):
            for i, p in enumerate(dict.__getitem__(group, "params")):
                fallback[id(p)] = f"{path}.param_groups[{g}]['params'][{i}]"
                self.tensor(p, fallback[id(p)], ROLE_PARAMETER, True)
        for p, entries in list(dict.items(attributes.get("state") or {})):
            name = self.path_of.get(id(p)) or fallback.get(id(p), f"<{type(p).__name__}>")
            for key, value in list(dict.items(entries)):
                if is_tensor(value):
                    self.state(value, f"{path}.state[{name}][{key_text(key, self.path_of)}]", p, path)

    def state(self, value: torch.Tensor, path: str, param: Any, optimizer: str) -> None:
        self.tensor(value, path, ROLE_STATE, True)
        here = self.device_name(value.device)
        there = self.device_name(param.device) if is_tensor(param) else here
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
        device_name = names.get(device) or self.device_name(device)
        nbytes = 0 if device_name == "meta" else t.numel() * itemsize  # NB: meta: shapes only, no memory
        row = TensorRow(path, role, tuple(t.shape), dtype_name, device_name, t.requires_grad, t.is_leaf,
                        None if grad_fn is None else type(grad_fn).__name__, nbytes)
        if device_name == "meta":  # NB: no memory to count, though a meta storage's nbytes() says otherwise
            return row, ("tensor", id(t)), 0
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
        if not self.stopped:
            self.stopped.append(Skipped(path, catalog.message(
                "inventory.skip.stopped", self.language, reason=catalog.message(key, self.language, **params))))

    def skipped_list(self) -> Tuple[Skipped, ...]:
        """Why the walk stopped and what it did not walk first, then each object skipped."""
        more = [Skipped("…", catalog.message("inventory.skip.more", self.language, count=f"{self.skipped_more:,}"))
                ] if self.skipped_more else []
        return tuple(self.stopped + self.unwalked_list() + self.skipped + more)

    def unwalked_list(self) -> List[Skipped]:
        if not self.unwalked:
            return []
        more = ["…"] if self.unwalked_count > len(self.unwalked) else []
        names = catalog.message("list.comma", self.language).join([f"`{name}`" for name in self.unwalked] + more)
        return [Skipped("…", catalog.message("inventory.skip.unwalked", self.language, names=names,
                                             count=f"{self.unwalked_count:,}"))]

    def warnings(self, rows: List[Found]) -> List[DeviceWarning]:
        models = [(path, devices) for path, mid, devices in self.models
                  if devices and mid not in self.submodules]
        return (module_spans(models, self.language) + state_off(self.state_off, self.language)
                + will_collide(models, rows, self.owned, self.language))
