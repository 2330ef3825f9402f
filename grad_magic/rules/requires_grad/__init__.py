"""Rules of the requires_grad family: backward() on a result that never required grad, and requires_grad
asked of a tensor that cannot have it.

- `missing-requires-grad`: RuntimeError "element N of tensors does not require grad and does not have a
  grad_fn" (before torch 0.4: "... of variables ..."). The cause is traced back from the tensor backward() was
  called on, through the cell's assignments (ast), checked against the live objects (metadata only): a leaf
  created without `requires_grad=True` (fix: add it where the leaf is made); a forward computed under
  `torch.no_grad()` / `torch.inference_mode()` (fix: move those lines out of the block); the chain cut by
  `.detach()` / `.data` / `.item()` / `.numpy()` / `torch.tensor(t)` (fix: drop a `.detach()` or `.data` when
  nothing after it needs the cut; `.requires_grad_()` after a manual update's `.detach()`; a copy that keeps
  the graph); an op without a gradient -- argmax, a comparison, an integer cast -- (the honest fix computes the
  loss from the scores: a differentiable argmax where its value is used as a number, else words; never
  `requires_grad=True`, which would run and train nothing); every parameter of the model frozen (explained,
  with the statement that froze it, no fix). The trace follows the loss into functions, methods and modules'
  `forward` of earlier cells and out to the caller of the helper backward() ran in: the card names the cell
  and line of the cause and fixes that cell. When no cause is found, the card says what is known and
  proposes no fix.
- `integer-requires-grad`: RuntimeError "Only Tensors of floating point and complex dtype can require
  gradients" (torch 1.6+; "only Tensors of floating point dtype ..." from `requires_grad_()`, and from
  everything before 1.6). Fix: give the creating call a floating-point dtype.

What it reads: torch's message (message.py); the records of a cause and where backward() was called
(culprit.py), the trace through the cell and the cells it calls into (culprit_trace.py, culprit_units.py),
where a cause was set beyond its line (culprit_where.py), a NumPy round trip (culprit_roundtrip.py), a
thresholded probability (culprit_soft.py), the integer tensor's creation and the ones after it
(culprit_integer.py) -- the cell's ast and live objects through the NameIndex, torch metadata only, never
user code. The edits are fix.py's (fix_frozen.py: a freeze helper that froze the head too); the cards, worded
through catalog keys `missing_rg.*` / `int_rg.*`, are card.py's.

Order: `missing-requires-grad`, then `integer-requires-grad` (card.py's order).
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers the rules
