"""Rules of the optimizer family: an optimizer stepped on gradients left over from earlier steps.

- grads-not-zeroed (a warning): reads the optimizer steps the capture recorded (`StepEvent.stale_params`:
  grads accumulated onto since the previous step and never cleared; `frames`: the code that stepped) and the
  syntax of the cell that stepped (a helper's or a method's, cells up); never reads tensor data. The fix
  inserts `<optimizer>.zero_grad()` where each step's gradients start: before the backward() that feeds it.
  An update written by hand (`w -= lr * w.grad`, the tracker's in-place updates of leaves) gets
  `w.grad.zero_()` after it.
- empty-parameter-list (ValueError "optimizer got an empty parameter list"): an optimizer built on no
  parameters: layers in a plain list or dict, a used-up `.parameters()` generator.
- optimizer-not-on-model (a warning): the optimizer steps parameters of a discarded model, a twin of the one
  the training uses (called by the cell, or held by the frames that stepped); named where the optimizer was
  built and where the model was made again, and fixed by building the optimizer again right there. Both read
  only dicts, shapes and the syntax of the cells that ran.

The seams: message.py (torch's text), culprit_zero.py and culprit_manual.py (an optimizer's steps, updates
by hand), culprit_empty.py and culprit_stray.py, fix.py (the edits), card.py (the rules and their wording).

Order: grads-not-zeroed, empty-parameter-list, optimizer-not-on-model (card.py's order of definition).
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers the rules
