"""Rules of the inplace family: a tensor autograd saved for backward was changed in place afterwards
(`saved-tensor-modified-in-place`: RuntimeError "one of the variables needed for gradient computation has
been modified by an inplace operation: [torch.FloatTensor [2]], which is output 0 of Sigmoid, is at version
1; expected version 0 instead").

What it reads: torch's message and anomaly mode's "Error detected in X" warning (message.py); the in-place
ops the tracker saw, optimizer steps and live tensors' metadata (version, shape, `_base`), never tensor data
(culprit.py); where the op is written in the cell (culprit_spot.py). The fix is a small text edit at the
in-place op's line (fix.py): the out-of-place form, `inplace=False`, or a `.clone()` before the write. The
card, worded through catalog keys `inplace.saved.*`, is card.py's.

Order: one rule (card.py).
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers the rule
