"""grads-not-zeroed without an optimizer: a hand-written update (`w -= lr * w.grad` under `torch.no_grad()`,
`p.data.sub_(lr * p.grad)`) that ran again and again while `.grad` kept adding up, never cleared.

The evidence is what ran: the op tracker's in-place updates of leaf tensors that require grad (with the user
frames that made them: a `sgd_update` helper three cells up), each parameter's `.grad` version (backward adds
into a kept `.grad` in place, once per pass; a cleared `.grad` starts again), and no clearing op recorded for
a tensor of the parameter's shape. Where: the update statements, in the cell whose code made them.
May touch: the run record's in-place ops, the updated tensors' `.grad` metadata (its version counter, never
data), and the syntax of the cells the updates ran in.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import torch

from ...cell import cell_tree, enclosing_statement
from ...names import attribute_without_code
from ...record import OpEvent
from ..context import RuleContext
from ..kit import dotted, starts_line
from ..places import view_on

# `w -= lr * g` reaches the tracker as `sub_` (or `__isub__`); Adam-like updates by hand use the others
UPDATES = frozenset({"sub_", "add_", "__isub__", "__iadd__", "addcmul_", "addcdiv_", "_foreach_sub_",
                     "_foreach_add_"})
# NB: any of these on a tensor shaped like the parameter (and not requiring grad) may be `w.grad.zero_()`
CLEARING = frozenset({"zero_", "fill_", "mul_", "__imul__", "copy_", "_foreach_zero_", "_foreach_mul_"})
MIN_UPDATES = 3


@dataclass(frozen=True)
class ManualUpdate:
    """Parameters updated by hand on gradients that kept adding up, and where the updates are written."""

    params: Tuple[Any, ...]  # the live parameters
    updates: int  # how many updates the first one got
    view: RuleContext  # the cell (or file) the update statements are in
    statements: Tuple[ast.stmt, ...]  # the update statements there, in line order
    targets: Tuple[str, ...]  # what each statement updates, as written: `param`, `w` (`.data` left off)


def stale_manual_update(ctx: RuleContext) -> Optional[ManualUpdate]:
    """The hand-written updates of this run that stepped on gradients never cleared, or None."""
    stale = _stale_params(ctx)
    if not stale:
        return None
    first = stale[0][1][0]
    site = first.frames[0] if first.frames else None
    view = view_on(ctx, *site) if site is not None else None
    if view is None:
        return None
    tree = cell_tree(view.record.source)
    if tree is None or "zero_grad" in view.record.source or "zero_grad" in ctx.record.source:
        return None  # NB: zero_grad(set_to_none=False) runs untracked: its clearing would go unseen
    found: Dict[int, Tuple[ast.stmt, str]] = {}
    for _, events in stale:
        for e in events:
            line = next((n for f, n in e.frames if f == view.record.filename), None)
            stmt = enclosing_statement(tree, line) if line else None
            target = _updated(stmt) if stmt is not None else None
            if stmt is None or target is None:
                return None  # NB: an update written otherwise (or in another cell): words, no place
            found.setdefault(stmt.lineno, (stmt, target))
    ordered = [found[k] for k in sorted(found)]
    return ManualUpdate(tuple(p for p, _ in stale), len(stale[0][1]), view, tuple(s for s, _ in ordered),
                        tuple(t for _, t in ordered))


def _stale_params(ctx: RuleContext) -> List[Tuple[Any, List[OpEvent]]]:
    by_param: Dict[int, Tuple[Any, List[OpEvent]]] = {}
    through_data: Dict[Tuple[int, ...], List[OpEvent]] = {}
    cleared = set()
    for e in ctx.record.inplace_ops:
        shots = e.targets
        if e.name in CLEARING and not _clipping(ctx, e):
            cleared.update(t.shape for t in shots if not t.requires_grad)
        if e.name not in UPDATES or not shots or not shots[0].is_leaf:
            continue
        if not shots[0].requires_grad:
            through_data.setdefault(shots[0].shape, []).append(e)
            continue
        p = shots[0].ref() if shots[0].ref is not None else None
        if isinstance(p, torch.Tensor):
            by_param.setdefault(id(p), (p, []))[1].append(e)
    if not by_param:
        by_param = _through_data(ctx, through_data)
    stale = []
    for p, events in by_param.values():
        grad = attribute_without_code(p, "grad")
        if len(events) < MIN_UPDATES or not isinstance(grad, torch.Tensor) or tuple(p.shape) in cleared:
            continue
        # NB: backward adds into a kept .grad in place: once per pass after the first, the version counts them
        if not grad.is_inference() and grad._version >= len(events) - 1:
            stale.append((p, events))
    return stale


def _through_data(ctx: RuleContext, by_shape: Dict[Tuple[int, ...], List[OpEvent]]
                  ) -> Dict[int, Tuple[Any, List[OpEvent]]]:
    """`p.data.add_(p.grad, alpha=-lr)`: the tracker sees a fresh `.data` tensor each time (no grad, no
    reference kept). The parameters are the leaves that require grad among what this run touched, of the
    shapes updated, each of a shape given its share of that shape's updates; the statements (which must read
    `.grad`) and each parameter's `.grad` version decide the rest."""
    if not by_shape:
        return {}
    params: Dict[int, Tuple[Any, List[OpEvent]]] = {}
    for _, obj in ctx.names.objects():
        if isinstance(obj, torch.Tensor) and obj.requires_grad and obj.is_leaf and tuple(obj.shape) in by_shape:
            params.setdefault(id(obj), (obj, []))
    for shape, events in by_shape.items():
        mine = [p for p, _ in params.values() if tuple(p.shape) == shape]
        for p in mine:  # NB: k parameters of one shape updated in turn: each got 1/k of the updates
            params[id(p)][1].extend(events[:len(events) // len(mine)])
    return params


def _clipping(ctx: RuleContext, e: OpEvent) -> bool:
    """A scaling of the gradients made by `clip_grad_norm_(...)` / `clip_grad_value_(...)` on the user's line:
    it rescales them, it clears nothing."""
    if not e.name.endswith("mul_") or not e.frames:
        return False
    filename, lineno = e.frames[0]
    sources = ctx.record.sources
    text = ctx.record.source if filename == ctx.record.filename else sources.text(filename) if sources else ""
    lines = text.splitlines()
    return 0 < lineno <= len(lines) and "clip_grad_" in lines[lineno - 1]


def _updated(stmt: ast.stmt) -> Optional[str]:
    """`w` for `w -= lr * w.grad`, `w.data -= ...`, `w.data.sub_(lr * w.grad)`, when the update reads a
    `.grad` and starts its line; else None."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, (ast.Sub, ast.Add)):
        target, value = stmt.target, stmt.value
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
            isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr in UPDATES:
        target, value = stmt.value.func.value, stmt.value
    else:
        return None
    name = dotted(target)
    if name is None or not any(isinstance(n, ast.Attribute) and n.attr == "grad" for n in ast.walk(value)):
        return None
    return name[:-len(".data")] if name.endswith(".data") else name


def starts_their_lines(source: str, update: ManualUpdate) -> bool:
    return all(starts_line(source, s) for s in update.statements)
