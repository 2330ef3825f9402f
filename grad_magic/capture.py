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
import os
import platform
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any, Callable, FrozenSet, List, Mapping, Optional, Tuple

import torch
from torch.optim.optimizer import (register_optimizer_step_post_hook,
                                   register_optimizer_step_pre_hook)

from .live import LiveWatch
from .model import Diagnosis
from .graphprobe import probe
from .record import ANOMALY_REPORT, CapturedWarning, RunRecord
from . import tracker as tracker_module
from .torchstate import AnomalyWatch, pop_function_mode, push_function_mode
from .warnwatch import RECORDER_CODE, WarningRecorder
from .sources import Sources, entries_with_names, plain_sources
from .stephooks import ZERO_GRAD_OWNERS, StepWatch, ZeroGradWatch, unregister_optimizer_hooks
from .stacks import TraceFilter
from .lightfail import rebuild_failure
from .lighttrack import WRAPPER_CODE, LightTracker
from .provenance import Lineage
from .modewatch import ModeWatch
from .samplerwatch import SamplerWatch
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
        self._steps: Optional[StepWatch] = None
        self._light: Optional[LightTracker] = None  # NB: fast mode's tracker: the failed op is rebuilt after
        self._samplers: Optional[SamplerWatch] = None
        self._modes: Optional[ModeWatch] = None
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
            recorder.folded = functools.partial(_folded, anomaly)
            trace = TraceFilter(self._hidden_frames, TRACKER_CODE if opts.track else frozenset())
            undo.append(trace.uninstall)
            trace.install()
        if opts.track:
            # NB: fast mode (--fast, always-on) patches only the in-place entry points (lighttrack.py): a
            # TorchFunctionMode costs 1.1x by itself. Full mode keeps the mode, which sees every op.
            tracker = OpTracker(self._log, anomaly) if opts.anomaly else None
            if tracker is not None:
                self._log.lineage = Lineage()
            self._steps = steps = StepWatch(self._log, tracker)
            steps.live, steps.so_far = self.live, self._record_so_far
            if self.live is not None:
                undo.append(self.live.close)
            undo.append(functools.partial(unregister_optimizer_hooks, steps))
            register_optimizer_step_pre_hook(steps.before)
            register_optimizer_step_post_hook(steps.after)
            self._samplers = samplers = SamplerWatch(self._sources, self._filename)
            undo.append(samplers.uninstall)
            samplers.install()
            self._modes = modes = ModeWatch(self._sources, self._filename, lambda: steps.count)
            undo.append(modes.uninstall)
            modes.install()
            for owner, params in ZERO_GRAD_OWNERS:
                cleared = ZeroGradWatch(owner, params, steps)
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

    def inner_record(self, exc: BaseException, filename: str, source: str) -> RunRecord:
        """The record of a cell run from inside the watched one (`%%capture`, `get_ipython().run_cell(...)`)
        that failed: its error, its file and text, and what the run has recorded so far."""
        record = self._make_record(exc, probed=False, filename=filename, source=source)
        record.steps = list(record.steps)  # NB: a copy: the step watch goes on appending to its own
        return record

    def _make_record(self, exc: Optional[BaseException], probed: bool = True, filename: Optional[str] = None,
                     source: Optional[str] = None) -> RunRecord:
        """`probed`: with graphprobe's facts (a live check's record goes without: no silent rule reads them);
        `filename` and `source`: another cell's than the capture's (an inner cell's)."""
        log = self._log
        if exc is not None and log is not None and self._light is not None:
            self._light = None  # NB: once per run (the tracker is off by now)
            try:
                rebuild_failure(exc, log)
            except Exception:  # NB: never in place of the user's error
                log.dropped += 1
        filename = self._filename if filename is None else filename
        lineno, frame_locals = _error_site(exc, filename)
        if source is None:
            source = self._source if self._source is not None else _file_source(filename)
        return RunRecord(
            filename=filename or "", source=source, exception=exc, error_lineno=lineno,
            error_locals=frame_locals,
            inplace_ops=list(log.inplace) if log else [], failed_ops=list(log.failed) if log else [],
            steps=self._steps.steps if self._steps else [], warnings=list(self._warnings),
            dropped_events=log.dropped if log else 0, versions=versions(),
            frames=self._sources.frames(exc.__traceback__, exc) if exc is not None and self._sources else (),
            cell=self._sources.cell_number(filename or "") if self._sources else None,
            sources=self._sources, probed=probe(exc, self._steps.steps if self._steps else [],
                                                self.options.anomaly, self.options.check_nan) if probed else None,
            compiled=bool(log and log.compiled) or _through_compiled(exc),
            lineage=log.lineage if log else None, samplers=self._samplers.uses() if self._samplers else (),
            modes=self._modes.switches() if self._modes else ())


def _off_in_child() -> None:
    """In a process forked while a capture ran (DataLoader workers, `multiprocessing` with fork): grad_magic's
    op trackers off, so that nothing is recorded there and no frame of ours shows in what the worker's code
    reads or sends back (its traceback text, which the parent's card reads: `Sources.worker_frames`)."""
    try:
        from .lighttrack import take_all_off
        from .torchstate import pop_function_mode

        take_all_off()
        for mode in [m for m in torch.overrides._get_current_function_mode_stack() if isinstance(m, OpTracker)]:
            pop_function_mode(mode)
    except Exception:  # NB: never in place of the child's own work
        pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_off_in_child)


def _folded(anomaly: AnomalyWatch, text: str) -> bool:
    """Anomaly mode's report of a failing backward, where the anomaly mode is grad_magic's alone."""
    return text.startswith(ANOMALY_REPORT) and anomaly.ours_alone()


def capture(options: CaptureOptions = CaptureOptions(), **kwargs: Any) -> Capture:
    """`with grad_magic.capture() as run:` -- watch a block of code; `run.diagnoses` afterwards."""
    return Capture(options, **kwargs)


def _error_site(exc: Optional[BaseException], filename: Optional[str]):
    """The innermost traceback entry in the user's cell: its line and its frame's locals."""
    if exc is None:
        return None, None
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return exc.lineno, None
    found = (None, None)
    for tb, line, names in entries_with_names(exc.__traceback__):  # NB: a comprehension's names with its line's
        if tb.tb_frame.f_code.co_filename == filename:
            found = (line, names)
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
