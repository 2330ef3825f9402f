"""The optimizer family's rules and their cards, in registration order: grads-not-zeroed (a warning),
empty-parameter-list (a ValueError), optimizer-not-on-model (a warning).

Wording only through the catalog (`optimizer.*` keys); the causes come from the culprit modules, the edits
from fix.py.
"""
from __future__ import annotations

import ast
from typing import Optional

from ... import catalog
from ...cell import cell_tree
from ...model import ERROR, WARNING, Diagnosis
from ...record import StepEvent
from ..context import RuleContext
from ..kit import fact_for, holder_name, names_an_argument, one_line
from ..places import root, view_on, with_lines
from ..registry import rule
from .culprit_empty import empty_cause, params_argument
from .culprit_stray import Stray, built_and_remade, stray_optimizer
from .culprit_manual import ManualUpdate, stale_manual_update
from .culprit_zero import once_before_loop, stale_optimizers, stale_view, zero_grad_spot
from .fix import cleared_after_updates, empty_fix, rebuilt_optimizer_fix, zero_grad_fix
from .message import EmptyParameterList, parse_empty_parameter_list

KIND = "grads-not-zeroed"
EMPTY_KIND = "empty-parameter-list"
STRAY_KIND = "optimizer-not-on-model"


@rule(KIND, severity=WARNING, matches=(
    "silent: an optimizer stepped again while its parameters' .grad still held the previous step's gradients",
    "silent: a hand-written update (`w -= lr * w.grad`) ran again on gradients that kept adding up",
), fix="`<optimizer>.zero_grad()` inserted where each step's gradients start, in the cell whose loop steps; "
       "`<param>.grad.zero_()` after a hand-written update")
def grads_not_zeroed(ctx: RuleContext) -> Optional[Diagnosis]:
    """optimizer.step() (or an update by hand) ran on gradients accumulated since the previous one, never zeroed."""
    found = stale_optimizers(ctx)
    if not found:
        update = stale_manual_update(ctx) if ctx.record.inplace_ops else None
        return _manual_card(update) if update is not None else None
    view = stale_view(ctx, found[0])
    if view is not ctx:  # NB: the same optimizers, their steps' lines in the cell whose code stepped
        found = stale_optimizers(view)
    tree = cell_tree(view.record.source)
    spots = [zero_grad_spot(view, tree, o) if tree is not None else None for o in found]
    labels = [o.name or (s.receiver if s else None) or o.class_name for o, s in zip(found, spots)]
    first, label = found[0], labels[0]
    step = first.stale[0]
    once = once_before_loop(tree, step.lineno, spots[0].receiver) if tree is not None and spots[0] else []
    why = [view.say("optimizer.zero.why", optimizer=label)]
    if once:
        why.append(view.say("optimizer.zero.why_once", call=f"{spots[0].receiver}.zero_grad()", lineno=once[0]))
    if len(found) > 1:
        why.append(view.say("optimizer.zero.why_others",
                            others=catalog.listing((f"`{n}`" for n in labels[1:]), ctx.language)))
    fix = zero_grad_fix(view, spots) if all(spots) else None
    if fix is None:
        why.append(view.say("optimizer.zero.why_no_fix", optimizer=label))
    lines = sorted({s.lineno for o in found for s in o.stale if s.lineno} |
                   {s.backward_line for s in spots if s and s.backward_line} | set(once))
    return view.diagnosis(
        KIND, WARNING, title=view.say("optimizer.zero.title", optimizer=label),
        summary=view.say("optimizer.zero.summary", call=f"{spots[0].receiver if spots[0] else label}.step()",
                         lineno=step.lineno or "?", stale=len(first.stale), total=len(first.steps)),
        what=view.say("optimizer.zero.what", optimizer=label, cls=first.class_name,
                      total=len(first.steps), stale=len(first.stale),
                      params=max(s.stale_params for s in first.stale),
                      with_grad=max(s.params_with_grad for s in first.stale)),
        why=catalog.sentences(why, ctx.language), where=view.where(step.lineno), lines=lines,
        names=[n for n in labels if n], fix=fix)


def _manual_card(update: ManualUpdate) -> Diagnosis:
    view = update.view
    names = [view.names.name_for(p) for p in update.params]
    shown = catalog.listing((f"`{n}`" for n in names if n), view.language) or \
        catalog.listing((f"`{t}`" for t in update.targets), view.language)
    fix = cleared_after_updates(update)
    lineno = update.statements[0].lineno
    why = [view.say("optimizer.zero.why_manual", params=shown)]
    if fix is None:
        why.append(view.say("optimizer.zero.why_no_fix_manual", params=shown))
    return view.diagnosis(
        KIND, WARNING, title=view.say("optimizer.zero.title_manual", params=shown),
        summary=view.say("optimizer.zero.summary_manual", params=shown, lineno=lineno, updates=update.updates),
        what=view.say("optimizer.zero.what_manual", params=shown, updates=update.updates),
        why=catalog.sentences(why, view.language), where=view.where(lineno),
        lines=[s.lineno for s in update.statements], names=[n for n in names if n], fix=fix)


@rule(EMPTY_KIND, raises=ValueError, parse=parse_empty_parameter_list, matches=(
    "optimizer got an empty parameter list",
), fix="`nn.ModuleList([...])` around layers kept in a plain list, or `list(model.parameters())` for a "
       "generator that was used up")
def empty_parameter_list(ctx: RuleContext, err: EmptyParameterList) -> Optional[Diagnosis]:
    """An optimizer was given no parameters: a model whose layers are in a plain list, or a used-up generator."""
    lineno = ctx.record.error_lineno
    tree = cell_tree(ctx.record.source)
    arg = params_argument(ctx, tree, lineno) if tree is not None and lineno else None
    if isinstance(arg, ast.Name) and names_an_argument(ctx, arg, lineno):
        return None  # NB: a helper's parameter: the caller's line (a view further out) says what was passed
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
    home = cause.view if cause is not None and cause.view is not None else ctx  # NB: where the fix goes
    d = home.diagnosis(
        EMPTY_KIND, ERROR, title=ctx.say("optimizer.empty.title"), summary=ctx.say("optimizer.empty.summary"),
        what=what, why=catalog.sentences(why, ctx.language), where=home.where(cause.lineno if home is not ctx
                                                                                else lineno),
        lines=sorted({n for n in (lineno if home is ctx else None, cause.lineno if cause else None) if n}),
        names=names, tensors=[f for f in (fact_for(n, ctx.names.lookup(n)) for n in names[:1]) if f is not None],
        fix=fix)
    return d if home is ctx else with_lines(d, ctx, [lineno])


@rule(STRAY_KIND, severity=WARNING, matches=(
    "silent: an optimizer stepped parameters that no name holds any more, shaped like those of a model the "
    "training uses (the model was made again, or its layers replaced, after the optimizer was built)",
), fix="the optimizer's own statement, copied right after the one that made the model again (in that cell)")
def optimizer_not_on_model(ctx: RuleContext) -> Optional[Diagnosis]:
    """optimizer.step() updated parameters of a discarded model, not the model the training uses."""
    if not ctx.record.steps:
        return None
    stray = stray_optimizer(ctx)
    return _stray_card(ctx, stray) if stray is not None else None


def _stray_card(ctx: RuleContext, stray: Stray) -> Diagnosis:
    opt, step = stray.optimizer, stray.step
    label = holder_name(ctx, opt) or type(opt).__name__
    built, remade = built_and_remade(ctx, label, stray.model_name)
    home = remade.ctx if remade is not None else ctx
    stepped = step_view(ctx, step)
    step_line = next((n for f, n in step.frames if f == stepped.record.filename), None) if stepped.elsewhere \
        else step.lineno
    # NB: lines of several cells in one sentence: each said in its own cell ("line 5 of this cell" here)
    here = "optimizer.stray.at_here" if stepped.elsewhere or any(
        s.ctx.elsewhere for s in (built, remade) if s is not None) else "optimizer.stray.at"

    def at(view: RuleContext, lineno: object) -> str:
        return view.say("optimizer.stray.at", lineno=lineno) if view.elsewhere else \
            catalog.message(here, ctx.language, lineno=lineno)

    def said(key: str, **more: object) -> str:
        return catalog.tidy(catalog.message(key, ctx.language, **params, **more), ctx.language)

    params = dict(optimizer=label, model=stray.model_name, cls=type(opt).__name__, count=stray.count,
                  step=at(stepped, step_line or "?"))
    why, fix = said("optimizer.stray.why"), None
    if built is not None and remade is not None:
        places = dict(built=at(built.ctx, built.stmt.lineno), remade=at(remade.ctx, remade.stmt.lineno))
        why = said("optimizer.stray.why_remade", **places)
        fix = rebuilt_optimizer_fix(built, remade, stray.model_name, said("optimizer.stray.fix", **places))
    d = home.diagnosis(
        STRAY_KIND, WARNING, title=said("optimizer.stray.title"),
        summary=said("optimizer.stray.summary" if stray.same_shapes else "optimizer.stray.summary_layers"),
        what=said("optimizer.stray.what"), why=why,
        where=home.where(remade.stmt.lineno) if remade is not None else stepped.where(step_line),
        lines=[remade.stmt.lineno] if remade is not None else [], names=[label, stray.model_name],
        tensors=[f for f in (fact_for(label, opt), fact_for(stray.model_name, stray.model)) if f is not None],
        fix=fix)
    if built is not None:
        d = with_lines(d, built.ctx, [built.stmt.lineno])
    d = with_lines(d, stepped, [step_line])
    return with_lines(d, root(ctx), [step.lineno]) if stepped.elsewhere else d


def step_view(ctx: RuleContext, step: StepEvent) -> RuleContext:
    """The run seen from the cell whose code made `step` (its innermost user frame), else the running cell."""
    inner = step.frames[0] if step.frames else None
    return (view_on(ctx, *inner) if inner is not None else None) or ctx
