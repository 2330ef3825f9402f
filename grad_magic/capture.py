"""The capture session: installs the hooks, lets the user's code run, and always takes them off.

Usable without IPython:

    with grad_magic.capture() as run:
        loss.backward()
    run.diagnoses  # after the block, also when it raised

Every hook's undo is listed before the hook goes on, and every undo is idempotent, so every exit path
(an exception, a KeyboardInterrupt on any line, a SyntaxError, a failing hook) removes exactly what was
put on.
"""
from __future__ import annotations

import functools
import platform
import sys
import threading
import warnings
import weakref
from dataclasses import dataclass
from types import FrameType
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

import torch
import torch.optim.optimizer as optimizer_module
from torch.optim.optimizer import (register_optimizer_step_post_hook,
                                   register_optimizer_step_pre_hook)
from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack

from .model import Diagnosis
from .record import CapturedWarning, RunRecord, StepEvent
from . import tracker as tracker_module
from .sources import Sources, plain_sources
from .stepwatch import Clearings, SeenStep, StepLook, counted_after, stale_grads, users_closure
from .stacks import TraceFilter
from .tracker import OpLog, OpTracker

_TRACKER_FUNCTION = OpTracker.__torch_function__.__code__
TRACKER_CODE = frozenset({_TRACKER_FUNCTION})  # NB: its frame is in every op's stack
_TRACKER_FILE = _TRACKER_FUNCTION.co_filename


@dataclass(frozen=True)
class CaptureOptions:
    anomaly: bool = True  # torch anomaly detection (off with --fast)
    check_nan: bool = True  # anomaly mode's NaN check (off with --no-nan-check)
    track: bool = True  # the op tracker and optimizer hooks
    quiet: bool = False  # no card for warnings


class _StepWatch:
    """Optimizer step hooks: tells whether gradients were cleared between two `step()` calls.

    While a step runs, the op tracker is taken off torch's function-mode stack (when it is on top):
    the optimizer's own updates are not the user's, and each torch call it makes would otherwise
    pass through the tracker (an Adam step on a small model makes ~200). It goes back on when the
    step ends, in the same thread only (the stack is per thread); a step that raises leaves it off
    for the rest of the run, and the capture's undo finds nothing to remove. The closure of a
    `step(closure)` (Lightning's forward and backward) is the user's code: tracked while it runs.
    """

    def __init__(self, log: OpLog, tracker: Optional[TorchFunctionMode] = None) -> None:
        self._log = log
        self._tracker = tracker
        self.steps: List[StepEvent] = []
        # id(param) -> (weakref to the grad it stepped on, that grad's version after the step)
        self._after: Dict[int, Tuple[weakref.ref, int]] = {}
        # (thread, id(optimizer), whether it took the tracker off) of each step under way, innermost last
        self._running: List[Tuple[int, int, bool]] = []
        self._look = StepLook(log.sources)  # NB: what the user's frames hold at each step (stepwatch.py)
        self.clearings = Clearings()  # NB: gradients cleared since the last step (zero_grad's wrapper adds too)
        self.closed = False

    def before(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> Any:
        self._log.paused += 1
        popped = self._tracker is not None and _pop_function_mode(self._tracker)
        if len(self._running) < 1000:  # NB: a step that raised never ends: its entry stays
            self._running.append((threading.get_ident(), id(optimizer), popped))
        with_grad, stale = stale_grads(_params(optimizer), self._after, self.clearings.since_last_step(self._log))
        self._log.touched.clear()
        closure = args[1] if len(args) > 1 and callable(args[1]) else kwargs.get("closure")  # NB: args[0]: self
        if len(self.steps) < 10_000:
            lineno, frames = self._log.user_site()
            self.steps.append(SeenStep(weakref.ref(optimizer), type(optimizer).__name__, lineno, with_grad, stale,
                                       frames, *self._look.look(optimizer, sys._getframe(1)), callable(closure)))
        if not callable(closure):
            return None
        # NB: step(closure) runs the user's forward and backward inside the step (Lightning): watched as theirs
        run = users_closure(closure, functools.partial(self._pause, popped, False),
                            functools.partial(self._pause, popped, True))
        return ((args[0], run, *args[2:]), kwargs) if len(args) > 1 and args[1] is closure else \
            (args, {**kwargs, "closure": run})

    def _pause(self, popped: bool, pause: bool) -> None:
        """The step's pause put back (`pause`) or lifted while its closure runs (the tracker, if it took it off)."""
        self._log.paused = max(0, self._log.paused + (1 if pause else -1))
        if popped and (pause or not self.closed):
            (_pop_function_mode if pause else _push_function_mode)(self._tracker)

    def after(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        try:
            for p in _params(optimizer):
                if p.grad is not None:
                    self._after[id(p)] = (weakref.ref(p.grad), p.grad._version)
            if self.steps and self.steps[-1].optimizer() is optimizer:
                self.steps[-1] = counted_after(self.steps[-1], _params(optimizer))  # NB: a closure's gradients
        finally:
            self._log.paused = max(0, self._log.paused - 1)
            if self._running and self._running[-1][:2] == (threading.get_ident(), id(optimizer)):
                if self._running.pop()[2] and not self.closed:
                    _push_function_mode(self._tracker)  # NB: back on, as it was before the step


def _params(optimizer: torch.optim.Optimizer):
    for group in optimizer.param_groups:
        yield from group["params"]


def _module_params(module: torch.nn.Module):
    return module.parameters()


class _ZeroGradWatch:
    """`zero_grad` of torch's Optimizer and Module, wrapped while a capture runs (then put back).

    `zero_grad()` reads and writes every parameter's .grad; with the tracker on, each of those passes
    through it (two per parameter, plus the profiler's bookkeeping): a tenth of a small training step.
    The wrapper takes the tracker off for the call (as `_StepWatch` does for a step) and marks the
    gradients it leaves as changed by the user -- what the tracker would have seen (`zero_()` when
    `set_to_none=False`), which tells the step watch that the gradients were cleared. A subclass's
    own `zero_grad` that does not call this one runs tracked, as before.
    """

    def __init__(self, owner: type, params: Callable[[Any], Any], log: OpLog, tracker: TorchFunctionMode,
                 steps: _StepWatch) -> None:
        self._owner, self._original = owner, owner.__dict__["zero_grad"]
        watch_params, touched, original = params, steps.clearings.by_zero_grad, self._original

        @functools.wraps(original)
        def zero_grad(obj: Any, *args: Any, **kwargs: Any) -> Any:
            if steps.closed:  # NB: kept by the user past its capture (saved, then put back): the original
                return original(obj, *args, **kwargs)
            popped = _pop_function_mode(tracker)
            try:
                return original(obj, *args, **kwargs)
            finally:
                try:
                    touched.update(id(p.grad) for p in watch_params(obj) if p.grad is not None)
                finally:
                    if popped and not steps.closed:
                        _push_function_mode(tracker)  # NB: back on, as it was before the call

        self._wrapper = zero_grad

    def install(self) -> None:
        self._owner.zero_grad = self._wrapper

    def uninstall(self) -> None:
        if self._owner.__dict__.get("zero_grad") is self._wrapper:  # NB: idempotent
            self._owner.zero_grad = self._original


class Capture:
    """Owns the state of one run: hooks on in `__enter__`, off in `__exit__`, a `RunRecord` after."""

    def __init__(self, options: CaptureOptions = CaptureOptions(), *, filename: Optional[str] = None,
                 source: Optional[str] = None, namespace: Optional[Mapping[str, Any]] = None,
                 hidden_frames: FrozenSet[FrameType] = frozenset(), sources: Optional[Sources] = None) -> None:
        self.options = options
        self._hidden_frames = hidden_frames  # NB: the caller's plumbing, left out of anomaly traces
        self._filename = filename
        self._source = source
        self._namespace = namespace
        self._sources = sources
        self._undo: List[Callable[[], None]] = []
        self._log: Optional[OpLog] = None
        self._steps: Optional[_StepWatch] = None
        self._warnings: List[CapturedWarning] = []
        self.record: Optional[RunRecord] = None
        self.diagnoses: List[Diagnosis] = []

    def __enter__(self) -> "Capture":
        if self._filename is None:  # used as a plain context manager: the caller's file is the "cell"
            caller = sys._getframe(1)
            self._filename = caller.f_code.co_filename
            if self._namespace is None:
                self._namespace = {**caller.f_globals, **caller.f_locals}
        if self._sources is None:
            self._sources = plain_sources(self._filename, self._source if self._source is not None
                                          else _file_source(self._filename))
        self._log = OpLog(self._filename, self._sources)
        try:
            self._install()
        except BaseException:
            self.close()
            raise
        return self

    def _install(self) -> None:
        # NB: each undo is listed *before* its hook goes on, and each is idempotent, so a
        # KeyboardInterrupt landing on any line here or in close() never leaves a hook behind.
        opts, undo = self.options, self._undo
        # NB: Python shows a "default" warning once per location, and torch's warnings in tracked calls
        # are located at the tracker's line: forget those, so each run shows them, as a plain cell does.
        vars(tracker_module).get("__warningregistry__", {}).clear()
        recorder = _WarningRecorder(self._warnings)
        undo.append(recorder.uninstall)
        recorder.install()
        if opts.anomaly:
            undo.append(functools.partial(_restore_anomaly, (torch.is_anomaly_enabled(),
                                                             torch.is_anomaly_check_nan_enabled()),
                                          (True, opts.check_nan)))
            torch.set_anomaly_enabled(True, opts.check_nan)
            trace = TraceFilter(self._hidden_frames, TRACKER_CODE if opts.track else frozenset())
            undo.append(trace.uninstall)
            trace.install()
        if opts.track:
            tracker = OpTracker(self._log)
            self._steps = steps = _StepWatch(self._log, tracker)
            undo.append(functools.partial(_unregister_optimizer_hooks, steps))
            register_optimizer_step_pre_hook(steps.before)
            register_optimizer_step_post_hook(steps.after)
            for owner, params in ((torch.optim.Optimizer, _params), (torch.nn.Module, _module_params)):
                cleared = _ZeroGradWatch(owner, params, self._log, tracker, steps)
                undo.append(cleared.uninstall)
                cleared.install()
            undo.append(functools.partial(_pop_function_mode, tracker))
            _push_function_mode(tracker)

    def close(self) -> None:
        """Take every hook off, newest first. Safe to call again: an undo leaves the list only once it
        has run, so a close() cut short by an interrupt is finished by the next one (cellrun calls it
        again); an undo cut short by an interrupt is run again here and the interrupt raised after."""
        pending, failure = self._undo, None
        tries = 0
        while pending:
            try:
                pending[-1]()
            except BaseException as exc:  # noqa: B902 -- re-raised below, after every hook is off
                failure = failure or exc
                tries += 1
                if isinstance(exc, KeyboardInterrupt) and tries < 3:
                    continue  # NB: the same undo once more: they are idempotent
            tries = 0
            pending.pop()
        if failure is not None:
            raise failure

    def __exit__(self, etype: Any, exc: Optional[BaseException], tb: Any) -> bool:
        self.close()  # NB: first, before anything here can fail
        self.record = self._make_record(exc)
        if self._namespace is not None:  # plain context-manager use: diagnose now
            from .engine import diagnose_and_remember
            self.diagnoses = diagnose_and_remember(self.record, self._namespace)
        return False

    def _make_record(self, exc: Optional[BaseException]) -> RunRecord:
        log = self._log
        lineno, frame_locals = _error_site(exc, self._filename)
        source = self._source if self._source is not None else _file_source(self._filename)
        return RunRecord(
            filename=self._filename or "", source=source, exception=exc, error_lineno=lineno,
            error_locals=frame_locals,
            inplace_ops=list(log.inplace) if log else [], failed_ops=list(log.failed) if log else [],
            steps=self._steps.steps if self._steps else [], warnings=list(self._warnings),
            dropped_events=log.dropped if log else 0, versions=versions(),
            frames=self._sources.frames(exc.__traceback__) if exc is not None and self._sources else (),
            cell=self._sources.cell_number(self._filename or "") if self._sources else None,
            sources=self._sources)


def capture(options: CaptureOptions = CaptureOptions(), **kwargs: Any) -> Capture:
    """`with grad_magic.capture() as run:` -- watch a block of code; `run.diagnoses` afterwards."""
    return Capture(options, **kwargs)


class _WarningRecorder:
    """Records every warning that is shown, and still shows it the way it would have been shown.

    NB: only `warnings.showwarning` is swapped and put back; the filters are left alone, so a
    `warnings.filterwarnings(...)` in the cell stays in force after it, as in a plain cell.
    """

    def __init__(self, sink: List[CapturedWarning]) -> None:
        self._sink = sink
        self._shown = warnings.showwarning

    def install(self) -> None:
        warnings.showwarning = self

    def uninstall(self) -> None:
        if warnings.showwarning is self:  # NB: a cell that set its own showwarning keeps it
            warnings.showwarning = self._shown

    def __call__(self, message, category, filename, lineno, file=None, line=None) -> None:
        if filename == _TRACKER_FILE:
            filename, lineno, line = _site_of_tracked_call(filename, lineno, line)
        if len(self._sink) < 1000:
            self._sink.append(CapturedWarning(category.__name__, str(message), filename, lineno))
        self._shown(message, category, filename, lineno, file, line)


def _site_of_tracked_call(filename: str, lineno: int, line: Optional[str]) -> Tuple[str, int, Optional[str]]:
    """Where a warning torch raised in a call the tracker passed on belongs: Python puts it at the
    innermost Python frame (the tracker's); the user's code that made the call is the frame under it."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code is not _TRACKER_FUNCTION:
        frame = frame.f_back
    while frame is not None and frame.f_code is _TRACKER_FUNCTION:  # NB: nested captures
        frame = frame.f_back
    if frame is None:
        return filename, lineno, line
    return frame.f_code.co_filename, frame.f_lineno, None  # NB: None: the line is read where it is


def _restore_anomaly(before: Tuple[bool, bool], ours: Tuple[bool, bool]) -> None:
    """Put anomaly mode back as it was before the run -- unless the user's code changed it since we set it:
    then it is theirs and stays (as after a plain cell). NB: a change to exactly our setting cannot be told
    from none; that one is put back."""
    if (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()) == ours:
        torch.set_anomaly_enabled(*before)


def _unregister_optimizer_hooks(steps: _StepWatch) -> None:
    """Remove our hooks from torch's global optimizer hook tables (idempotent)."""
    steps.closed = True  # NB: a step still under way (another thread) must not put the tracker back
    hooks = (steps.before, steps.after)
    for table in (optimizer_module._global_optimizer_pre_hooks, optimizer_module._global_optimizer_post_hooks):
        for key in [k for k, hook in table.items() if hook in hooks]:
            table.pop(key, None)


def _push_function_mode(mode: TorchFunctionMode) -> None:
    """Put our mode on torch's function-mode stack, at the bottom, under any mode of the user's, unless it
    is on it already (it must never be on twice: the capture's undo takes it off once).

    NB: at the bottom, not on top: a user's mode entered before the cell and exited in it pops itself (on top,
    its `__exit__` would pop ours and leave it on), and the user's modes see each call first, as they would
    without grad_magic; ours sees what they pass on.
    """
    stack = _get_current_function_mode_stack()
    if any(m is mode for m in stack):
        return
    above = [torch._C._pop_torch_function_stack() for _ in stack]  # NB: top first
    torch._C._push_on_torch_function_stack(mode)
    for m in reversed(above):
        torch._C._push_on_torch_function_stack(m)


def _pop_function_mode(mode: TorchFunctionMode) -> bool:
    """Take our mode off torch's function-mode stack wherever it sits, leaving every other mode where it was
    (idempotent); whether it was on. A user's mode still entered when the cell ends stays on, theirs."""
    stack = _get_current_function_mode_stack()
    if all(m is not mode for m in stack):
        return False
    above = []
    while True:
        top = torch._C._pop_torch_function_stack()
        if top is mode:
            break
        above.append(top)
    for m in reversed(above):
        torch._C._push_on_torch_function_stack(m)
    return True


def _error_site(exc: Optional[BaseException], filename: Optional[str]):
    """The innermost traceback entry in the user's cell: its line and its frame's locals."""
    if exc is None:
        return None, None
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return exc.lineno, None
    found = (None, None)
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            found = (tb.tb_lineno, tb.tb_frame.f_locals)
        tb = tb.tb_next
    return found


def _file_source(filename: Optional[str]) -> str:
    import linecache

    return "".join(linecache.getlines(filename)) if filename else ""


def versions() -> Tuple[Tuple[str, str], ...]:
    found = [("python", platform.python_version()), ("torch", torch.__version__)]
    if torch.version.cuda:
        found.append(("cuda", str(torch.version.cuda)))
    ipython = sys.modules.get("IPython")
    if ipython is not None:
        found.append(("ipython", getattr(ipython, "__version__", "?")))
    return tuple(found)
