"""frozen-by-no-grad's culprit beyond the running cell: why every step of an optimizer found no gradient when
the step, the forward pass or the loss lives in a helper or a method of another cell.

- decorated: a function the step ran in (a frame of the step, innermost first) is decorated with
  `@torch.no_grad()` / `@torch.inference_mode()`: its forward pass records no graph;
- rebuilt: the loss backward() ran on was put together with `torch.tensor([...], requires_grad=True)` -- in the
  statement that made it or in the helper that statement calls (`loss = compute_loss(out, y)`): new leaves,
  the losses' graphs cut there;
- a function that makes the loss (or the output it is computed from: `out = predict(x)`) is decorated with a
  grad-off decorator, or runs its work in one `with torch.no_grad():` block.
May touch: the run record's steps (their frames), the syntax of the cells the frames ran in, and live
functions through the NameIndex (their code objects, to find their cell).
"""
from __future__ import annotations

import ast
import types
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import torch

from ...cell import cell_tree
from ...record import StepEvent
from ..context import RuleContext
from ..kit import GRAD_OFF, callee_name, dotted, function_around, grad_off_call, is_false
from ..places import function_place, method_place, view_on
from .culprit import backward_receiver_names, grad_off_withs


@dataclass(frozen=True)
class FrozenElsewhere:
    """Where the graph was lost, in the cell (or file) it was lost in."""

    view: RuleContext
    kind: str  # "decorated", "no_grad" (a `with` block in a function the loss is made by) or "rebuilt"
    function: ast.AST  # the decorated function, the one with the block, or the one that rebuilt the loss
    decorator: Optional[ast.expr] = None
    rebuilt: Tuple[ast.Call, ...] = ()  # the `torch.tensor([...], requires_grad=True)` calls
    block: Optional[ast.stmt] = None  # the grad-off `with` block
    hack_outside: bool = False  # `loss.requires_grad = True` where backward() runs: torch refuses it once fixed


def frozen_elsewhere(ctx: RuleContext, steps: Sequence[StepEvent]) -> Optional[FrozenElsewhere]:
    step = steps[0]
    for filename, line in step.frames:
        view = view_on(ctx, filename, line)
        tree = cell_tree(view.record.source) if view is not None else None
        if tree is None:
            continue
        function = function_around(tree, line)
        decorator = next((d for d in getattr(function, "decorator_list", ()) if grad_off_decorator(d)), None)
        if decorator is not None:
            return FrozenElsewhere(view, "decorated", function, decorator=decorator)
        found = rebuilt_loss(view, tree, function) or graph_off_in_callee(view, tree, function)
        if found is not None:
            return found
    return None


def graph_off_in_callee(view: RuleContext, tree: ast.Module, scope: ast.AST) -> Optional[FrozenElsewhere]:
    """A function that makes what backward() ran on (or what that was computed from) runs its work without a
    graph: decorated with `@torch.no_grad()`, or inside one `with torch.no_grad():` block."""
    hack = any(isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Attribute) and
               n.targets[0].attr == "requires_grad" for n in ast.walk(scope))
    for stmt in _feeding(scope):
        for call in (c for c in ast.walk(stmt.value) if isinstance(c, ast.Call)):
            place = _callee(view, tree, call)
            if place is None:
                continue
            callee_view, node = place
            decorator = next((d for d in getattr(node, "decorator_list", ()) if grad_off_decorator(d)), None)
            if decorator is not None:
                return FrozenElsewhere(callee_view, "decorated", node, decorator=decorator, hack_outside=hack)
            blocks = grad_off_withs(node)
            if len(blocks) == 1:
                return FrozenElsewhere(callee_view, "no_grad", node, block=blocks[0], hack_outside=hack)
    return None


def _feeding(scope: ast.AST) -> List[ast.Assign]:
    """The assignments of what backward() runs on in `scope`, and of the names those read (one step back)."""
    receivers = set(backward_receiver_names(ast.Module(body=list(getattr(scope, "body", [])), type_ignores=[])))
    assigns = [s for s in ast.walk(scope) if isinstance(s, ast.Assign)]
    first = [s for s in assigns if any(isinstance(t, ast.Name) and t.id in receivers
                                       for tg in s.targets for t in ast.walk(tg))]
    read = {n.id for s in first for n in ast.walk(s.value) if isinstance(n, ast.Name)}
    return first + [s for s in assigns if s not in first and any(
        isinstance(t, ast.Name) and t.id in read for tg in s.targets for t in ast.walk(tg))]


def _callee(view: RuleContext, tree: ast.Module, call: ast.Call) -> Optional[Tuple[RuleContext, ast.AST]]:
    """The def a call runs: `helper(...)` by its name, `obj.method(...)` through the live object's class."""
    if isinstance(call.func, ast.Name):
        return _def_of(view, tree, call.func.id)
    owner = dotted(call.func.value) if isinstance(call.func, ast.Attribute) else None
    obj = view.names.lookup(owner) if owner else None
    if obj is None or isinstance(obj, (torch.Tensor, types.ModuleType)):
        return None
    place = method_place(view, type(obj), call.func.attr)
    return (place.ctx, place.node) if place is not None else None


def grad_off_decorator(node: ast.expr) -> bool:
    """`@torch.no_grad()`, `@torch.inference_mode()`, `@no_grad`, `@torch.set_grad_enabled(False)`."""
    if isinstance(node, ast.Call):
        return grad_off_call(node)
    name = dotted(node)
    return name is not None and name.rsplit(".", 1)[-1] in GRAD_OFF - {"set_grad_enabled"}


def rebuilt_loss(view: RuleContext, tree: ast.Module, scope: ast.AST) -> Optional[FrozenElsewhere]:
    """The `torch.tensor([...], requires_grad=True)` calls that made what backward() ran on in `scope`: in the
    statement that assigned it, or in the function that statement calls (its def, in its own cell)."""
    for name in backward_receiver_names(scope) if isinstance(scope, ast.Module) else \
            backward_receiver_names(ast.Module(body=list(getattr(scope, "body", [])), type_ignores=[])):
        for stmt in (s for s in ast.walk(scope) if isinstance(s, ast.Assign) and len(s.targets) == 1
                     and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name):
            calls = rebuilt_calls(stmt.value)
            if calls:
                return FrozenElsewhere(view, "rebuilt", function_around(tree, stmt.lineno), rebuilt=tuple(calls))
            for call in (c for c in ast.walk(stmt.value) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)):
                place = _def_of(view, tree, call.func.id)
                calls = rebuilt_calls(place[1]) if place is not None else []
                if calls:
                    return FrozenElsewhere(place[0], "rebuilt", place[1], rebuilt=tuple(calls))
    return None


def _def_of(view: RuleContext, tree: ast.Module, name: str) -> Optional[Tuple[RuleContext, ast.AST]]:
    local = next((f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == name), None)
    if local is not None:
        return view, local
    place = function_place(view, view.names.lookup(name))
    return (place.ctx, place.node) if place is not None else None


def rebuilt_calls(node: ast.AST) -> List[ast.Call]:
    """`torch.tensor([...], requires_grad=True)` calls under `node`: a new leaf made of the values of a list (of
    losses); one value rebuilt as a leaf is the running cell's "detached" story."""
    return sorted((c for c in ast.walk(node) if isinstance(c, ast.Call) and callee_name(c) == "tensor"
                   and isinstance(c.func, ast.Attribute) and c.args
                   and isinstance(c.args[0], (ast.List, ast.ListComp, ast.Tuple)) and any(
                       k.arg == "requires_grad" and not is_false(k.value) for k in c.keywords)),
                  key=lambda c: (c.lineno, c.col_offset))
