"""The shapes family's helpers: the cell's syntax (calls, literals, assignments) and the tracker's record of the
failing op, read by the rules in linear.py, batch.py and target.py."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

import torch

from ...facts import shape_text
from ...cell import enclosing_statement, segment
from ...model import TensorFact
from ...record import OpEvent, TensorSnapshot
from ..context import RuleContext


# -- small helpers on the cell's syntax --

def fold(node: Optional[ast.AST]) -> Optional[int]:
    """`400`, `16 * 5 * 5`, `-1`: an int written out in the cell, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = fold(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        left, right = fold(node.left), fold(node.right)
        if left is None or right is None or isinstance(node.op, ast.FloorDiv) and right == 0:
            return None
        ops = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.FloorDiv: int.__floordiv__}
        return ops[type(node.op)](left, right)
    return None


def text_of(ctx: RuleContext, node: ast.AST) -> str:
    return " ".join((segment(ctx.record.source, node) or "").split())


def argument(call: ast.Call, index: int, keyword: str) -> Optional[ast.AST]:
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


@dataclass(frozen=True)
class LinearCall:
    """`nn.Linear(400, 120)` written in the cell."""

    call: ast.Call
    in_node: Optional[ast.AST]
    out_node: Optional[ast.AST]
    target: str  # `fc1` for `self.fc1 = nn.Linear(...)`, "" when not assigned to a name
    in_sequential: bool  # an argument of `nn.Sequential(...)`

    @property
    def in_features(self) -> Optional[int]:
        return fold(self.in_node)

    @property
    def out_features(self) -> Optional[int]:
        return fold(self.out_node)


def linear_calls(ctx: RuleContext, tree: Optional[ast.Module]) -> List[LinearCall]:
    """Every `nn.Linear(...)` call of the cell whose callee is torch's Linear."""
    if tree is None:
        return []
    found: List[LinearCall] = []
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and ctx.names.lookup(text_of(ctx, node.func)) is torch.nn.Linear):
            continue
        parent = parents.get(id(node))
        target = ""
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
            t = parent.targets[0]
            target = t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else ""
        seq = isinstance(parent, ast.Call) and ctx.names.lookup(text_of(ctx, parent.func)) is torch.nn.Sequential
        found.append(LinearCall(node, argument(node, 0, "in_features"), argument(node, 1, "out_features"),
                                target, seq))
    return found


def module_name(ctx: RuleContext, module: Any, weight: Optional[torch.Tensor]) -> str:
    """The user's name for a module: `model.fc1` (the namespace's name before `self.fc1`)."""
    names = [n[:-len(".weight")] for n in ctx.names.names_for(weight)] if weight is not None else []
    names += ctx.names.names_for(module)
    outside = [n for n in names if not n.startswith("self.")]
    return min(outside or names, key=len) if names else ""


def snapshot_tensor(shot: TensorSnapshot) -> Optional[torch.Tensor]:
    return shot.ref() if shot.ref is not None else None


def failed_op(ctx: RuleContext, names: Sequence[str]) -> Optional[OpEvent]:
    """The last recorded op named one of `names` that raised (on the error's line when one did)."""
    events = [e for e in ctx.record.failed_ops if e.name in names]
    on_line = [e for e in events if e.lineno == ctx.record.error_lineno]
    return (on_line or events or [None])[-1]


def fact(name: str, shot: TensorSnapshot) -> TensorFact:
    return TensorFact(name=name, shape=shape_text(shot.shape), dtype=shot.dtype, device=shot.device,
                      requires_grad=shot.requires_grad, is_leaf=shot.is_leaf, version=shot.version)


def calls_on_line(ctx: RuleContext, tree: Optional[ast.Module], lineno: Optional[int]) -> List[ast.Call]:
    stmt = enclosing_statement(tree, lineno) if tree is not None and lineno else None
    if stmt is None:
        return []
    return sorted((n for n in ast.walk(stmt) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))


def last_assignment(tree: ast.Module, name: str, before: int) -> Optional[ast.stmt]:
    """The last plain `name = ...` before line `before`, in the same function as that line."""
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= before <= (node.end_lineno or node.lineno):
            scope = node if scope is tree or node.lineno >= getattr(scope, "lineno", 0) else scope
    best: Optional[ast.stmt] = None
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and node.lineno < before and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            if best is None or node.lineno > best.lineno:
                best = node
    return best


def joined(ctx: RuleContext, parts: Sequence[str]) -> str:
    """Sentences one after the other, each starting with a capital (`the input is ...`)."""
    if ctx.language == "zh":
        return "".join(p for p in parts if p)
    return " ".join(p[:1].upper() + p[1:] for p in parts if p)
