"""Rules of the training family (issue 7): silent training-loop bugs, seen after the cell ran.

- graph-kept-alive: a loss with a grad_fn summed or appended across iterations keeps every graph alive.
- frozen-by-no-grad: an optimizer stepped, but none of its parameters ever had a gradient.
- train-eval-mode: training with the model in eval() mode, or evaluating it in train() mode.

Reads the cell's syntax, the optimizer steps the capture recorded and metadata of the namespace
(grad_fn, requires_grad, shapes, a module's `training` flag): never tensor data, never user code. When the
loop, the step or the accumulation lives in a helper or a method of an earlier cell, what the steps saw
(stepwatch.py: the models the user's frames held and their layers' modes at each step, the locals whose graph
grew from step to step, the frames that stepped) says what happened and in which cell: the card names that
cell's lines and the fix edits that cell.

The seams: message.py (the one torch message read: backward()'s "does not require grad", whose error card
tells frozen-by-no-grad's story), culprit.py (what the three rules read alike: loops, backward() calls,
grad-off blocks, the cell's modules) with the culprit modules of each rule (culprit_graph.py; culprit_frozen.py
and culprit_frozen_steps.py, a grad-off decorator or a loss rebuilt in a helper; culprit_mode.py and
culprit_mode_steps.py, the modes the steps saw), fix.py (the edits) and card.py (the rules and their wording).

Order: graph-kept-alive, frozen-by-no-grad, train-eval-mode -- all warnings, each tried after every run.
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers the rules
