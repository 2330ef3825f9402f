"""What a LightningModule's `training_step` returned, when Lightning refused it (the generic card's plain words
`step_no_loss` / `step_output`): the value, read in Lightning's frame that raised, and the `return` lines of the
user's `training_step` that give such a value.

The evidence: the value Lightning read (its frame's `training_step_output`, `output` before Lightning 1.1) and
the LightningModule on the traceback (a frame's local whose class derives from Lightning's), never imported:
grad_magic does not import Lightning. May touch: the traceback's frames (locals read, nothing called), the cells'
ast. Never runs user code.
"""
from __future__ import annotations

import ast
from typing import Any, List, Optional, Tuple

import torch

from .context import RuleContext
from .places import Place, method_place, returned
from .tb import entries_of

STEP_WORDS = ("step_no_loss", "step_output")
_VALUE_NAMES = ("training_step_output", "output")  # NB: Lightning 1.1 ... 2.6, and before


def step_returns(ctx: RuleContext, words: str) -> Optional[Tuple[Place, List[int], str]]:
    """(the user's `training_step`, the lines of its returns that give what Lightning refused, the value as
    code) for the generic card of Lightning's `words`; None when the traceback holds no LightningModule of the
    user's."""
    frames = [entry.tb_frame for entry in entries_of(ctx.exception)]
    module = next((v for f in reversed(frames) for v in _values(f) if _is_lightning_module(v)), None)
    place = method_place(ctx, type(module), "training_step") if module is not None else None
    if place is None:
        return None
    value = next((f.f_locals[n] for f in frames[-1:] for n in _VALUE_NAMES if n in f.f_locals), None)
    values = returned(place)
    if words == "step_no_loss":  # NB: the dicts written out without a 'loss' key, when the function has such
        dicts = [v for v in values if isinstance(v, ast.Dict) and not any(
            isinstance(k, ast.Constant) and k.value == "loss" for k in v.keys)]
        values = dicts or values
    lines = sorted({v.lineno for v in values})[:2] or [place.node.lineno]
    return place, lines, _shown(value)


def _values(frame: Any) -> List[Any]:
    try:
        return list(frame.f_locals.values())
    except Exception:  # NB: a frame whose locals cannot be read
        return []


def _is_lightning_module(value: Any) -> bool:
    return any(c.__name__ == "LightningModule" and c.__module__.split(".")[0] in ("lightning", "pytorch_lightning")
               for c in type(value).__mro__)


def _shown(value: Any) -> str:
    """The value as short code: `{'train_loss': ..., 'log': ...}`, `0`, `'done'`, or its type's name."""
    if type(value) is dict:
        keys = ", ".join(f"{k!r}: ..." for k in list(value)[:6] if type(k) in (str, int))
        return f"`{{{keys}}}`"
    if type(value) in (int, float, bool, str) or value is None:
        return f"`{value!r}`"[:60]
    if isinstance(value, torch.Tensor):
        return "a tensor"
    return f"a `{type(value).__name__}`"
