"""Rules of the shapes family: a Linear layer fed the wrong number of features, a loss whose input and target
disagree on the batch size, and class labels beyond the classifier's outputs.

Reads the error message (the wordings of torch 1.x ... 2.13 and of the CPU, CUDA, MPS and meta kernels:
message.py), the failing op's tensor arguments as the tracker recorded them (shapes only, never data), the
user's modules (a Linear's in/out features are its weight's shape) and the cell's syntax (culprit.py and one
culprit_*.py per rule). Fixes are single spots in the cell (fix.py): a flatten added, a literal
`in_features`/`out_features`, a target flattened or shifted by one, or a `view(-1, N)` that keeps the batch
(with the Linear that takes N). When the numbers do not pin the cause down, no fix. The cards: card.py.

Order: shape-mismatch, batch-size-mismatch, target-out-of-range, target-size-mismatch (target_size.py: a binary
cross-entropy's target of another shape than its input), target-not-class-indices (class_targets.py: one-hot rows
or a column of labels given to cross_entropy / nll_loss).
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers shape-mismatch, batch-size-mismatch, target-out-of-range
from . import target_size  # noqa: F401 -- registers target-size-mismatch
from . import class_targets  # noqa: F401 -- registers target-not-class-indices
