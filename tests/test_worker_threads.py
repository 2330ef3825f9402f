"""What torch calls from its autograd worker threads, with no Python frame under it.

A backward on a GPU runs on torch's device thread: tensor hooks, custom Functions' backward, anomaly mode's
stack capture and its "Error detected in ..." warning are called there straight from C++, and `sys._getframe(1)`
raises there ("call stack is not deep enough"). On an H200 that became the error of a %%gradcheck cell instead
of the user's own (a GAN cell's in-place error turned into a ValueError from grad_magic's stack filter). Here
each piece is the function a new `_thread` thread starts with, so it too is the only Python frame;
tests/gpu/test_cuda_watch.py runs the real thing on CUDA.
"""
from __future__ import annotations

import _thread
import itertools
import sys
import time
from typing import Any, Callable, List

import torch.fx.traceback

from grad_magic.sources import frame_at
from grad_magic.stacks import TraceFilter
from grad_magic.warnwatch import WarningRecorder


def _as_a_bare_thread(monkeypatch, fn: Callable[..., Any], *args: Any) -> List[BaseException]:
    """Run `fn(*args)` as the first Python frame of a new thread; the exceptions that escaped it."""
    escaped: List[BaseException] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: escaped.append(info.exc_value))
    done = _thread.allocate_lock()
    done.acquire()
    # NB: list, chain, starmap and iter are C: fn(*args) has no Python frame under it, then done.release()
    # runs (it returns None, iter's sentinel); if fn raises, the exception leaves the thread instead
    _thread.start_new_thread(list, (itertools.chain(itertools.starmap(fn, [args]), iter(done.release, None)),))
    deadline = time.monotonic() + 10
    while not done.acquire(timeout=0.01) and not escaped:
        assert time.monotonic() < deadline, "the thread did not end"
    return escaped


def test_frame_at_is_none_past_the_bottom_of_the_stack(monkeypatch):
    got: list = []
    assert _as_a_bare_thread(monkeypatch, lambda: got.extend([frame_at(0), frame_at(1), frame_at(5)])) == []
    assert got[0] is not None and got[1:] == [None, None]


def test_the_warning_recorder_records_a_warning_raised_with_no_frame_under_it(monkeypatch):
    sink: list = []
    shown: list = []
    recorder = WarningRecorder(sink)
    recorder._shown = lambda *args: shown.append(args)  # NB: what the user's showwarning would do
    escaped = _as_a_bare_thread(monkeypatch, recorder, UserWarning("from a worker"), UserWarning, "x.py", 3)
    assert escaped == []
    assert [w.message for w in sink] == ["from a worker"] and len(shown) == 1


def test_the_trace_filter_formats_a_stack_with_no_frame_under_it(monkeypatch):
    trace = TraceFilter(frozenset(), frozenset())
    trace.install()
    try:
        escaped = _as_a_bare_thread(monkeypatch, trace)
    finally:
        trace.uninstall()
    assert escaped == []
    assert torch.fx.traceback.format_stack is not trace
