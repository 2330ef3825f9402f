"""Rules of the shapes family: a Linear layer fed the wrong number of features, a loss whose input and target
disagree on the batch size, and class labels beyond the classifier's outputs.

Reads the error message (the wordings of torch 1.x ... 2.13 and of the CPU, CUDA, MPS and meta kernels), the
failing op's tensor arguments as the tracker recorded them (shapes only, never data), the user's modules
(a Linear's in/out features are its weight's shape) and the cell's syntax. Fixes are single spots in the
cell: a flatten added, a literal `in_features`/`out_features`, a target flattened or shifted by one, or a
`view(-1, N)` that keeps the batch (with the Linear that takes N). When the numbers do not pin the cause
down, no fix.
"""
from __future__ import annotations

# NB: import order is rule order: shape-mismatch, batch-size-mismatch, target-out-of-range.
from . import linear, batch, target  # noqa: F401
# NB: the names the tests read, as the one-module version had them
from .linear import Product, parse_matmul_error  # noqa: F401
from .target import parse_target_error  # noqa: F401
