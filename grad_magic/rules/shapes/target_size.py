"""`target-size-mismatch`: a binary cross-entropy whose target has another shape than its input -- most often
a model ending in `nn.Linear(..., 1)` (outputs (N, 1)) scored against labels of shape (N,).

Reads the message (the two sizes), the failing loss op as the tracker recorded it (its input and target, shapes
only), and the loss call on the failing line (which argument is the input, which the target). The fix is one
spot: when the two shapes differ only by a dimension of size 1, that dimension squeezed out of the side that
has it, on the loss call (`criterion(output.squeeze(1), target)`): the same numbers, compared pairwise.
Wording only through catalog keys `shapes.size.*`.
"""
from __future__ import annotations

import ast
import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import torch

from ... import catalog
from ...cell import cell_tree, node_span
from ...edits import make_fix
from ...facts import dtype_name, shape_text
from ...model import ERROR, Diagnosis, Fix, TextEdit
from ..context import RuleContext
from ..dtypes.culprit_traced import traced_origin
from ..dtypes.fix import dtype_fix
from ..kit import calls_on_line, failed_op, function_around, loss_calls, one_line, parenthesised, quote
from ..places import root, with_lines
from ..registry import rule
from ..traced import Born, failing_operands, marked, odd_born
from .culprit import fact

KIND = "target-size-mismatch"
BINARY_OPS = ("binary_cross_entropy_with_logits", "binary_cross_entropy")
BINARY_MODULES = (torch.nn.BCEWithLogitsLoss, torch.nn.BCELoss)
_SIZE = r"torch\.Size\(\[(?P<{}>[\d, ]*)\]\)"
MESSAGES = (
    # binary_cross_entropy_with_logits (torch >= 1.0, still 2.13): a ValueError from torch/nn/functional.py
    re.compile(r"Target size \(" + _SIZE.format("target") + r"\) must be the same as input size \("
               + _SIZE.format("input") + r"\)"),
    # binary_cross_entropy (BCELoss), torch >= 1.0: a ValueError
    re.compile(r"Using a target size \(" + _SIZE.format("target") + r"\) that is different to the input size \("
               + _SIZE.format("input") + r"\) is deprecated"),
)


@dataclass(frozen=True)
class Sizes:
    input: Tuple[int, ...]
    target: Tuple[int, ...]


def parse_sizes(message: str) -> Optional[Sizes]:
    for pattern in MESSAGES:
        m = pattern.search(message)
        if m is not None:
            return Sizes(_dims(m["input"]), _dims(m["target"]))
    return None


def _dims(text: str) -> Tuple[int, ...]:
    return tuple(int(d) for d in text.split(",") if d.strip())


def extra_unit_dim(longer: Tuple[int, ...], shorter: Tuple[int, ...]) -> Optional[int]:
    """The index of the one size-1 dimension `longer` has and `shorter` lacks (None when not so)."""
    if len(longer) != len(shorter) + 1:
        return None
    for i, d in enumerate(longer):
        if d == 1 and longer[:i] + longer[i + 1:] == shorter:
            return i
    return None


@rule(KIND, raises=ValueError, parse=parse_sizes, matches=(
    "Target size (torch.Size([16])) must be the same as input size (torch.Size([16, 1])) (BCEWithLogits)",
    "Using a target size (torch.Size([16])) that is different to the input size (torch.Size([16, 1])) is "
    "deprecated (BCELoss)",
), fix="the extra size-1 dimension squeezed out on the loss call (`criterion(output.squeeze(1), target)`); when "
       "other calls of the loss read the same labels, `.unsqueeze(1)` where the labels are made")
def target_size_mismatch(ctx: RuleContext, sizes: Sizes) -> Optional[Diagnosis]:
    """A binary cross-entropy given a target of another shape than its input."""
    lineno = ctx.record.error_lineno
    tree = cell_tree(ctx.record.source)
    call = _loss_call(ctx, tree)
    op = failed_op(ctx, BINARY_OPS)
    shots = op.targets if op is not None else ()
    names = [one_line(ctx.record.source, n) if n is not None else "" for n in
             ((call.input, call.target) if call is not None else (None, None))]
    shown = [quote(n) or ctx.say(f"shapes.the_{side}") for n, side in zip(names, ("input", "target"))]
    if call is None:
        d = _float_classes(ctx, sizes, shots)
        if d is not None:
            return d
    fix, squeezed = _squeeze_fix(ctx, tree, call, sizes)
    shared = _target_fix(ctx, tree, call, sizes) if squeezed is not None and squeezed[0] == 0 else None
    fix = shared or fix
    made_line = shared.edits[0] if shared is not None else None
    why = [ctx.say("shapes.size.why", input=shown[0], target=shown[1], in_shape=shape_text(sizes.input),
                   target_shape=shape_text(sizes.target))]
    if squeezed is not None:
        why.append(ctx.say("shapes.size.unit_dim", side=shown[squeezed[0]], dim=squeezed[1]))
    else:
        why.append(ctx.say("shapes.size.no_fix"))
    made = _target_made(ctx, sizes) if squeezed is None else None
    if made is not None:
        why.append(made.at.say("shapes.size.target_made", size=sizes.target[-1], lineno=made.lineno,
                               code=made.at.record.source_line(made.lineno).strip()))
    d = ctx.diagnosis(
        KIND, ERROR, title=ctx.say("shapes.size.title", input=shown[0], target=shown[1],
                                   in_shape=shape_text(sizes.input), target_shape=shape_text(sizes.target)),
        summary=ctx.say("shapes.size.summary"),
        what=ctx.say("shapes.size.what", lineno=lineno or "?", in_shape=shape_text(sizes.input),
                     target_shape=shape_text(sizes.target)),
        why=catalog.sentences(why, ctx.language, capitalise=True), where=ctx.where(lineno),
        lines=[lineno] if lineno else [], names=[n for n in names if n.isidentifier()],
        tensors=[fact(n or side, s) for n, side, s in zip(names, ("input", "target"), shots)], fix=fix)
    if made_line is not None:  # NB: where the target is made, which the fix edits
        d = with_lines(d, ctx, [ctx.record.source.count("\n", 0, made_line.start) + 1])
    return marked(d, made, ctx)


def _target_made(ctx: RuleContext, sizes: Sizes) -> Optional[Born]:
    """Where the run gave the target its last dimension, when that is what differs from the input's (a Dataset's
    `torch.tensor(self.labels[i])` of class-index lists, collated: (N, 2) against scores (N, 3)): followed back
    through the ops that kept that size (traced.py)."""
    last = sizes.target[-1:]
    if not last or not sizes.input or last == sizes.input[-1:]:
        return None
    return odd_born(ctx, lambda m: tuple(m.shape[-1:]) == last and tuple(m.shape) != sizes.input)


def _loss_call(ctx: RuleContext, tree: Optional[ast.Module]) -> Any:
    """The binary cross-entropy called on the failing line, when there is exactly one."""
    if tree is None:
        return None
    functions = (torch.nn.functional.binary_cross_entropy_with_logits, torch.nn.functional.binary_cross_entropy)
    found = loss_calls(ctx, calls_on_line(tree, ctx.record.error_lineno),
                       lambda f: f in functions or f in BINARY_MODULES or isinstance(f, BINARY_MODULES))
    return found[0] if len(found) == 1 and found[0].input is not None and found[0].target is not None else None


def _squeeze_fix(ctx: RuleContext, tree: Optional[ast.Module], call: Any, sizes: Sizes
                 ) -> Tuple[Optional[Fix], Optional[Tuple[int, int]]]:
    """`.squeeze(k)` on the side with the extra size-1 dimension k; (fix, (side, k)), side 0 the input. The
    function's other calls of the same loss given the same expression there (a validation loop's
    `criterion(output, target)` after the training loop's) get the same squeeze: they would fail the same way."""
    if call is None:
        return None, None
    for side, (longer, shorter) in enumerate(((sizes.input, sizes.target), (sizes.target, sizes.input))):
        dim = extra_unit_dim(longer, shorter)
        if dim is None:
            continue
        node = (call.input, call.target)[side]
        src = ctx.record.source
        name = one_line(src, node)
        nodes = [node] + _same_argument(ctx, tree, call, side, name)
        edits = [TextEdit(*node_span(src, n), f"{parenthesised(src[slice(*node_span(src, n))], n)}.squeeze({dim})")
                 for n in nodes]
        others = catalog.listing([str(n.lineno) for n in nodes[1:]], ctx.language)
        fix = make_fix(src, edits, ctx.say("shapes.size.fix_each", name=name, dim=dim, lineno=ctx.record.error_lineno,
                                           others=others) if nodes[1:] else
                       ctx.say("shapes.size.fix", name=name, dim=dim, lineno=ctx.record.error_lineno))
        return fix, (side, dim)
    return None, None


def _same_argument(ctx: RuleContext, tree: Optional[ast.Module], call: Any, side: int, text: str) -> list:
    """The argument at position `side` of the other calls, in the failing line's function, of the same callee
    with two positional arguments, when it is written `text` too."""
    if tree is None:
        return []
    source = ctx.record.source
    callee = one_line(source, call.call.func)
    return [c.args[side] for c in ast.walk(function_around(tree, ctx.record.error_lineno))
            if isinstance(c, ast.Call) and c is not call.call and len(c.args) == 2 and not c.keywords
            and one_line(source, c.func) == callee and one_line(source, c.args[side]) == text]


def _target_fix(ctx: RuleContext, tree: Optional[ast.Module], call: Any, sizes: Sizes) -> Optional[Fix]:
    """The target given its unit dimension where it is made (`labels = torch.tensor(y).float().unsqueeze(1)`), when
    the function's other calls of the same loss read it too (a squeeze here would leave them failing the same
    way); their targets made on their own line (`torch.zeros(n)`) get it there. Only where the run made the
    target on the statement that binds its name; else None (the squeeze on the line stands)."""
    target = call.target
    if tree is None or not isinstance(target, ast.Name) or sizes.input[-1:] != (1,) or \
            sizes.input[:-1] != sizes.target:
        return None
    source = ctx.record.source
    scope = function_around(tree, ctx.record.error_lineno)
    callee = one_line(source, call.call.func)
    others = [c for c in ast.walk(scope) if isinstance(c, ast.Call) and c is not call.call and len(c.args) == 2
              and one_line(source, c.func) == callee]
    if not others:
        return None
    binds = [s for s in ast.walk(scope) if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name) and s.targets[0].id == target.id
             and s.lineno < ctx.record.error_lineno]
    ops = failing_operands(ctx)
    birth = root(ctx).record.lineage.birth_of(ops[1]) if len(ops) > 1 and root(ctx).record.lineage else None
    if not binds or birth is None or not any(n == max(binds, key=lambda s: s.lineno).lineno
                                             for f, n in birth.frames[:1] if f == ctx.record.filename):
        return None
    made = max(binds, key=lambda s: s.lineno).value
    values = [made]
    for other in others:
        held = other.args[1]
        if isinstance(held, ast.Call):
            values.append(held)
        elif not (isinstance(held, ast.Name) and held.id == target.id):
            return None  # NB: another target, made elsewhere: its shape is not known here
    edits = []
    for value in values:
        start, end = node_span(source, value)
        edits.append(TextEdit(start, end, f"{parenthesised(source[start:end], value)}.unsqueeze(1)"))
    return make_fix(source, edits, ctx.say("shapes.size.fix_target", name=target.id, lineno=made.lineno))


def _float_classes(ctx: RuleContext, sizes: Sizes, shots: Any) -> Optional[Diagnosis]:
    """A library's model computed the loss (no call on the line) from scores (N, C) and a float target (N,)
    holding whole class numbers below C: float labels made it pick a multi-label loss (transformers'
    `problem_type` follows the labels' dtype). The labels followed back through the run's record to where they
    were made float, and made int64 there (dtypes' fix): one class per sample, the loss the model meant."""
    ops = failing_operands(ctx)
    if len(sizes.input) != 2 or sizes.input[1] < 2 or sizes.target != sizes.input[:1] or len(ops) < 2:
        return None
    target = ops[1]
    if not target.is_floating_point() or target.is_meta or target.numel() == 0:
        return None
    with torch.no_grad():
        if not torch.equal(target, target.round()) or target.min().item() < 0 or \
                target.max().item() >= sizes.input[1]:
            return None
    traced = traced_origin(ctx, dtype_name(target.dtype), "int64", position=1)
    if traced is None or traced.origin.spot is None:
        return None
    made = traced.origin
    if not made.name:  # NB: made in a dict a Dataset returns: named by its key (`"labels": torch.tensor(...)`)
        made = dataclasses.replace(made, name=_key_of(made.stmt, made.spot) or "labels")
    fix = dtype_fix(traced.at, made, None, "int64", made.name)
    if fix is None:
        return None
    lineno = ctx.record.error_lineno
    at_line = getattr(made.spot, "lineno", made.stmt.lineno)
    shown = [ctx.say("shapes.the_input"), ctx.say("shapes.the_target")]
    why = [ctx.say("shapes.size.why", input=shown[0], target=shown[1], in_shape=shape_text(sizes.input),
                   target_shape=shape_text(sizes.target)),
           ctx.say("shapes.size.float_classes", dtype=dtype_name(target.dtype), classes=sizes.input[1],
                   lineno=at_line, code=traced.at.record.source_line(at_line).strip())]
    d = traced.at.diagnosis(
        KIND, ERROR, title=ctx.say("shapes.size.title", input=shown[0], target=shown[1],
                                   in_shape=shape_text(sizes.input), target_shape=shape_text(sizes.target)),
        summary=ctx.say("shapes.size.summary"),
        what=ctx.say("shapes.size.what", lineno=lineno or "?", in_shape=shape_text(sizes.input),
                     target_shape=shape_text(sizes.target)),
        why=catalog.sentences(why, ctx.language, capitalise=True), where=traced.at.where(at_line),
        lines=[at_line], names=[made.name],
        tensors=[fact(side, s) for side, s in zip(("input", "target"), shots)], fix=fix)
    return with_lines(d, ctx, [lineno] if lineno else [])


def _key_of(stmt: ast.stmt, spot: Any) -> str:
    """The string key of the dict entry in `stmt` whose value holds `spot`."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier() and \
                        any(n is spot for n in ast.walk(value)):
                    return key.value
    return ""
