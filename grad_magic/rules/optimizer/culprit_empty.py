"""empty-parameter-list's culprit: why an optimizer was built on no parameters.

A model whose layers sit in a plain list or dict (`self.blocks = [...]`: not registered, so `.parameters()`
yields nothing), a model with no parameters at all, or a `.parameters()` generator already used up.
May touch: the cell's ast, and live objects through the NameIndex (a module's `__dict__`, the optimizer
class, the generator's type): no user code runs.
"""
from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

import torch

from ...cell import assignments_to, enclosing_statement, segment
from ..context import RuleContext
from ..kit import argument
from ..places import global_assignment, method_place, self_assignments


@dataclass(frozen=True)
class EmptyCause:
    """Why the optimizer got no parameters, and what a fix wraps."""

    kind: str  # "no_parameters", "plain_list" (or a dict) or "generator"
    params: Dict[str, Any]  # the catalog's parameters: model, cls, attr, container, wrapper / name
    names: Tuple[str, ...]
    lineno: Optional[int] = None  # where the cause is written in the cell
    target: Optional[ast.expr] = field(default=None, compare=False)  # the display or call the fix wraps
    wrapper: str = ""  # what the fix wraps it in: `nn.ModuleList`, `torch.nn.ModuleDict`, `list`
    view: Optional[RuleContext] = field(default=None, compare=False)  # the cell `target` is in (None: this one)


def params_argument(ctx: RuleContext, tree: ast.Module, lineno: int) -> Optional[ast.expr]:
    """The params argument of the one optimizer constructor on the failing line."""
    stmt = enclosing_statement(tree, lineno)
    if stmt is None:
        return None
    found = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
            func = ctx.names.lookup(segment(ctx.record.source, node.func) or "")
            if isinstance(func, type) and issubclass(func, torch.optim.Optimizer):
                arg = argument(node, 0, "params")
                if arg is not None and not isinstance(arg, ast.Starred):
                    found.append(arg)
    if not found:  # NB: `make_optimizer(params)`: a helper of the user's built it from a generator passed here
        found = [a for node in ast.walk(stmt) if isinstance(node, ast.Call) for a in node.args
                 if isinstance(a, ast.Name) and isinstance(ctx.names.lookup(a.id), types.GeneratorType)]
    return found[0] if len(found) == 1 else None


def empty_cause(ctx: RuleContext, tree: ast.Module, arg: ast.expr) -> Optional[EmptyCause]:
    src = ctx.record.source
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "parameters" \
            and not arg.args and not arg.keywords:
        owner = segment(src, arg.func.value) or ""
        module = ctx.names.lookup(owner)
        return _module_without_parameters(ctx, tree, owner, module) if isinstance(module, torch.nn.Module) \
            else None
    if isinstance(arg, ast.Name) and isinstance(ctx.names.lookup(arg.id), types.GeneratorType):
        return _used_up_generator(ctx, tree, arg.id)
    return None


def _module_without_parameters(ctx: RuleContext, tree: ast.Module, owner: str,
                               module: torch.nn.Module) -> EmptyCause:
    cls = type(module).__name__
    hidden = [(k, v) for k, v in vars(module).items() if not k.startswith("_") and _holds_modules(v)]
    if len(hidden) != 1:
        return EmptyCause("no_parameters", {"model": owner, "cls": cls}, (owner,))
    attr, value = hidden[0]
    wrapper = "ModuleDict" if isinstance(value, dict) else "ModuleList"
    params = {"model": owner, "cls": cls, "attr": attr, "container": type(value).__name__, "wrapper": wrapper}
    where, view = _self_assignment(tree, cls, attr), None
    if where is None:  # NB: the class is written in another cell (or file): its __init__ there
        where, view = _assignment_in_init(ctx, module, attr)
    nn = "nn" if ctx.names.lookup("nn") is torch.nn else "torch.nn"
    return EmptyCause("plain_list", params, (owner, f"{owner}.{attr}"), where.lineno if where is not None else None,
                      where, f"{nn}.{wrapper}", view)


def _assignment_in_init(ctx: RuleContext, module: torch.nn.Module, attr: str
                        ) -> Tuple[Optional[ast.expr], Optional[RuleContext]]:
    """The list or dict display in `self.<attr> = [...]` of the module class's own `__init__`, in its cell."""
    init = method_place(ctx, type(module), "__init__")
    found = [s.value for s in self_assignments(init, attr) if isinstance(s, ast.Assign)] if init is not None else []
    if len(found) != 1 or not isinstance(found[0], (ast.List, ast.ListComp, ast.Dict, ast.DictComp)):
        return None, None
    return found[0], init.ctx


def _holds_modules(value: Any) -> bool:
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    return any(isinstance(v, torch.nn.Module) for v in items)


def _self_assignment(tree: ast.Module, cls: str, attr: str) -> Optional[ast.expr]:
    """The value in `self.<attr> = [...]` inside `class <cls>` in this cell (a list/dict display or comprehension)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for inner in ast.walk(node):
                if isinstance(inner, ast.Assign) and len(inner.targets) == 1 and \
                        isinstance(inner.targets[0], ast.Attribute) and inner.targets[0].attr == attr and \
                        isinstance(inner.targets[0].value, ast.Name) and inner.targets[0].value.id == "self":
                    found.append(inner.value)
    if len(found) != 1 or not isinstance(found[0], (ast.List, ast.ListComp, ast.Dict, ast.DictComp)):
        return None
    return found[0]


def _used_up_generator(ctx: RuleContext, tree: ast.Module, name: str) -> EmptyCause:
    """`params = model.parameters()` (in this cell, else the newest earlier cell that made it): `list(...)`."""
    stmts = [s for s in assignments_to(tree, name) if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name)]
    view = None
    if not stmts and not ctx.elsewhere:  # NB: made by an earlier cell, at its top level
        place = global_assignment(ctx, name)
        if place is not None and isinstance(place.node, ast.Assign) and len(place.node.targets) == 1:
            stmts, view = [place.node], place.ctx
    if len(stmts) != 1:
        return EmptyCause("generator", {"name": name}, (name,))
    value = stmts[0].value
    made_here = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
        value.func.attr in ("parameters", "named_parameters")
    return EmptyCause("generator", {"name": name}, (name,), stmts[0].lineno, value if made_here else None, "list",
                      view)
