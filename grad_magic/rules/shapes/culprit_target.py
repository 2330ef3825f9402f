"""target-out-of-range's culprit: how many classes the loss's input has, the classifier that makes them (the
namespace's Linear with that many outputs, and the cell's `nn.Linear(..., C)` calls), and what the cell says
about the labels' range without reading them.

May touch: the cell's ast, the tracker's snapshot of the loss's input (its shape), the NameIndex (ints and
modules). Never reads a tensor's data.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional, Tuple

import torch

from ..context import RuleContext
from ..kit import lookup, one_line
from .culprit import LinearCall, LossArgs, fold, last_assignment, linear_calls, made_in_init, module_name

CLASS_COUNT_NAMES = ("num_classes", "n_classes", "NUM_CLASSES", "N_CLASSES", "nclasses", "classes_count")


@dataclass(frozen=True)
class Labels:
    """What the cell says about the labels' range, without reading them: `torch.randint(lo, hi, ...)`
    assigned to the target, or a class-count variable."""

    low: Optional[int]
    count: Optional[int]  # labels are below this
    source: str  # the code or the variable that says so
    lineno: Optional[int] = None


@dataclass(frozen=True)
class Classes:
    """The classes the loss's input has, the classifier that makes them, and the labels' known range."""

    count: Optional[int]  # the input's class dimension
    layer: str  # the user's name for the namespace's one Linear with that many outputs, "" when not one
    ctors: Tuple[LinearCall, ...]  # the cell's `nn.Linear(...)` calls with that many outputs
    labels: Optional[Labels]
    ctor_at: Optional[RuleContext] = None  # the view on the cell of `ctors` (an earlier cell's __init__), if not this


def find_classes(ctx: RuleContext, tree: Optional[ast.Module], loss: LossArgs) -> Classes:
    count = _class_count(ctx, loss)
    ctors = tuple(c for c in linear_calls(ctx, tree) if count and c.out_features == count)
    layer, at = _classifier(ctx, count), None
    if not ctors and layer:  # NB: the classifier of a model made in an earlier cell: its __init__'s call
        at, ctors = made_in_init(ctx, ctx.names.lookup(layer), layer)
        ctors = tuple(c for c in ctors if c.out_features == count)
    return Classes(count, layer, ctors, _labels(ctx, tree, loss), at if ctors else None)


def _class_count(ctx: RuleContext, loss: LossArgs) -> Optional[int]:
    shot = loss.input_shot
    if shot is None:
        t = ctx.names.lookup(loss.input_name) if loss.input_name.isidentifier() else None
        shape = tuple(t.shape) if isinstance(t, torch.Tensor) else ()
    else:
        shape = shot.shape
    return shape[1] if len(shape) >= 2 else shape[0] if shape else None


def _classifier(ctx: RuleContext, count: Optional[int]) -> str:
    """The namespace's Linear with `count` outputs (the classifier), when there is one."""
    found = {}
    for name, obj in ctx.names.objects():
        if name.endswith(".weight") and isinstance(obj, torch.Tensor) and obj.dim() == 2 and obj.shape[0] == count:
            module = ctx.names.lookup(name[:-7])
            if isinstance(module, torch.nn.Linear):
                found[id(module)] = module_name(ctx, module, obj)
        elif isinstance(obj, torch.nn.Linear) and obj.out_features == count:
            found.setdefault(id(obj), name)
    return next(iter(found.values())) if len(found) == 1 else ""


def _labels(ctx: RuleContext, tree: Optional[ast.Module], loss: LossArgs) -> Optional[Labels]:
    target = loss.target_node
    if tree is not None and isinstance(target, ast.Name):
        found = last_assignment(tree, target.id, loss.call.call.lineno if loss.call else 10**9)
        call = found.value if found is not None else None
        if isinstance(call, ast.Call) and lookup(ctx, call.func) is torch.randint:
            # torch.randint(high, size) or torch.randint(low, high, size)
            args = dict(zip(("low", "high") if len(call.args) >= 3 else ("high",), call.args))
            args.update((k.arg, k.value) for k in call.keywords if k.arg in ("low", "high"))
            low = _int(ctx, args["low"]) if "low" in args else 0
            high = _int(ctx, args.get("high"))
            if low is not None and high is not None:
                return Labels(low, high, one_line(ctx.record.source, call), found.lineno)
    for name in CLASS_COUNT_NAMES:
        value = ctx.names.lookup(name)
        if type(value) is int and value > 0:
            return Labels(None, value, name)
    return None


def _int(ctx: RuleContext, node: Optional[ast.AST]) -> Optional[int]:
    """`10`, `2 * 5`, or a name bound to an int (`num_classes`)."""
    value = fold(node)
    if value is None and isinstance(node, ast.Name):
        found = ctx.names.lookup(node.id)
        value = found if type(found) is int else None
    return value
