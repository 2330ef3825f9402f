"""Rules of the optimizer family: an optimizer stepped on gradients left over from earlier steps.

- grads-not-zeroed (a warning): reads the optimizer steps the capture recorded (`StepEvent.stale_params`:
  grads accumulated onto since the previous step and never cleared) and the cell's syntax; never reads
  tensor data. The fix inserts `<optimizer>.zero_grad()` where each step's gradients start: before the
  backward() that feeds it.
- empty-parameter-list (ValueError "optimizer got an empty parameter list"): an optimizer built on no
  parameters: layers in a plain list or dict, a used-up `.parameters()` generator.
- optimizer-not-on-model (a warning): the optimizer steps parameters of a discarded model, shaped like the
  one the cell calls. Both read only dicts, shapes and the cell's syntax.

The seams: message.py (torch's text), culprit_zero.py, culprit_empty.py and culprit_stray.py (one culprit
per rule), fix.py (the edits), card.py (the rules and their wording).

Order: grads-not-zeroed, empty-parameter-list, optimizer-not-on-model (card.py's order of definition).
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers the rules
