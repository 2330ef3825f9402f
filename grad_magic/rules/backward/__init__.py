"""Rules of the backward family: backward() on a non-scalar, through a freed graph, through `out=`, or
through tensors made under inference_mode.

What it explains, and from what: torch's message (message.py: one parser per kind); the cell's syntax around
the failing line and metadata of the user's tensors (shape, grad_fn, is_inference) -- never tensor data
(culprit.py: the failing statement and backward() call, the refused tensor, the `out=` call;
culprit_twice.py: a state carried across iterations, a graph built before the loop, an earlier backward();
culprit_inference.py: the tensor made under inference_mode and the block that made it). Fixes are small
edits of the user's text (fix.py): a reduction appended to the receiver of backward(), `.detach()` of a
state carried across iterations, the graph's statements moved into the loop, `retain_graph=True`, the
out-of-place form of a call, and `torch.inference_mode()` swapped for `torch.no_grad()` (else a clone).
The cards are worded in card.py through catalog keys `backward.*`.

Order: backward-non-scalar, backward-twice, out-with-grad, inference-tensor-backward (card.py's order).
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers the rules
