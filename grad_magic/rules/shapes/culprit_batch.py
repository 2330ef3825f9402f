"""batch-size-mismatch's culprit: why the loss's input and target disagree on the batch -- a target not
flattened like the input, an input of (batch, time, classes) not flattened like its target, or one
`x.view(-1, N)` in the cell that folded features into the batch (with the Linears that take N).

May touch: the cell's ast and the tracker's snapshots of the loss's tensors (shapes only).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional, Tuple

from ..context import RuleContext
from ..kit import one_line
from .culprit import LinearCall, LossArgs, fold, linear_calls
from .message import BatchSizes


@dataclass(frozen=True)
class BatchCause:
    """Why the batch sizes differ, when the numbers say it."""

    how: str  # "target_not_flat", "input_not_flat", "view" or "unknown"
    view: Optional[ast.Call] = None  # the one `x.view(-1, N)` of the cell (how == "view")
    n: int = 0  # its N
    per_sample: int = 0  # the features per sample the numbers imply
    receiver: str = ""  # `x`, a name or attribute whose batch a fix keeps; "" when not one
    ctors: Tuple[LinearCall, ...] = ()  # the cell's `nn.Linear(N, ...)` calls


def batch_cause(ctx: RuleContext, tree: Optional[ast.Module], loss: LossArgs, sizes: BatchSizes) -> BatchCause:
    in_shape = loss.input_shot.shape if loss.input_shot is not None else ()
    t_shape = loss.target_shot.shape if loss.target_shot is not None else ()
    numel = 1
    for d in t_shape:
        numel *= d
    if len(t_shape) >= 2 and numel == sizes.input:  # logits.view(-1, vocab) against targets of shape (B, T)
        return BatchCause("target_not_flat")
    if len(in_shape) == 3 and len(t_shape) == 1 and in_shape[0] * in_shape[1] == sizes.target:
        return BatchCause("input_not_flat")
    return _view_cause(ctx, tree, sizes) or BatchCause("unknown")


def _view_cause(ctx: RuleContext, tree: Optional[ast.Module], sizes: BatchSizes) -> Optional[BatchCause]:
    """A single `x.view(-1, N)` in the cell whose N makes the numbers come out: it folded features into the
    batch."""
    if tree is None:
        return None
    views = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in ("view", "reshape") and len(n.args) == 2 and not n.keywords
             and fold(n.args[0]) == -1 and fold(n.args[1])]
    if len(views) != 1:
        return None
    view = views[0]
    n = fold(view.args[1]) or 0
    if sizes.target <= 0 or (sizes.input * n) % sizes.target:
        return None
    per_sample = sizes.input * n // sizes.target
    if per_sample == n:
        return None
    receiver = view.func.value
    named = one_line(ctx.record.source, receiver) if isinstance(receiver, (ast.Name, ast.Attribute)) else ""
    ctors = tuple(c for c in linear_calls(ctx, tree) if c.in_features == n) if named else ()
    return BatchCause("view", view, n, per_sample, named, ctors)
