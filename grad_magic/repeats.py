"""Fast mode's runs of one in-place call (lighttrack.py's wrappers): a Python loop of `t[i] = v` or `t.add_(1)`
pays one identity test per call, not a record (issue 31: <= 1.5x plain on such a loop, bench/inplace_loop.py).

Part of the capture room; the trackers it writes to are lighttrack's (`closed`, `log`), read by duck type.
"""
from __future__ import annotations

import dataclasses
import weakref
from _thread import get_ident
from typing import Any, Callable, Tuple

from .tracker import InPlaceEvent, snapshot


class Repeats:
    """The run of one in-place call made again and again in a row (`t[i] = v`, `t.add_(1)` in a loop): the same
    instruction of the same code, on the same tensor, in the same thread. Its 1st, 2nd, 4th, 8th ... calls are
    recorded in full, the others only counted, and when the run ends (another in-place call, a step, the end of
    the capture) its last call once more, the tensor read then: what the rules read of a run is there -- the
    first write after a save (its version one past the save's) and the last (the version torch's error names),
    the site, and at least one write between two steps (the step watch's clearings) -- at a cost per call of one
    identity test. NB: a new tensor, line or step starts a new run, recorded in full."""

    __slots__ = ("code", "lasti", "target", "thread", "count", "recorded", "events")

    def __init__(self) -> None:
        self.code: Any = None
        self.lasti, self.thread, self.count, self.recorded = -1, 0, 0, 0
        self.target: Callable[[], Any] = _nothing
        self.events: Tuple[Tuple[Any, InPlaceEvent], ...] = ()

    def start(self, frame: Any, target: Any, events: Tuple[Tuple[Any, InPlaceEvent], ...]) -> None:
        """A call just recorded in full: the run it starts (or goes on with)."""
        if frame.f_code is not self.code or frame.f_lasti != self.lasti or target is not self.target():
            self.flush()
            try:
                self.target = weakref.ref(target)
            except TypeError:
                return
            self.code, self.lasti, self.thread, self.count = frame.f_code, frame.f_lasti, get_ident(), 1
        self.recorded, self.events = self.count, events

    def flush(self) -> None:
        """The run over: its last call recorded, if only counted."""
        if self.code is None:
            return  # NB: no run (twice a step: the step's pause and its end flush)
        target, events, last = self.target(), self.events, self.count > self.recorded
        self.code, self.lasti, self.count, self.recorded, self.target, self.events = None, -1, 0, 0, _nothing, ()
        for tracker, event in events if last and target is not None else ():
            if not tracker.closed:
                try:
                    shots = (snapshot(target), *event.targets[1:])
                    tracker.log.add(tracker.log.inplace, dataclasses.replace(event, targets=shots))
                except Exception:  # NB: as record(): never raises
                    tracker.log.dropped += 1


def _nothing() -> None:
    return None


REPEATS = Repeats()
