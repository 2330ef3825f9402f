"""The capture session: installs the hooks, lets the user's code run, and always takes them off.

Usable without IPython:

    with grad_magic.capture() as run:
        loss.backward()
    run.diagnoses  # after the block, also when it raised

Everything installed is registered on an ExitStack the moment it is installed, so every exit path
(an exception, KeyboardInterrupt, a SyntaxError, a failing hook) removes exactly what was put on.
"""
from __future__ import annotations

import contextlib
import platform
import sys
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

import torch
from torch.optim.optimizer import (register_optimizer_step_post_hook,
                                   register_optimizer_step_pre_hook)

from .model import Diagnosis
from .record import CapturedWarning, RunRecord, StepEvent
from .tracker import OpLog, _OpTracker


@dataclass(frozen=True)
class CaptureOptions:
    anomaly: bool = True  # torch anomaly detection (off with --fast)
    check_nan: bool = True  # anomaly mode's NaN check (off with --no-nan-check)
    track: bool = True  # the op tracker and optimizer hooks
    quiet: bool = False  # no card for warnings


class _StepWatch:
    """Optimizer step hooks: tells whether gradients were cleared between two `step()` calls."""

    def __init__(self, log: OpLog) -> None:
        self._log = log
        self.steps: List[StepEvent] = []
        # id(param) -> (weakref to the grad it stepped on, that grad's version after the step)
        self._after: Dict[int, Tuple[weakref.ref, int]] = {}

    def before(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        with_grad = stale = 0
        for p in _params(optimizer):
            g = p.grad
            if g is None:
                continue
            with_grad += 1
            seen = self._after.get(id(p))
            # NB: same grad object, changed since the last step, and nothing of the user's touched it
            # in place (zero_grad(set_to_none=False) does) -> backward accumulated onto old gradients.
            if seen is not None and seen[0]() is g and g._version != seen[1] \
                    and id(g) not in self._log.touched:
                stale += 1
        self._log.touched.clear()
        if len(self.steps) < 10_000:
            self.steps.append(StepEvent(weakref.ref(optimizer), type(optimizer).__name__,
                                        self._log.user_lineno(), with_grad, stale))
        self._log.paused += 1

    def after(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        self._log.paused = max(0, self._log.paused - 1)
        for p in _params(optimizer):
            if p.grad is not None:
                self._after[id(p)] = (weakref.ref(p.grad), p.grad._version)


def _params(optimizer: torch.optim.Optimizer):
    for group in optimizer.param_groups:
        yield from group["params"]


class Capture:
    """Owns the state of one run: hooks on in `__enter__`, off in `__exit__`, a `RunRecord` after."""

    def __init__(self, options: CaptureOptions = CaptureOptions(), *, filename: Optional[str] = None,
                 source: Optional[str] = None, namespace: Optional[Mapping[str, Any]] = None) -> None:
        self.options = options
        self._filename = filename
        self._source = source
        self._namespace = namespace
        self._stack: Optional[contextlib.ExitStack] = None
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
        self._log = OpLog(self._filename)
        stack = contextlib.ExitStack()
        try:
            self._install(stack)
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def _install(self, stack: contextlib.ExitStack) -> None:
        opts = self.options
        stack.enter_context(_warnings_recorded(self._warnings))
        if opts.anomaly:
            stack.enter_context(_anomaly(opts.check_nan))
        if opts.track:
            self._steps = _StepWatch(self._log)
            stack.callback(register_optimizer_step_pre_hook(self._steps.before).remove)
            stack.callback(register_optimizer_step_post_hook(self._steps.after).remove)
            stack.enter_context(_OpTracker(self._log))

    def __exit__(self, etype: Any, exc: Optional[BaseException], tb: Any) -> bool:
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()  # NB: first, before anything here can fail
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
            dropped_events=log.dropped if log else 0, versions=versions())


def capture(options: CaptureOptions = CaptureOptions(), **kwargs: Any) -> Capture:
    """`with grad_magic.capture() as run:` -- watch a block of code; `run.diagnoses` afterwards."""
    return Capture(options, **kwargs)


@contextlib.contextmanager
def _anomaly(check_nan: bool):
    """Anomaly detection on; the outer state (a capture inside a capture, or the user's) restored."""
    was_enabled, was_nan = torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()
    torch.set_anomaly_enabled(True, check_nan)
    try:
        yield
    finally:
        torch.set_anomaly_enabled(was_enabled, was_nan)


@contextlib.contextmanager
def _warnings_recorded(sink: List[CapturedWarning]):
    """Record every warning that is shown, and still show it the way it would have been shown."""
    with warnings.catch_warnings():  # NB: restores filters and showwarning on exit
        shown = warnings.showwarning

        def record(message, category, filename, lineno, file=None, line=None):
            if len(sink) < 1000:
                sink.append(CapturedWarning(category.__name__, str(message), filename, lineno))
            shown(message, category, filename, lineno, file, line)

        warnings.showwarning = record
        yield


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
