"""Rules of the inplace family: a tensor autograd saved for backward was changed in place afterwards
(`saved-tensor-modified-in-place`: RuntimeError "one of the variables needed for gradient computation has
been modified by an inplace operation: [torch.FloatTensor [2]], which is output 0 of Sigmoid, is at version
1; expected version 0 instead").

What it reads: torch's message and anomaly mode's "Error detected in X" warning (message.py); the in-place
ops the tracker saw (with the user frames and modules that made them), optimizer steps and live tensors'
metadata (version, shape, `_base`), never tensor data (culprit.py); the in-place module that wrote and the
call that built it, in whichever cell (culprit_module.py); where the op is written (culprit_spot.py). The card
is made from the cell where the write is -- a block's `forward()` cells up, the `__init__` that built an
`nn.ReLU(inplace=True)` -- and the fix edits that cell: the out-of-place form, `inplace=False`, or a `.clone()`
before the write (fix.py); for an optimizer step between a forward and its backward, the loss computed again
after the step (fix_step.py). The card, worded through catalog keys `inplace.saved.*`, is card.py's.

Order: one rule (card.py).
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers the rule
