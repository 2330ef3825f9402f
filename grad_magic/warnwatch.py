"""The warnings a run raises: recorded, shown as the user's filters show them, and torch's evidence
recorded even where the user's filters hide it.

Part of the capture room (capture.py installs it; every undo idempotent). Two of torch's warnings are what
the cards stand on: anomaly mode's "Error detected in X. Traceback of forward call ..." (the forward line
that saved a tensor) and the `.grad` of a non-leaf tensor. A `warnings.filterwarnings("ignore")` at the top
of a notebook would drop them before any `showwarning` runs. So while a run lasts, one filter of ours
stands first in `warnings.filters`: it lets those two through to the recorder (and nothing else, and only
while the recorder is the `showwarning`), which records them and then warns again, in the same place,
through the user's filters alone -- shown, hidden, raised or counted once exactly as without grad_magic.
Anomaly mode's report where the anomaly mode is grad_magic's alone (`%%gradcheck` turned it on, the user had
not) is not warned again: a plain cell never prints it; the card folds it in (its forward line named, the raw
trace in a collapsed detail).

NB: a "default" filter marks the warning's place in its module's `__warningregistry__`, and warnings' C code
drops a warning whose place is marked before any filter is asked: torch's evidence at a line the user's
filters showed once would never reach our filter again. So while a run lasts, the marks the user's filters set
for torch's non-leaf `.grad` warning (one text, so a mark per line, MAX_WARNINGS at most) are held aside
(`_HELD`): a warning at a held mark is recorded and not shown, as a plain cell would not show it, and the marks
go back in their registries when the run ends. (Anomaly mode's reports are marked as Python marks them: each
one's text is its own forward trace.)

NB: the filters are never replaced and their version is never bumped (`warnings._filters_mutated`): a
bump empties every module's once-registry, and each "default" warning the user has seen would fire again.
Our filter is inserted and removed in place; a filter the cell adds goes in front of it and it is moved
back to the front (so `filterwarnings("ignore")` inside the cell costs no evidence either).
"""
from __future__ import annotations

import re
import sys
import threading
import warnings
from types import FrameType
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import torch.overrides

from .record import CapturedWarning
from .sources import frame_at
from .lighttrack import WRAPPER_CODE
from .tracker import OpTracker

# NB: the trackers' frames a warning torch raises in a tracked call is placed at: the mode's, the light tracker's
_TRACKER_CODES = frozenset({OpTracker.__torch_function__.__code__, WRAPPER_CODE})
_TRACKER_FILES = frozenset(code.co_filename for code in _TRACKER_CODES)
# NB: torch's own torch-function dispatch (handle_torch_function), under any mode's __torch_function__ (the
# user's too: `torch.set_default_device` pushes one): a warning raised in a call passed on there is Python's to
# place at that innermost frame, not at the user's line that made the call
_DISPATCH_FILES = frozenset({torch.overrides.__file__})
_WARNINGS_FILES = frozenset({warnings.__file__, getattr(sys.modules.get("_py_warnings"), "__file__", None)})
# NB: torch's wordings (torch/csrc/autograd/python_anomaly_mode.cpp; TensorBody.h), read by the rules
EVIDENCE = re.compile(r"Error detected in \w+\. |The \.grad attribute of a Tensor that is not a leaf Tensor")
NON_LEAF = re.compile(r"The \.grad attribute of a Tensor that is not a leaf Tensor")
_MUTATED = ("_filters_mutated", "_filters_mutated_lock_held")  # NB: called after each change of the filters
_SHOW = "_showwarnmsg"  # NB: what shows a warning the filters let through, whoever records it
MAX_WARNINGS = 1000


class WarningRecorder:
    """Records every warning that is shown, and torch's evidence even when hidden; shows each as it would
    have been shown.

    NB: `warnings.showwarning` is swapped and put back; the user's filters are left as they are, so a
    `warnings.filterwarnings(...)` in the cell stays in force after it, as in a plain cell. Kept by the user
    past its run (saved, then put back), it only passes warnings on, and puts back what it replaced.
    """

    def __init__(self, sink: List[CapturedWarning]) -> None:
        self._sink = sink
        self._shown = warnings.showwarning
        self._filter = ("always", _Evidence(self), Warning, None, 0)
        self._mutated: Dict[str, Callable[[], Any]] = {}
        self._armed: Optional[Tuple[int, str]] = None  # (thread, text) of the warning our filter just let through
        self._passing: Set[int] = set()  # threads warning again through the user's filters
        self._evidence: Set[Tuple[str, str, int]] = set()  # (text, file, line) of torch's evidence recorded
        self._misplaced: Dict[int, FrameType] = {}  # thread -> the tracker's frame torch just warned at
        # NB: evidence a plain cell would never have raised (anomaly mode's report, where the anomaly mode is
        # grad_magic's alone): recorded for the card, which folds it in, and not shown
        self.folded: Callable[[str], bool] = lambda text: False
        self.closed = False

    def install(self) -> None:
        _HELD.hold()
        warnings.showwarning = self
        warnings.filters.insert(0, self._filter)
        for name in _MUTATED:
            original = getattr(warnings, name, None)
            if original is not None and name not in self._mutated:
                self._mutated[name] = original
                setattr(warnings, name, _KeepFirst(self, original))

    def uninstall(self) -> None:
        self.closed = True
        for name, original in self._mutated.items():
            if isinstance(getattr(warnings, name, None), _KeepFirst) and getattr(warnings, name).recorder is self:
                setattr(warnings, name, original)
        shown = getattr(warnings, _SHOW, None)
        if isinstance(shown, _Relocated) and shown.recorder is self:  # NB: a misplaced warning never shown
            setattr(warnings, _SHOW, shown.original)
        _remove(warnings.filters, self._filter)
        if warnings.showwarning is self:  # NB: a cell that set its own showwarning keeps it
            warnings.showwarning = self._shown
        _HELD.put_back()

    def keep_first(self) -> None:
        """Our filter back in front of the user's (after the cell changed them), the filters' version untouched."""
        filters = warnings.filters
        if not self.closed and isinstance(filters, list) and (not filters or filters[0] is not self._filter):
            _remove(filters, self._filter)
            filters.insert(0, self._filter)

    def arm(self, text: str) -> bool:
        """Our filter's test: torch's evidence, while the recorder is the one to show it and not warning again."""
        me = threading.get_ident()
        if self.closed or warnings.showwarning is not self or me in self._passing or not EVIDENCE.match(text):
            return False
        self._armed = (me, text)
        return True

    def misplaced(self, frame: FrameType) -> bool:
        """Our filter's test, for a warning torch raised where the innermost Python frame is a tracker's (`frame`):
        let through ("always": judged by no filter, no registry touched yet) to `_Relocated`, which warns it
        again at the user's line."""
        original = getattr(warnings, _SHOW, None)
        if self.closed or not callable(original):
            return False
        self._misplaced[threading.get_ident()] = frame
        if not isinstance(original, _Relocated):  # NB: for this warning only: _Relocated puts it back first
            setattr(warnings, _SHOW, _Relocated(self, original))
        return True

    def relocate(self, msg: Any) -> bool:
        """The warning once more where it belongs (the first frame under the trackers'), through every filter,
        with that frame's module and registry, as torch's warning is judged in a plain cell; False when it is
        not one `misplaced` let through."""
        frame = self._misplaced.pop(threading.get_ident(), None)
        if frame is None or msg.filename != frame.f_code.co_filename:
            return False
        while frame is not None and frame.f_code in _TRACKER_CODES:
            frame = frame.f_back
        if frame is None:
            return False
        scope = frame.f_globals
        module = scope.get("__name__")
        registry = scope.setdefault("__warningregistry__", {}) if isinstance(scope, dict) else None
        try:
            warnings.warn_explicit(msg.message, msg.category, frame.f_code.co_filename, frame.f_lineno,
                                   **_module_of(module), registry=registry, module_globals=scope)
        except BaseException as error:  # NB: a filter's "error": raised as from the user's line, no frame of ours
            tb = error.__traceback__
            if tb is not None and tb.tb_frame is sys._getframe(0):
                error.__traceback__ = tb.tb_next
            raise
        return True

    def __call__(self, message, category, filename, lineno, file=None, line=None) -> None:
        if self.closed:
            if warnings.showwarning is self:
                warnings.showwarning = self._shown
            return self._shown(message, category, filename, lineno, file, line)
        me = threading.get_ident()
        frame = _warning_frame(frame_at(1))
        if frame is not None and (filename in _TRACKER_FILES or _passes_calls_on(frame.f_code)):
            frame, filename, lineno, line = _site_of_tracked_call(frame, filename, lineno, line)
        if me in self._passing:  # NB: the user's filters show it: already recorded
            return self._shown(message, category, filename, lineno, file, line)
        text = str(message)
        evidence, fresh = self._armed == (me, text), True
        if evidence:  # NB: recorded once per place and run (a loop reading a non-leaf `.grad` warns each turn)
            self._armed = None
            fresh = (text, filename, lineno) not in self._evidence
            if fresh and len(self._evidence) < MAX_WARNINGS:
                self._evidence.add((text, filename, lineno))
        if fresh and len(self._sink) < MAX_WARNINGS:
            self._sink.append(CapturedWarning(category.__name__, text, filename, lineno))
        if not evidence:
            return self._shown(message, category, filename, lineno, file, line)
        if self.folded(text):
            return None
        return self._warn_again(message, category, filename, lineno, frame)

    def _warn_again(self, message: Any, category: Any, filename: str, lineno: int,
                    frame: Optional[FrameType]) -> None:
        """The warning once more, through the user's filters alone, with the registry and module of the frame
        it was raised in (as `warnings.warn` finds them)."""
        scope = frame.f_globals if frame is not None and frame.f_code.co_filename == filename else None
        registry = scope.setdefault("__warningregistry__", {}) if scope is not None else None
        module = scope.get("__name__") if scope is not None else None
        me = threading.get_ident()
        self._passing.add(me)
        try:
            if NON_LEAF.match(str(message)):  # NB: one text at every line: its marks held (see _HeldMarks)
                _HELD.warn(message, category, filename, lineno, **_module_of(module), registry=registry)
            else:  # NB: anomaly mode's report: its text is its own forward trace, marked as Python marks it
                warnings.warn_explicit(message, category, filename, lineno, **_module_of(module), registry=registry)
        finally:
            self._passing.discard(me)


class _HeldMarks:
    """The once-registry marks the user's filters set for torch's evidence, held out of their registries while
    runs last (see the module's NB), and put back when the last run ends."""

    def __init__(self) -> None:
        self._marks: Dict[int, Tuple[Dict[Any, Any], Set[Any]]] = {}  # id(registry) -> (registry, its keys)
        self._runs = 0
        self._lock = threading.Lock()

    def hold(self) -> None:
        with self._lock:
            self._runs += 1
            for registry, keys in self._marks.values():
                for key in keys:
                    registry.pop(key, None)

    def put_back(self) -> None:
        with self._lock:
            self._runs = max(0, self._runs - 1)
            if self._runs:
                return
            for registry, keys in self._marks.values():
                for key in keys:
                    registry[key] = True  # NB: stale after a change of the filters, as warnings' own marks are

    def warn(self, message: Any, category: Any, filename: str, lineno: int,
             registry: Optional[Dict[Any, Any]] = None, **kwargs: Any) -> None:
        """`warnings.warn_explicit` of torch's evidence, through the user's filters, the registry's mark held aside."""
        if not isinstance(registry, dict):
            warnings.warn_explicit(message, category, filename, lineno, registry=registry, **kwargs)
            return
        held = self._marks.get(id(registry))
        key = (str(message), type(message) if isinstance(message, Warning) else category, lineno)
        if held is not None and held[0] is registry and key in held[1]:
            return  # NB: shown once at this place already: a plain cell's registry drops it
        before = set(registry)
        try:
            warnings.warn_explicit(message, category, filename, lineno, registry=registry, **kwargs)
        finally:
            marked = [k for k in registry if k not in before and k != "version" and registry.get(k)]
            if marked and sum(len(keys) for _, keys in self._marks.values()) < MAX_WARNINGS:
                with self._lock:
                    if held is None or held[0] is not registry:
                        held = self._marks[id(registry)] = (registry, set())
                    for k in marked:
                        # NB: the place's mark, which drops a warning before the filters ("module" and "once"
                        # add (text, category) marks, which are the filters' to read)
                        if isinstance(k, tuple) and len(k) == 3 and k[2] == lineno:
                            held[1].add(k)
                            registry.pop(k, None)


_HELD = _HeldMarks()


class _Evidence:
    """The message test of our filter (`warnings` calls its `match`, as it does a compiled pattern's)."""

    def __init__(self, recorder: WarningRecorder) -> None:
        self._recorder = recorder

    pattern = EVIDENCE.pattern  # NB: for code that lists the filters' patterns

    def match(self, text: str) -> bool:
        # NB: called by warnings' C code: the frame under this one is where torch's warning was raised
        frame = frame_at(1)
        if frame is not None and frame.f_code in _TRACKER_CODES and self._recorder.misplaced(frame):
            return True
        return self._recorder.arm(text)

    def __repr__(self) -> str:
        return "<grad_magic: torch's evidence for the card, then the filters after this one>"


class _KeepFirst:
    """`warnings._filters_mutated` while a run lasts: the original, then our filter moved back in front."""

    def __init__(self, recorder: WarningRecorder, original: Callable[[], Any]) -> None:
        self.recorder, self._original = recorder, original

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        result = self._original(*args, **kwargs)
        self.recorder.keep_first()
        return result


class _Relocated:
    """`warnings._showwarnmsg` (what shows a warning after the filters, whoever records it:
    `catch_warnings(record=True)` too) for one warning our filter let through from a tracker's frame: put back
    first, then the warning warned again at the user's line instead."""

    def __init__(self, recorder: WarningRecorder, original: Callable[[Any], Any]) -> None:
        self.recorder, self.original = recorder, original

    def __call__(self, msg: Any) -> Any:
        if getattr(warnings, _SHOW, None) is self:
            setattr(warnings, _SHOW, self.original)
        try:
            if self.recorder.relocate(msg):
                return None
        except BaseException as error:
            tb = error.__traceback__
            if tb is not None and tb.tb_frame is sys._getframe(0):
                error.__traceback__ = tb.tb_next
            raise
        return self.original(msg)


# NB: between warnings' frames and the one a warning was raised in
_RELOCATING_CODES = frozenset({_Relocated.__call__.__code__, WarningRecorder.relocate.__code__,
                               _HeldMarks.warn.__code__})


def _module_of(module: Any) -> Dict[str, str]:
    """warn_explicit's `module` argument: left out unless a name, so that warnings derives it from the file name
    (an explicit None makes CPython 3.11's warn_explicit show nothing at all)."""
    return {"module": module} if isinstance(module, str) else {}


def _remove(filters: Any, item: Tuple[Any, ...]) -> None:
    """Every occurrence of `item` (by identity: `list.remove` compares by value) taken out, in place."""
    if isinstance(filters, list):
        while True:
            at = next((i for i, f in enumerate(filters) if f is item), None)
            if at is None:
                return
            del filters[at]


def _warning_frame(frame: Optional[FrameType]) -> Optional[FrameType]:
    """The frame a warning was raised in: the first outside the `warnings` module."""
    while frame is not None and (frame.f_code.co_filename in _WARNINGS_FILES or frame.f_code in _RELOCATING_CODES):
        frame = frame.f_back
    return frame


def _passes_calls_on(code: Any) -> bool:
    """A frame that passes a torch call on: the trackers', a torch-function mode's, torch's dispatch to them."""
    return code in _TRACKER_CODES or code.co_name == "__torch_function__" or code.co_filename in _DISPATCH_FILES


def _site_of_tracked_call(frame: Optional[FrameType], filename: str, lineno: int, line: Optional[str]
                          ) -> Tuple[Optional[FrameType], str, int, Optional[str]]:
    """Where a warning torch raised in a call the tracker (or a mode of the user's) passed on belongs: Python
    puts it at the innermost Python frame (the tracker's, the mode's); the user's code that made the call is
    the first frame under them."""
    while frame is not None and not _passes_calls_on(frame.f_code):
        frame = frame.f_back
    while frame is not None and _passes_calls_on(frame.f_code):  # NB: nested captures, modes on modes
        frame = frame.f_back
    if frame is None:
        return None, filename, lineno, line
    return frame, frame.f_code.co_filename, frame.f_lineno, None  # NB: None: the line is read where it is


# NB: the recorder's frames in the traceback of a warning the user's filters turned into an error
# (`simplefilter("error")`); `stacks.without_dispatch` drops them with `warnings`' own on the way to them
RECORDER_CODE = frozenset({WarningRecorder.__call__.__code__, WarningRecorder._warn_again.__code__,
                           _HeldMarks.warn.__code__})
