"""Rules of the backward family: backward() on a non-scalar, through a freed graph, through `out=`, or
through tensors made under inference_mode.

What it explains, and from what: torch's message (message.py: one parser per kind); the cell's syntax around
the failing line and metadata of the user's tensors (shape, grad_fn, is_inference) -- never tensor data
(culprit.py: the failing statement and backward() call, the refused tensor, the `out=` call;
culprit_twice.py: a state carried across iterations, each loss of a list, a graph built before the loop, an
earlier backward() (a GAN's output read undetached by the first loss); culprit_across.py: the same seen from
the frames around a helper's backward() -- a state carried by the caller's loop or kept on a module, a graph
passed in or left by an earlier cell; causes.py: those causes and their remedies as data;
culprit_inference.py: the tensor made under inference_mode and the block or decorator that made it, in this
cell, on a function the run went through, or in the earlier cell that assigned it). Fixes are small edits of
the user's text, in the cell where the cause is (fix.py): a reduction appended to the receiver of
backward(), `.detach()` of a carried state (at the loop's top, before its first use, in a module's
`forward`) or of a shared tensor where the first loss reads it, the graph's statements moved into the loop,
`sum(losses).backward()`, `retain_graph=True`, the out-of-place form of a call, and `torch.inference_mode()`
swapped for `torch.no_grad()` (else a clone). The cards are worded in card.py through catalog keys
`backward.*` (catalog/backward.py, catalog/backward_across.py).

Order: backward-non-scalar, backward-twice, out-with-grad, inference-tensor-backward (card.py's order).
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers the rules
