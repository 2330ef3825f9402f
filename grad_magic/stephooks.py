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
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.optim.optimizer as optimizer_module
from torch.overrides import TorchFunctionMode

from .live import LiveWatch
from .record import RunRecord, StepEvent
from .stepwatch import (Clearings, StepLook, calling_frame, counted_after, looks_at, stale_grads, stepped_on,
                        users_closure)
from .torchstate import pop_function_mode, push_function_mode
from .tracker import OpLog


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
        self._tracker = tracker
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
        log = self._log
        log.pause(1)
        popped = self._tracker is not None and pop_function_mode(self._tracker)
        running, entry = self._running, [threading.get_ident(), id(optimizer), popped, None]
        if len(running) < 1000:  # NB: noted at once (the post-hook puts the tracker back); a step that raised
            running.append(entry)  # never ends: its entry stays
        closure = args[1] if len(args) > 1 and callable(args[1]) else kwargs.get("closure")  # NB: args[0]: self
        steps = self.steps
        pace = self._paces.get(id(optimizer))
        if pace is None or pace[2] is not None and pace[2].optimizer() is not optimizer:
            pace = self._paces[id(optimizer)] = [0, None, None]
        pace[0] += 1
        caller = calling_frame(sys._getframe(1))
        key = (id(caller), caller.f_code, caller.f_lineno) if caller is not None else None
        if pace[1] == key and pace[2] is not None and not looks_at(pace[0]) and not callable(closure):
            models = self._look.modes_now(optimizer)
            if models is not None:  # NB: a loop's step between two looks: as the last look, the modes read now
                if len(steps) < 10_000:
                    last = pace[2]
                    steps.append(last if models is last.models else dataclasses.replace(last, models=models))
                return None
        entry[3] = params = params_of(optimizer)
        with_grad, stale = stale_grads(params, self._after, self.clearings.since_last_step(log))
        log.touched.clear()
        if len(steps) < 10_000:
            lineno, frames, models, growing = self._look.look(optimizer, sys._getframe(1))
            last = pace[2]
            if last is not None and last.lineno == lineno and last.params_with_grad == with_grad and \
                    last.stale_params == stale and last.frames == frames and last.models is models and \
                    last.growing == growing and not last.closure and closure is None:
                record = last  # NB: a loop's step as the one before it: the same (immutable) record again
            else:
                # NB: weakref.ref gives the optimizer's one reference (no callback): the same at each step
                record = StepEvent(weakref.ref(optimizer), type(optimizer).__name__, lineno, with_grad, stale, frames,
                                   models, growing, callable(closure))
            steps.append(record)
            pace[1:] = key, record
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
            (pop_function_mode if pause else push_function_mode)(self._tracker)

    def after(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        running, mine = self._running, None
        try:
            if running and running[-1][0] == threading.get_ident() and running[-1][1] == id(optimizer):
                mine = running[-1]
            pace = self._paces.get(id(optimizer))
            if mine is None or mine[3] is not None or pace is None or looks_at(pace[0] + 1):
                # NB: the gradients this step leaves, for the next look to compare with (and the clearings since)
                params = mine[3] if mine is not None and mine[3] is not None else params_of(optimizer)
                stepped_on(params, self._after)
                self.clearings.since_last_step(self._log)
                self._log.touched.clear()
                steps = self.steps
                if steps and steps[-1].closure and steps[-1].optimizer() is optimizer:
                    steps[-1] = counted_after(steps[-1], params)  # NB: a closure's gradients
            self.count = count = self.count + 1
            if self.live is not None and count & (count - 1) == 0 and self.live.wants(count):  # NB: 1, 2, 4, 8 ...
                # NB: still paused, the tracker still off: the rules' and the card's torch calls are not the user's
                self.live.at_step(self.count, self.so_far)
        finally:
            self._log.pause(-1)
            if mine is not None:
                running.pop()
                if mine[2] and not self.closed:
                    push_function_mode(self._tracker)  # NB: back on, as it was before the step


def params_of(optimizer: torch.optim.Optimizer) -> List[torch.Tensor]:
    """The optimizer's parameters, read once per step (its param_groups stay as they are while it steps)."""
    return [p for group in optimizer.param_groups for p in group["params"]]


def module_params(module: torch.nn.Module):
    return module.parameters()


class ZeroGradWatch:
    """`zero_grad` of torch's Optimizer and Module, wrapped while a capture runs (then put back).

    `zero_grad()` reads and writes every parameter's .grad; with the tracker on, each of those passes
    through it (two per parameter, plus the profiler's bookkeeping): a tenth of a small training step.
    The wrapper takes the tracker off for the call (as `StepWatch` does for a step) and marks the
    gradients it leaves as changed by the user -- what the tracker would have seen (`zero_()` when
    `set_to_none=False`), which tells the step watch that the gradients were cleared. A subclass's
    own `zero_grad` that does not call this one runs tracked, as before. A wrapper the user saved during
    the run and put back after it calls torch's own, and puts it back in its place at its first call.
    """

    def __init__(self, owner: type, params: Callable[[Any], Any], log: OpLog, tracker: Optional[TorchFunctionMode],
                 steps: StepWatch) -> None:
        self._owner, self._original = owner, owner.__dict__["zero_grad"]
        watch_params, clearings, original = params, steps.clearings, self._original
        by_default = _default_set_to_none(original)

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
                    # NB: set_to_none (torch's default since 2.0) leaves no .grad to mark: no walk of the parameters
                    if (args[0] if args else kwargs.get("set_to_none", by_default)) is not True:
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
