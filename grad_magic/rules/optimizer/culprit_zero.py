"""grads-not-zeroed's culprit: which optimizers stepped on stale gradients, in which cell they stepped (the
running cell, or the helper or method of an earlier cell whose loop calls `step()`), and where each step's
gradients start there (where `<optimizer>.zero_grad()` belongs).

Reads the optimizer steps the capture recorded (`StepEvent.stale_params`: grads accumulated onto since the
previous step and never cleared; `frames`: the user's code that stepped) and the syntax of the cell that
stepped; names an optimizer (the NameIndex) only when it stepped on stale gradients. Never reads tensor data.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from ...cell import enclosing_statement, segment
from ...record import StepEvent, distinct_steps
from ..context import RuleContext
from ..kit import dotted, function_around, holder_name, starts_line
from ..places import view_on

BLOCKS = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef)
Trail = List[Tuple[List[ast.stmt], int]]  # (body, index) pairs down to a statement


@dataclass(frozen=True)
class StaleOptimizer:
    """The steps of one optimizer in this run, at least one of them on stale gradients."""

    name: Optional[str]  # None when no name holds it (or it is gone)
    class_name: str
    steps: Tuple[StepEvent, ...]

    @property
    def stale(self) -> List[StepEvent]:
        return [s for s in self.steps if s.stale_params > 0]


@dataclass(frozen=True)
class ZeroGradSpot:
    """Where `<receiver>.zero_grad()` goes: before `anchor` (a backward) or after it (a conditional step)."""

    receiver: str
    anchor: ast.stmt
    before: bool
    backward_line: Optional[int]


def stale_optimizers(ctx: RuleContext) -> List[StaleOptimizer]:
    """Optimizers with at least one step on stale gradients, in the order they first stepped."""
    if not any(s.stale_params > 0 for s in distinct_steps(ctx.record.steps)):
        return []  # NB: the healthy loop's answer, read from its few records
    by_id: Dict[Any, Tuple[Any, str, List[StepEvent]]] = {}
    for step in ctx.record.steps:
        opt = step.optimizer() if step.optimizer is not None else None
        key = id(opt) if opt is not None else (step.optimizer_class, step.lineno)
        by_id.setdefault(key, (opt, step.optimizer_class, []))[2].append(step)
    # NB: named only when stale: naming indexes the whole namespace
    return [StaleOptimizer(holder_name(ctx, opt) if opt is not None else None, cls, tuple(steps))
            for opt, cls, steps in by_id.values() if any(s.stale_params > 0 for s in steps)]


def zero_grad_spot(ctx: RuleContext, tree: ast.Module, opt: StaleOptimizer) -> Optional[ZeroGradSpot]:
    """Where this optimizer's gradients start, or None when the cell does not make it clear."""
    lines = {s.lineno for s in opt.stale}
    if len(lines) != 1 or None in lines:
        return None  # NB: stale steps on several lines: where each one's gradients start is unclear
    step_stmt = enclosing_statement(tree, lines.pop())
    receiver = step_receiver(ctx.record.source, step_stmt)
    if receiver is None:
        return None
    path = path_to(tree, step_stmt)
    if path is None:
        return None
    body, j = path[-1]
    k = max((i for i in range(j) if has_call(body[i], "step")), default=-1)
    b = next((i for i in range(k + 1, j) if has_call(body[i], "backward")), None)
    if b is not None:  # NB: the backward that made the step's gradients, in the step's own block (`if train:`)
        return ZeroGradSpot(receiver, body[b], True, body[b].lineno)
    if any(isinstance(body[i], ast.If) for body, i in path[:-1]):
        # a conditional step (accumulation every k batches): clear right after it
        return ZeroGradSpot(receiver, step_stmt, False, None) if starts_line(ctx.record.source, step_stmt) else None
    for body, j in reversed(path):
        k = max((i for i in range(j) if has_call(body[i], "step")), default=-1)
        b = next((i for i in range(k + 1, j) if has_call(body[i], "backward")), None)
        if b is not None:
            return ZeroGradSpot(receiver, body[b], True, body[b].lineno)
        if k >= 0:
            return None
    body, j = path[0]
    if j > 0 and not any(has_call(s, "backward") for s in body):
        return ZeroGradSpot(receiver, body[0], True, None)  # backward runs in a function: top of the loop
    return None


def step_receiver(source: str, stmt: Optional[ast.stmt]) -> Optional[str]:
    """`opt` in the statement `opt.step()` (no closure argument), else None."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    if not isinstance(call.func, ast.Attribute) or call.func.attr != "step" or call.args or call.keywords:
        return None
    inner = call.func.value
    while isinstance(inner, ast.Attribute):
        inner = inner.value
    return segment(source, call.func.value) if isinstance(inner, ast.Name) else None


def path_to(tree: ast.Module, target: ast.stmt) -> Optional[Trail]:
    """(body, index) pairs from the innermost loop or function around `target` down to `target`."""
    def walk(body: List[ast.stmt], trail: Trail) -> Optional[Trail]:
        for i, stmt in enumerate(body):
            here = trail + [(body, i)]
            if stmt is target:
                return here
            if stmt.lineno <= target.lineno <= (stmt.end_lineno or stmt.lineno):
                for name in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(stmt, name, None)
                    if inner:
                        found = walk(inner, [] if isinstance(stmt, BLOCKS) and name == "body" else here)
                        if found:
                            return found
        return None

    return walk(tree.body, [])


def has_call(node: ast.AST, attr: str) -> bool:
    """Whether `node` holds a call of a method named `attr` (`x.backward()`, `opt.step()`)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == attr
               for n in ast.walk(node))


def stale_view(ctx: RuleContext, opt: StaleOptimizer) -> RuleContext:
    """The run seen from the cell whose code stepped on stale gradients: the innermost user frame of the first
    stale step (a helper's or a method's cell), else the running cell."""
    frames = opt.stale[0].frames
    if not frames or frames[0][0] == ctx.record.filename:
        return ctx
    return view_on(ctx, *frames[0]) or ctx


def once_before_loop(tree: ast.Module, step_line: Optional[int], receiver: str) -> List[int]:
    """Lines of `<receiver>.zero_grad()` calls that run once before the innermost loop around the step (in
    the same function): they clear the gradients once per epoch, not once per step."""
    if step_line is None:
        return []
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))
             and n.lineno < step_line <= (n.end_lineno or n.lineno)]
    if not loops:
        return []
    loop = max(loops, key=lambda n: n.lineno)
    return sorted({c.lineno for c in ast.walk(function_around(tree, loop.lineno)) if isinstance(c, ast.Call)
                   and isinstance(c.func, ast.Attribute) and c.func.attr == "zero_grad" and c.lineno < loop.lineno
                   and dotted(c.func.value) == receiver})
