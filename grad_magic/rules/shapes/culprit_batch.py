"""batch-size-mismatch's culprit: why the loss's input and target disagree on the batch -- a target not
flattened like the input, an input of (batch, time, classes) not flattened like its target, or one
`x.view(-1, N)` that folded features into the batch (with the Linears that take N): in the cell, or in the
`forward()` of the module that made the loss's input (an earlier cell's, seen in a view on it).

May touch: the cell's ast and the tracker's snapshots of the loss's tensors (shapes only).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import torch

from ...names import attribute_without_code
from ..context import RuleContext
from ..kit import lookup, one_line
from ..places import method_place
from .culprit import LinearCall, LossArgs, fold, last_assignment, linear_calls
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
    at: Optional[RuleContext] = None  # the view on the cell of the view (and ctors) when not this one: a forward()


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
    return _view_cause(ctx, tree, sizes) or _forward_view(ctx, tree, loss, sizes) or BatchCause("unknown")


def _forward_view(ctx: RuleContext, tree: Optional[ast.Module], loss: LossArgs, sizes: BatchSizes
                  ) -> Optional[BatchCause]:
    """The one `x.view(-1, N)` of the `forward()` (of a user's module, in an earlier cell) that made the loss's
    input: `pred = cnn(images)` or `criterion(cnn(images), y)`."""
    node = loss.input_node
    if isinstance(node, ast.Name) and tree is not None and loss.call is not None:
        made = last_assignment(tree, node.id, loss.call.call.lineno)
        node = made.value if isinstance(made, ast.Assign) else None
    module = lookup(ctx, node.func) if isinstance(node, ast.Call) else None
    forward = method_place(ctx, type(module), "forward") if isinstance(module, torch.nn.Module) else None
    if forward is None:
        return None
    return _view_cause(forward.ctx, forward.tree, sizes, forward.node, module)


def _view_cause(ctx: RuleContext, tree: Optional[ast.Module], sizes: BatchSizes, scope: Optional[ast.AST] = None,
                module: Any = None) -> Optional[BatchCause]:
    """A single `x.view(-1, N)` in the cell (or in `scope`, the forward of `module`, whose `self.N` count)
    whose N makes the numbers come out: it folded features into the batch."""
    if tree is None:
        return None
    views = [n for n in ast.walk(scope or tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in ("view", "reshape") and len(n.args) == 2 and not n.keywords
             and fold(n.args[0]) == -1 and _count(n.args[1], module)]
    if len(views) != 1:
        return None
    view = views[0]
    n = _count(view.args[1], module) or 0
    if sizes.target <= 0 or (sizes.input * n) % sizes.target:
        return None
    per_sample = sizes.input * n // sizes.target
    if per_sample == n:
        return None
    receiver = view.func.value
    named = one_line(ctx.record.source, receiver) if isinstance(receiver, (ast.Name, ast.Attribute)) else ""
    ctors = tuple(c for c in linear_calls(ctx, tree) if c.in_features == n) if named else ()
    return BatchCause("view", view, n, per_sample, named, ctors, ctx if scope is not None else None)


def _count(node: ast.AST, module: Any) -> Optional[int]:
    """An int written out, or `self.n` of the module whose forward it is."""
    found = fold(node)
    if found is None and module is not None and isinstance(node, ast.Attribute) and \
            isinstance(node.value, ast.Name) and node.value.id == "self":
        value = attribute_without_code(module, node.attr)
        found = value if type(value) is int else None
    return found
