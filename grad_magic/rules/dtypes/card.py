"""The dtypes family's cards: the rules `target-dtype` and `dtype-mismatch`, worded only through catalog keys
`dtypes.*`. `target-dtype` is registered first: the same message can be either.

May touch: the parsed message, the culprit (culprit.py, culprit_origin.py) and the fix (fix.py); wording only
through ctx.say and catalog.sentences.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import torch

from ... import catalog
from ...cell import cell_tree
from ...model import ERROR, Diagnosis, Fix
from ..context import RuleContext
from ..kit import names_an_argument, text_of
from ..places import root, with_lines
from ..registry import rule
from .culprit import (BINARY_LOSSES, CLASS_LOSSES, REGRESSION_LOSSES, WANT, DtypeLoss, Operand, blames_target, calls_backward,
                      cast_scores, facts, failing_statement, loss_on, met_by, names_of, not_target, odd_operand,
                      operands)
from .culprit_beyond import caller_argument, global_origin, int_fill, loader_origin
from .culprit_origin import Origin, find_origin
from .culprit_traced import traced_origin
from .fix import drop_cast_fix, dtype_fix
from .message import DtypeMismatchError, TargetDtypeError, parse_dtype_mismatch, parse_target_dtype

TARGET_KIND = "target-dtype"
MISMATCH_KIND = "dtype-mismatch"
SAID_NUMPY = ("cast", "numpy", "numpy_tensor")  # origins whose sentence already says where float64 came from


def why_made(ctx: RuleContext, origin: Optional[Origin], name: str, dtype: str) -> str:
    """Where the cell made the tensor `name` of `dtype` (through another name for it, when so)."""
    if origin is None:
        return ctx.say("dtypes.made.unknown", name=name, dtype=dtype)
    # NB: a statement that binds no name the tensor has (a library's loop on `trainer.fit(...)` made the batch)
    how = origin.how if origin.name or origin.how != "other" else "nameless"
    if how == "numpy" and dtype and dtype != "float64":  # NB: numpy's default is float64; uint8 images keep theirs
        how = "numpy_kept"
    made = ctx.say(f"dtypes.made.{how}", name=origin.name, dtype=dtype, lineno=origin.stmt.lineno,
                   code=ctx.record.source_line(origin.stmt.lineno).strip())
    if origin.name and name and origin.name != name:
        return catalog.sentences([ctx.say("dtypes.alias", name=name, alias=origin.name), made], ctx.language)
    return made


@dataclass(frozen=True)
class Beyond:
    """The origin's part in another cell: the view on it, its lines, whether the fix is there, what it says."""

    at: RuleContext
    lines: Sequence[int]
    fix_there: bool
    said: Sequence[str]


def beyond(ctx: RuleContext, tree: Optional[ast.Module], names: Sequence[str], origin: Optional[Origin],
           want: str, dtype: str, obj: Any = None) -> Tuple[Optional[Beyond], Optional[Fix]]:
    """Where the origin continues outside the cell (a DataLoader's Dataset, a global of an earlier cell -- the
    fill value of `torch.full`, or the object itself), and the fix there when it has a spot."""
    lineno = ctx.record.error_lineno
    through = loader_origin(ctx, tree, names, lineno, want) if tree is not None and origin is not None and \
        origin.how == "loop" else None
    if through is not None:
        made = through.origin
        fix = dtype_fix(through.at, made, None, want, made.name) if made.spot is not None else None
        said = [ctx.say("dtypes.made.loader", name=names[0], lineno=through.loop.lineno, loader=through.loader,
                        getitem=through.getitem), why_made(through.at, made, made.name, dtype)]
        return Beyond(through.at, [made.stmt.lineno], fix is not None, said), fix
    fill = int_fill(ctx, origin) if want != "int64" else None
    if fill is not None:
        said = [fill.at.say("dtypes.made.int_fill", name=fill.name, value=fill.value, lineno=fill.stmt.lineno)]
        return Beyond(fill.at, [fill.stmt.lineno], False, said), None
    found = global_origin(ctx, names, want, obj) if origin is None and obj is not None else None
    if found is not None:
        made, at = found
        fix = dtype_fix(at, made, None, want, made.name) if made.spot is not None else None
        return Beyond(at, [made.stmt.lineno], fix is not None, [why_made(at, made, made.name, dtype)]), fix
    return None, None


def placed(ctx: RuleContext, far: Optional[Beyond], lines: Sequence[Optional[int]], **fields: Any) -> Diagnosis:
    """The card in the cell where its fix is (the failing cell's lines added when that is another), with the
    lines of both cells."""
    shown = sorted({n for n in lines if n})
    if far is None:
        return ctx.diagnosis(lines=shown, **fields)
    if far.fix_there:
        fields["where"] = far.at.where(far.lines[0])
        return with_lines(far.at.diagnosis(lines=far.lines, **fields), ctx, shown)
    return with_lines(ctx.diagnosis(lines=shown, **fields), far.at, far.lines)


# -- target-dtype --

@rule(TARGET_KIND, raises=Exception, parse=parse_target_dtype, matches=(
    "expected target dtype to be Long or Byte, but got Float (torch >= 2.12; also Double, Int)",
    "expected scalar type Long but found Float (nll_loss / cross_entropy, torch 1.7 ... 2.11)",
    "Found dtype Long but expected Float (binary_cross_entropy with integer labels)",
    "result type Float can't be cast to the desired output type Long (BCEWithLogits with integer labels)",
    "\"mse_cpu\" not implemented for 'Long' (a library's regression head casting its output to int labels)",
), fix="`.long()` / `.float()` where the targets are made, else on the loss call's target")
def target_dtype(ctx: RuleContext, err: TargetDtypeError) -> Optional[Diagnosis]:
    """A loss given targets of the wrong type: float class labels, or integer labels for a binary loss."""
    tree, stmt = failing_statement(ctx)
    loss = loss_on(ctx, stmt) if stmt is not None else None
    if loss is not None and loss.wants != err.want:
        return None
    if err.regression and loss is not None:
        return None  # NB: the user's own call computed in an integer dtype: the input is integer too
    if not err.sure and not blames_target(ctx, loss, err.found) and not _op_blames_target(ctx, err):
        return None  # NB: the same words come from other ops: only a loss whose target has the found type
    target = loss.call.target if loss is not None else None
    if loss is None:  # NB: the loss ran inside a library: the run's record says where the target was made
        d = _traced_target(ctx, err)
        if d is not None:
            return d
    names = names_of(ctx, target) if isinstance(target, (ast.Name, ast.Attribute)) else []
    up = caller_argument(ctx, target) if names else None
    if up is not None:  # NB: a loss module's forward: its target is the running cell's argument
        d = _from_caller(ctx, err, loss, names, *up)
        if d is not None:
            return d
    origin = find_origin(ctx, tree, names, ctx.record.error_lineno, err.want) if tree is not None and names \
        else None
    far, fix = beyond(ctx, tree, names, origin, err.want, err.found or "?", ctx.names.lookup(names[0])) if names \
        else (None, None)
    if fix is None:
        fix = dtype_fix(ctx, origin, target, err.want, names[0] if names else "", err.found or "") \
            if loss is not None else None
    kept = _cast_keeps(ctx.names.lookup(names[0]) if names else None, err.want, loss)
    return _target_card(ctx, err, loss, names, origin, fix if kept is None else None, far, kept)


def _op_blames_target(ctx: RuleContext, err: TargetDtypeError) -> bool:
    """Whether the op that raised, as the run recorded it, is a loss whose target (its second tensor) has the
    found type: a loss called inside a library (a Trainer's model computing its own loss)."""
    failed = root(ctx).record.failed_ops
    event = failed[-1] if failed else None
    return event is not None and event.name in CLASS_LOSSES | BINARY_LOSSES | REGRESSION_LOSSES and \
        len(event.targets) >= 2 and event.targets[1].dtype == err.found


def _traced_target(ctx: RuleContext, err: TargetDtypeError) -> Optional[Diagnosis]:
    """The card when the loss's target, followed back through the ops the run recorded, was made with its dtype
    on a line of the user's (an earlier cell's `torch.from_numpy` of an int32 array): the fix there, unless
    giving it the wanted dtype would change its values (float targets that are not whole numbers are scores,
    not classes: the loss is the one to change, and no edit of the target is proposed)."""
    if not err.found:
        return None
    traced = traced_origin(ctx, err.found, err.want, position=1)
    if traced is None:
        return None
    made = traced.origin
    kept = _cast_keeps(traced.operand, err.want, None)
    fix = dtype_fix(traced.at, made, None, err.want, made.name) if made.spot is not None and kept is None else None
    said = [why_made(traced.at, made, made.name, err.found)]
    far = Beyond(traced.at, [made.stmt.lineno], fix is not None, said)
    return _target_card(ctx, err, None, list(traced.names or (made.name,)), None, fix, far, kept)


def _cast_keeps(target: Any, want: str, loss: Optional[DtypeLoss]) -> Optional[Tuple[str, Any, Any]]:
    """Why a cast of the target to `want` would not make it what the loss needs, read from the values the run
    left in it: float labels that are not whole numbers (scores, not classes: `.long()` would change them), a
    binary loss's targets outside [0, 1] (pixel values 0-255: `.float()` leaves them there, and BCELoss
    raises on them next). None when the cast keeps what the values mean, or when they cannot be read."""
    if not isinstance(target, torch.Tensor) or target.is_meta or target.numel() == 0:
        return None
    try:
        with torch.no_grad():
            if want == "int64":
                return None if not target.is_floating_point() or _whole(target) else ("not_classes", None, None)
            if loss is not None and loss.name in REGRESSION_LOSSES or target.dtype == torch.bool:
                return None
            low, high = target.min().item(), target.max().item()
    except (RuntimeError, NotImplementedError, TypeError):
        return None
    return None if 0 <= low and high <= 1 else ("not_probabilities", low, high)


def _whole(t: torch.Tensor) -> bool:
    """Whether a float tensor holds only whole numbers (False when its values cannot be read: meta)."""
    try:
        with torch.no_grad():
            return bool(torch.equal(t, t.round()))
    except (RuntimeError, NotImplementedError):
        return False


def _from_caller(ctx: RuleContext, err: TargetDtypeError, loss: Optional[DtypeLoss], names: List[str],
                 top: RuleContext, arg: ast.expr) -> Optional[Diagnosis]:
    """The card when the target a loss module's forward got is the caller's tensor made elsewhere with a spot to
    fix (a Dataset's `__getitem__`): that cell's fix, with the lines of all three cells."""
    up = names_of(top, arg) if isinstance(arg, (ast.Name, ast.Attribute)) else []
    tree = cell_tree(top.record.source)
    origin = find_origin(top, tree, up, top.record.error_lineno, err.want) if up and tree is not None else None
    far, fix = beyond(top, tree, up, origin, err.want, err.found or "?", top.names.lookup(up[0])) if up \
        else (None, None)
    if fix is None or far is None or origin is None or _cast_keeps(top.names.lookup(up[0]), err.want, loss):
        return None
    return with_lines(_target_card(ctx, err, loss, names, None, fix, far), top,
                      [origin.stmt.lineno, top.record.error_lineno])


def _target_card(ctx: RuleContext, err: TargetDtypeError, loss: Optional[DtypeLoss], names: List[str],
                 origin: Optional[Origin], fix: Optional[Fix], far: Optional[Beyond],
                 kept: Optional[Tuple[str, Any, Any]] = None) -> Diagnosis:
    lineno = ctx.record.error_lineno
    name = names[0] if names else ""
    found = err.found or "?"
    family = "class" if err.want == "int64" else "regression" if err.regression or \
        loss is not None and loss.name in REGRESSION_LOSSES else "binary"
    loss_text = _loss_text(ctx, loss) if loss is not None else ctx.say("dtypes.the_loss")
    target = f"`{text_of(ctx.record.source, loss.call.target)}`" if loss is not None and \
        loss.call.target is not None else ctx.say("dtypes.the_target")
    why = [ctx.say(f"dtypes.target.why.{family}", loss=loss_text, found=found, want=err.want)]
    if name:
        why += _made_said(ctx, origin, name, found, far)
    if kept is not None:  # NB: why no cast is proposed
        why.append(ctx.say(f"dtypes.target.{kept[0]}", want=err.want, low=_number(kept[1]), high=_number(kept[2])))
    return placed(
        ctx, far, [origin.stmt.lineno if origin else None, lineno], kind=TARGET_KIND, severity=ERROR,
        title=ctx.say(f"dtypes.target.title.{family}", loss=loss_text, found=found),
        summary=ctx.say(f"dtypes.target.summary.{family}"),
        what=ctx.say("dtypes.target.what", loss=loss_text, target=target, found=found, want=err.want,
                     lineno=lineno or "?"),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno),
        names=[name] if name else [], tensors=facts(ctx, names[:1]), fix=fix)


def _number(value: Any) -> str:
    return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _made_said(ctx: RuleContext, origin: Optional[Origin], name: str, dtype: str, far: Optional[Beyond]
               ) -> List[str]:  # NB: beyond() words its own part with the tensor's dtype
    """Where the tensor was made: in this cell, and on beyond it."""
    if far is None:
        return [why_made(ctx, origin, name, dtype)]
    said = list(far.said)
    return said if origin is None or origin.how == "loop" else [why_made(ctx, origin, name, dtype), *said]


def _loss_text(ctx: RuleContext, loss: DtypeLoss) -> str:
    """`F.cross_entropy` as written, or `criterion` (CrossEntropyLoss) when the name does not say it."""
    written = loss.call.written
    base = written[:-2] if written.endswith("()") else written
    return f"`{written}`" if base.rpartition(".")[2] == loss.name else \
        ctx.say("dtypes.operand", name=written, dtype=loss.name)


# -- dtype-mismatch --

@rule(MISMATCH_KIND, raises=Exception, parse=parse_dtype_mismatch, matches=(
    "mat1 and mat2 must have the same dtype, but got Double and Float (nn.Linear, addmm)",
    "expected m1 and m2 to have the same dtype, but got: double != float (@, mm)",
    "Input type (double) and bias type (float) should be the same (conv; older: torch.DoubleTensor)",
    "expected scalar type Double but found Float (bmm, einsum, conv without bias; older torch: most ops)",
    "Found dtype Double but expected Float (binary_cross_entropy; mse_loss in torch 1.x)",
    "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long' (integer scores into cross_entropy)",
), fix="the dtype set where the odd tensor is made (`.float()` after torch.from_numpy, `dtype=torch.float32` "
       "in torch.tensor, `.double()` -> `.float()`), else `.float()` at the use")
def dtype_mismatch(ctx: RuleContext, err: DtypeMismatchError) -> Optional[Diagnosis]:
    """Tensors of two dtypes in one op: usually a float64 array from numpy meeting float32 weights."""
    tree, stmt = failing_statement(ctx)
    backward = stmt is not None and calls_backward(stmt)
    seen = operands(ctx, stmt) if stmt is not None and not backward else []
    if err.int_logits and stmt is not None and not backward:
        cast = cast_scores(ctx, stmt)
        if cast is not None:  # NB: `loss_fn(pred.long(), y)`: the scores were made integers on the line
            odd = Operand(text_of(ctx.record.source, cast[0]), cast[0], None, err.a or "int64")
            made = Origin(odd.name, stmt, "cast")
            return _named_card(ctx, err, stmt, seen, odd, made, drop_cast_fix(ctx, *cast), None)
    odd = odd_operand(err, not_target(ctx, stmt, seen) if err.int_logits and stmt is not None else seen)
    traced = _traced(ctx, err, odd)
    if traced is not None:
        return traced
    if odd is not None and isinstance(odd.obj, torch.Tensor) and \
            names_an_argument(ctx, odd.node, ctx.record.error_lineno):
        return None  # NB: a parameter of a method or helper of another cell: the caller's line says where it was made
    if odd is None:
        return _unnamed_card(ctx, err, seen, backward)
    names = [odd.name, *ctx.names.names_for(odd.obj)]
    origin = find_origin(ctx, tree, names, ctx.record.error_lineno, WANT) if tree is not None else None
    far, fix = beyond(ctx, tree, names, origin, WANT, odd.dtype, odd.obj)
    if fix is None:
        fix = dtype_fix(ctx, origin, odd.node if isinstance(odd.obj, torch.Tensor) else None, WANT, odd.name)
    return _named_card(ctx, err, stmt, seen, odd, origin, fix, far)


def _traced(ctx: RuleContext, err: DtypeMismatchError, odd: Optional[Operand]) -> Optional[Diagnosis]:
    """The card from what the run recorded: where the failing op's odd operand got its dtype (culprit_traced.py),
    with the fix there when the statement has a spot for one."""
    told = {d for d in (err.a, err.b) if d}
    if err.int_logits or len(told) != 2 or WANT not in told:
        return None
    dtype = next(iter(told - {WANT}))
    traced = traced_origin(ctx, dtype, WANT)
    if traced is None:
        return None
    made = traced.origin
    if made.spot is None and not (ctx.elsewhere and traced.at.record.filename == root(ctx).record.filename):
        return None  # NB: no edit where it was made: the reading of the failing line below says more
    # NB: made in the running cell, which called the failing method (`model.encode(torch.tensor(X), ...)`), with no
    # spot for an edit there: that line is named, and no cast at the use is proposed (the dtype flows on from there)
    fix = dtype_fix(traced.at, made, None, WANT, made.name) if made.spot is not None else None
    far = Beyond(traced.at, [made.stmt.lineno], fix is not None, [why_made(traced.at, made, made.name, dtype)])
    if odd is None or odd.obj is not traced.operand:
        name = traced.names[0] if traced.names else made.name
        odd = Operand(name, ast.Name(id=name, ctx=ast.Load()), traced.operand, dtype)
    tree, stmt = failing_statement(ctx)
    return _named_card(ctx, err, stmt, operands(ctx, stmt) if stmt is not None else [], odd, None, fix, far)


def _unnamed_card(ctx: RuleContext, err: DtypeMismatchError, seen: Sequence[Operand], backward: bool) -> Diagnosis:
    """No operand of the line has the odd dtype (or none can be read): the two dtypes, no fix."""
    lineno = ctx.record.error_lineno
    pair = " / ".join(d for d in (err.a, err.b) if d) or ctx.say("dtypes.two_types")
    why = [ctx.say("dtypes.mismatch.why"),
           ctx.say("dtypes.mismatch.in_backward" if backward else "dtypes.mismatch.no_culprit")]
    if "float64" in (err.a, err.b):
        why.append(ctx.say("dtypes.mismatch.numpy_note"))
    return ctx.diagnosis(
        MISMATCH_KIND, ERROR, title=ctx.say("dtypes.mismatch.title_unnamed", pair=pair),
        summary=ctx.say("dtypes.mismatch.summary"),
        what=ctx.say("dtypes.mismatch.what_unnamed", pair=pair, lineno=lineno or "?", code=_code(ctx, lineno)),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno), lines=[lineno] if lineno else [],
        tensors=facts(ctx, [o.name for o in seen])[:4])


def _named_card(ctx: RuleContext, err: DtypeMismatchError, stmt: Optional[ast.stmt], seen: Sequence[Operand],
                odd: Operand, origin: Optional[Origin], fix: Optional[Fix], far: Optional[Beyond]) -> Diagnosis:
    lineno = ctx.record.error_lineno
    tensors = facts(ctx, [o.name for o in seen])
    near = met_by(stmt, seen, odd.node)
    sep, operand = ctx.say("dtypes.sep"), lambda f: ctx.say("dtypes.operand", name=f.name, dtype=f.dtype)
    others = sep.join(operand(f) for f in tensors if f.name in near and f.dtype != odd.dtype) \
        or sep.join(operand(f) for f in tensors if f.name != odd.name and f.dtype != odd.dtype) \
        or ctx.say("dtypes.the_weights")
    key = "int" if err.int_logits else "float"
    why = [ctx.say(f"dtypes.mismatch.why.{key}"), *_made_said(ctx, origin, odd.name, odd.dtype, far)]
    if isinstance(odd.obj, torch.Tensor) and odd.dtype == "float64" and \
            (origin is None or origin.how not in SAID_NUMPY) and far is None:
        why.append(ctx.say("dtypes.mismatch.numpy_note"))
    tensors = [f for f in tensors if f.name == odd.name] + [f for f in tensors if f.name != odd.name]
    return placed(
        ctx, far, [origin.stmt.lineno if origin else None, lineno], kind=MISMATCH_KIND, severity=ERROR,
        title=ctx.say(f"dtypes.mismatch.title.{key}", name=odd.name, dtype=odd.dtype),
        summary=ctx.say("dtypes.mismatch.summary"),
        what=ctx.say(f"dtypes.mismatch.what.{key}", name=odd.name, dtype=odd.dtype, others=others,
                     lineno=lineno or "?", code=_code(ctx, lineno)),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno), names=[odd.name], tensors=tensors[:4],
        fix=fix)


def _code(ctx: RuleContext, lineno: Optional[int]) -> str:
    return " ".join(ctx.record.source_line(lineno).split())
