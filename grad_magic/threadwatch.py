"""Errors of the threads a watched cell started (`%gradcheck on`; issue 31, item 2): a training loop on a
`threading.Thread` that fails gets the card of its own loop, with a note naming the thread and the cell that
started it -- never the cell that happens to run when it fails.

IPython wiring, beside alwayson.py (which installs it from `on` to `off`): `threading.excepthook` wrapped (the
user's hook, or Python's, runs first and prints the traceback as it would); which cell started a thread is read
at the end of each watched cell (the threads alive then that were not at its start), or is the running cell for a
thread that fails before its cell ends. The run record is made from the thread's error alone (its traceback's
user frames, the cell or file of the innermost one as the "cell"): the thread's ops were not tracked (the
trackers record their capture's thread only).
"""
from __future__ import annotations

import dataclasses
import threading
import weakref
from typing import Any, Callable, Optional, Set

from .capture import Capture, CaptureOptions
from .catalog import message
from .sources import Sources


class ThreadErrors:
    """`install` / `uninstall` (idempotent; the hook put back only if it is still ours); `cell_started` and
    `cell_ended` around each watched cell; `running`: the number of the watched cell under way, else None."""

    def __init__(self, shell: Any, show: Callable[[Any, Any, CaptureOptions], int],
                 running: Callable[[], Optional[int]]) -> None:
        self._shell = shell
        self._show = show  # (shell, capture-like, options) -> cards shown: alwayson's report
        self._running = running
        self.options = CaptureOptions(anomaly=False)
        self._started: "weakref.WeakKeyDictionary[threading.Thread, int]" = weakref.WeakKeyDictionary()
        self._before: Set[int] = set()
        self._original: Optional[Callable[[Any], Any]] = None
        self._hook = self.hook  # NB: one bound method, compared by identity at uninstall
        self.cards = 0

    def install(self) -> None:
        if self._original is None:
            self._original = threading.excepthook
            threading.excepthook = self._hook

    def uninstall(self) -> None:
        original, self._original = self._original, None
        if original is not None and threading.excepthook is self._hook:
            threading.excepthook = original

    def cell_started(self) -> None:
        self._before = {id(t) for t in threading.enumerate()}

    def cell_ended(self, number: Optional[int]) -> None:
        """The threads the cell `number` started (alive now, not at its start) noted as its."""
        for thread in threading.enumerate() if number is not None else ():
            if id(thread) not in self._before and thread not in self._started:
                self._started[thread] = number
        self._before = set()

    def hook(self, args: Any) -> None:
        original = self._original or threading.__excepthook__
        original(args)
        try:
            self._card(args)
        except Exception:  # NB: never in place of the thread's own report
            pass

    def _card(self, args: Any) -> None:
        exc, thread = args.exc_value, args.thread
        if not isinstance(exc, Exception) or thread is None:
            return
        started = self._started.get(thread)
        if started is None and id(thread) not in self._before:
            started = self._running()  # NB: started by the cell under way (noted when it ends)
        if started is None:
            return  # NB: a thread no watched cell started
        sources = Sources(self._shell)
        site = next((f.site for f in reversed(sources.frames(exc.__traceback__))), None)
        if site is None:
            return
        text = sources.text(site.filename)
        record = Capture(self.options, filename=site.filename, source=text,
                         sources=sources).inner_record(exc, site.filename, text)
        note = message("always.thread_note", thread=thread.name, cell=f"In [{started}]")
        self.cards += self._show(self._shell, _Thread(record, note), self.options)


@dataclasses.dataclass
class _Thread:
    """What `show` reads of a capture, for a thread's record: no live card, and the note its cards carry."""

    record: Any
    note: str
    live: Any = None
