"""inference-tensor-backward's culprit: which tensor (or module) was made under torch.inference_mode(), and
the `with` block or decorator of the cell that made it.

May touch: the cell's ast, the failing line's names, the NameIndex and the cell's namespace -- of live
objects, only `is_inference()` of tensors and of a module's parameters and buffers. Never runs user code;
no wording.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import torch

from ...cell import cell_tree
from ..context import RuleContext, dotted_names
from ..kit import dotted, scope_statements
from .culprit import names_in


@dataclass(frozen=True)
class InferenceCulprit:
    """The inference tensor (or module holding them) to name, and where the cell made it."""

    tree: Optional[ast.Module]
    name: Optional[str]  # None when no name on the line or in the cell holds one
    block: Optional[ast.AST]  # the `inference_mode()` call of the `with` item or decorator that made it
    alias: Optional[str]  # another name the failing line gives the same object (inside a function)
    module: bool  # a module whose parameters or buffers are inference tensors


def inference_culprit(ctx: RuleContext) -> InferenceCulprit:
    tree = cell_tree(ctx.record.source)
    found = _inference_names(ctx, tree)
    name, block = found[0] if found else (None, None)
    alias = next((n for n, _ in found if name and n != name and ctx.names.lookup(n) is _live(ctx, name)), None)
    module = name is not None and isinstance(_live(ctx, name), torch.nn.Module)
    return InferenceCulprit(tree, name, block, alias, module)


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
