"""Rules of the training family (issue 7): silent training-loop bugs, seen after the cell ran.

- graph-kept-alive: a loss with a grad_fn summed or appended across iterations keeps every graph alive.
- frozen-by-no-grad: an optimizer stepped, but none of its parameters ever had a gradient.
- train-eval-mode: training with the model in eval() mode, or evaluating it in train() mode.

Reads the cell's syntax, the optimizer steps the capture recorded and metadata of the namespace
(grad_fn, requires_grad, shapes, a module's `training` flag): never tensor data, never user code.

The seams: message.py (the one torch message read: backward()'s "does not require grad", whose error card
tells frozen-by-no-grad's story), culprit.py (what the three rules read alike: loops, backward() calls,
grad-off blocks, the cell's modules) with one culprit module per rule (culprit_graph.py, culprit_frozen.py,
culprit_mode.py), fix.py (the edits) and card.py (the rules and their wording).

Order: graph-kept-alive, frozen-by-no-grad, train-eval-mode -- all warnings, each tried after every run.
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers the rules
