"""The optimizer hooks of a capture (capture.py installs them; every undo idempotent): the step watch, torch's
global step pre- and post-hooks, which tell whether gradients were cleared between two `step()` calls and look
at what the user's frames hold (stepwatch.py), and the `zero_grad` watch, which marks the gradients cleared.

Keeps weak references and ids; a look's record is plain data (record.StepEvent).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import threading
import weakref
from _thread import get_ident
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.optim.optimizer as optimizer_module
from torch.overrides import TorchFunctionMode

from .live import LiveWatch
from .record import RunRecord, StepEvent
from .stepwatch import (Clearings, StepLook, calling_frame, counted_after, looks_at, next_look, stale_grads,
                        stepped_on, users_closure)
from .torchstate import pop_function_mode, push_function_mode
from .tracker import OpLog


_getframe = sys._getframe
_NO_CALLER = (-1, None, -1)  # NB: (id, code, line) of no frame: no frame matches it


class StepWatch:
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
        self.tracker = tracker  # NB: full mode's op tracker (None in fast mode); zero_grad's wrapper takes it off too
        self.thread = get_ident()  # NB: the capture's thread (the function-mode stack is per thread)
        # NB: threads already running when the capture began (a loop an earlier cell started): their steps are
        # that cell's business, never recorded here; a thread the cell itself starts is the cell's
        self.foreign = frozenset(t.ident for t in threading.enumerate() if t.ident != self.thread)
        self.steps: List[StepEvent] = []
        # id(param) -> (weakref to the grad it stepped on, that grad's version after the step)
        self._after: Dict[int, Tuple[weakref.ref, int]] = {}
        # [thread, id(optimizer), whether it took the tracker off, the parameters when the step is looked at] of
        # each step under way, innermost last
        self._running: List[List[Any]] = []
        # id(optimizer) -> [its steps, (id, code, line) of the frame that called the last one, its last look's record]
        self._paces: Dict[int, List[Any]] = {}
        self._look = StepLook(log.sources, log.filename)  # NB: what the user's frames hold at each step (stepwatch.py)
        self.clearings = Clearings()  # NB: gradients cleared since the last step (zero_grad's wrapper adds too)
        self.closed = False
        self.count = 0  # steps ended, all optimizers together (`steps` stops growing at its bound)
        self.live: Optional[LiveWatch] = None
        self.so_far: Callable[[], RunRecord] = lambda: RunRecord("", "")

    def before(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> Any:
        # NB: every step runs this; a step between two looks stops at the first `return None` below, having read
        # no parameter: its cost is a constant (docs/PERFORMANCE.md), whatever the model's size
        log = self._log
        log.paused += 1  # NB: log.pause(1), inlined (it runs at every step): the light trackers stop recording
        if log.on_pause is not None:
            log.on_pause()
        popped = self.tracker is not None and pop_function_mode(self.tracker)
        me = get_ident()
        entry = [me, id(optimizer), popped, None]
        running = self._running
        if len(running) < 1000:  # NB: noted at once (the post-hook puts the tracker back); a step that raised
            running.append(entry)  # never ends: its entry stays
        if me in self.foreign:
            return None  # NB: another cell's thread: paused (the post-hook lifts it), nothing recorded
        # NB: args[0] is the optimizer; a closure comes second or by name
        closure = None if len(args) < 2 and not kwargs else \
            args[1] if len(args) > 1 and callable(args[1]) else kwargs.get("closure")
        steps = self.steps
        pace = self._paces.get(id(optimizer))
        if pace is None or pace[2] is not None and pace[2].optimizer() is not optimizer:
            pace = self._paces[id(optimizer)] = [0, None, None, 1, 1]
        pace[0] = n = pace[0] + 1
        last = pace[2]
        if n < pace[4] and last is not None and (closure is None or not callable(closure)):
            # NB: a loop's step between two looks, if it comes from the frame and line that called the last look's
            # step, found at the depth it was found at then (no walk of torch's frames: a frame at that depth that
            # is the same frame, at the same line, is the same caller through the same wrappers)
            key = pace[1]
            try:
                frame = _getframe(pace[3])
            except ValueError:
                frame = None
            if frame is not None and id(frame) == key[0] and frame.f_code is key[1] and frame.f_lineno == key[2]:
                models = self._look.modes_now(optimizer)
                if models is not None:  # NB: as the last look, the modes read now
                    if models is not last.models:  # NB: a layer's mode changed (then it stays so, mostly)
                        pace[2] = last = dataclasses.replace(last, models=models)
                    if len(steps) < 10_000:
                        steps.append(last)
                    return None
        caller, depth = calling_frame(_getframe(1), 1)
        key = (id(caller), caller.f_code, caller.f_lineno) if caller is not None else _NO_CALLER
        pace[3:] = depth, next_look(n)
        if last is not None and pace[1] == key and not looks_at(n) and not callable(closure):
            models = self._look.modes_now(optimizer)  # NB: a step from the same line, found through other frames
            if models is not None:
                if len(steps) < 10_000:
                    steps.append(last if models is last.models else dataclasses.replace(last, models=models))
                return None
        entry[3] = params = params_of(optimizer)
        with_grad, stale, fresh = stale_grads(params, self._after, self.clearings.since_last_step(log))
        log.touched.clear()
        if len(steps) < 10_000:
            lineno, frames, models, growing = self._look.look(optimizer, _getframe(1), self.count)
            last = pace[2]
            if last is not None and last.lineno == lineno and last.params_with_grad == with_grad and \
                    last.stale_params == stale and last.fresh_params == fresh and last.frames == frames and \
                    last.models is models and last.growing == growing and not last.closure and closure is None:
                record = last  # NB: a loop's step as the one before it: the same (immutable) record again
            else:
                # NB: weakref.ref gives the optimizer's one reference (no callback): the same at each step
                record = StepEvent(weakref.ref(optimizer), type(optimizer).__name__, lineno, with_grad, stale, frames,
                                   models, growing, callable(closure), fresh)
            steps.append(record)
            pace[1], pace[2] = key, record
        if not callable(closure):
            return None
        # NB: step(closure) runs the user's forward and backward inside the step (Lightning): watched as theirs
        run = users_closure(closure, functools.partial(self._pause, popped, False),
                            functools.partial(self._pause, popped, True))
        return ((args[0], run, *args[2:]), kwargs) if len(args) > 1 and args[1] is closure else \
            (args, {**kwargs, "closure": run})

    def _pause(self, popped: bool, pause: bool) -> None:
        """The step's pause put back (`pause`) or lifted while its closure runs (the tracker, if it took it off)."""
        self._log.pause(1 if pause else -1)
        if popped and (pause or not self.closed):
            (pop_function_mode if pause else push_function_mode)(self.tracker)

    def after(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        running = self._running
        me = get_ident()
        top = running[-1] if running else None
        mine = top if top is not None and top[0] == me and top[1] == id(optimizer) else None
        try:
            if me in self.foreign:
                return  # NB: another cell's thread (the finally below still lifts the pause)
            pace = self._paces.get(id(optimizer))
            if mine is None or mine[3] is not None or pace is None or pace[0] + 1 >= pace[4]:
                # NB: the gradients this step leaves, for the next look to compare with (and the clearings since)
                params = mine[3] if mine is not None and mine[3] is not None else params_of(optimizer)
                stepped_on(params, self._after)
                self.clearings.since_last_step(self._log)
                self._log.touched.clear()
                steps = self.steps
                if steps and steps[-1].closure and steps[-1].optimizer() is optimizer:
                    steps[-1] = counted_after(steps[-1], params)  # NB: a closure's gradients
            self.count = count = self.count + 1
            if count & (count - 1) == 0 and self.live is not None and self.live.wants(count):  # NB: 1, 2, 4, 8 ...
                # NB: still paused, the tracker still off: the rules' and the card's torch calls are not the user's
                self.live.at_step(self.count, self.so_far, self.steps)
        finally:
            log = self._log
            log.paused = max(0, log.paused - 1)  # NB: log.pause(-1), inlined
            if log.on_pause is not None:
                log.on_pause()
            if mine is not None:
                running.pop()
                if mine[2] and not self.closed:
                    push_function_mode(self.tracker)  # NB: back on, as it was before the step


def params_of(optimizer: torch.optim.Optimizer) -> List[torch.Tensor]:
    """The optimizer's parameters, read once per step (its param_groups stay as they are while it steps)."""
    return [p for group in optimizer.param_groups for p in group["params"]]


def module_params(module: torch.nn.Module):
    return module.parameters()


# NB: the classes whose `zero_grad` is wrapped, and how each one's parameters are read
ZERO_GRAD_OWNERS = ((torch.optim.Optimizer, params_of), (torch.nn.Module, module_params))


class ZeroGradWatch:
    """`zero_grad` of torch's Optimizer or Module, wrapped while a capture runs (then put back).

    `zero_grad()` reads and writes every parameter's .grad; with full mode's tracker on, each of those passes
    through it (two per parameter, plus the profiler's bookkeeping): a tenth of a small training step.
    The wrapper takes the tracker off for the call (as `StepWatch` does for a step) and marks the
    gradients it leaves as changed by the user -- what the tracker would have seen (`zero_()` when
    `set_to_none=False`), which tells the step watch that the gradients were cleared. A subclass's
    own `zero_grad` that does not call this one runs tracked, as before.

    One wrapper per class and process (`_ZeroGradPatch`), shared by every capture under way: each one's step
    watch is noted in it while the capture runs. A watch with `steps=None` only holds the wrapper on: the
    always-on watch holds it from `%gradcheck on` to `off` (each put-on and take-off changes the class, and
    Python 3.13 stops caching a class's attributes after ~1,000 changes: ~500 watched cells), and between its
    cells the wrapper passes each call on at once. A wrapper the user saved and put back after every capture
    calls torch's own, and puts it back in its place at its first call.
    """

    def __init__(self, owner: type, params: Callable[[Any], Any], steps: Optional[StepWatch]) -> None:
        self._patch = _ZERO_GRAD.get(owner) or _ZERO_GRAD.setdefault(owner, _ZeroGradPatch(owner, params))
        self._steps = steps
        self._put_on = False  # NB: this watch put the wrapper on (then it takes it off)

    def install(self) -> None:
        patch = self._patch
        patch.holders.append(self)  # NB: noted before the wrapper goes on: uninstall() knows of it
        if self._steps is not None:
            patch.watches.append(self._steps)
            patch.recount()
        if not patch.is_on():
            self._put_on = True
            patch.put_on()

    def uninstall(self) -> None:
        """Idempotent. Takes the wrapper off when this watch put it on (an outer capture's is left to it), and
        only when it still sits there (a user's own patch since is theirs)."""
        patch = self._patch
        patch.watches[:] = [w for w in patch.watches if w is not self._steps]
        patch.recount()
        patch.holders[:] = [h for h in patch.holders if h is not self]
        if self._put_on:
            if patch.is_on():
                patch.take_off()
            self._put_on = False  # NB: after: an undo cut short here is run again whole


class _ZeroGradPatch:
    """One class's `zero_grad` and the wrapper that stands in for it, made once per process (made again only
    when what sits there changed: a user's own patch); `watches`: the step watches of the captures under way,
    outermost first; `holders`: the ZeroGradWatches installed now."""

    __slots__ = ("owner", "params", "watches", "holders", "before", "wrapper", "tracked")

    def __init__(self, owner: type, params: Callable[[Any], Any]) -> None:
        self.owner, self.params = owner, params
        self.watches: List[StepWatch] = []
        self.tracked = 0  # NB: watches with full mode's op tracker (none in fast mode and always-on)
        self.holders: List[ZeroGradWatch] = []
        self.before: Any = None
        self.wrapper: Any = None

    def recount(self) -> None:
        self.tracked = sum(1 for w in self.watches if w.tracker is not None)

    def is_on(self) -> bool:
        return self.wrapper is not None and self.owner.__dict__.get("zero_grad") is self.wrapper

    def put_on(self) -> None:
        current = self.owner.__dict__["zero_grad"]
        if self.wrapper is None or current is not self.before:
            self.before, self.wrapper = current, _zero_grad_wrapper(self, current)
        self.owner.zero_grad = self.wrapper

    def take_off(self) -> None:
        self.owner.zero_grad = self.before


def _zero_grad_wrapper(patch: _ZeroGradPatch, original: Callable[..., Any]) -> Callable[..., Any]:
    owner, watches, holders, watch_params = patch.owner, patch.watches, patch.holders, patch.params
    by_default = _default_set_to_none(original)

    @functools.wraps(original)
    def zero_grad(obj: Any, *args: Any, **kwargs: Any) -> Any:
        if not watches:  # NB: no capture under way: torch's own at once
            if not holders and owner.__dict__.get("zero_grad") is zero_grad:
                owner.zero_grad = original  # NB: kept by the user past every capture (saved, then put back)
            return original(obj, *args, **kwargs)
        if not args and not kwargs and by_default is True and not patch.tracked:
            return original(obj)  # NB: `zero_grad()` in fast mode and always-on: set_to_none, no tracker to take off
        clears = (args[0] if args else kwargs.get("set_to_none", by_default)) is not True
        if not patch.tracked:  # NB: fast mode, always-on: no tracker to take off
            if not clears:
                return original(obj, *args, **kwargs)  # NB: set_to_none (torch's default): no .grad left to mark
            try:
                return original(obj, *args, **kwargs)
            finally:
                _mark_cleared(watches, watch_params(obj))
        me = get_ident()  # NB: trackers are taken off this thread's function-mode stack only (one per thread);
        # the clearings are every capture's, as its step hooks see the steps of every thread
        popped = [w for w in reversed(watches) if w.thread == me and w.tracker is not None and
                  pop_function_mode(w.tracker)]
        try:
            return original(obj, *args, **kwargs)
        finally:
            try:
                if clears:
                    _mark_cleared(watches, watch_params(obj))
            finally:
                for watch in reversed(popped):
                    if not watch.closed:
                        push_function_mode(watch.tracker)  # NB: back on, as it was before the call

    return zero_grad


_ZERO_GRAD: Dict[type, _ZeroGradPatch] = {}


def _mark_cleared(watches: List[StepWatch], params: Any) -> None:
    """The gradients `zero_grad(set_to_none=False)` left (zeroed in place), marked for every capture's step watch."""
    cleared = {id(p.grad) for p in params if p.grad is not None}
    for watch in list(watches):
        watch.clearings.by_zero_grad.update(cleared)


def _default_set_to_none(zero_grad: Callable[..., Any]) -> Any:
    """The default of torch's `zero_grad(set_to_none=...)` (True since torch 2.0); None when unknown."""
    try:
        return inspect.signature(zero_grad).parameters["set_to_none"].default
    except (KeyError, TypeError, ValueError):
        return None


def unregister_optimizer_hooks(steps: StepWatch) -> None:
    """Remove our hooks from torch's global optimizer hook tables (idempotent)."""
    steps.closed = True  # NB: a step still under way (another thread) must not put the tracker back
    hooks = (steps.before, steps.after)
    for table in (optimizer_module._global_optimizer_pre_hooks, optimizer_module._global_optimizer_post_hooks):
        for key in [k for k, hook in table.items() if hook in hooks]:
            table.pop(key, None)
