"""The shapes family's culprit, shared by its rules: the cell's `nn.Linear(...)` calls and the ints written in
them, the user's names for modules, the tracker's snapshots of the failing op's tensors, and the
classification loss that raised (its call, input and target, named and measured).

May touch: the cell's ast, the run record (failed ops and their tensor snapshots: shapes only), the
NameIndex. Never runs user code. The culprits of one rule: culprit_linear.py, culprit_target.py;
batch-size-mismatch's: culprit_batch.py.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import torch

from ...facts import shape_text
from ...model import TensorFact
from ...record import TensorSnapshot
from ..context import RuleContext
from ..kit import LossCall, argument, calls_on_line, failed_op, function_around, lookup, loss_calls, one_line
from ..places import made_at

LOSSES = frozenset({"cross_entropy", "nll_loss", "nll_loss2d", "nll_loss_nd"})
LOSS_MODULES = (torch.nn.CrossEntropyLoss, torch.nn.NLLLoss)


# -- the cell's syntax --

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
        if not (isinstance(node, ast.Call) and lookup(ctx, node.func) is torch.nn.Linear):
            continue
        parent = parents.get(id(node))
        target = ""
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
            t = parent.targets[0]
            target = t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else ""
        seq = isinstance(parent, ast.Call) and lookup(ctx, parent.func) is torch.nn.Sequential
        found.append(LinearCall(node, argument(node, 0, "in_features"), argument(node, 1, "out_features"),
                                target, seq))
    return found


def made_in_init(ctx: RuleContext, module: Any, name: str) -> Tuple[Optional[RuleContext], Tuple[LinearCall, ...]]:
    """(view on its cell, the call) of the `nn.Linear(...)` in the user's `__init__` that made `module`, found by
    its path in the model that holds it (`model.classifier.1` -> item 1 of `self.classifier = nn.Sequential(...)`),
    an earlier cell's usually; (None, ()) when not found."""
    for dotted_name in dict.fromkeys([name, *ctx.names.names_for(module)]):
        head, _, path = dotted_name.partition(".")
        model = ctx.names.lookup(head)
        place = made_at(ctx, model, path) if path and isinstance(model, torch.nn.Module) else None
        if place is None or lookup(place.ctx, place.node.func) is not torch.nn.Linear:
            continue
        calls = [c for c in linear_calls(place.ctx, place.tree) if c.call is place.node]
        return (place.ctx, tuple(calls)) if calls else (None, ())
    return None, ()


def last_assignment(tree: ast.Module, name: str, before: int) -> Optional[ast.stmt]:
    """The last plain `name = ...` before line `before`, in the same function as that line."""
    best: Optional[ast.stmt] = None
    for node in ast.walk(function_around(tree, before)):
        if isinstance(node, ast.Assign) and node.lineno < before and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            if best is None or node.lineno > best.lineno:
                best = node
    return best


# -- live objects and the tracker's snapshots --

def module_name(ctx: RuleContext, module: Any, weight: Optional[torch.Tensor]) -> str:
    """The user's name for a module: `model.fc1` (the namespace's name before `self.fc1`)."""
    names = [n[:-len(".weight")] for n in ctx.names.names_for(weight)] if weight is not None else []
    names += ctx.names.names_for(module)
    outside = [n for n in names if not n.startswith("self.")]
    return min(outside or names, key=len) if names else ""


def snapshot_tensor(shot: TensorSnapshot) -> Optional[torch.Tensor]:
    return shot.ref() if shot.ref is not None else None


def fact(name: str, shot: TensorSnapshot) -> TensorFact:
    return TensorFact(name=name, shape=shape_text(shot.shape), dtype=shot.dtype, device=shot.device,
                      requires_grad=shot.requires_grad, is_leaf=shot.is_leaf, version=shot.version)


# -- the classification loss that raised: batch-size-mismatch's and target-out-of-range's --

@dataclass(frozen=True)
class LossArgs:
    """The classification loss that raised: its call (when the cell spells it out on the error line), its
    input and target named and measured."""

    call: Optional[LossCall]
    input_name: str
    target_name: str
    input_shot: Optional[TensorSnapshot]
    target_shot: Optional[TensorSnapshot]

    @property
    def input_node(self) -> Optional[ast.AST]:
        return self.call.input if self.call is not None else None

    @property
    def target_node(self) -> Optional[ast.AST]:
        return self.call.target if self.call is not None else None


def find_loss(ctx: RuleContext, tree: Optional[ast.Module]) -> LossArgs:
    """The loss that raised, from the tracker's record and the last loss called on the error line."""
    op = failed_op(ctx, tuple(LOSSES))
    shots = op.targets if op is not None else ()
    found = [c for c in loss_calls(ctx, calls_on_line(tree, ctx.record.error_lineno), _may_classify)
             if _classifies(c)]
    call = found[-1] if found else None
    names = []
    for i, node in enumerate((call.input, call.target) if call is not None else (None, None)):
        t = snapshot_tensor(shots[i]) if len(shots) > i else None
        names.append(one_line(ctx.record.source, node) if node is not None else
                     ctx.names.name_for(t) or "" if t is not None else "")
    return LossArgs(call, names[0], names[1], shots[0] if shots else None, shots[1] if len(shots) > 1 else None)


def _may_classify(loss: Any) -> bool:
    return loss in LOSS_MODULES or loss in _loss_functions() or isinstance(loss, LOSS_MODULES)


def _loss_functions() -> Tuple[Any, ...]:
    # NB: read when asked, not at import: what torch.nn.functional holds now (a test may stand in for one)
    return torch.nn.functional.cross_entropy, torch.nn.functional.nll_loss


def _classifies(loss: LossCall) -> bool:
    """`F.cross_entropy(...)`, `criterion(...)` (a CrossEntropyLoss or NLLLoss), `nn.NLLLoss()(...)`."""
    if isinstance(loss.call.func, ast.Call):
        return loss.loss in LOSS_MODULES
    return loss.loss in _loss_functions() or isinstance(loss.loss, LOSS_MODULES)


def assigned_before(tree: Optional[ast.Module], loss: LossArgs) -> List[Tuple[str, int]]:
    """Where the loss's input and target were last assigned: (name, line) for each found."""
    found: List[Tuple[str, int]] = []
    if tree is None or loss.call is None:
        return found
    for node in (loss.input_node, loss.target_node):
        # `net(xb)`: the first variable in it that the cell sets, `xb`
        for name in [n for n in ast.walk(node) if isinstance(n, ast.Name)] if node is not None else ():
            stmt = last_assignment(tree, name.id, loss.call.call.lineno)
            if stmt is not None:
                found.append((name.id, stmt.lineno))
                break
    return found


def loss_facts(loss: LossArgs) -> List[TensorFact]:
    return [fact(name or label, shot) for name, label, shot in (
        (loss.input_name, "input", loss.input_shot), (loss.target_name, "target", loss.target_shot)) if shot]
