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

import dataclasses
import functools
import os
import platform
import sys
import threading
import weakref
from dataclasses import dataclass
from types import FrameType
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

import torch
import torch.optim.optimizer as optimizer_module
from torch.optim.optimizer import (register_optimizer_step_post_hook,
                                   register_optimizer_step_pre_hook)
from torch.overrides import TorchFunctionMode

from .live import LiveWatch
from .model import Diagnosis
from .graphprobe import probe
from .record import CapturedWarning, RunRecord, StepEvent
from . import tracker as tracker_module
from .torchstate import AnomalyWatch, pop_function_mode, push_function_mode
from .warnwatch import RECORDER_CODE, WarningRecorder
from .sources import Sources, plain_sources
from .stepwatch import (Clearings, SeenStep, StepLook, calling_frame, counted_after, looks_at, stale_grads, stepped_on,
                        users_closure)
from .stacks import TraceFilter
from .lighttrack import WRAPPER_CODE, LightTracker, rebuild_failure
from .tracker import OpLog, OpTracker

TRACKER_CODE = frozenset({OpTracker.__torch_function__.__code__})  # NB: its frame is in every op's stack
# NB: the frames a plain cell's traceback would not have
HIDDEN_CODE = TRACKER_CODE | RECORDER_CODE | {WRAPPER_CODE}


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
    With a `live` watch, the steps it checks (1, 2, 4, 8, ...) run the silent rules on `so_far()`, the
    run's record until then, before the tracker goes back on (live.py).
    """

    def __init__(self, log: OpLog, tracker: Optional[TorchFunctionMode] = None) -> None:
        self._log = log
        self._tracker = tracker
        self.steps: List[StepEvent] = []
        # id(param) -> (weakref to the grad it stepped on, that grad's version after the step)
        self._after: Dict[int, Tuple[weakref.ref, int]] = {}
        # (thread, id(optimizer), whether it took the tracker off, the parameters when the step is looked at) of
        # each step under way, innermost last
        self._running: List[Tuple[int, int, bool, Optional[List[torch.Tensor]]]] = []
        # id(optimizer) -> [its steps, (id, code, line) of the frame that called the last one, its last look's record]
        self._paces: Dict[int, List[Any]] = {}
        self._look = StepLook(log.sources, log.filename)  # NB: what the user's frames hold at each step (stepwatch.py)
        self._refs: Dict[int, weakref.ref] = {}
        self.clearings = Clearings()  # NB: gradients cleared since the last step (zero_grad's wrapper adds too)
        self.closed = False
        self.count = 0  # steps ended, all optimizers together (`steps` stops growing at its bound)
        self.live: Optional[LiveWatch] = None
        self.so_far: Callable[[], RunRecord] = lambda: RunRecord("", "")

    def before(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> Any:
        log = self._log
        log.paused += 1
        popped = self._tracker is not None and pop_function_mode(self._tracker)
        closure = args[1] if len(args) > 1 and callable(args[1]) else kwargs.get("closure")  # NB: args[0]: self
        steps, running = self.steps, self._running
        pace = self._paces.get(id(optimizer))
        if pace is None or pace[2] is not None and pace[2].optimizer() is not optimizer:
            pace = self._paces[id(optimizer)] = [0, None, None]
        pace[0] += 1
        caller = calling_frame(sys._getframe(1))
        key = (id(caller), caller.f_code, caller.f_lineno) if caller is not None else None
        if pace[1] == key and pace[2] is not None and not looks_at(pace[0]) and not callable(closure):
            models = self._look.modes_now(optimizer)
            if models is not None:  # NB: a loop's step between two looks: as the last look, the modes read now
                if len(running) < 1000:
                    running.append((threading.get_ident(), id(optimizer), popped, None))
                if len(steps) < 10_000:
                    last = pace[2]
                    steps.append(last if models is last.models else dataclasses.replace(last, models=models))
                return None
        params = _params(optimizer)
        if len(running) < 1000:  # NB: a step that raised never ends: its entry stays
            running.append((threading.get_ident(), id(optimizer), popped, params))
        with_grad, stale = stale_grads(params, self._after, self.clearings.since_last_step(log))
        log.touched.clear()
        if len(steps) < 10_000:
            lineno, frames, models, growing = self._look.look(optimizer, sys._getframe(1))
            ref, last = self._ref(optimizer), pace[2]
            if last is not None and last.lineno == lineno and last.params_with_grad == with_grad and \
                    last.stale_params == stale and last.frames == frames and last.models is models and \
                    last.growing == growing and not last.closure and closure is None:
                record = last  # NB: a loop's step as the one before it: the same (immutable) record again
            else:
                record = SeenStep(ref, type(optimizer).__name__, lineno, with_grad, stale, frames, models, growing,
                                  callable(closure))
            steps.append(record)
            pace[1:] = key, record
        if not callable(closure):
            return None
        # NB: step(closure) runs the user's forward and backward inside the step (Lightning): watched as theirs
        run = users_closure(closure, functools.partial(self._pause, popped, False),
                            functools.partial(self._pause, popped, True))
        return ((args[0], run, *args[2:]), kwargs) if len(args) > 1 and args[1] is closure else \
            (args, {**kwargs, "closure": run})

    def _ref(self, optimizer: torch.optim.Optimizer) -> weakref.ref:
        """A weak reference to the optimizer, the same one at each of its steps."""
        ref = self._refs.get(id(optimizer))
        if ref is None or ref() is not optimizer:
            ref = self._refs[id(optimizer)] = weakref.ref(optimizer)
        return ref

    def _pause(self, popped: bool, pause: bool) -> None:
        """The step's pause put back (`pause`) or lifted while its closure runs (the tracker, if it took it off)."""
        self._log.paused = max(0, self._log.paused + (1 if pause else -1))
        if popped and (pause or not self.closed):
            (pop_function_mode if pause else push_function_mode)(self._tracker)

    def after(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        running = self._running
        mine = running[-1] if running and running[-1][:2] == (threading.get_ident(), id(optimizer)) else None
        try:
            pace = self._paces.get(id(optimizer))
            if mine is None or mine[3] is not None or pace is None or looks_at(pace[0] + 1):
                # NB: the gradients this step leaves, for the next look to compare with (and the clearings since)
                params = mine[3] if mine is not None and mine[3] is not None else _params(optimizer)
                stepped_on(params, self._after)
                self.clearings.since_last_step(self._log)
                self._log.touched.clear()
                steps = self.steps
                if steps and steps[-1].closure and steps[-1].optimizer() is optimizer:
                    steps[-1] = counted_after(steps[-1], params)  # NB: a closure's gradients
            self.count += 1
            if self.live is not None and self.live.wants(self.count):
                # NB: still paused, the tracker still off: the rules' and the card's torch calls are not the user's
                self.live.at_step(self.count, self.so_far)
        finally:
            self._log.paused = max(0, self._log.paused - 1)
            if mine is not None:
                running.pop()
                if mine[2] and not self.closed:
                    push_function_mode(self._tracker)  # NB: back on, as it was before the step


def _params(optimizer: torch.optim.Optimizer) -> List[torch.Tensor]:
    """The optimizer's parameters, read once per step (its param_groups stay as they are while it steps)."""
    return [p for group in optimizer.param_groups for p in group["params"]]


def _module_params(module: torch.nn.Module):
    return module.parameters()


class _ZeroGradWatch:
    """`zero_grad` of torch's Optimizer and Module, wrapped while a capture runs (then put back).

    `zero_grad()` reads and writes every parameter's .grad; with the tracker on, each of those passes
    through it (two per parameter, plus the profiler's bookkeeping): a tenth of a small training step.
    The wrapper takes the tracker off for the call (as `_StepWatch` does for a step) and marks the
    gradients it leaves as changed by the user -- what the tracker would have seen (`zero_()` when
    `set_to_none=False`), which tells the step watch that the gradients were cleared. A subclass's
    own `zero_grad` that does not call this one runs tracked, as before. A wrapper the user saved during
    the run and put back after it calls torch's own, and puts it back in its place at its first call.
    """

    def __init__(self, owner: type, params: Callable[[Any], Any], log: OpLog, tracker: Optional[TorchFunctionMode],
                 steps: _StepWatch) -> None:
        self._owner, self._original = owner, owner.__dict__["zero_grad"]
        watch_params, clearings, original = params, steps.clearings, self._original

        @functools.wraps(original)
        def zero_grad(obj: Any, *args: Any, **kwargs: Any) -> Any:
            if steps.closed:  # NB: kept by the user past its capture (saved, then put back): torch's own, back
                if owner.__dict__.get("zero_grad") is zero_grad:
                    owner.zero_grad = original
                return original(obj, *args, **kwargs)
            popped = tracker is not None and pop_function_mode(tracker)
            try:
                return original(obj, *args, **kwargs)
            finally:
                try:
                    clearings.by_zero_grad.update(id(p.grad) for p in watch_params(obj) if p.grad is not None)
                finally:
                    if popped and not steps.closed:
                        push_function_mode(tracker)  # NB: back on, as it was before the call

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
                 hidden_frames: FrozenSet[FrameType] = frozenset(), sources: Optional[Sources] = None,
                 live: Optional[LiveWatch] = None) -> None:
        self.options = options
        self.live = live  # NB: None (a plain `capture()`): the silent cards come after the block only
        self._hidden_frames = hidden_frames  # NB: the caller's plumbing, left out of anomaly traces
        self._filename = filename
        self._source = source
        self._namespace = namespace
        self._sources = sources
        self._undo: List[Callable[[], None]] = []
        self._log: Optional[OpLog] = None
        self._steps: Optional[_StepWatch] = None
        self._light: Optional[LightTracker] = None  # NB: fast mode's tracker: the failed op is rebuilt after
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
        recorder = WarningRecorder(self._warnings)
        undo.append(recorder.uninstall)
        recorder.install()
        if opts.anomaly:
            anomaly = AnomalyWatch((True, opts.check_nan))
            undo.append(anomaly.uninstall)
            anomaly.install()
            trace = TraceFilter(self._hidden_frames, TRACKER_CODE if opts.track else frozenset())
            undo.append(trace.uninstall)
            trace.install()
        if opts.track:
            # NB: fast mode (--fast, always-on) patches only the in-place entry points (lighttrack.py): a
            # TorchFunctionMode costs 1.1x by itself. Full mode keeps the mode, which sees every op.
            tracker = OpTracker(self._log) if opts.anomaly else None
            self._steps = steps = _StepWatch(self._log, tracker)
            steps.live, steps.so_far = self.live, self._record_so_far
            undo.append(functools.partial(_unregister_optimizer_hooks, steps))
            register_optimizer_step_pre_hook(steps.before)
            register_optimizer_step_post_hook(steps.after)
            for owner, params in ((torch.optim.Optimizer, _params), (torch.nn.Module, _module_params)):
                cleared = _ZeroGradWatch(owner, params, self._log, tracker, steps)
                undo.append(cleared.uninstall)
                cleared.install()
            if tracker is None:
                self._light = light = LightTracker(self._log)
                undo.append(light.uninstall)
                light.install()
            else:
                undo.append(functools.partial(pop_function_mode, tracker))
                push_function_mode(tracker)

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

    def _record_so_far(self) -> RunRecord:
        """The record of the run until now (no exception): what a live check reads."""
        record = self._make_record(None, probed=False)
        record.steps = list(record.steps)  # NB: a copy: the step watch goes on appending to its own
        return record

    def _make_record(self, exc: Optional[BaseException], probed: bool = True) -> RunRecord:
        """`probed`: with graphprobe's facts (a live check's record goes without: no silent rule reads them)."""
        log = self._log
        if exc is not None and log is not None and self._light is not None:
            self._light = None  # NB: once per run (the tracker is off by now)
            try:
                rebuild_failure(exc, log)
            except Exception:  # NB: never in place of the user's error
                log.dropped += 1
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
            sources=self._sources, probed=probe(exc, self._steps.steps if self._steps else [],
                                                self.options.anomaly, self.options.check_nan) if probed else None,
            compiled=bool(log and log.compiled) or _through_compiled(exc))


def capture(options: CaptureOptions = CaptureOptions(), **kwargs: Any) -> Capture:
    """`with grad_magic.capture() as run:` -- watch a block of code; `run.diagnoses` afterwards."""
    return Capture(options, **kwargs)


def _unregister_optimizer_hooks(steps: _StepWatch) -> None:
    """Remove our hooks from torch's global optimizer hook tables (idempotent)."""
    steps.closed = True  # NB: a step still under way (another thread) must not put the tracker back
    hooks = (steps.before, steps.after)
    for table in (optimizer_module._global_optimizer_pre_hooks, optimizer_module._global_optimizer_post_hooks):
        for key in [k for k, hook in table.items() if hook in hooks]:
            table.pop(key, None)


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


def _through_compiled(exc: Optional[BaseException]) -> bool:
    """Whether `exc` was raised inside a torch.compile'd call: dynamo's wrapper of a compiled function or module
    is on its traceback (while dynamo traced the code, or while the compiled code ran). NB: not its
    `DisableContext` wrapper (`torch._disable_dynamo`), which many of torch's own functions run through."""
    tb = exc.__traceback__ if exc is not None else None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.endswith(_EVAL_FRAME) and (
                getattr(code, "co_qualname", "").startswith(_COMPILED_CALLS) or code.co_name == "compile_wrapper"):
            return True
        tb = tb.tb_next
    return False


_EVAL_FRAME = os.path.join("torch", "_dynamo", "eval_frame.py")
_COMPILED_CALLS = ("_TorchDynamoContext.", "OptimizedModule.")  # NB: a compiled function's call, a compiled module's


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
