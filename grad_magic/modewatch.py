"""Mode switches: which modules the run put in train() or eval() mode, from where, and after how many steps.

For the run, `torch.nn.Module.train` is wrapped (one class attribute, put on when the capture starts and taken
off when it ends; the undo puts back only its own wrapper). `eval()` is `train(False)`, and a subclass's own
`train` that calls `super().train(mode)` comes through it too. A call notes the module (weakly), the mode, the
user's frames that made it (innermost first: `m.eval()` in a `set_mode` helper, then `set_mode('eval', ...)` in
`check_accuracy`, then the training loop's call of it), the steps the run had ended then, and whether grad mode
was on. The calls `train` makes on the children are not noted: one switch is one call of the user's.

train-eval-mode reads them (rules/training/culprit_mode_steps.py): the step watch saw a model's Dropout /
BatchNorm layers in eval() mode at a step; the switch that put them there, and not back before that step, is
where the card points.

Records strings, numbers and weak references only; never changes what `train` does or returns.
"""
from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Tuple

import torch

from .sources import Sources, frame_at
from .tracker import dynamo_compiling

MAX_SWITCHES = 512  # switches noted per run (the first ones: a loop's later ones repeat its first)


@dataclass(frozen=True)
class ModeSwitch:
    """One call of `Module.train(mode)` (or `eval()`) made by the user's code during the run."""

    ref: Optional[weakref.ref] = field(compare=False, repr=False)  # the module switched
    training: bool  # the mode it was put in
    frames: Tuple[Tuple[str, int], ...]  # (filename, line) of the user's frames that made the call, innermost first
    after_steps: int  # optimizer steps the run had ended when it was made
    grad_enabled: bool  # whether grad mode was on at the call


class ModeWatch:
    """The run's mode switches (see the module's docstring). `sources`: which frames are the user's;
    `steps_done`: how many optimizer steps the run has ended."""

    def __init__(self, sources: Optional[Sources], filename: Optional[str],
                 steps_done: Callable[[], int] = lambda: 0) -> None:
        self._sources = sources
        self._filename = filename
        self._steps_done = steps_done
        self._switches: List[ModeSwitch] = []
        self._original: Optional[Callable[..., Any]] = None
        self._wrapper: Optional[Callable[..., Any]] = None

    def install(self) -> None:
        original = torch.nn.Module.__dict__.get("train")
        if original is None or self._sources is None:
            return
        watch, inner = self, original.__code__

        @functools.wraps(original)
        def train(module: Any, mode: bool = True) -> Any:
            result = original(module, mode)
            if not dynamo_compiling():
                try:
                    caller = frame_at(1)
                    if caller is not None and caller.f_code is not inner:  # NB: not train's own calls on the children
                        watch._note(module, mode, caller)
                except Exception:  # NB: never in place of the user's call
                    pass
            return result

        self._original, self._wrapper = original, train
        torch.nn.Module.train = train

    def uninstall(self) -> None:
        if self._wrapper is not None and torch.nn.Module.__dict__.get("train") is self._wrapper:
            torch.nn.Module.train = self._original
        self._wrapper = None

    def _note(self, module: Any, mode: Any, caller: Any) -> None:
        if len(self._switches) >= MAX_SWITCHES or not isinstance(mode, bool):
            return
        _, frames = self._sources.stack(caller, self._filename)
        if not frames:
            return  # NB: no user frame under it (a thread torch runs)
        self._switches.append(ModeSwitch(weakref.ref(module), mode, frames, self._steps_done(),
                                         torch.is_grad_enabled()))

    def switches(self) -> Tuple[ModeSwitch, ...]:
        return tuple(self._switches)
