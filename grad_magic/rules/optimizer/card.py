"""The optimizer family's rules and their cards, in registration order: grads-not-zeroed (a warning),
empty-parameter-list (a ValueError), optimizer-not-on-model (a warning).

Wording only through the catalog (`optimizer.*` keys); the causes come from the culprit modules, the edits
from fix.py.
"""
from __future__ import annotations

from typing import Optional

from ... import catalog
from ...cell import cell_tree
from ...model import ERROR, WARNING, Diagnosis
from ..context import RuleContext
from ..kit import fact_for, one_line
from ..registry import rule
from .culprit_empty import empty_cause, params_argument
from .culprit_stray import Stray, stray_optimizer
from .culprit_zero import stale_optimizers, zero_grad_spot
from .fix import empty_fix, zero_grad_fix
from .message import EmptyParameterList, parse_empty_parameter_list

KIND = "grads-not-zeroed"
EMPTY_KIND = "empty-parameter-list"
STRAY_KIND = "optimizer-not-on-model"


@rule(KIND, severity=WARNING, matches=(
    "silent: an optimizer stepped again while its parameters' .grad still held the previous step's gradients",
), fix="`<optimizer>.zero_grad()` inserted where each step's gradients start")
def grads_not_zeroed(ctx: RuleContext) -> Optional[Diagnosis]:
    """optimizer.step() ran on gradients accumulated since its previous step, never zeroed."""
    found = stale_optimizers(ctx)
    if not found:
        return None
    tree = cell_tree(ctx.record.source)
    spots = [zero_grad_spot(ctx, tree, o) if tree is not None else None for o in found]
    labels = [o.name or (s.receiver if s else None) or o.class_name for o, s in zip(found, spots)]
    first, label = found[0], labels[0]
    step = first.stale[0]
    why = [ctx.say("optimizer.zero.why", optimizer=label)]
    if len(found) > 1:
        why.append(ctx.say("optimizer.zero.why_others", others=catalog.listing((f"`{n}`" for n in labels[1:]), ctx.language)))
    fix = zero_grad_fix(ctx, spots) if all(spots) else None
    if fix is None:
        why.append(ctx.say("optimizer.zero.why_no_fix", optimizer=label))
    lines = sorted({s.lineno for o in found for s in o.stale if s.lineno} |
                   {s.backward_line for s in spots if s and s.backward_line})
    return ctx.diagnosis(
        KIND, WARNING, title=ctx.say("optimizer.zero.title", optimizer=label),
        summary=ctx.say("optimizer.zero.summary", call=f"{spots[0].receiver if spots[0] else label}.step()",
                        lineno=step.lineno, stale=len(first.stale), total=len(first.steps)),
        what=ctx.say("optimizer.zero.what", optimizer=label, cls=first.class_name,
                     total=len(first.steps), stale=len(first.stale),
                     params=max(s.stale_params for s in first.stale),
                     with_grad=max(s.params_with_grad for s in first.stale)),
        why=catalog.sentences(why, ctx.language), where=ctx.where(step.lineno), lines=lines,
        names=[n for n in labels if n], fix=fix)


@rule(EMPTY_KIND, raises=ValueError, parse=parse_empty_parameter_list, matches=(
    "optimizer got an empty parameter list",
), fix="`nn.ModuleList([...])` around layers kept in a plain list, or `list(model.parameters())` for a "
       "generator that was used up")
def empty_parameter_list(ctx: RuleContext, err: EmptyParameterList) -> Diagnosis:
    """An optimizer was given no parameters: a model whose layers are in a plain list, or a used-up generator."""
    lineno = ctx.record.error_lineno
    tree = cell_tree(ctx.record.source)
    arg = params_argument(ctx, tree, lineno) if tree is not None and lineno else None
    cause = empty_cause(ctx, tree, arg) if arg is not None else None
    fix = empty_fix(ctx, cause) if cause is not None else None
    if cause is None:
        why, names = [ctx.say("optimizer.empty.why_unknown")], []
    else:
        why, names = [ctx.say(f"optimizer.empty.why_{cause.kind}", **cause.params)], list(cause.names)
        if fix is None:
            why.append(ctx.say(f"optimizer.empty.why_{cause.kind}_fix", **cause.params))
    call = one_line(ctx.record.source, arg)
    what = ctx.say("optimizer.empty.what", arg=call, lineno=lineno) if call else \
        ctx.say("optimizer.empty.what_unknown", lineno=lineno or "?")
    return ctx.diagnosis(
        EMPTY_KIND, ERROR, title=ctx.say("optimizer.empty.title"), summary=ctx.say("optimizer.empty.summary"),
        what=what, why=catalog.sentences(why, ctx.language), where=ctx.where(lineno),
        lines=sorted({n for n in (lineno, cause.lineno if cause else None) if n}), names=names,
        tensors=[f for f in (fact_for(n, ctx.names.lookup(n)) for n in names[:1]) if f is not None], fix=fix)


@rule(STRAY_KIND, severity=WARNING, matches=(
    "silent: an optimizer stepped parameters that no name holds any more, shaped like those of a model the cell "
    "calls (the model was re-created after the optimizer was built)",
))
def optimizer_not_on_model(ctx: RuleContext) -> Optional[Diagnosis]:
    """optimizer.step() updated parameters of a discarded model, not the model the cell calls."""
    if not ctx.record.steps:
        return None
    stray = stray_optimizer(ctx)
    return _stray_card(ctx, stray) if stray is not None else None


def _stray_card(ctx: RuleContext, stray: Stray) -> Diagnosis:
    opt, step = stray.optimizer, stray.step
    label = ctx.names.name_for(opt) or type(opt).__name__
    params = dict(optimizer=label, model=stray.model_name, cls=type(opt).__name__, count=stray.count,
                  lineno=step.lineno or "?")
    return ctx.diagnosis(
        STRAY_KIND, WARNING, title=ctx.say("optimizer.stray.title", **params),
        summary=ctx.say("optimizer.stray.summary", **params), what=ctx.say("optimizer.stray.what", **params),
        why=ctx.say("optimizer.stray.why", **params), where=ctx.where(step.lineno), lines=[step.lineno],
        names=[label, stray.model_name],
        tensors=[f for f in (fact_for(label, opt), fact_for(stray.model_name, stray.model)) if f is not None])
