"""The light op tracker of fast mode (`%%gradcheck --fast`, always-on): only torch's in-place entry points,
patched while a capture runs; no TorchFunctionMode.

Part of the capture room (capture.py installs it; every undo idempotent). A TorchFunctionMode sees every
torch call and costs 1.11-1.15x on a small training loop by itself; a healthy loop makes almost no in-place
call of its own, so patching only those costs nothing measurable (bench/). What is patched, for the run:

- the public in-place methods of `torch.Tensor` (names ending in `_`) and its in-place dunders
  (`__iadd__` ... `__setitem__`); `x += y` is recorded as `add_`, as torch's mode reports it;
- the public `torch.*_` functions, and the in-place kernels `torch.nn.functional` reaches for `inplace=True`
  (`torch._C._nn.leaky_relu_`, `torch._VF.dropout_` ...): only called when an op does write in place, so an
  `F.relu(x)` without `inplace=True` pays nothing.

`out=` is not tracked in fast mode: any torch function takes it, so only a mode sees them all (full mode
does); wrapping every torch function would put a Python call on the hot path and, for a compiled function
that names one (`torch.cat`), a guard on it that compiles the function again each time tracking goes on or
off. Warnings torch raises inside a patched call are placed at the user's line by warnwatch, as for the mode.

Which calls are recorded (the mode saw only the calls user code made, not those inside torch functions):
a call whose caller is torch's own code is not recorded -- `nn.init.uniform_` at model construction, a
BatchNorm's counter, torch's Python helpers -- except the `inplace=True` kernels called from
`torch.nn.functional`, recorded under the functional's name with how="inplace=True" and the modules whose
`forward()` ran them (what the mode recorded for `F.relu(x, inplace=True)`). Calls made while `log.paused`
(optimizer steps, set by the step watch; while every tracker's log is, a wrapper reads one global and passes
the call on), in another thread than the capture's, while dynamo traces (`torch.compiler.is_dynamo_compiling()`,
checked first, so that a compiled region traces torch's own function and no guard on our state) or anything
else compiles (`is_compiling()`: non-strict export), or from a compiled region's generated code
(`tracker.compiled_region`) are passed on unrecorded. An in-place call that raises is recorded in `log.failed`
and re-raised as it is; its wrapper frame is hidden from the user's traceback (`WRAPPER_CODE`, in
capture.HIDDEN_CODE). Any other op that raised is rebuilt from the traceback after the run
(lightfail.py's `rebuild_failure`, called by the capture when it makes the record).
"""
from __future__ import annotations

import itertools
import operator
import sys
from _thread import get_ident
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import torch
import torch.nn.functional

from .record import OpEvent
from .repeats import REPEATS
from .tracker import (TORCH_DIR, InPlaceEvent, OpLog, compiled_region, compiling, dynamo_compiling,
                      producer_before, snapshot)

_FUNCTIONAL_FILE = torch.nn.functional.__file__
_has_torch_function = torch._C._has_torch_function
_handle_torch_function = torch.overrides.handle_torch_function
_MISSING = object()
# NB: the names torch's mode reports for these dunders (the others keep their dunder name there too)
_DUNDER_NAMES = {"__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_",
                 "__idiv__": "div_", "__ifloordiv__": "floor_divide_", "__imod__": "remainder_",
                 "__ipow__": "pow_", "__iand__": "__iand__", "__ior__": "__ior__", "__ixor__": "__ixor__",
                 "__ilshift__": "__ilshift__", "__irshift__": "__irshift__", "__imatmul__": "__imatmul__",
                 "__setitem__": "__setitem__"}
_NOT_WRITES = frozenset({"requires_grad_", "retain_grad", "share_memory_", "pin_memory"})
# NB: the private torch functions that clear many gradients at once (`torch._foreach_zero_(grads)`, as
# zero_grad(set_to_none=False) does): the step watch counts them as clearings (stepwatch.CLEARING)
_FOREACH_CLEARING = frozenset({"_foreach_zero_", "_foreach_copy_"})
_getframe = sys._getframe


def entry_points() -> Iterator[Tuple[Any, str, str]]:
    """(owner, attribute, recorded name) of every in-place entry point patched while a capture runs."""
    tensor = torch.Tensor
    for name in dir(tensor):
        if name in _DUNDER_NAMES:
            yield tensor, name, _DUNDER_NAMES[name]
        elif name[-1:] == "_" and name[:1] != "_" and name not in _NOT_WRITES:
            yield tensor, name, name
    for name in dir(torch):
        public = name[:1] != "_" or name in _FOREACH_CLEARING
        if name[-1:] == "_" and public and callable(getattr(torch, name, None)):
            yield torch, name, name
    # NB: torch._VF is a module object that forwards to torch._C._VariableFunctions: its names are there
    for owner, names in ((torch._C._nn, dir(torch._C._nn)), (torch._VF, dir(torch._C._VariableFunctions))):
        for name in names:
            if name[-1:] == "_" and name[:1] != "_" and callable(getattr(owner, name, None)):
                yield owner, name, name


class _Patch:
    """One entry point and its wrapper, made once per process: ~330 new closures a cell set the garbage
    collector off (1-6 ms a cell, measured); made again only when what sits there changed (a user's patch)."""

    __slots__ = ("owner", "name", "recorded", "before", "wrapper")

    def __init__(self, owner: Any, name: str, recorded: str) -> None:
        self.owner, self.name, self.recorded = owner, name, recorded
        self.before: Any = _MISSING
        self.wrapper: Any = None

    def ready(self) -> bool:
        """The wrapper, for what sits there now; False when nothing does (deleted by the user)."""
        current = vars(self.owner).get(self.name, _MISSING)
        if self.wrapper is not None and current is self.before:
            return True
        original = getattr(self.owner, self.name, None)
        if original is None:
            return False
        self.before, self.wrapper = current, _wrap(original, self.recorded, self.owner is not torch.Tensor)
        _as_torchs(self.wrapper, original, self.owner, self.name)
        return True

    def is_on(self) -> bool:
        return vars(self.owner).get(self.name, _MISSING) is self.wrapper

    def take_off(self) -> None:
        """What was there before put back: nothing where the attribute was inherited."""
        if self.before is _MISSING:
            delattr(self.owner, self.name)
        else:
            setattr(self.owner, self.name, self.before)


_PATCHES: List[_Patch] = []  # NB: listed once, at the first capture (dir() of torch is slow)
# NB: _PATCHES by owner: (owner, its names, its patches), for `_all_on`
_BY_OWNER: List[Tuple[Any, Tuple[str, ...], Tuple[_Patch, ...]]] = []
_wrapper_of = operator.attrgetter("wrapper")
_ACTIVE: List["LightTracker"] = []  # the light trackers on, outermost first
# NB: those of them that record now (not closed, their log not paused): empty while an optimizer steps, so its
# own in-place updates (~7 a parameter for Adam) pass the wrappers on a global read (the fast path of _wrap)
_RECORDING: List["LightTracker"] = []


def _recount() -> None:
    REPEATS.flush()  # NB: a step (or a capture) between two calls ends their run: the next is recorded in full
    if len(_ACTIVE) == 1:  # NB: the usual case, twice a step (a step pauses, then resumes)
        one = _ACTIVE[0]
        _RECORDING[:] = () if one.closed or one.log.paused else (one,)
    else:
        _RECORDING[:] = [t for t in _ACTIVE if not t.closed and not t.log.paused]


def _all_on() -> bool:
    """Whether every entry point holds its wrapper already (always-on's held patches, at each of its cells).
    NB: compared by identity, in C (map, attrgetter, operator.is_): ~330 entry points, no bytecode each, and no
    `__eq__` of whatever sits there runs."""
    if not _BY_OWNER:
        owners: Dict[int, Tuple[Any, List[str], List[_Patch]]] = {}
        for patch in _PATCHES:
            _, names, patches = owners.setdefault(id(patch.owner), (patch.owner, [], []))
            names.append(patch.name)
            patches.append(patch)
        _BY_OWNER.extend((owner, tuple(names), tuple(patches)) for owner, names, patches in owners.values())
    for owner, names, patches in _BY_OWNER:
        here = map(vars(owner).get, names, itertools.repeat(_MISSING))
        if not all(map(operator.is_, here, map(_wrapper_of, patches))):
            return False
    return True


class LightTracker:
    """The patches of one capture: `install` puts them on, `uninstall` (idempotent) takes off each one that is
    still ours, and puts back what was there -- nothing where the attribute was inherited (torch.Tensor's
    methods live on TensorBase). A patch is noted before it goes on, so an interrupt between the two leaves
    nothing the undo does not know of. A capture inside a capture finds the patches on, and leaves them to the
    outer one; each active tracker of the thread records (as nested modes did).

    NB: each install and uninstall changes torch.Tensor's type version (its attribute caches start over, and
    Python 3.13 stops caching a type after ~1,000 versions): the always-on watch holds the patches on with a
    tracker that records nothing (`records=False`) from `%gradcheck on` to `off`, so its cells' trackers find
    them on and change nothing."""

    def __init__(self, log: Optional[OpLog], records: bool = True) -> None:
        self.log = log
        self.records = records  # NB: False: holds the patches on only (always-on, between its cells), records nothing
        self.thread = get_ident()
        self._mine = bytearray()  # NB: 1 where this tracker put the patch of _PATCHES[i] on
        self.closed = False

    def install(self) -> None:
        if not _PATCHES:
            _PATCHES.extend(_Patch(*entry) for entry in entry_points())
        self._mine = mine = bytearray(len(_PATCHES))
        if self.records:
            _ACTIVE.append(self)
            self.log.on_pause = _recount
            _recount()
        if _all_on():
            return  # NB: all an outer capture's (always-on holds them on between its cells): none is this one's
        for i, patch in enumerate(_PATCHES):
            if vars(patch.owner).get(patch.name, _MISSING) is patch.wrapper or not patch.ready():
                continue  # NB: an outer capture's patch, left to it; or nothing there to patch
            mine[i] = 1
            setattr(patch.owner, patch.name, patch.wrapper)

    def uninstall(self) -> None:
        REPEATS.flush()  # NB: while this tracker still records: a run's last call goes in its log
        self.closed = True
        for i in range(len(_ACTIVE) - 1, -1, -1):
            if _ACTIVE[i] is self:
                del _ACTIVE[i]
        _recount()
        mine = self._mine
        i = mine.rfind(1)  # NB: the patches this tracker put on, the last first (none under always-on)
        while i >= 0:
            patch = _PATCHES[i]
            if patch.is_on():  # NB: a user's patch since: theirs
                patch.take_off()
            mine[i] = 0
            i = mine.rfind(1, 0, i)

    def record(self, name: str, caller: Any, args: tuple, kwargs: dict,
               failed: Optional[BaseException] = None) -> Optional[InPlaceEvent]:
        """One event in the log (`failed`: the error the call raised); never raises (watching never changes what
        the user's code does or raises). The in-place event it added, if any."""
        if self.closed:
            return None
        log = self.log
        try:
            if failed is not None:
                REPEATS.flush()
                shots = tuple(snapshot(t) for value in (*args, *kwargs.values()) for t in tensors_in(value))
                lineno, frames = log.user_site()
                log.add(log.failed, OpEvent(name, lineno, shots[:16], "raised", frames=frames))
                log.wrapped_failure = failed  # NB: lightfail rebuilds no other record of it
                return None
            functional = caller.co_filename == _FUNCTIONAL_FILE
            how = "inplace=True" if functional else "setitem" if name == "__setitem__" else "method"
            shots, producers = (), ()
            for i, t in enumerate(tensors_in(args[0]) if args else ()):
                log.touched.add(id(t))
                if i < 4:  # NB: a foreach op may touch hundreds of tensors; four describe it
                    shots += (snapshot(t),)
                    producers += (producer_before(t),)
            lineno, frames = log.user_site()
            modules = log.modules_on_stack() if functional else ()
            event = InPlaceEvent(caller.co_name if functional else name, lineno, shots, how, frames=frames,
                                 producers=producers, modules=modules)
            log.add(log.inplace, event)
            return event
        except Exception:  # NB: e.g. a tensor subclass whose metadata raises
            log.dropped += 1
        return None


def _trackers() -> List[LightTracker]:
    """The active trackers of this thread that record now (not paused by an optimizer step: _RECORDING)."""
    me = get_ident()
    return [t for t in _RECORDING if t.thread == me]


def _wrap(original: Callable[..., Any], name: str, kernel: bool) -> Callable[..., Any]:
    # NB: torch hands a Tensor subclass's `__torch_function__` (and a mode's) the attribute it finds on
    # torch.Tensor: this wrapper. A call that torch would dispatch there is dispatched here instead, with torch's
    # own function (`handle_torch_function`), so a table keyed by `torch.Tensor.add_` still finds its handler.
    # NB: one frame, no helper (a helper's frame would be the innermost where torch warns); an error leaves it
    # without this frame in its traceback (bare `raise` adds none): `format_exc()` in the cell reads as plain.
    def inplace(*args: Any, **kwargs: Any) -> Any:
        try:
            # NB: dynamo's check first: dynamo traces this frame to the bare call, guarding on nothing of ours
            if dynamo_compiling() or not _RECORDING:
                return original(*args, **kwargs) if not _has_torch_function(args) else \
                    _handle_torch_function(original, args, *args, **kwargs)
            try:
                frame = _getframe(1)
            except ValueError:  # NB: called from torch's autograd worker thread with no Python frame under it
                return original(*args, **kwargs) if not _has_torch_function(args) else \
                    _handle_torch_function(original, args, *args, **kwargs)
            repeats = REPEATS
            if frame.f_lasti == repeats.lasti and frame.f_code is repeats.code and args and \
                    args[0] is repeats.target() and repeats.thread == get_ident():
                count = repeats.count = repeats.count + 1
                if count & (count - 1):  # NB: not a power of two: counted, not recorded
                    if not kwargs and not _has_torch_function(args):
                        return original(*args)  # NB: `**kwargs` would build a dict at each call of a loop
                    return original(*args, **kwargs) if not _has_torch_function(args) else \
                        _handle_torch_function(original, args, *args, **kwargs)
            caller = frame.f_code
            trackers = _trackers()
            untracked = caller.co_filename.startswith(TORCH_DIR) and not (
                kernel and caller.co_filename == _FUNCTIONAL_FILE) or not trackers or compiling()
            if not untracked and compiled_region(frame):
                for tracker in trackers:
                    tracker.log.compiled += 1  # NB: the card says that compiled code ran untracked
                untracked = True
            if untracked:
                return original(*args, **kwargs) if not _has_torch_function(args) else \
                    _handle_torch_function(original, args, *args, **kwargs)
            try:
                result = original(*args, **kwargs) if not _has_torch_function(args) else \
                    _handle_torch_function(original, args, *args, **kwargs)
            except Exception as error:
                for tracker in trackers:
                    tracker.record(name, caller, args, kwargs, failed=error)
                raise
            events = []  # NB: a loop, not a generator: args and kwargs stay plain locals (no cells at each call)
            for tracker in trackers:
                event = tracker.record(name, caller, args, kwargs)
                if event:
                    events.append((tracker, event))
            if events and args:
                repeats.start(frame, args[0], tuple(events))
            return result
        except BaseException as error:
            tb = error.__traceback__
            if tb is not None and tb.tb_frame is _getframe(0):
                error.__traceback__ = tb.tb_next  # NB: the bare raise below adds no entry for this frame
            raise

    inplace.__name__ = inplace.__qualname__ = getattr(original, "__name__", name)
    inplace.__doc__ = getattr(original, "__doc__", None)
    inplace.__wrapped__ = original  # type: ignore[attr-defined]
    return inplace


def _as_torchs(wrapper: Any, original: Any, owner: Any, name: str) -> None:
    """What code that names torch's function finds of the wrapper standing in its place: its module and
    qualified name (`pickle` stores `torch.Tensor.add_` by that name, `help()` and `inspect` read them, and
    `__wrapped__` leads to torch's own), and, for TorchScript, the aten op torch's own maps to
    (`torch.jit.script` of a function calling `torch.relu_` compiles the op, as without grad_magic)."""
    if owner is torch.Tensor:
        wrapper.__module__, wrapper.__qualname__ = "torch", f"Tensor.{name}"
    else:
        wrapper.__module__, wrapper.__qualname__ = getattr(owner, "__name__", "torch"), name
    try:
        from torch.jit import _builtins

        op = _builtins._find_builtin(original)
        if op is not None:
            _builtins._register_builtin(wrapper, op)
    except Exception:  # NB: TorchScript's private table moved: scripting such a function fails as it did
        pass


def tensors_in(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, torch.Tensor):
                yield item


# NB: every wrapper runs this code object: a plain cell's traceback has no such frame (cellrun drops it)
WRAPPER_CODE = _wrap(len, "len", False).__code__


def take_all_off() -> None:
    """Every patch of this process off, what was there put back (a forked DataLoader worker: its tracebacks and
    warnings must show no wrapper of ours, and nothing there is recorded)."""
    for patch in _PATCHES:
        if patch.is_on():
            patch.take_off()
    _ACTIVE.clear()
    _RECORDING.clear()


def leftovers() -> List[str]:
    """The entry points that still hold a wrapper of ours (for the reliability tests: none after a run)."""
    found = []
    for owner in (torch.Tensor, torch, torch._C._nn, torch._VF):
        for name, value in list(vars(owner).items()):
            if getattr(value, "__code__", None) is WRAPPER_CODE:
                found.append(f"{getattr(owner, '__name__', type(owner).__name__)}.{name}")
    return found


# -- the op that raised, rebuilt after the failure (fast mode has no mode that saw it) --
