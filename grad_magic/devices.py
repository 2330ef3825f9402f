"""`%grad_device`'s room: find every tensor reachable from a namespace and say which device it lives on.

May touch: the namespace's objects, read-only, and of a tensor only its METADATA (shape, dtype, device,
requires_grad, is_leaf, grad_fn, element size, storage identity and size). Never tensor data: no `.item()`,
no `repr(tensor)`, no `bool(tensor)`, no `==` / `in` on tensors -- identity only. Never `getattr` on a
name an object may answer through `__getattr__`: plain objects are read through their `__dict__` only.
No IPython here; jinja2 only when HTML is asked for. The report holds strings and numbers, never a live
tensor, so keeping it (in `Out`, say) keeps no memory alive.
"""
from __future__ import annotations

import gc
import re
import types
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field, fields as dataclass_fields, is_dataclass
from functools import lru_cache
from operator import attrgetter
from typing import Any, Deque, Dict, Iterator, List, Mapping, Optional, Tuple

import torch

SORTS = ("size", "name", "device")
DISPLAY_ROWS = 200  # rows shown by the text and HTML renders; `report.rows` keeps them all
MAX_SKIPPED = 200  # skipped objects listed one by one; the rest are only counted
MAX_OBJECTS = 2_000_000  # containers opened in one walk whatever the depth, so a walk always ends
MAX_COLLIDE_WARNINGS = 10  # will-collide warnings named one by one; the rest are summed up in one
KEPT_BY_HISTORY_DEVICES = ("cuda",)  # device types whose memory `Out` pins is worth a warning
IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
_HISTORY = re.compile(r"(Out|_oh|_{1,3}|_\d+)\Z")  # IPython's output history: Out, _oh, _, __, ___, _N

ROLE_TENSOR, ROLE_PARAMETER, ROLE_BUFFER, ROLE_GRAD, ROLE_STATE = (
    "tensor", "parameter", "buffer", "grad", "optimizer state")


@dataclass(frozen=True)
class DeviceOptions:
    device: Optional[str] = None  # "cuda" matches every cuda:N; "cuda:0" only that one
    include_private: bool = False  # `_names` and IPython's output history too (`%grad_device --all`)
    depth: int = 6  # containers opened below a namespace name
    sort: str = "size"  # "size" (largest first), "name" or "device"
    max_tensors: int = 200_000

    def __post_init__(self) -> None:
        if self.sort not in SORTS:
            raise ValueError(f"sort must be one of {', '.join(SORTS)}, not {self.sort!r}")
        if self.depth < 0 or self.max_tensors < 1:
            raise ValueError("depth must be >= 0 and max_tensors >= 1")
        if self.device is not None:
            try:
                torch.device(self.device)
            except RuntimeError:  # a typo such as "gpu": say so now, not "no tensors found" later
                raise ValueError(f"unknown device {self.device!r}: try cpu, cuda, cuda:0, meta, mps"
                                 ) from None


@dataclass(frozen=True, init=False)
class TensorRow:
    path: str  # how to reach it from the namespace: `batch['x']`, `model.fc.weight.grad`
    role: str  # tensor, parameter, buffer, grad, optimizer state
    shape: Tuple[int, ...]
    dtype: str  # "float32"
    device: str  # "cpu", "cuda:0", "meta"
    requires_grad: bool
    is_leaf: bool
    grad_fn: Optional[str]
    nbytes: int  # numel * element size: what this view shows, not its storage

    def __init__(self, path: str, role: str, shape: Tuple[int, ...], dtype: str, device: str,
                 requires_grad: bool, is_leaf: bool, grad_fn: Optional[str], nbytes: int) -> None:
        # NB: one dict update, not the nine frozen setattrs dataclass writes: a third of the walk's time
        # at 10k tensors. Still frozen: assigning a field afterwards raises FrozenInstanceError.
        self.__dict__.update(path=path, role=role, shape=shape, dtype=dtype, device=device,
                             requires_grad=requires_grad, is_leaf=is_leaf, grad_fn=grad_fn, nbytes=nbytes)


@dataclass(frozen=True)
class DeviceTotal:
    count: int  # tensors (rows) on the device
    bytes: int  # each storage counted once, however many views share it


@dataclass(frozen=True)
class DeviceWarning:
    kind: str  # stable slug: module-spans-devices, optimizer-state-device, will-collide, ...
    message: str


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True, repr=False)
class DeviceReport:
    rows: Tuple[TensorRow, ...]
    totals: Dict[str, DeviceTotal]  # device -> total, largest first
    warnings: Tuple[DeviceWarning, ...]
    skipped: Tuple[Skipped, ...]
    options: DeviceOptions = field(default_factory=DeviceOptions)

    def __str__(self) -> str:
        return render_text(self)

    __repr__ = __str__

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(render_text(self))

    def _repr_html_(self) -> str:
        return render_html(self)


def build_report(namespace: Mapping[str, object], options: DeviceOptions = DeviceOptions()) -> DeviceReport:
    """Every tensor reachable from `namespace` (metadata only), the bytes per device, and warnings."""
    with _collector_paused():
        visible, private, history = _partition(namespace)
        walk = _Walk(options)
        rows = walk.phase(visible, keep=True)
        private_only = walk.phase(private, keep=options.include_private)
        # NB: history last, so what it finds is exactly what nothing else in the namespace refers to.
        history_only = walk.phase(history, keep=options.include_private)
        if options.include_private:
            rows += private_only + history_only
        shown = [found for found in rows if _device_matches(found[0].device, options.device)]
        warnings = walk.warnings(rows) + _kept_by_history(history_only)
        return DeviceReport(rows=tuple(_sorted([found[0] for found in shown], options.sort)),
                            totals=_totals(shown), warnings=tuple(warnings), skipped=walk.skipped_list(),
                            options=options)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The walk makes many small objects and no garbage cycles; a collection meanwhile traverses every
    live tensor (at 100k tensors, 40% of the time). Restored as it was found, whatever happens."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _partition(namespace: Mapping[str, object]) -> Tuple[List[Tuple[str, Any]], ...]:
    """(visible, private, output history) names; dunders and IPython's own input-side names dropped."""
    visible: List[Tuple[str, Any]] = []
    private: List[Tuple[str, Any]] = []
    history: List[Tuple[str, Any]] = []
    for name, value in list(namespace.items()):
        if type(name) is not str:
            continue
        if name[:1] != "_":  # NB: the common case first, without pattern matching
            if name == "Out":
                history.append((name, value))
            elif name not in IPYTHON_NAMES:  # `In`, `exit`...: strings and the shell, not a user's tensor
                visible.append((name, value))
        elif _HISTORY.match(name):
            history.append((name, value))
        elif not _INPUT_SIDE.match(name) and not (name.endswith("__") and len(name) > 4):
            private.append((name, value))  # dunders (`__builtins__`) and `_i3`, `_ih` never hold tensors
    return visible, private, history


_INPUT_SIDE = re.compile(r"(_ih|_dh|_i+|_i\d+)\Z")
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
Found = Tuple[TensorRow, int, Any, int]  # (row, id of the tensor, storage key, storage bytes)


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


class _Walk:
    """The state of one walk, breadth first so each tensor is named by its shortest path.

    NB: every id kept here is of an object reachable from the namespace, which outlives the walk, so ids
    cannot be reused while it runs. Tensors are compared by identity only (`==` would read their data).
    """

    def __init__(self, options: DeviceOptions) -> None:
        self.options = options
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
                self.skip(path, f"{cls.__name__} answers any attribute name (__getattr__); not looked into")
            elif depth >= self.options.depth:
                self.skip(path, f"depth limit: deeper than {self.options.depth} levels; not looked into")
            else:
                self.queue.append((obj, path, depth, kind, owned))

    def open(self, obj: Any, path: str, depth: int, kind: str, owned: bool) -> None:
        self.objects += 1
        if self.objects > MAX_OBJECTS:
            self.stop(path, f"object limit: stopped after {MAX_OBJECTS:,} containers")
        elif kind == "optimizer":
            self.optimizers.append((path, obj))  # NB: after the phase, once its parameters have paths
        else:
            self.guarded(path, getattr(self, "open_" + kind), obj, path, depth + 1, owned)

    def guarded(self, path: str, opener: Any, *args: Any) -> None:
        try:
            opener(*args)
        except Exception as e:  # a hostile object must not stop the walk, only be reported
            self.skip(path, f"attribute access raised {type(e).__name__}")

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
            self.stop(path, f"tensor limit: stopped after {self.options.max_tensors:,} tensors")
            return
        self.tensors += 1
        try:
            found = self.describe(t, path, ROLE_TENSOR if kind == "tensor" else kind)
            grad = t.grad if found[0].is_leaf else None  # NB: .grad of a non-leaf warns; leaves only
        except Exception as e:
            self.skip(path, f"reading its metadata raised {type(e).__name__}")
            return
        self.found.append(found)
        self.path_of[tid] = path
        if grad is not None:
            self.tensor(grad, path + ".grad", ROLE_GRAD, owned)

    def describe(self, t: torch.Tensor, path: str, role: str) -> Found:
        """Metadata only: a few attribute reads; dtype and device names cached (str() costs more)."""
        names = self.names
        dtype, device, grad_fn = t.dtype, t.device, t.grad_fn
        dtype_name, itemsize = names.get(dtype) or names.setdefault(
            dtype, (str(dtype).replace("torch.", "", 1), dtype.itemsize))
        numel = t.numel()
        row = TensorRow(path, role, tuple(t.shape), dtype_name, names.get(device) or self.device_name(device),
                        t.requires_grad, t.is_leaf, None if grad_fn is None else type(grad_fn).__name__,
                        numel * itemsize)
        try:
            key = _storage_key(t)
            nbytes = self.storage_bytes.get(key)
            if nbytes is None:
                nbytes = self.storage_bytes[key] = t.untyped_storage().nbytes()
            return row, id(t), key, nbytes
        except (NotImplementedError, RuntimeError):  # sparse and other storage-less layouts
            return row, id(t), ("tensor", id(t)), numel * itemsize

    def device_name(self, device: torch.device) -> str:
        name = self.names.get(device)
        if name is None:
            name = self.names[device] = str(device)
        return name

    def skip(self, path: str, reason: str) -> None:
        if len(self.skipped) < MAX_SKIPPED:
            self.skipped.append(Skipped(path, reason))
        else:
            self.skipped_more += 1

    def stop(self, path: str, reason: str) -> None:
        self.full = True
        self.skip(path, reason + "; the rest of the namespace was not walked")

    def skipped_list(self) -> Tuple[Skipped, ...]:
        more = [Skipped("…", f"{self.skipped_more:,} more not listed")] if self.skipped_more else []
        return tuple(self.skipped + more)

    def warnings(self, rows: List[Found]) -> List[DeviceWarning]:
        models = [(path, devices) for path, mid, devices in self.models
                  if devices and mid not in self.submodules]
        return (_module_spans(models) + _state_off(self.state_off)
                + _will_collide(models, rows, self.owned))


def _storage_key(t: torch.Tensor) -> int:
    """The address of the tensor's StorageImpl: shared by all its views, unique while it lives.

    NB: not data_ptr() (0 on every meta tensor), and not id() of the `untyped_storage()` wrapper: torch
    2.x happens to keep that wrapper alive, but older versions made it anew, and making it costs. Same
    number as `untyped_storage()._cdata`; `_storage_id` reads it without making the wrapper.
    """
    if _STORAGE_ID is not None:
        return _STORAGE_ID(t)
    return t.untyped_storage()._cdata


_STORAGE_ID = getattr(torch._C, "_storage_id", None)


def _is_tensor(obj: Any) -> bool:
    return issubclass(type(obj), torch.Tensor)  # NB: type(), not isinstance: Mock(spec=...) lies


def _instance_dict(obj: Any) -> Optional[dict]:
    """`vars(obj)` without asking the object: no __getattr__, no properties of its own making."""
    try:
        attributes = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return None
    return attributes if type(attributes) is dict else None


def _module_spans(models: List[Tuple[str, Dict[str, List[str]]]]) -> List[DeviceWarning]:
    out = []
    for path, devices in models:
        if len(devices) > 1:
            parts = [f"{dev} ({len(paths)}, e.g. `{paths[0]}`)"
                     for dev, paths in sorted(devices.items(), key=lambda kv: -len(kv[1]))]
            out.append(DeviceWarning("module-spans-devices",
                                     f"`{path}` has parameters and buffers on {len(devices)} devices: "
                                     f"{', '.join(parts)}; move it whole with `{path}.to(device)`"))
    return out


def _state_off(state_off: Dict[Tuple[str, str, str], List[str]]) -> List[DeviceWarning]:
    return [DeviceWarning("optimizer-state-device",
                          f"`{paths[0]}`{f' and {len(paths) - 1} more' if len(paths) > 1 else ''} "
                          f"on {here}, but the parameter is on {there}: `{optimizer}.step()` will fail; "
                          f"move the state to {there}, or load the state dict after moving the model")
            for (optimizer, here, there), paths in state_off.items()]


def _will_collide(models: List[Tuple[str, Dict[str, List[str]]]], rows: List[Found],
                  owned: set) -> List[DeviceWarning]:
    """Loose tensors on another device than the model(s) -- only when every model sits on one device."""
    homes = {dev for _, devices in models for dev in devices}
    if len(homes) != 1 or any(len(devices) > 1 for _, devices in models):
        return []
    home = homes.pop()
    names = " and ".join(f"`{path}`" for path, _ in models)
    # NB: a 0-dim CPU tensor mixes with tensors on any device, so it never collides.
    loose = [row for row, tid, _, _ in rows if tid not in owned and row.role != ROLE_GRAD
             and row.device != home and not (row.device == "cpu" and row.shape == ())]
    out = [DeviceWarning("will-collide", f"`{row.path}` is on {row.device}; it will collide with "
                                         f"{names} on {home}") for row in loose[:MAX_COLLIDE_WARNINGS]]
    if len(loose) > MAX_COLLIDE_WARNINGS:
        out.append(DeviceWarning("will-collide", f"{len(loose) - MAX_COLLIDE_WARNINGS:,} more tensors "
                                                 f"are not on {home} either"))
    return out


def _kept_by_history(history_only: List[Found]) -> List[DeviceWarning]:
    """Tensors that only IPython's output history (`Out`, `_N`) still refers to, on a scarce device."""
    kept = [f for f in history_only if f[0].device.split(":")[0] in KEPT_BY_HISTORY_DEVICES]
    if not kept:
        return []
    roots = list(dict.fromkeys(re.match(r"[^.\[]*(\[\d+\])?", row.path).group(0) for row, *_ in kept))
    names = ", ".join(f"`{root}`" for root in roots[:5]) + (" …" if len(roots) > 5 else "")
    size = human_bytes(sum(dict((key, nbytes) for _, _, key, nbytes in kept).values()))
    return [DeviceWarning("kept-by-output-history",
                          f"{names} keep{'s' if len(roots) == 1 else ''} {len(kept)} tensor(s) "
                          f"({size}) on {', '.join(sorted({f[0].device for f in kept}))} alive that "
                          f"nothing else refers to; `%reset -f out` frees them")]


def _device_matches(device: str, wanted: Optional[str]) -> bool:
    return wanted is None or device == wanted or (":" not in wanted and device.split(":")[0] == wanted)


def _sorted(rows: List[TensorRow], sort: str) -> List[TensorRow]:
    """Stable sorts, least significant key first (C-level attrgetter keys: 100k rows in ~20 ms)."""
    rows = sorted(rows, key=attrgetter("path"))
    if sort != "name":
        rows.sort(key=attrgetter("nbytes"), reverse=True)  # NB: reverse=True keeps ties in order
    if sort == "device":
        rows.sort(key=attrgetter("device"))
    return rows


def _totals(rows: List[Found]) -> Dict[str, DeviceTotal]:
    counts: Dict[str, int] = {}
    storages: Dict[str, Dict[Any, int]] = {}
    for row, _, key, nbytes in rows:
        counts[row.device] = counts.get(row.device, 0) + 1
        storages.setdefault(row.device, {})[key] = nbytes  # NB: each storage once, however many views
    totals = {dev: DeviceTotal(counts[dev], sum(storages[dev].values())) for dev in counts}
    return dict(sorted(totals.items(), key=lambda kv: (-kv[1].bytes, kv[0])))


# ---- rendering: strings in, strings out (the walk above never calls these) ----

COLUMNS = ("path", "role", "shape", "dtype", "device", "grad", "size")


def human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def row_cells(row: TensorRow) -> Tuple[str, ...]:
    """A row as the seven column strings; grad: `no`, `leaf` (requires grad), or the grad_fn's name."""
    grad = row.grad_fn or ("leaf" if row.requires_grad else "no")
    return (_clip(row.path), row.role, str(row.shape), row.dtype, row.device, grad, human_bytes(row.nbytes))


def summary_line(report: DeviceReport) -> str:
    return "; ".join(f"{dev}: {t.count:,} tensor{'s' if t.count != 1 else ''}, {human_bytes(t.bytes)}"
                     for dev, t in report.totals.items())


def render_text(report: DeviceReport) -> str:
    lines = _table(report) if report.rows else [_nothing_found(report)]
    lines += [f"  [{w.kind}] {w.message}" for w in report.warnings]
    lines += [f"  skipped {s.path}: {s.reason}" for s in report.skipped[:20]]
    if len(report.skipped) > 20:
        lines.append(f"  … {len(report.skipped) - 20} more skipped (see report.skipped)")
    return "\n".join(lines)


def _table(report: DeviceReport) -> List[str]:
    cells = [COLUMNS] + [row_cells(row) for row in report.rows[:DISPLAY_ROWS]]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line[:-1], widths)) + "  " + line[-1].rjust(widths[-1])
             for line in cells]
    if len(report.rows) > DISPLAY_ROWS:
        lines.append(f"… {len(report.rows) - DISPLAY_ROWS:,} more rows (all {len(report.rows):,} "
                     f"are in report.rows)")
    return lines + ["", "total: " + summary_line(report)]


def _nothing_found(report: DeviceReport) -> str:
    where = f" on {report.options.device}" if report.options.device else ""
    return f"grad_device: no tensors found{where} in the namespace"


def _clip(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


@lru_cache(maxsize=1)
def _html_environment() -> Any:
    import jinja2  # NB: on first HTML render, not when the extension loads

    return jinja2.Environment(loader=jinja2.PackageLoader("grad_magic", "templates"), autoescape=True,
                              trim_blocks=True, lstrip_blocks=True)


def render_html(report: DeviceReport) -> str:
    largest = max((t.bytes for t in report.totals.values()), default=0) or 1
    bars = [(dev, t, human_bytes(t.bytes), round(100 * t.bytes / largest, 1), dev.split(":")[0])
            for dev, t in report.totals.items()]
    return _html_environment().get_template("device_report.html.j2").render(
        report=report, bars=bars, columns=COLUMNS, rows=[row_cells(r) for r in report.rows[:DISPLAY_ROWS]],
        more_rows=max(0, len(report.rows) - DISPLAY_ROWS), nothing_found=_nothing_found(report))
