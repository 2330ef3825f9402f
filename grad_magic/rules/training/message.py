"""The training family's one torch message: the error that already tells frozen-by-no-grad's story.

The family's three rules are warnings about silent bugs, so torch's text is read only to stand aside: when
backward() failed for want of a graph, the error card (missing-requires-grad) explains the frozen run.
May touch: the message text only. No torch import.
"""
from __future__ import annotations

import re

# torch/csrc/autograd/autograd.cpp (run_backward), torch 0.4 ... 2.13:
#   "element 0 of tensors does not require grad and does not have a grad_fn"
NEEDS_GRAD_ERROR = re.compile(r"does not require grad and does not have a grad_fn")
SEARCHED = 10_000  # NB: the start of the message is enough; a huge message is not scanned whole


def is_needs_grad_error(message: str) -> bool:
    """Whether `message` is backward()'s "does not require grad and does not have a grad_fn"."""
    return NEEDS_GRAD_ERROR.search(message[:SEARCHED]) is not None
