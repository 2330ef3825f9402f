"""inference-tensor-backward's culprit: which tensor (or module) was made under torch.inference_mode(), and
the `with` block or decorator that made it: in the cell, on the `forward` of a module (or a function) the run
went through, or in the earlier cell that last assigned the tensor.

May touch: the cells' ast, the failing line's names, the NameIndex, the cell's namespace and the traceback's
frames -- of live objects, only `is_inference()` of tensors and of a module's parameters and buffers, and the
closure of a decorated function (which context manager wraps it). Never runs user code; no wording.
"""
from __future__ import annotations

import ast
import types
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

import torch

from ...cell import cell_tree
from ..context import RuleContext, dotted_names
from ..kit import dotted, function_around, scope_statements
from ..places import cells_before, code_of, function_place, root, view_on
from .culprit import names_in, submodules


@dataclass(frozen=True)
class InferenceCulprit:
    """The inference tensor (or module holding them) to name, and where the cell made it."""

    tree: Optional[ast.Module]
    name: Optional[str]  # None when no name on the line or in the cell holds one
    block: Optional[ast.AST]  # the `inference_mode()` call of the `with` item or decorator that made it
    alias: Optional[str]  # another name the failing line gives the same object (inside a function)
    module: bool  # a module whose parameters or buffers are inference tensors
    view: Optional[RuleContext] = None  # the cell of `block`, when it is not the rule's
    maker: str = ""  # the function `block` decorates, when it is not in the failing line's scope


def inference_culprit(ctx: RuleContext) -> InferenceCulprit:
    tree = cell_tree(ctx.record.source)
    found = _inference_names(ctx, tree)
    name, block = found[0] if found else (None, None)
    alias = next((n for n, _ in found if name and n != name and ctx.names.lookup(n) is _live(ctx, name)), None)
    module = name is not None and isinstance(_live(ctx, name), torch.nn.Module)
    view, maker = None, ""
    if name is not None and block is None and not module:
        elsewhere = _earlier_cell_block(ctx, name) or _decorated_maker(ctx)
        if elsewhere is not None:
            view, block, maker = elsewhere
            view = None if view.record.filename == ctx.record.filename else view
    return InferenceCulprit(tree, name, block, alias, module, view, maker)


# -- a function or module `forward` decorated with inference_mode, that the run went through --

def _decorated_maker(ctx: RuleContext) -> Optional[Tuple[RuleContext, ast.AST, str]]:
    """The one function decorated with `@torch.inference_mode()` among those the run called: the calls in the
    functions of the traceback's frames (and in the plain functions those call), a module's `forward` for a
    module called (its children's too)."""
    sources = root(ctx).record.sources
    decorated = {fn.__code__: fn for fn in _called_functions(ctx) if _inference_decorated(fn)
                 and sources is not None and sources.is_user(getattr(code_of(fn), "co_filename", ""))}
    if len(decorated) != 1:
        return None
    fn = next(iter(decorated.values()))
    place = function_place(ctx, fn)
    item = next((d for d in getattr(place.node, "decorator_list", ()) if _inference_call(place.ctx, d)), None) \
        if place is not None else None
    return (place.ctx, item, fn.__qualname__) if item is not None else None


def _called_functions(ctx: RuleContext) -> Iterator[Any]:
    top = root(ctx)
    scopes: List[Tuple[RuleContext, ast.AST]] = []
    for frame in top.record.frames:
        view = top if frame.site.filename == top.record.filename else top.view(frame)
        tree = cell_tree(view.record.source)
        if tree is not None:
            scopes.append((view, function_around(tree, frame.site.lineno)))
    for view, scope in scopes:
        for fn in _functions_of(_callees(view, scope)):
            yield fn
            place = function_place(ctx, fn) if "__wrapped__" not in fn.__dict__ else None
            if place is not None:  # NB: one level into a plain helper it called (`feats = extract(x)`)
                yield from _functions_of(_callees(top, place.node))


def _functions_of(values: List[Any]) -> Iterator[types.FunctionType]:
    """Plain functions, and the `forward` of each module (and of its children)."""
    for value in values:
        if isinstance(value, torch.nn.Module):
            for module in submodules(value):
                fn = next((vars(k)["forward"] for k in type(module).__mro__ if "forward" in vars(k)), None)
                if isinstance(fn, types.FunctionType):
                    yield fn
        elif isinstance(value, types.FunctionType):
            yield value


def _callees(view: RuleContext, scope: ast.AST) -> List[Any]:
    """The live objects the calls of a function (or cell) name: `embed(x)`, `self.backbone(x)`."""
    names = {dotted(c.func) for c in ast.walk(scope) if isinstance(c, ast.Call)} - {None}
    values = [view.names.lookup(n) for n in sorted(names)]
    return [getattr(v, "__func__", v) for v in values]


def _inference_decorated(fn: Any) -> bool:
    """`@torch.inference_mode()` on a function: torch wraps it (`__wrapped__`) in a closure that enters a
    clone of the inference_mode object."""
    if not isinstance(fn, types.FunctionType) or "__wrapped__" not in fn.__dict__:
        return False
    for cell in fn.__closure__ or ():
        try:
            owner = getattr(cell.cell_contents, "__self__", None)
        except ValueError:  # NB: an empty cell
            continue
        if isinstance(owner, torch.inference_mode) and owner.__dict__.get("mode", True):
            return True
    return False


# -- the earlier cell that last assigned a global under inference_mode --

def _earlier_cell_block(ctx: RuleContext, name: str) -> Optional[Tuple[RuleContext, ast.AST, str]]:
    """The `with torch.inference_mode():` of the newest earlier cell that assigns the global `name`."""
    top = root(ctx)
    if "." in name or name not in top.namespace or ctx.names.lookup(name) is not top.namespace[name]:
        return None
    for _, filename in cells_before(ctx):
        tree = cell_tree(top.record.sources.text(filename))
        bound = [s for s in scope_statements(tree) if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                 and name in names_in(s, ast.Store)] if tree is not None else []
        if not bound:
            continue
        view = view_on(ctx, filename, bound[-1].lineno)
        block = _inference_blocks(view, tree).get(name) if view is not None else None
        inside = block is not None and any(isinstance(w, (ast.With, ast.AsyncWith)) and block in
                                           [i.context_expr for i in w.items] and bound[-1] in scope_statements(w)
                                           for w in ast.walk(tree))
        return (view, block, "") if inside else None
    return None


def _is_inference(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.is_inference()
    if isinstance(value, torch.nn.Module):
        return any(t.is_inference() for t in (*value.parameters(), *value.buffers()))
    return False


def _inference_names(ctx: RuleContext, tree: Optional[ast.Module]) -> List[Tuple[str, Optional[ast.AST]]]:
    """Inference tensors (or modules holding them) named on the failing line, then any the cell made under
    inference_mode; each with the `with`/decorator that made it, when the cell shows it."""
    on_line: List[str] = []
    for name in dotted_names(ctx.record.source_line(ctx.record.error_lineno)):
        try:
            if name not in on_line and _is_inference(ctx.names.lookup(name)):
                on_line.append(name)
        except Exception:  # NB: a proxy whose attributes raise
            continue
    blocks = _inference_blocks(ctx, tree) if tree is not None else {}
    found = [(n, blocks.get(n.split(".")[0])) for n in on_line]
    found += [(n, b) for n, b in blocks.items() if n not in on_line and _is_inference(_live(ctx, n))]
    # NB: stable sort: a tensor whose inference_mode block the cell shows first, the failing line's first
    return sorted(found, key=lambda p: p[1] is None)


def _live(ctx: RuleContext, name: str) -> Any:
    """The value a name has in the cell's namespace (the error frame may be a function's, with its own)."""
    return ctx.namespace.get(name) if name in ctx.namespace else ctx.names.lookup(name)


def _inference_blocks(ctx: RuleContext, tree: ast.Module) -> Dict[str, ast.AST]:
    """name -> the `with ...inference_mode()` item or `@...inference_mode()` decorator its value came from."""
    found: Dict[str, ast.AST] = {}
    decorated = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                if _inference_call(ctx, d):
                    decorated[node.name] = d
        if isinstance(node, (ast.With, ast.AsyncWith)):
            item = next((i.context_expr for i in node.items if _inference_call(ctx, i.context_expr)), None)
            if item is not None:
                for stmt in scope_statements(node):
                    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                        for name in names_in(stmt, ast.Store):
                            found.setdefault(name, item)
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and \
                isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in decorated:
            for name in names_in(stmt, ast.Store):
                found.setdefault(name, decorated[stmt.value.func.id])
    return found


def _inference_call(ctx: RuleContext, node: ast.AST) -> bool:
    """`torch.inference_mode()` (no arguments), `torch` under any alias."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "inference_mode" and not node.args and not node.keywords):
        return False
    owner = dotted(node.func.value)
    module = ctx.names.lookup(owner) if owner else None
    return module in (torch, torch.autograd, torch.autograd.grad_mode)
