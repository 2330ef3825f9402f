"""Rules of the dtypes family: loss targets of the wrong type, and tensors of two float types meeting in one op.

Reads the error message (torch 1.x ... 2.13 wordings: message.py), the cell's syntax (the loss call on the
failing line, the statement that made the odd tensor) and the dtypes of the tensors and modules the failing
line names, metadata only (culprit.py, culprit_origin.py); beyond the cell (culprit_beyond.py): a batch of
`for x, y in loader` back into the Dataset's `__getitem__` / `__init__` of an earlier cell, a global int of an
earlier cell filling `torch.full`. Fixes are one spot, in the cell where it is: the dtype set where the tensor
is made (`.float()` after `torch.from_numpy`, `dtype=torch.float32` in `torch.tensor`, `.double()` ->
`.float()`, `np.float64` -> `np.int64` numpy's way), else a conversion at the use (fix.py). The cards: card.py.

Order: `target-dtype` is tried first, then `dtype-mismatch`: the same message can be either.
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers target-dtype, dtype-mismatch
