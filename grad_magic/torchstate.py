"""torch's process-wide settings a capture changes for one run, and puts back unless the user changed them.

Part of the capture room (capture.py installs these; each undo is idempotent). Two settings:

- anomaly mode (`AnomalyWatch`): on for the run; after it, back to what a plain cell would have left. The
  user's own calls during the run (`torch.autograd.set_detect_anomaly(True)`, `with detect_anomaly():`)
  are observed, through `torch.set_anomaly_enabled`, which torch's own helpers call: a setting the user
  made stays theirs, also when it equals grad_magic's own.
- torch's function-mode stack (`push_function_mode`, `pop_function_mode`): the op tracker goes on at the
  bottom, under any mode of the user's, and comes off wherever it sits, never taking a user's mode with it.
"""
from __future__ import annotations

import weakref
from types import FrameType
from typing import Any, Callable, Optional, Tuple

import torch
import torch.autograd.anomaly_mode as anomaly_mode
from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack

from .sources import frame_at

Anomaly = Tuple[bool, bool]  # (anomaly mode on, its NaN check on)
_ANOMALY_FILE = anomaly_mode.__file__


def anomaly_state() -> Anomaly:
    return torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()


class AnomalyWatch:
    """Anomaly mode set to `ours` for a run (`install`), and after it (`uninstall`) what a plain cell would
    have left: the state from before the run, or the user's own last setting.

    While the run lasts, `torch.set_anomaly_enabled` is this object: it passes each call on, and notes what
    a plain cell would now hold. A call from `detect_anomaly`'s or `set_detect_anomaly`'s `__exit__` puts
    back what was there when that object was entered -- in a plain cell, what was there before grad_magic's
    setting, not grad_magic's. Nothing is put back when the state is not the one last seen set (something
    changed it unobserved: that change is the user's). Kept by the user past its run (saved, then put
    back), it only passes calls on, and puts torch's own function back at its first call.
    """

    def __init__(self, ours: Anomaly) -> None:
        self._ours = ours
        self._setter: Callable[..., Any] = torch.set_anomaly_enabled  # NB: an outer capture's watch, maybe
        self._plain: Anomaly = anomaly_state()  # what a plain cell would hold now
        self._last: Anomaly = self._plain  # the state last set where this watch saw it
        self._entered: "weakref.WeakKeyDictionary[Any, Anomaly]" = weakref.WeakKeyDictionary()
        self._put_back: Optional[Tuple[bool, ...]] = None  # decided once, at the first uninstall
        self.closed = False

    def install(self) -> None:
        torch.set_anomaly_enabled = self
        self._own(self._ours)

    def uninstall(self) -> None:
        """Idempotent: once the plain state is back, a second call finds nothing to do."""
        self.closed = True
        if torch.set_anomaly_enabled is self:
            torch.set_anomaly_enabled = self._setter
        if self._put_back is None:
            self._put_back = self._plain if anomaly_state() == self._last != self._plain else ()
        if self._put_back:
            self._own(self._put_back)  # NB: setting it twice (an interrupted undo run again) is harmless

    def ours_alone(self) -> bool:
        """Whether anomaly mode is now on only because grad_magic turned it on (a plain cell would run
        without it): its report of a failing backward is then grad_magic's to fold into the card."""
        return not self.closed and anomaly_state()[0] and anomaly_state() == self._last and not self._plain[0]

    def lifts_nan_check(self) -> bool:
        """Whether the NaN check now on is grad_magic's alone (a plain cell would not check for NaN): a
        backward() on `meta` tensors runs without it, since the check reads each gradient's value (`.item()`
        raises on meta, the device deferred initialisation uses)."""
        return not self.closed and anomaly_state() == self._last == (True, True) and self._plain != (True, True)

    def call_without_nan_check(self, func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        self._own((True, False))
        try:
            return func(*args, **kwargs)
        finally:
            if not self.closed and anomaly_state() == self._last:  # NB: else a hook of the user's set it
                self._own((True, True))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.closed:
            if torch.set_anomaly_enabled is self:
                torch.set_anomaly_enabled = self._setter
            return self._setter(*args, **kwargs)
        result = self._setter(*args, **kwargs)
        self._seen(_users_call(frame_at(1)), anomaly_state())
        return result

    def _seen(self, frame: Optional[FrameType], now: Anomaly) -> None:
        helper = frame.f_locals.get("self") if frame is not None and frame.f_code.co_filename == _ANOMALY_FILE \
            else None
        name = frame.f_code.co_name if frame is not None else ""
        try:
            if helper is not None and name in ("__init__", "__enter__"):
                self._entered[helper] = self._plain
            elif helper is not None and name == "__exit__":
                now = self._entered.pop(helper, now)
        except TypeError:  # NB: an object that takes no weak reference (a subclass with __slots__)
            pass
        self._plain, self._last = now, anomaly_state()

    def _own(self, state: Tuple[bool, ...]) -> None:
        """Set anomaly mode for grad_magic itself: outer captures' watches note it as theirs, not the user's.
        NB: noted before it is set: interrupted in between, the undo sees a state it did not set, and keeps it."""
        self._last = (state[0], state[1])
        setter = self._setter
        while isinstance(setter, AnomalyWatch):
            if not setter.closed:
                setter._last = self._last
            setter = setter._setter
        setter(*state)


def _users_call(frame: Optional[FrameType]) -> Optional[FrameType]:
    """The frame that called `torch.set_anomaly_enabled`, past nested captures' watches."""
    while frame is not None and frame.f_code is _WATCH_CALL:
        frame = frame.f_back
    return frame


_WATCH_CALL = AnomalyWatch.__call__.__code__


def push_function_mode(mode: TorchFunctionMode) -> None:
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


def pop_function_mode(mode: TorchFunctionMode) -> bool:
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
