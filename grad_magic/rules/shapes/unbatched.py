"""One sample given to a model without its batch dimension, seen in what the run did: a convolution on the way
to the failing Linear ran on an unbatched input ((C, H, W) for a Conv2d, which torch accepts), so the Linear's
rows are the channels and its features the pixels. Changing the Linear's in_features would silence the error
and break the model: the fix gives the model a batch of one (`img.unsqueeze(0)`) where the cell passes it.

May touch: the run's lineage (weak references), the NameIndex, the cell's ast. Never runs user code.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

import torch

from ...cell import cell_tree, node_span
from ...edits import make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from ..kit import calls_on_line, lookup
from ...provenance import Birth
from ..places import root, view_on
from ..traced import Born, born, failing_operands

CONVS = frozenset({"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"})


@dataclass(frozen=True)
class Unbatched:
    """The convolution that ran on one sample, the sample's shape, where the sample was made, the fix."""

    shape: tuple
    made: Optional[Born]
    fix: Optional[Fix]


def unbatched(ctx: RuleContext) -> Optional[Unbatched]:
    top = root(ctx)
    lineage = top.record.lineage
    operands = failing_operands(ctx)
    if lineage is None or not operands:
        return None
    convs = [b for b in lineage.ancestors(operands[0]) if b.op in CONVS and len(b.inputs) >= 2]
    if not convs or not all(_one_sample(b) for b in convs):
        return None  # NB: a convolution on the way ran on a batch: not this cause
    given = convs[-1].inputs[0]  # NB: the first convolution the sample went through: its input is the sample
    sample = lineage.made(given.parent) if given.parent is not None else \
        given.ref() if given.ref is not None else None
    made = born(ctx, sample, lambda m: False) if isinstance(sample, torch.Tensor) else None
    if made is not None and made.birth is not None and len(made.birth.frames) > 1:
        filename, lineno = made.birth.frames[-1]  # NB: the statement of the cell that made it, through helpers
        at = view_on(top, filename, lineno)
        made = Born(at, lineno, made.birth) if at is not None else made
    return Unbatched(given.meta.shape, made, _fix(top, sample))


def _one_sample(conv: Birth) -> bool:
    return len(conv.inputs[0].meta.shape) == len(conv.inputs[1].meta.shape) - 1


def _fix(top: RuleContext, sample: Optional[torch.Tensor]) -> Optional[Fix]:
    """`model(img)` -> `model(img.unsqueeze(0))` on the cell's failing line, where a module is given the sample
    by a name that holds it."""
    if not isinstance(sample, torch.Tensor):
        return None
    source = top.record.source
    tree = cell_tree(source)
    lineno = top.record.error_lineno
    for call in calls_on_line(tree, lineno) if tree is not None else []:
        if not isinstance(lookup(top, call.func), torch.nn.Module) or len(call.args) != 1:
            continue
        arg = call.args[0]
        if isinstance(arg, ast.Name) and top.names.lookup(arg.id) is sample:
            _, end = node_span(source, arg)
            return make_fix(source, [TextEdit(end, end, ".unsqueeze(0)")],
                            top.say("shapes.unbatched.fix", name=arg.id, lineno=arg.lineno))
    return None
