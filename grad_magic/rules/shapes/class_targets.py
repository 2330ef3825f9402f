"""`target-not-class-indices`: a classification loss (cross_entropy, nll_loss) given a target that is not one
class index per sample -- one-hot rows, or labels kept as a column of shape (N, 1).

Reads the message, the failing loss op's input and target as the run recorded them (shapes, and the target's
values: whether each row is one-hot), the loss call on the failing line (which argument is the target), and
where the run gave the target its columns (provenance). The fix is one spot on the loss call, only where the
run shows it certain: `y.argmax(dim=1)` for one-hot rows (0/1, one 1 a row) as wide as the input's classes,
`y.squeeze(1)` for a column of labels. Wording only through catalog keys `shapes.onehot.*`.
"""
from __future__ import annotations

import dataclasses
import enum
import re
from dataclasses import dataclass
from typing import Optional, Tuple

import torch

from ... import catalog
from ...cell import cell_tree, node_span
from ...edits import make_fix
from ...facts import shape_text
from ...model import ERROR, Diagnosis, Fix, TextEdit
from ..context import RuleContext
from ..kit import one_line, parenthesised, quote
from ..registry import rule
from ..traced import born, failing_operands, marked
from .culprit import LossArgs, find_loss, loss_facts

KIND = "target-not-class-indices"
# aten/src/ATen/native/LossNLL.cpp (nll_loss_forward's shape check), torch 1.x ... 2.13: a target of 2 or more
# dimensions against a 2-d input
MULTI = re.compile(r"0D or 1D target tensor expected, multi-target not supported")
# cross_entropy since torch 1.10 (class probabilities): a target of the input's shape must be floating point
PROBABILITIES = re.compile(r"Expected floating point type for target with class probabilities, got (?P<dtype>\w+)")
MAX_READ = 10_000_000  # NB: the target's values are read to tell one-hot rows; no more elements than this


@dataclass(frozen=True)
class TargetError:
    probabilities: bool  # the target has the input's shape, and an integer dtype


def parse_target_shape(message: str) -> Optional[TargetError]:
    if MULTI.search(message):
        return TargetError(False)
    return TargetError(True) if PROBABILITIES.search(message) else None


class Shape(enum.Enum):
    """What the target holds, as the run shows it; each plan carries its catalog key and its call."""

    ONE_HOT = "one_hot"  # (N, C) rows of 0/1 with one 1 each, C the input's classes: `.argmax(dim=1)`
    COLUMN = "column"  # (N, 1) class indices: `.squeeze(1)`
    ONE_HOT_WIDTH = "one_hot_width"  # one-hot rows of another width than the input's classes: no fix
    OTHER = "other"  # several labels per sample, or values not one-hot: no fix

    @property
    def call(self) -> str:
        return {Shape.ONE_HOT: ".argmax(dim=1)", Shape.COLUMN: ".squeeze(1)"}.get(self, "")


def shape_of_target(target: Optional[torch.Tensor], input_shape: Tuple[int, ...]) -> Shape:
    """The plan for a target of a 2-d input (N, C); anything else: OTHER."""
    if target is None or target.dim() != 2 or len(input_shape) != 2 or target.shape[0] != input_shape[0]:
        return Shape.OTHER
    if target.shape[1] == 1 and not target.dtype.is_floating_point:
        return Shape.COLUMN
    if not one_hot(target):
        return Shape.OTHER
    return Shape.ONE_HOT if target.shape[1] == input_shape[1] else Shape.ONE_HOT_WIDTH


def one_hot(target: torch.Tensor) -> bool:
    """Whether every row is 0s and one 1 (read on the target's device, no gradient)."""
    if target.numel() == 0 or target.numel() > MAX_READ or target.is_complex():
        return False
    try:
        with torch.no_grad():
            t = target.detach()
            return bool((((t == 0) | (t == 1)).all() & ((t == 1).sum(dim=1) == 1).all()).item())
    except Exception:  # NB: a tensor subclass, a meta or fake tensor: no values to read
        return False


@rule(KIND, raises=RuntimeError, parse=parse_target_shape, matches=(
    "0D or 1D target tensor expected, multi-target not supported",
    "Expected floating point type for target with class probabilities, got Long",
), fix="`y.argmax(dim=1)` on the loss call when the run shows one-hot rows as wide as the input's classes, "
       "`y.squeeze(1)` for a column of labels")
def target_not_class_indices(ctx: RuleContext, err: TargetError) -> Optional[Diagnosis]:
    """A classification loss given one-hot rows or a column of labels where it takes one class index a sample."""
    loss = find_loss(ctx, cell_tree(ctx.record.source))
    if loss.input_shot is None or loss.target_shot is None:
        return None  # NB: not a classification loss the run saw raise (nll_loss inside another library op)
    operands = failing_operands(ctx)
    target = operands[1] if len(operands) > 1 else None
    plan = shape_of_target(target, loss.input_shot.shape)
    lineno = ctx.record.error_lineno
    shown = quote(loss.target_name) or ctx.say("shapes.the_target")
    fix = _fix(ctx, loss, plan)
    why = [ctx.say(f"shapes.onehot.why_{plan.value}", target=shown, shape=shape_text(loss.target_shot.shape),
                   classes=loss.input_shot.shape[-1] if loss.input_shot.shape else "?", call=plan.call)]
    if fix is None:
        why.append(ctx.say("shapes.onehot.no_fix" if not plan.call else "shapes.onehot.no_fix_call", call=plan.call))
    d = ctx.diagnosis(
        KIND, ERROR, title=ctx.say("shapes.onehot.title", target=shown, shape=shape_text(loss.target_shot.shape)),
        summary=ctx.say("shapes.onehot.summary"),
        what=ctx.say("shapes.onehot.what", lineno=lineno or "?", in_shape=shape_text(loss.input_shot.shape),
                     target_shape=shape_text(loss.target_shot.shape), dtype=loss.target_shot.dtype),
        why=catalog.sentences(why, ctx.language, capitalise=True), where=ctx.where(lineno), lines=[lineno],
        names=[n for n in (loss.input_name, loss.target_name) if n.isidentifier()], tensors=loss_facts(loss), fix=fix)
    return _made_at(ctx, d, target)


def _fix(ctx: RuleContext, loss: LossArgs, plan: Shape) -> Optional[Fix]:
    node = loss.target_node
    if not plan.call or node is None:
        return None
    src = ctx.record.source
    start, end = node_span(src, node)
    return make_fix(src, [TextEdit(start, end, parenthesised(src[start:end], node) + plan.call)],
                    ctx.say(f"shapes.onehot.fix_{plan.value}", name=one_line(src, node), lineno=node.lineno))


def _made_at(ctx: RuleContext, d: Diagnosis, target: Optional[torch.Tensor]) -> Diagnosis:
    """`d` with the line where the run gave the target its second dimension (`F.one_hot(...)`, the
    conversion of a one-hot table), when it is not the failing line."""
    if target is None or target.dim() != 2:
        return d
    width = target.shape[1]
    found = born(ctx, target, lambda m: len(m.shape) == 2 and m.shape[1] == width)
    if found is None or (found.at.record is ctx.record and found.lineno == ctx.record.error_lineno):
        return d
    said = found.at.say("shapes.onehot.made_at", lineno=found.lineno,
                        code=found.at.record.source_line(found.lineno).strip())
    return marked(dataclasses.replace(d, why=catalog.sentences([d.why, said], ctx.language)), found, ctx)
