"""The classification loss that raised, as batch.py and target.py read it: its call on the error line, its input
and target named and measured, and where the cell last assigned them."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch

from ...model import TensorFact
from ...record import TensorSnapshot
from ..context import RuleContext
from .common import argument, calls_on_line, fact, failed_op, last_assignment, snapshot_tensor, text_of


LOSSES = frozenset({"cross_entropy", "nll_loss", "nll_loss2d", "nll_loss_nd"})
LOSS_MODULES = (torch.nn.CrossEntropyLoss, torch.nn.NLLLoss)


# -- the loss call: shared by batch-size-mismatch and target-out-of-range --

@dataclass(frozen=True)
class LossCall:
    """The classification loss that raised: its input and target, named and measured."""

    call: Optional[ast.Call]  # on the error line, when the cell spells it out
    input_name: str
    target_name: str
    input_shot: Optional[TensorSnapshot]
    target_shot: Optional[TensorSnapshot]
    input_node: Optional[ast.AST] = None
    target_node: Optional[ast.AST] = None


def find_loss(ctx: RuleContext, tree: Optional[ast.Module]) -> LossCall:
    op = failed_op(ctx, tuple(LOSSES))
    shots = op.targets if op is not None else ()
    call = None
    for c in calls_on_line(ctx, tree, ctx.record.error_lineno):
        if isinstance(c.func, ast.Call):  # `nn.CrossEntropyLoss()(out, y)`
            is_loss = ctx.names.lookup(text_of(ctx, c.func.func)) in LOSS_MODULES
        else:
            callee = ctx.names.lookup(text_of(ctx, c.func))
            is_loss = callee in (torch.nn.functional.cross_entropy, torch.nn.functional.nll_loss) or \
                isinstance(callee, LOSS_MODULES)
        if is_loss:
            call = c
    nodes = (argument(call, 0, "input"), argument(call, 1, "target")) if call is not None else (None, None)
    names = []
    for i, node in enumerate(nodes):
        t = snapshot_tensor(shots[i]) if len(shots) > i else None
        names.append(text_of(ctx, node) if node is not None else ctx.names.name_for(t) or "" if t is not None else "")
    return LossCall(call, names[0], names[1], shots[0] if shots else None, shots[1] if len(shots) > 1 else None,
                    nodes[0], nodes[1])


def named(ctx: RuleContext, name: str, fallback: str) -> str:
    return f"`{name}`" if name else ctx.say(fallback)


def where_assigned(ctx: RuleContext, tree: Optional[ast.Module], loss: LossCall) -> Tuple[List[str], List[int]]:
    """Where the loss's input and target were last assigned: sentences and line numbers."""
    said: List[str] = []
    lines: List[int] = []
    if tree is None or loss.call is None:
        return said, lines
    for node in (loss.input_node, loss.target_node):
        # `net(xb)`: the first variable in it that the cell sets, `xb`
        for name in [n for n in ast.walk(node) if isinstance(n, ast.Name)] if node is not None else ():
            found = last_assignment(tree, name.id, loss.call.lineno)
            if found is not None:
                lines.append(found.lineno)
                said.append(ctx.say("shapes.origin", name=name.id, lineno=found.lineno,
                                    code=ctx.record.source_line(found.lineno).strip()))
                break
    return said, lines


def loss_facts(loss: LossCall) -> List[TensorFact]:
    return [fact(name or label, shot) for name, label, shot in (
        (loss.input_name, "input", loss.input_shot), (loss.target_name, "target", loss.target_shot)) if shot]
