"""numpy-on-grad-tensor through a list: the failing line hands NumPy (or a helper that converts) a list of
tensors that autograd still tracks -- `np.sum([n * l for n, l in zip(sizes, losses)])`, `np.asarray(losses)`,
`plot_losses(losses)` -- and where those tensors went into the list: the comprehension's item, or each
`losses.append(loss)` of the function (or cell) that fills the list, also a helper of an earlier cell whose
`return losses` the line's list came from.

May touch: the cell's ast, the NameIndex (lists and tensors by name, metadata only: `requires_grad`, `dim`),
the user's functions' code objects (places.function_place). Never runs user code; no wording.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import torch

from ...cell import cell_tree
from ..context import RuleContext
from ..kit import function_around, lookup, names_an_argument, one_line
from ..places import Place, function_place, returned
from .culprit import statement_exprs

MAX_ITEMS = 100_000


@dataclass(frozen=True)
class ListFill:
    """The expressions that put tracked tensors into the converted list, and the view whose text holds them."""

    view: RuleContext
    items: Tuple[ast.expr, ...]  # each gets `suffix`
    suffix: str  # ".item()" (every tensor a scalar) or ".detach()"
    name: str  # the list as the filling code names it ("" for a comprehension)
    shown: str  # the list as the failing line hands it over: `losses`, `[n * l for n, l in zip(...)]`


def tracked_items(value: Any) -> Optional[List[torch.Tensor]]:
    """The tensors of a list or tuple when one of them requires grad, else None."""
    if not isinstance(value, (list, tuple)) or len(value) > MAX_ITEMS:
        return None
    tensors = [v for v in value if isinstance(v, torch.Tensor)]
    return tensors if any(t.requires_grad for t in tensors) else None


def list_fill(ctx: RuleContext) -> Optional[ListFill]:
    """Where the list the failing line converts was filled with tracked tensors, or None."""
    lineno = ctx.record.error_lineno
    stmt, exprs = statement_exprs(ctx, lineno)
    if stmt is None:
        return None
    calls = [n for e in exprs for n in ast.walk(e) if isinstance(n, ast.Call)]
    for arg in (a for c in calls for a in c.args):
        if isinstance(arg, ast.ListComp) and _over_tracked(ctx, arg) and not isinstance(arg.elt, NOT_TENSORS):
            return ListFill(ctx, (arg.elt,), ".detach()", "", one_line(ctx.record.source, arg))
    named = [a for c in calls for a in c.args if isinstance(a, ast.Name) and tracked_items(lookup(ctx, a))]
    if len(named) != 1 or names_an_argument(ctx, named[0], lineno):
        return None  # NB: a helper's parameter: the caller's line says where the list came from
    tensors = tracked_items(lookup(ctx, named[0])) or []
    suffix = ".item()" if all(t.dim() == 0 for t in tensors) else ".detach()"
    tree = cell_tree(ctx.record.source)
    scope = function_around(tree, lineno)
    return _appends(ctx, scope, named[0].id, suffix, lineno) or _from_helper(ctx, scope, named[0].id, suffix, lineno)


NOT_TENSORS = (ast.Tuple, ast.List, ast.Dict, ast.Set, ast.Constant, ast.JoinedStr)


def _over_tracked(ctx: RuleContext, comp: ast.ListComp) -> bool:
    """A comprehension that iterates over a list of tracked tensors (`zip(sizes, losses)`, `losses`)."""
    return any(isinstance(n, ast.Name) and tracked_items(lookup(ctx, n)) for g in comp.generators
               for n in ast.walk(g.iter))


def _appends(ctx: RuleContext, scope: ast.AST, name: str, suffix: str, lineno: Optional[int]) -> Optional[ListFill]:
    """Each `name.append(x)` of the scope, when the scope does nothing else with the list than make it empty,
    fill it, return it and hand it over on the failing line."""
    appends: List[ast.expr] = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            if len(node.args) != 1 or node.keywords or isinstance(node.args[0], (ast.Starred, *NOT_TENSORS)):
                return None
            appends.append(node.args[0])
    if not appends or not _only_filled(scope, name, lineno):
        return None
    return ListFill(ctx, tuple(appends), suffix, name, name)


def _only_filled(scope: ast.AST, name: str, lineno: Optional[int]) -> bool:
    """`name = []`, `name.append(...)`, `return name` and reads on the failing line: nothing else (a
    `torch.stack(losses)` or `sum(losses).backward()` elsewhere still needs the tensors)."""
    allowed = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append":
            allowed.add(id(node.func.value))
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
            allowed.add(id(node.value))
    for node in ast.walk(scope):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            if id(node) not in allowed and node.lineno != lineno:
                return False
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            if not _made_empty(scope, node):
                return False
    return True


def _made_empty(scope: ast.AST, target: ast.Name) -> bool:
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and any(t is target or (isinstance(t, ast.Tuple) and target in t.elts)
                                                 for t in node.targets):
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            return all(isinstance(v, ast.List) and not v.elts for v in values)
    return False


def _from_helper(ctx: RuleContext, scope: ast.AST, name: str, suffix: str, lineno: Optional[int]
                 ) -> Optional[ListFill]:
    """`losses = train(...)` before the line, `train` a function of the user's whose every return gives its
    own list filled by appends: that function's appends, in its cell."""
    made = [n for n in ast.walk(scope) if isinstance(n, ast.Assign) and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name and (lineno is None or n.lineno < lineno)]
    if len(made) != 1 or not isinstance(made[0].value, ast.Call):
        return None
    if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno != lineno
           for n in ast.walk(scope)):
        return None  # NB: the caller reads the list elsewhere too (`torch.stack(losses)`): plain values may not do
    place: Optional[Place] = function_place(ctx, lookup(ctx, made[0].value.func))
    if place is None:
        return None
    values = returned(place)
    inner = {v.id for v in values if isinstance(v, ast.Name)}
    if len(inner) != 1 or len(values) != len([v for v in values if isinstance(v, ast.Name)]):
        return None
    return _appends(place.ctx, place.node, inner.pop(), suffix, None)
