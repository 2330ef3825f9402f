"""frozen-by-no-grad's culprit: why an optimizer stepped and none of its parameters had a gradient.

The forward ran under a grad-off block, no backward() was called, or the loss backward() got was cut off from
the graph (rebuilt as a leaf). A model re-created after its optimizer was built is optimizer-not-on-model's
story, not this one.
May touch: the cell's ast, the optimizer's param_groups (read from its dict), and live values through the
NameIndex (grad_fn, requires_grad, shapes: metadata only).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

import torch

from ...record import StepEvent
from ..context import RuleContext
from ..kit import optimizer_params
from .culprit import (backward_lines, backward_receiver_names, body_of, calls_backward, cell_modules,
                      grad_off_withs, module_parameters, step_statement)


@dataclass(frozen=True)
class NothingTrained:
    """Why no parameter got a gradient, and what a fix needs to know."""

    kind: str  # "no_grad" (the forward ran under a grad-off block), "no_backward", "cleared" (zero_grad() between
    # backward() and the step), "detached" or "other"
    lines: Tuple[Optional[int], ...]
    block: int  # the line of the cell's first grad-off block, 0 when none
    loss: str  # the first name backward() is called on, "loss" when none
    backward: bool  # whether the cell calls backward() at all
    grad_off: Optional[ast.stmt] = None  # the one grad-off block to take the forward out of
    step: Optional[ast.stmt] = None  # the `<optimizer>.step()` a missing backward() goes before
    missing: Optional[str] = None  # the loss to call that backward() on
    cleared: Optional[Tuple[ast.stmt, ast.stmt]] = None  # (the backward, the zero_grad() after it)


def nothing_trained(ctx: RuleContext, tree: Optional[ast.Module], step_line: Optional[int]) -> NothingTrained:
    if tree is None:
        return NothingTrained("other", (step_line,), 0, "loss", False)
    blocks = grad_off_withs(tree)
    receivers = backward_receiver_names(tree)
    block, loss = (blocks[0].lineno if blocks else 0), (receivers[0] if receivers else "loss")
    backward = calls_backward(tree)
    if blocks:
        only = blocks[0] if len(blocks) == 1 and backward else None
        return NothingTrained("no_grad", (blocks[0].lineno, step_line), block, loss, backward, grad_off=only)
    if not backward:
        stmt = step_statement(tree, step_line)
        missing = loss_before(ctx, tree, stmt) if stmt is not None else None
        return NothingTrained("no_backward", (step_line,), block, loss, backward, step=stmt, missing=missing)
    stmt = step_statement(tree, step_line)
    cleared = _cleared_before_step(tree, stmt) if stmt is not None else None
    if cleared is not None:  # NB: `opt.zero_grad()` between backward() and step(): the gradients are dropped
        return NothingTrained("cleared", (cleared[0].lineno, cleared[1].lineno, step_line), block, loss, backward,
                              step=stmt, cleared=cleared)
    if any(_is_cut_off(ctx.names.lookup(n)) for n in receivers):
        return NothingTrained("detached", (step_line, *backward_lines(tree)), block, loss, backward)
    return NothingTrained("other", (step_line,), block, loss, backward)


def _cleared_before_step(tree: ast.AST, step: ast.stmt) -> Optional[Tuple[ast.stmt, ast.stmt]]:
    """(backward, zero_grad): in the step's block, the last `backward()` before the step, then a `zero_grad()`
    statement between the two -- the gradients backward() made are dropped before step() reads them."""
    body = body_of(tree, step)
    if body is None or step not in body:
        return None
    before = body[:body.index(step)]
    backward = next((s for s in reversed(before) if _has_call(s, "backward")), None)
    if backward is None:
        return None
    between = before[before.index(backward) + 1:]
    zero = next((s for s in between if isinstance(s, ast.Expr) and _has_call(s, "zero_grad")), None)
    return (backward, zero) if zero is not None else None


def _has_call(node: ast.AST, attr: str) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == attr
               for n in ast.walk(node))


def _is_cut_off(value: Any) -> bool:
    """A loss that requires grad but has no grad_fn: rebuilt as a leaf, so backward() stops at it."""
    return isinstance(value, torch.Tensor) and value.requires_grad and value.grad_fn is None


def loss_before(ctx: RuleContext, tree: ast.Module, stmt: ast.stmt) -> Optional[str]:
    """The scalar with a grad_fn assigned last before `stmt` in its block: the loss to backpropagate."""
    body = body_of(tree, stmt)
    if body is None:
        return None
    for s in reversed(body[:body.index(stmt)]):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            value = ctx.names.lookup(s.targets[0].id)
            if isinstance(value, torch.Tensor) and value.grad_fn is not None and value.numel() == 1:
                return s.targets[0].id
    return None


def model_re_created(ctx: RuleContext, tree: ast.Module, opt: Any) -> bool:
    """The optimizer holds parameters no name holds, shaped like those of a model the cell uses."""
    params = optimizer_params(opt)
    if not params or any(ctx.names.name_for(p) is not None for p in params):
        return False
    shapes = sorted(tuple(p.shape) for p in params)
    for _, module in cell_modules(ctx, tree):
        own = module_parameters(module)
        if own and sorted(tuple(p.shape) for p in own) == shapes:
            return True
    return False


def trains_a_lost_model(ctx: RuleContext, opt: Any, steps: Sequence[StepEvent]) -> bool:
    """The frames that stepped held a model with as many parameters, of the same kinds, as the optimizer's, but
    none of them, and no name holds the optimizer's: the model was made again (optimizer-not-on-model's story)."""
    params = optimizer_params(opt)
    ids = {id(p) for p in params}
    kinds = sorted(p.dim() for p in params)
    for step in steps:
        for held in step.models:
            model = held.model() if held.model is not None else None
            own = module_parameters(model) if model is not None and not held.stepped else []
            if own and sorted(p.dim() for p in own) == kinds and not ids & {id(p) for p in own}:
                return not any(ctx.names.name_for(p) is not None for p in params)
    return False
