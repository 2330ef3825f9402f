"""target-out-of-range's culprit: how many classes the loss's input has, the classifier that makes them (the
namespace's Linear with that many outputs, and the cell's `nn.Linear(..., C)` calls), and what the cell says
about the labels' range without reading them.

May touch: the cell's ast, the tracker's snapshot of the loss's input (its shape), the NameIndex (ints and
modules). Never reads a tensor's data.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import torch

from ...cell import cell_tree
from ..context import RuleContext
from ..kit import dotted, lookup, one_line
from ..places import cells_before, root, view_on
from .culprit import LinearCall, LossArgs, fold, last_assignment, linear_calls, made_in_init, module_name

CLASS_COUNT_NAMES = ("num_classes", "n_classes", "NUM_CLASSES", "N_CLASSES", "nclasses", "classes_count")
CLASS_LIST_NAMES = ("class_names", "classes", "CLASSES", "CLASS_NAMES", "class_list", "categories", "label_names")


@dataclass(frozen=True)
class Labels:
    """What the cell says about the labels' range, without reading them: `torch.randint(lo, hi, ...)`
    assigned to the target, or a class-count variable."""

    low: Optional[int]
    count: Optional[int]  # labels are below this
    source: str  # the code or the variable that says so
    lineno: Optional[int] = None
    expr: str = ""  # how a fix can say the count: `len(class_names)` ("" when the number itself)


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
        if not ctors:  # NB: a head replaced after the model was made (`model_ft.fc = nn.Linear(n, 4)`)
            at, ctors = _replaced_head(ctx, ctx.names.lookup(layer), count)
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
    for name in CLASS_LIST_NAMES:  # NB: the class names themselves (`class_names = ["cloudy", ...]`)
        value = root(ctx).names.lookup(name)
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
            return Labels(None, len(value), f"len({name})", expr=f"len({name})")
    return None


def _replaced_head(ctx: RuleContext, module: Any, count: Optional[int]) -> Tuple[Optional[RuleContext],
                                                                                  Tuple[LinearCall, ...]]:
    """(view on its cell, the call) of the top-level `model_ft.fc = nn.Linear(num_ftrs, 4)` of the newest
    earlier cell that put `module` -- the live classifier -- where it is; (None, ()) when none did."""
    if not isinstance(module, torch.nn.Linear):
        return None, ()
    for _, filename in cells_before(ctx):
        tree = cell_tree(root(ctx).record.sources.text(filename))
        for stmt in reversed(tree.body if tree is not None else []):
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
            owner = root(ctx).names.lookup(dotted(target.value) or "") \
                if isinstance(target, ast.Attribute) and isinstance(stmt.value, ast.Call) else None
            if not isinstance(owner, torch.nn.Module) or owner._modules.get(target.attr) is not module:
                continue
            view = view_on(ctx, filename, stmt.lineno)
            calls = tuple(c for c in linear_calls(view, tree) if c.call is stmt.value and c.out_features == count) \
                if view is not None else ()
            return (view, calls) if calls else (None, ())
    return None, ()


def _int(ctx: RuleContext, node: Optional[ast.AST]) -> Optional[int]:
    """`10`, `2 * 5`, or a name bound to an int (`num_classes`)."""
    value = fold(node)
    if value is None and isinstance(node, ast.Name):
        found = ctx.names.lookup(node.id)
        value = found if type(found) is int else None
    return value
