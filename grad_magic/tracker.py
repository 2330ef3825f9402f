"""The op tracker: a private TorchFunctionMode that only records.

It sees the torch calls the user's code makes (calls made inside a torch function are not seen: torch
pops the mode while it handles one). It never changes behaviour: every call returns
`func(*args, **kwargs)` untouched, and an exception raised by the op propagates unchanged.
Cost on the hot path: a name lookup and a few comparisons; frames are walked only when an op is recorded.
An `inplace=True` op made inside modules' `forward()` (`nn.ReLU(inplace=True)` in an `nn.Sequential`) is
recorded with those modules, innermost first, so a rule can name the module that wrote and where it was built.
"""
from __future__ import annotations

import os
import sys
import weakref
from collections import deque
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Callable, Deque, Iterable, List, Optional, Set, Tuple

import torch
from torch.overrides import TorchFunctionMode

from .provenance import Lineage
from .record import OpEvent, TensorSnapshot
from .sources import Sources, frame_at, plain_sources
from .torchstate import AnomalyWatch

# NB: `x += y` reaches the mode as `add_`; these dunders are the in-place ones that keep their name.
_INPLACE_DUNDERS = frozenset({"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
                              "__ifloordiv__", "__imod__", "__ipow__", "__iand__", "__ior__",
                              "__ixor__", "__ilshift__", "__irshift__", "__imatmul__"})
_ACCESSORS = frozenset({"__get__", "__set__"})  # a property read or written (`t.grad`, `p.grad = None`)
MAX_EVENTS = 512  # per kind of event and per run; older events are dropped (and counted)
MAX_MODULES = 8  # modules kept per in-place op, innermost first
compiling = torch.compiler.is_compiling
# NB: what dynamo reads as True while it traces (a constant): the check on every op's path, a third of
# is_compiling's cost; is_compiling (also non-strict export's tracing) is asked before an op is recorded
dynamo_compiling = getattr(torch.compiler, "is_dynamo_compiling", compiling)
TORCH_DIR = os.path.dirname(torch.__file__) + os.sep  # NB: a frame there is torch's own
_BACKWARDS = frozenset({torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad})
_DYNAMO_DIR = os.path.join(TORCH_DIR, "_dynamo") + os.sep
_OVERRIDES_FILE = torch.overrides.__file__


@dataclass(frozen=True)
class InPlaceEvent(OpEvent):
    """An in-place op, with what a plain OpEvent does not hold yet: `producers`, the backward node each target
    had before the write (`TanhBackward0`: what torch's message calls it, "output 0 of Tanh"); `modules`, for an
    `inplace=True` op made while modules' `forward()` ran, weak references to them, innermost first (the module
    that wrote, its containers, up to the `self` of the innermost user frame)."""

    producers: Tuple[str, ...] = ()
    modules: Tuple[weakref.ref, ...] = field(default=(), compare=False, repr=False)


def snapshot(t: torch.Tensor) -> TensorSnapshot:
    """Metadata only: reading these never touches tensor data or synchronises a device."""
    try:
        ref: Optional[weakref.ref] = weakref.ref(t)
    except TypeError:
        ref = None
    return TensorSnapshot(ident=id(t), shape=tuple(t.shape), dtype=str(t.dtype).replace("torch.", ""),
                          device=str(t.device), version=version_of(t), requires_grad=t.requires_grad,
                          is_leaf=t.is_leaf, ref=ref)


def producer_before(t: torch.Tensor) -> str:
    """The backward node `t` had before the in-place op just made on it: the op's own node links to it first
    (`ReluBackward0` -> `TanhBackward0`); "" for a tensor without one."""
    node = t.grad_fn
    following = node.next_functions if node is not None else ()
    first = following[0][0] if following else None
    return type(first).__name__ if first is not None else ""


def compiled_region(frame: Optional[FrameType]) -> bool:
    """Whether the first frame from `frame` out that is not torch's is code torch.compile generated (FX's
    `<eval_with_key>`, inductor's cache), or dynamo is on the way there (tracing: its fake-tensor runs of the
    ops): a compiled region, where the trackers step aside -- its ops are not lines of the user's (and inductor
    writes its buffers with out=)."""
    while frame is not None and frame.f_code.co_filename.startswith(TORCH_DIR):
        if frame.f_code.co_filename.startswith(_DYNAMO_DIR):
            return True  # NB: dynamo tracing the function: its fake-tensor runs of the ops (torch 2.11)
        frame = frame.f_back
    filename = frame.f_code.co_filename if frame is not None else ""
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")  # NB: set by inductor itself once it has run
    return filename.startswith("<eval_with_key>") or bool(cache) and filename.startswith(cache)


def version_of(t: torch.Tensor) -> int:
    """The version counter; -1 for a tensor that has none (an inference tensor raises on `_version`)."""
    return -1 if t.is_inference() else t._version


def _tensors_in(value: Any) -> Iterable[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, torch.Tensor):
                yield item


class OpLog:
    """Where the tracker writes. Owned by the capture session."""

    def __init__(self, filename: Optional[str], sources: Optional[Sources] = None) -> None:
        self.filename = filename
        self.sources = sources if sources is not None else plain_sources(filename, "")
        self.inplace: Deque[OpEvent] = deque(maxlen=MAX_EVENTS)
        self.failed: Deque[OpEvent] = deque(maxlen=MAX_EVENTS)
        self.touched: Set[int] = set()  # ids of tensors changed in place since the last optimizer step
        self.paused = 0  # > 0 while an optimizer steps: its own in-place updates are not the user's (see pause)
        self.on_pause: Optional[Callable[[], None]] = None  # NB: told each time `paused` changes (lighttrack.py)
        self.compiled = 0  # in-place ops of torch.compile'd code the trackers stepped aside for
        self.dropped = 0
        self.wrapped_failure: Optional[BaseException] = None  # NB: the error an in-place wrapper recorded as it raised
        self.lineage: Optional[Lineage] = None  # NB: full mode: where each tensor the run made came from

    def pause(self, by: int) -> None:
        """`paused` one up (1) or down (-1), never below 0, and whoever listens told."""
        self.paused = max(0, self.paused + by)
        if self.on_pause is not None:
            self.on_pause()

    def user_lineno(self) -> Optional[int]:
        """The innermost line of the user's cell on the current stack."""
        return self.sources.stack(frame_at(2), self.filename)[0]

    def user_site(self) -> Tuple[Optional[int], Tuple[Tuple[str, int], ...]]:
        """The innermost line of the user's cell on the current stack, and the user frames (cells, own files)
        from the innermost out."""
        return self.sources.stack(frame_at(2), self.filename)

    def modules_on_stack(self) -> Tuple[weakref.ref, ...]:
        """The modules whose `forward()` runs around the current op, innermost first, up to the innermost user
        frame (its `self` when that is a module). Only frames named `forward` and that user frame are read."""
        found: List[Any] = []
        frame = frame_at(2)
        module = torch.nn.Module
        while frame is not None and len(found) < MAX_MODULES:
            code = frame.f_code
            user = self.sources.is_user(code.co_filename)
            if user or code.co_name == "forward":
                owner = frame.f_locals.get("self") if code.co_argcount else None
                if isinstance(owner, module) and (not found or found[-1] is not owner):
                    found.append(owner)
            if user:
                break
            frame = frame.f_back
        return tuple(weakref.ref(m) for m in found)

    def add(self, queue: Deque[OpEvent], event: OpEvent) -> None:
        if len(queue) == queue.maxlen:
            self.dropped += 1
        queue.append(event)


def _on_meta(args: tuple, kwargs: Optional[dict]) -> bool:
    """Whether a backward()'s roots (its first argument: a tensor or a sequence of them) are `meta` tensors."""
    roots = args[0] if args else (kwargs or {}).get("tensors", (kwargs or {}).get("outputs"))
    roots = roots if isinstance(roots, (list, tuple)) else (roots,)
    return any(isinstance(t, torch.Tensor) and t.is_meta for t in roots)


class OpTracker(TorchFunctionMode):
    """`anomaly`: the run's anomaly-mode watch, which lifts grad_magic's own NaN check for a backward() on
    `meta` tensors (the check reads values, which meta tensors do not have)."""

    def __init__(self, log: OpLog, anomaly: Optional[AnomalyWatch] = None) -> None:
        super().__init__()
        self._log = log
        self._anomaly = anomaly

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[override]
        # NB: the hot path (every torch call the user's code makes): nothing but the call for an op
        # that is not in place (its name does not end in "_") and has no keyword arguments.
        if dynamo_compiling():  # NB: dynamo traces this frame: the bare call, no graph break (test_compile.py)
            return func(*args, **kwargs) if kwargs else func(*args)
        try:
            if func in _BACKWARDS and self._anomaly is not None and _on_meta(args, kwargs) \
                    and self._anomaly.lifts_nan_check():
                result = self._anomaly.call_without_nan_check(func, args, kwargs or {})
            else:
                result = func(*args, **kwargs) if kwargs else func(*args)
        except Exception as error:
            try:
                self._record_failure(func, args, kwargs or {})
            except Exception:  # NB: watching never changes what the user's code does or raises
                self._log.dropped += 1
            tb, here = error.__traceback__, sys._getframe(0)
            # NB: the bare raise adds no entry: the cell's format_exc() as plain. Kept where torch's Python
            # dispatch called this frame (Tensor.backward): stacks.without_dispatch drops it with torch's frames
            if tb is not None and tb.tb_frame is here and (here.f_back is None or
                                                            here.f_back.f_code.co_filename != _OVERRIDES_FILE):
                error.__traceback__ = tb.tb_next
            raise
        if not self._log.paused:
            try:
                name = getattr(func, "__name__", "")
                lineage = self._log.lineage
                if lineage is not None:
                    if name == "backward" and args:
                        lineage.backward(args[0], self._log.user_site()[1])
                    else:
                        lineage.record(name, args, kwargs or {}, result, self._log.user_site()[1])
                # NB: most keyword calls (`F.relu(x, inplace=False)`, `cross_entropy(..., reduction=)`)
                # write nothing: only `out=` and `inplace=True` can, so only those go on to _observe.
                if name[-1:] == "_" and name not in _ACCESSORS or kwargs and (
                        kwargs.get("out") is not None or kwargs.get("inplace") is True):
                    self._observe(name, args, kwargs or {})
            except Exception:  # NB: e.g. a tensor subclass whose metadata raises
                self._log.dropped += 1
        return result

    def _observe(self, name: str, args: tuple, kwargs: dict) -> None:
        if compiling():
            return
        if compiled_region(frame_at(2)):
            self._log.compiled += 1
            return
        if name[-1:] == "_" and name[:2] != "__" or name in _INPLACE_DUNDERS:
            self._record_inplace(name, _tensors_in(args[0]) if args else (), "setitem"
                                 if name == "__setitem__" else "method")
        elif kwargs.get("inplace") is True and args:
            self._record_inplace(name, _tensors_in(args[0]), "inplace=True")
        elif kwargs.get("out") is not None:
            self._record_inplace(name, _tensors_in(kwargs["out"]), "out=")

    def _record_inplace(self, name: str, targets: Iterable[torch.Tensor], how: str) -> None:
        log = self._log
        shots: Tuple[TensorSnapshot, ...] = ()
        producers: Tuple[str, ...] = ()
        for i, t in enumerate(targets):
            log.touched.add(id(t))
            if i < 4:  # NB: a foreach op may touch hundreds of tensors; four describe it
                shots += (snapshot(t),)
                producers += (producer_before(t),)
        lineno, frames = log.user_site()
        # NB: a module writes in place through a functional's `inplace=True` (nn.ReLU, nn.Dropout ...): only
        # those ops pay for the walk; `x += y` in the user's own forward() is placed by its frame alone
        modules = log.modules_on_stack() if how == "inplace=True" else ()
        log.add(log.inplace, InPlaceEvent(name, lineno, shots, how, frames=frames, producers=producers,
                                          modules=modules))

    def _record_failure(self, func: Any, args: tuple, kwargs: dict) -> None:
        log = self._log
        shots = tuple(snapshot(t) for value in (*args, *kwargs.values()) for t in _tensors_in(value))
        name = getattr(func, "__name__", repr(func))
        lineno, frames = log.user_site()
        log.add(log.failed, OpEvent(name, lineno, shots[:16], "raised", frames=frames))
