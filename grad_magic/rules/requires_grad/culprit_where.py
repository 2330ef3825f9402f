"""Why nothing requires grad, where a cause was set beyond the line the trace found it on: the statement that
froze a module (in this cell, or in an earlier one: a `requires_grad = False` loop, a call of the user's
freeze helper), the function a `@torch.no_grad()` decorator is on, the user's name for a frozen module, and
how a card names an op without a gradient.

May touch: the cells' ast (places.py: the cells that ran before), the NameIndex, live functions' code
objects. Never runs user code; makes no fix and no sentence.
"""
from __future__ import annotations

import ast
from typing import Any, List, Optional, Tuple

import torch

from ...cell import cell_tree
from ..context import RuleContext
from ..kit import dotted, one_line
from ..places import Place, cells_before, function_place, module_path, returned, root, spelled, view_on
from .culprit import freeze_statement


def module_name(ctx: RuleContext, name: str, module: Any) -> str:
    """The user's name for a module: `model.backbone` rather than `self.backbone`, `model.head[2]`."""
    if (name.startswith("self.") or not name) and module is not None:
        found = [spelled(top, path) for top, obj in root(ctx).names.objects() if "." not in top and
                 isinstance(obj, torch.nn.Module) for path in [module_path(obj, module)] if path]
        return min(found, key=len) if found else name
    head, _, path = name.partition(".")
    return spelled(head, path) if any(p.isdigit() for p in path.split(".")) else name


def frozen_whole(ctx: RuleContext, names: List[str]) -> Optional[Tuple[str, Any]]:
    """(name, module) of the model several frozen modules (`model.backbone`, `model.head`) belong to, when
    every parameter it has is frozen too: that is what to name."""
    heads = {n.split(".")[0].split("[")[0] for n in names}
    if len(names) < 2 or len(heads) != 1:
        return None
    head = heads.pop()
    model = root(ctx).names.lookup(head)
    if not isinstance(model, torch.nn.Module) or any(p.requires_grad for p in model.parameters()):
        return None
    return head, model


def frozen_where(ctx: RuleContext, module: Any, name: str) -> Optional[Tuple[RuleContext, ast.stmt]]:
    """(view on its cell, statement) of the last top-level statement that froze `module` (named `name`): in
    the running cell before the failing line, else in the newest earlier cell -- a statement that sets
    requires_grad off on it, or a call of a user function that does, given it."""
    top = root(ctx)
    head = name.split(".")[0].split("[")[0]
    cells: List[Tuple[str, Optional[int]]] = [(top.record.filename, top.record.error_lineno)]
    cells += [(filename, None) for _, filename in cells_before(ctx)]
    for filename, before in cells:
        text = top.record.source if filename == top.record.filename else top.record.sources.text(filename)
        tree = cell_tree(text) if text else None
        for stmt in reversed(tree.body if tree is not None else []):
            if before is not None and stmt.lineno >= before:
                continue
            if _freezes(top, stmt, head):
                view = view_on(ctx, filename, stmt.lineno)
                return (view, stmt) if view is not None else None
    return None


def freezing_line(stmt: ast.stmt, name: str) -> int:
    """The line of a top-level statement (`if cfg.finetune: ...`) that froze the module `name`: the loop over
    its parameters that holds the freeze (`for param in net.parameters():`, where a fix narrows what is frozen),
    else the freeze itself; the statement's own line when it holds none (a helper's call)."""
    head = name.split(".")[0].split("[")[0]
    inner = freeze_statement(stmt, head)  # type: ignore[arg-type]
    if inner is None:
        return stmt.lineno
    loops = [n for n in ast.walk(stmt) if isinstance(n, ast.For) and n.lineno <= inner.lineno <= (n.end_lineno or 0)
             and any(isinstance(x, ast.Name) and x.id == head for x in ast.walk(n.iter))]
    return max(n.lineno for n in loops) if loops else inner.lineno


def _freezes(ctx: RuleContext, stmt: ast.stmt, head: str) -> bool:
    mentions = any(isinstance(n, ast.Name) and n.id == head for n in ast.walk(stmt))
    if not mentions or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    return freeze_statement(stmt, head) is not None or freeze_helper(ctx, stmt, head) is not None  # type: ignore


def freeze_helper(ctx: RuleContext, stmt: ast.stmt, head: str) -> Optional[Tuple[Place, ast.Call, Optional[str]]]:
    """(the def, the call, its parameter that is the model) of a user's function the statement calls that turns
    requires_grad off, given `head` (`freeze(model)`) or returning what `head = setup(Net())` is bound to."""
    assigned = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
        and stmt.targets[0].id == head
    for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
        place = function_place(ctx, ctx.names.lookup(dotted(call.func) or "")) if dotted(call.func) else None
        if place is None or freeze_statement(place.node, "") is None:  # type: ignore[arg-type]
            continue
        params = [a.arg for a in place.node.args.args]  # type: ignore[attr-defined]
        given = [p for p, a in zip(params, call.args) if isinstance(a, ast.Name) and a.id == head]
        returned_ = {r.id for r in returned(place) if isinstance(r, ast.Name)}
        if given:
            return place, call, given[0]
        if assigned and call is stmt.value and call.args and params and params[0] in returned_:
            return place, call, params[0]
        if any(isinstance(n, ast.Name) and n.id == head for a in call.keywords for n in ast.walk(a.value)):
            return place, call, None
    return None


def decorated(tree: ast.AST, decorator: ast.AST) -> Optional[ast.AST]:
    """The function `decorator` is written on."""
    return next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and any(d is decorator for d in n.decorator_list)), None)


def short_op(source: str, node: Optional[ast.AST]) -> str:
    """An op without a gradient as a card names it: `.argmax()`, `torch.argmax(...)`, `.indices`, `a == b`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        prefix = dotted(node.func.value)
        return f"{prefix}.{node.func.attr}(...)" if prefix in ("torch", "th") else f".{node.func.attr}()"
    if isinstance(node, ast.Attribute):
        return f".{node.attr}"
    text = one_line(source, node)
    return text if len(text) <= 40 else text[:37] + "..."
