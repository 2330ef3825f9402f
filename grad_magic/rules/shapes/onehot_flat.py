"""One-hot labels that a library flattened before its loss: a transformers classifier's
`loss_fct(logits.view(-1, num_labels), labels.view(-1))` turns (N, C) one-hot rows into N * C "labels", and the
loss says the batch sizes differ (`Expected input batch_size (4) to match target batch_size (68)`). Seen in what
the run did: the loss's target was made by flattening a tensor of (N, C) 0/1 rows with one 1 each, C the
input's classes; the fix gives the class index (`labels.argmax(dim=1)`) where the user's line passes them.

May touch: the run's lineage and failed ops (weak references), the cell's ast. Never runs user code.
"""
from __future__ import annotations

import ast
from typing import Optional

import torch

from ... import catalog
from ...cell import cell_tree, node_span
from ...edits import make_fix
from ...facts import shape_text
from ...model import ERROR, Diagnosis, Fix, TextEdit
from ..context import RuleContext
from ..kit import calls_on_line
from ..places import root
from ..traced import failing_operands
from .class_targets import KIND, one_hot
from .message import BatchSizes


def one_hot_flattened(ctx: RuleContext, sizes: BatchSizes) -> Optional[Diagnosis]:
    top = root(ctx)
    operands = failing_operands(ctx)
    lineage = top.record.lineage
    if lineage is None or len(operands) < 2 or operands[0].dim() != 2:
        return None
    rows, classes = operands[0].shape
    if sizes.input != rows or sizes.target != rows * classes:
        return None
    birth = lineage.birth_of(operands[1])
    given = birth.inputs[0] if birth is not None and birth.inputs else None
    if given is None or tuple(given.meta.shape) != (rows, classes):
        return None  # NB: the target is not a flattened (N, C) table
    labels = lineage.made(given.parent) if given.parent is not None else given.ref() if given.ref else None
    if not isinstance(labels, torch.Tensor) or not one_hot(labels):
        return None
    name, fix = _passed(top, labels)
    at = top
    lineno = at.record.error_lineno
    shown = f"`{name}`" if name else at.say("shapes.the_target")
    why = [at.say("shapes.onehot_flat.why", target=shown, shape=shape_text((rows, classes)), n=rows * classes),
           at.say("shapes.onehot.why_one_hot", target=shown, shape=shape_text((rows, classes)), classes=classes,
                  call=".argmax(dim=1)")]
    return at.diagnosis(
        KIND, ERROR, title=at.say("shapes.onehot.title", target=shown, shape=shape_text((rows, classes))),
        summary=at.say("shapes.onehot.summary"),
        what=at.say("shapes.onehot_flat.what", lineno=lineno or "?", input=sizes.input, target=sizes.target),
        why=catalog.sentences(why, at.language, capitalise=True), where=at.where(lineno), lines=[lineno],
        names=[name] if name else [], fix=fix)


def _passed(top: RuleContext, labels: torch.Tensor) -> tuple:
    """The name the cell's failing line passes the labels by, and the fix there (`.argmax(dim=1)`)."""
    source = top.record.source
    tree = cell_tree(source)
    for call in calls_on_line(tree, top.record.error_lineno) if tree is not None else []:
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            if isinstance(arg, ast.Name) and top.names.lookup(arg.id) is labels:
                _, end = node_span(source, arg)
                fix: Optional[Fix] = make_fix(source, [TextEdit(end, end, ".argmax(dim=1)")], top.say(
                    "shapes.onehot.fix_one_hot", name=arg.id, lineno=arg.lineno))
                return arg.id, fix
    return "", None
