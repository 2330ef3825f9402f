"""The shapes family's cards: the rules `shape-mismatch`, `batch-size-mismatch` and `target-out-of-range`, in
that order, worded only through catalog keys `shapes.*`.

May touch: the parsed message, the culprits (culprit*.py) and the fixes (fix.py); wording only through
ctx.say and catalog.sentences (the sentences are written to follow a colon: capitalised in English).
"""
from __future__ import annotations

import ast
import dataclasses
from typing import List, Optional, Union

import torch

from ... import catalog
from ...cell import cell_tree
from ...facts import shape_text, tensor_fact
from ...model import ERROR, Diagnosis, Fix
from ...record import OpEvent
from ..context import RuleContext
from ..kit import failed_op, one_line, quote
from ..places import root, spelled, with_lines
from ..registry import rule
from ..dtypes.culprit_beyond import LoaderOrigin, loader_origin
from ..traced import Born, born, built_at, failing_operands, marked, target_values_born
from .culprit import LossArgs, assigned_before, fact, find_loss, loss_facts
from .culprit_batch import BatchCause, batch_cause
from .culprit_linear import PRODUCTS, Layer, LinearInput, find_input, find_layer, product_operands
from .culprit_target import Classes, find_classes
from .fix import batch_fix, flatten_fix, in_features_fix, target_fix
from .at_op import OpShape, op_card, parse_op_shape, view_size_at_op
from .unbatched import unbatched
from .unpacked import Unpacked, parse_unpacked, unpacked_card
from .view_size import ViewSize, fixed_batch, parse_view_size
from .message import (BadTarget, BatchSizes, Product, parse_batch_error, parse_matmul_error,
                      parse_target_error)

SHAPE = "shape-mismatch"
BATCH = "batch-size-mismatch"
TARGET = "target-out-of-range"


def named(ctx: RuleContext, name: str, fallback: str) -> str:
    return quote(name) or ctx.say(fallback)


def why(ctx: RuleContext, parts: List[str]) -> str:
    return catalog.sentences(parts, ctx.language, capitalise=True)


# -- shape-mismatch: a Linear layer (or a matrix product) given the wrong number of features --

def parse_shape_error(message: str) -> Optional[Union[Product, ViewSize, OpShape, Unpacked]]:
    return parse_matmul_error(message) or parse_view_size(message) or parse_op_shape(message) or \
        parse_unpacked(message)


@rule(SHAPE, raises=Exception, parse=parse_shape_error, matches=(
    "mat1 and mat2 shapes cannot be multiplied (4x256 and 400x120)",
    "linear(): input and weight.T shapes cannot be multiplied (4x256 and 400x120) (MPS)",
    "a and b must have same reduction dim, but got [4, 256] X [400, 120]. (meta, torch.compile)",
    "size mismatch, m1: [4 x 256], m2: [400 x 120] (torch <= 1.6)",
    "shape '[4, 10]' is invalid for input of size 20 (a view whose batch size is a number: the last batch)",
    "The size of tensor a (8) must match the size of tensor b (24) at non-singleton dimension 0 (and the other "
    "shape errors at the user's own op: rules/shapes/at_op.py)",
    "input.size(-1) must be equal to input_size. Expected 36, got 35",
    "not enough values to unpack (expected 2, got 1) (a library unpacking its input's shape: one sample, no batch "
    "dimension)",
    "view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
    "contiguous subspaces). Use .reshape(...) instead.",
), fix="a flatten before the Linear (input still (batch, C, H, W)), or the Linear's literal in_features "
       "set to the input's real feature count; a view's batch size written as a number made -1; `.view(` of "
       "non-contiguous memory made `.reshape(`")
def shape_mismatch(ctx: RuleContext, p: Union[Product, ViewSize, OpShape, Unpacked]) -> Optional[Diagnosis]:
    """A Linear layer (or a matrix product) given an input whose last dimension is not its in_features; a shape
    error at an op of the user's own code (at_op.py)."""
    if isinstance(p, OpShape):
        return op_card(ctx, p, SHAPE)
    if isinstance(p, Unpacked):
        return unpacked_card(ctx, p, SHAPE)
    if isinstance(p, ViewSize):
        return _view_card(ctx, p) or op_card(ctx, view_size_at_op(p), SHAPE)
    op = failed_op(ctx, PRODUCTS)
    layer = find_layer(ctx, op, p)
    if layer is None:
        return _product_card(ctx, p, op)
    return _linear_card(ctx, find_input(ctx, p, op, layer))


def _view_card(ctx: RuleContext, err: ViewSize) -> Optional[Diagnosis]:
    found = ctx.memo(("shape-mismatch", "view"), lambda: fixed_batch(ctx, err))
    if found is None or found.at.record.filename != ctx.record.filename:
        return None  # NB: answered from the view of the frame that called view() / reshape()
    at, dims = found.at, ", ".join(map(str, err.dims))
    return at.diagnosis(
        SHAPE, ERROR, title=at.say("shapes.view.title", receiver=found.receiver, first=err.dims[0], batch=found.batch),
        summary=at.say("shapes.view.summary"),
        what=at.say("shapes.view.what", lineno=found.lineno, receiver=found.receiver, dims=dims, size=err.size,
                    batch=found.batch),
        why=why(at, [at.say("shapes.view.why", first=err.dims[0], batch=found.batch)]), where=at.where(found.lineno),
        lines=[found.lineno], names=[found.receiver] if found.receiver.isidentifier() else [], fix=found.fix)


def layer_text(ctx: RuleContext, layer: Layer) -> str:
    """`model.fc1`, `model.classifier[1]`, or `F.linear` with its weight's name."""
    if layer.module is None:
        return ctx.say("shapes.linear.functional", weight=layer.name)
    head, _, path = layer.name.partition(".")
    return f"`{spelled(head, path)}`"


def _linear_card(ctx: RuleContext, given: LinearInput) -> Diagnosis:
    layer, p, lineno = given.layer, given.product, ctx.record.error_lineno
    text = layer_text(ctx, layer)
    missing_flatten = given.flat == layer.in_features
    one = None if missing_flatten else unbatched(ctx)
    if one is not None:  # NB: the layer is right for a batch; the model was given one sample
        given = dataclasses.replace(given, ctor_at=None, ctors=(), origin_line=None)
        fix, reason = one.fix, "shapes.unbatched.no_fix"
    else:
        fix, reason = flatten_fix(ctx, given, text) if missing_flatten else in_features_fix(ctx, given, text)
    shown = named(ctx, given.name, "shapes.the_input")
    shape = shape_text(given.shape) if given.shape else f"({p.rows}, {p.inner})"
    parts = [_linear_cause(ctx, given, shown, shape, text), _input_origin(ctx, given)]
    if one is not None:
        parts = [ctx.say("shapes.unbatched.why", layer=text, sample=shape_text(one.shape), rows=p.rows,
                         got=given.features)]
    if given.ctor_at is not None and given.ctor_line is not None:
        parts.append(given.ctor_at.say("shapes.linear.made_at", layer=text, lineno=given.ctor_line,
                                       code=one_line(given.ctor_at.record.source, given.ctors[0].call)))
    if fix is None:
        parts.append(ctx.say(reason, layer=text, got=given.features, flat=given.flat or 0))
    tensors = [fact(given.name or "input", given.shot)] if given.shot is not None else []
    if layer.weight is not None:
        tensors.append(tensor_fact(f"{layer.name}.weight" if layer.module is not None else layer.name, layer.weight))
    at = given.ctor_at if given.ctor_at is not None and fix is not None else ctx  # NB: the card is where its fix is
    if one is not None and fix is not None:
        at = root(ctx)
    d = at.diagnosis(
        SHAPE, ERROR,
        title=ctx.say("shapes.linear.title", layer=text, expected=layer.in_features, got=given.features),
        summary=ctx.say("shapes.linear.summary"),
        what=ctx.say("shapes.linear.what" if layer.module is not None else "shapes.linear.what_functional",
                     input=shown, shape=shape, got=given.features, layer=text, expected=layer.in_features,
                     out=layer.out_features, lineno=lineno or "?"),
        why=why(ctx, parts), where=ctx.where(lineno),
        lines=sorted({n for n in (lineno, given.origin_line, given.ctor_line) if n}) if at is ctx else
        [given.ctor_line] if one is None else [at.record.error_lineno], names=[n for n in (given.name, layer.name) if n], tensors=tensors, fix=fix)
    if one is not None:
        return marked(with_lines(d, ctx, [lineno]) if at is not ctx else d, one.made, ctx)
    if given.ctor_at is None:
        return d
    if at is ctx:
        return with_lines(d, given.ctor_at, [given.ctor_line])
    return with_lines(d, ctx, [lineno, given.origin_line])


def _linear_cause(ctx: RuleContext, given: LinearInput, shown: str, shape: str, text: str) -> str:
    expected, flat = given.layer.in_features, given.flat
    if flat == expected:
        key = "shapes.linear.why_flatten_4d" if len(given.shape) == 4 else "shapes.linear.why_flatten"
        return ctx.say(key, input=shown, shape=shape, ndim=len(given.shape), got=given.features, flat=flat,
                       layer=text, expected=expected)
    if flat is not None:
        return ctx.say("shapes.linear.why_both", input=shown, shape=shape, ndim=len(given.shape),
                       got=given.features, flat=flat, layer=text, expected=expected)
    return ctx.say("shapes.linear.why_in_features", input=shown, got=given.features, layer=text, expected=expected)


def _input_origin(ctx: RuleContext, given: LinearInput) -> str:
    n = given.origin_line
    if n is None:
        return ""
    return ctx.say("shapes.linear.origin", input=given.name, lineno=n, code=ctx.record.source_line(n).strip())


def _product_card(ctx: RuleContext, p: Product, op: Optional[OpEvent]) -> Diagnosis:
    """`a @ b` (or torch.mm) whose inner sizes differ: named, no fix (which side is wrong is not known)."""
    lineno = ctx.record.error_lineno
    found = product_operands(ctx, op)
    names = [name for name, _ in found]
    operands = " @ ".join(f"`{n}`" for n in names) if len(names) == 2 else ctx.say("shapes.product.operands")
    return ctx.diagnosis(
        SHAPE, ERROR, title=ctx.say("shapes.product.title", a=p.rows, b=p.inner, c=p.w_inner, d=p.cols),
        summary=ctx.say("shapes.product.summary"),
        what=ctx.say("shapes.product.what", operands=operands, lineno=lineno or "?", a=p.rows, b=p.inner,
                     c=p.w_inner, d=p.cols),
        why=ctx.say("shapes.product.why", b=p.inner, c=p.w_inner), where=ctx.where(lineno), lines=[lineno],
        names=names, tensors=[f for _, f in found])


# -- batch-size-mismatch: a loss whose input and target disagree on the batch size --

@rule(BATCH, raises=Exception, parse=parse_batch_error,
      matches=("Expected input batch_size (16) to match target batch_size (4).",),
      fix="the target flattened like the input (`y.reshape(-1)`), or a `view(-1, N)` that folded features "
          "into the batch replaced by `view(x.size(0), -1)`")
def batch_size_mismatch(ctx: RuleContext, sizes: BatchSizes) -> Diagnosis:
    """A classification loss whose input and target have different batch sizes."""
    from .onehot_flat import one_hot_flattened  # NB: here, so class_targets' rule registers after this module's

    flattened = one_hot_flattened(ctx, sizes)
    if flattened is not None:  # NB: one-hot rows a library flattened into labels: the rows are the cause
        return flattened
    tree = cell_tree(ctx.record.source)
    loss = find_loss(ctx, tree)
    cause = batch_cause(ctx, tree, loss, sizes)
    fix = batch_fix(ctx, loss, cause)
    lineno = ctx.record.error_lineno
    shown_in = named(ctx, loss.input_name, "shapes.the_input")
    shown_target = named(ctx, loss.target_name, "shapes.the_target")
    in_shape = loss.input_shot.shape if loss.input_shot is not None else ()
    target_shape = loss.target_shot.shape if loss.target_shot is not None else ()
    assigned = assigned_before(tree, loss)
    parts = [ctx.say("shapes.batch.why"), _batch_cause_said(ctx, loss, sizes, cause, shown_in, shown_target),
             *(ctx.say("shapes.origin", name=name, lineno=n, code=ctx.record.source_line(n).strip())
               for name, n in assigned)]
    if fix is None:
        parts.append(ctx.say("shapes.batch.no_fix_view", n=cause.n, per_sample=cause.per_sample)
                     if cause.how == "view" else ctx.say("shapes.batch.no_fix"))
    lines = sorted({lineno, *(n for _, n in assigned)} - {None})
    at = cause.at if cause.at is not None and fix is not None else ctx  # NB: the card is where its fix is
    d = at.diagnosis(
        BATCH, ERROR, title=ctx.say("shapes.batch.title", input=shown_in, target=shown_target, n_in=sizes.input,
                                    n_target=sizes.target),
        summary=ctx.say("shapes.batch.summary"),
        what=ctx.say("shapes.batch.what", input=shown_in, target=shown_target, n_in=sizes.input,
                     n_target=sizes.target, in_shape=shape_text(in_shape) if in_shape else "?",
                     lineno=lineno or "?", target_shape=shape_text(target_shape) if target_shape else "?"),
        why=why(ctx, parts), where=ctx.where(lineno),
        lines=_cause_lines(cause) if at is not ctx else lines + ([] if cause.at else _cause_lines(cause)),
        names=[n for n in (loss.input_name, loss.target_name) if n], tensors=loss_facts(loss), fix=fix)
    if cause.at is not None:
        d = with_lines(d, ctx, lines) if at is not ctx else with_lines(d, cause.at, _cause_lines(cause))
    return _batch_born(ctx, d, sizes, loss)


def _batch_born(ctx: RuleContext, d: Diagnosis, sizes: BatchSizes, loss: LossArgs) -> Diagnosis:
    """`d` with the line marked where the run gave the loss's input its batch size, when an op of the user's
    made it from tensors of another (a `view(-1, ...)` that folded frames into the batch): traced.py. A loss
    the user's code does not spell (a library's model computes it) marks where the model that made the
    predictions was built: a sequence classifier given a token classifier's labels."""
    operands = [t for t in failing_operands(ctx) if t.dim()]
    # NB: the target is marked where one op changed its first dimension (a `.squeeze()` that dropped a batch of
    # one), unless the input's came from such an op too (a `view(-1, vocab)`: the input is the odd one, and the
    # target's slice of a batch is how batches are made)
    changed = {id(t): _lead_changed(ctx, t) for t in operands}
    if not any(changed[id(t)] for t in operands if t.shape[0] == sizes.input != sizes.target):
        for t in operands:
            if t.shape[0] == sizes.target != sizes.input and changed[id(t)] is not None:
                d = marked(d, changed[id(t)], ctx)
                break
    for t in operands:
        if t.shape[0] == sizes.input != sizes.target:
            found = _lead_born(ctx, t)
            if found is not None and found.birth is not None and found.birth.inputs:
                d = marked(d, found, ctx)
            model = built_at(ctx, t) if loss.call is None else None
            if model is None:
                return d
            said = model.at.say("shapes.batch.model_built", lineno=model.lineno, n_in=sizes.input,
                                code=model.at.record.source_line(model.lineno).strip(), n_target=sizes.target)
            return marked(dataclasses.replace(d, why=catalog.sentences([d.why, said], ctx.language)), model, ctx)
    return d


def _lead_changed(ctx: RuleContext, t: torch.Tensor) -> Optional[Born]:
    """`_lead_born`, when the op there read one tensor, whose first dimension had another size."""
    found = _lead_born(ctx, t)
    birth = found.birth if found is not None else None
    ok = birth is not None and len(birth.inputs) == 1 and birth.inputs[0].meta.shape[:1] != tuple(t.shape[:1])
    return found if ok else None


def _lead_born(ctx: RuleContext, t: torch.Tensor) -> Optional[Born]:
    """Where the run gave `t` the size of its first dimension (traced.born)."""
    lead = t.shape[0]
    return born(ctx, t, lambda m: bool(m.shape) and m.shape[0] == lead)


def _batch_cause_said(ctx: RuleContext, loss: LossArgs, sizes: BatchSizes, cause: BatchCause, shown_in: str,
                      shown_target: str) -> str:
    if cause.how == "target_not_flat":
        return ctx.say("shapes.batch.target_not_flat", target=shown_target, shape=shape_text(loss.target_shot.shape),
                       n_in=sizes.input, input=shown_in)
    if cause.how == "input_not_flat":
        return ctx.say("shapes.batch.input_not_flat", input=shown_in, shape=shape_text(loss.input_shot.shape),
                       n_target=sizes.target)
    if cause.how == "view":
        at = cause.at or ctx
        return at.say("shapes.batch.view", code=one_line(at.record.source, cause.view), lineno=cause.view.lineno,
                      n=cause.n, n_in=sizes.input, n_target=sizes.target, per_sample=cause.per_sample)
    return ctx.say("shapes.batch.unknown", input=shown_in, target=shown_target)


def _cause_lines(cause: BatchCause) -> List[int]:
    if cause.how != "view":
        return []
    return [cause.view.lineno] + ([cause.ctors[0].call.lineno] if len(cause.ctors) == 1 else [])


# -- target-out-of-range: class labels beyond the classifier's outputs --

@rule(TARGET, raises=Exception, parse=parse_target_error, matches=(
    "Target 10 is out of bounds. (CPU, IndexError)",
    "CUDA error: device-side assert triggered (CUDA; stderr: Assertion `t >= 0 && t < n_classes` failed.)",
    "Assertion `cur_target >= 0 && cur_target < n_classes' failed. (torch <= 1.5)",
), fix="the classifier's literal out_features set to the number of classes the labels imply, when the cell "
       "says it (torch.randint(0, K, ...), num_classes = K)")
def target_out_of_range(ctx: RuleContext, err: BadTarget) -> Optional[Diagnosis]:
    """A class label at or beyond the classifier's number of outputs (or negative) given to the loss."""
    tree = cell_tree(ctx.record.source)
    loss = find_loss(ctx, tree)
    if err.on_device and loss.call is None and loss.input_shot is None and not err.asserted:
        return None  # a device-side assert from some other kernel (an index, an embedding...)
    classes = find_classes(ctx, tree, loss)
    fix, reason = target_fix(ctx, loss, classes, err.label)
    d = _target_card(ctx, loss, classes, err, fix, reason)
    operands = failing_operands(ctx)
    if len(operands) >= 2:  # NB: what the run recorded: where the labels and the classifier were made
        d = marked(d, target_values_born(ctx, operands[1], err.label), ctx)
        if not classes.ctors:
            d = marked(d, built_at(ctx, operands[0]), ctx)
    made = _made_by_dataset(ctx, tree, loss)
    if made is None or classes.count is None:
        return d
    said = made.at.say("shapes.target.from_dataset", getitem=made.getitem, lineno=made.origin.stmt.lineno,
                   last=classes.count - 1)
    d = dataclasses.replace(d, why=catalog.sentences([d.why, said], ctx.language))
    return marked(d, Born(made.at, made.origin.stmt.lineno, None), ctx)


def _made_by_dataset(ctx: RuleContext, tree: Optional[ast.Module], loss: LossArgs) -> Optional[LoaderOrigin]:
    """For labels a loop takes from a DataLoader: the statement of the Dataset's `__getitem__` (or the user's
    collate_fn) that made them -- where their values are chosen."""
    name = loss.target_name
    if tree is None or not name or not name.isidentifier() or ctx.record.error_lineno is None:
        return None
    return loader_origin(ctx, tree, [name], ctx.record.error_lineno, "int64")


def _target_card(ctx: RuleContext, loss: LossArgs, classes: Classes, err: BadTarget, fix: Optional[Fix],
                 reason: str) -> Diagnosis:
    lineno, label = ctx.record.error_lineno, err.label
    shown_target = named(ctx, loss.target_name, "shapes.the_target")
    count = classes.count if classes.count is not None else "?"
    layer = quote(classes.layer) or ctx.say("shapes.target.the_classifier")
    parts = [ctx.say("shapes.target.why", classes=count, last=classes.count - 1 if classes.count else "?")]
    if err.on_device:
        parts.append(ctx.say("shapes.target.why_device"))
    parts.append(_labels_said(ctx, classes, label, layer))
    if fix is None and reason:
        parts.append(ctx.say(reason, layer=layer, label=label, classes=count,
                             target=loss.target_name if loss.target_name.isidentifier() else "y"))
    ctor_line = classes.ctors[0].call.lineno if len(classes.ctors) == 1 else None
    far = classes.ctor_at
    lines = sorted({n for n in (lineno, classes.labels.lineno if classes.labels else None,
                                ctor_line if far is None else None) if n})
    unsaid = "_device" if label is None else ""
    at = far if far is not None and fix is not None else ctx  # NB: the card is where its fix is
    d = at.diagnosis(
        TARGET, ERROR, title=ctx.say(f"shapes.target.title{unsaid}", label=label, classes=count, target=shown_target),
        summary=ctx.say("shapes.target.summary"),
        what=ctx.say(f"shapes.target.what{unsaid}", label=label, classes=count, target=shown_target,
                     input=named(ctx, loss.input_name, "shapes.the_input"), lineno=lineno or "?",
                     origin=ctx.say("shapes.target.from_layer", layer=layer) if classes.layer else ""),
        why=why(ctx, parts), where=ctx.where(lineno), lines=lines if at is ctx else [ctor_line],
        names=[n for n in (loss.input_name, loss.target_name, classes.layer) if n], tensors=loss_facts(loss), fix=fix)
    if far is None:
        return d
    return with_lines(d, far, [ctor_line]) if at is ctx else with_lines(d, ctx, lines)


def _labels_said(ctx: RuleContext, classes: Classes, label: Optional[int], layer: str) -> str:
    labels, count = classes.labels, classes.count
    # NB: a class count that agrees with the layer explains nothing ("102 classes, but only 102 outputs")
    if labels is not None and labels.count is not None and labels.count != count:
        if labels.lineno is not None:
            return ctx.say("shapes.target.labels_from_code", code=labels.source, lineno=labels.lineno,
                           low=labels.low, high=labels.count - 1, layer=layer, classes=count)
        return ctx.say("shapes.target.labels_from_name", name=labels.source, count=labels.count, layer=layer,
                       classes=count)
    if label is not None and label < 0:
        return ctx.say("shapes.target.negative", label=label)
    if label is not None and label == count:
        return ctx.say("shapes.target.one_based", label=label, classes=count, layer=layer)
    return ""
