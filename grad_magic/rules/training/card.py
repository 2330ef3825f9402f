"""The training family's rules and their cards: graph-kept-alive, frozen-by-no-grad, train-eval-mode.

All three are warnings (silent bugs), tried after every run, in this order. Wording only through the
catalog (`training.*` keys); the causes come from the culprit modules, the edits from fix.py.
"""
from __future__ import annotations

from typing import Optional

from ... import catalog
from ...cell import cell_tree
from ...model import WARNING, Diagnosis, Fix
from ..context import RuleContext
from ..kit import GRAD_OFF, text_of
from ..registry import rule
from .culprit_frozen import model_re_created, nothing_trained, trains_a_lost_model
from .culprit_graph import backpropagated, kept_graphs, last_grad_fn
from .culprit_mode import ModeSlip, evaluated_in_train, trained_in_eval
from .fix import frozen_fix, graph_fix, mode_fix
from .message import is_needs_grad_error

SHOWN_LAYERS = 4


@rule("graph-kept-alive", severity=WARNING, matches=(
    "silent: a tensor with a grad_fn accumulated across loop iterations (`total += loss`, "
    "`losses.append(loss)`) and never backpropagated",
), fix="`.item()` (a scalar) or `.detach()` on what is accumulated")
def graph_kept_alive(ctx: RuleContext) -> Optional[Diagnosis]:
    """A loss with a grad_fn accumulated across loop iterations keeps every iteration's graph alive."""
    src = ctx.record.source
    if "+" not in src and "append" not in src:
        return None
    tree = cell_tree(src)
    if tree is None:
        return None
    kept = kept_graphs(ctx, tree)
    if not kept:
        return None
    first = kept[0].acc
    fix = graph_fix(ctx, kept)
    value = ctx.names.lookup(first.name)
    kind = "list" if isinstance(value, list) else "sum"
    why = [ctx.say("training.graph.why")]
    if not backpropagated(tree, first):
        why.append(ctx.say(f"training.graph.why_no_backward_{kind}", name=first.name))
    if fix is None:
        why.append(ctx.say("training.graph.why_no_fix"))
    return ctx.diagnosis(
        "graph-kept-alive", WARNING,
        title=ctx.say("training.graph.title", name=first.name),
        summary=ctx.say(f"training.graph.summary_{kind}", name=first.name, lineno=first.stmt.lineno,
                        count=len(value) if isinstance(value, list) else 0,
                        operand=text_of(src, first.operand) or "?"),
        what=ctx.say(f"training.graph.what_{kind}", name=first.name, loop=first.loop.lineno,
                     grad_fn=last_grad_fn(value)),
        why=catalog.sentences(why, ctx.language), where=ctx.where(first.stmt.lineno),
        lines=sorted({k.acc.stmt.lineno for k in kept}), names=list(dict.fromkeys(k.acc.name for k in kept)),
        fix=fix)


@rule("frozen-by-no-grad", severity=WARNING, matches=(
    "silent: every optimizer.step() of the cell found no parameter with a .grad",
), fix="the forward moved out of `with torch.no_grad():`, or the missing `loss.backward()` added")
def frozen_by_no_grad(ctx: RuleContext) -> Optional[Diagnosis]:
    """An optimizer stepped, but none of its parameters ever got a gradient: nothing was trained."""
    steps = ctx.record.steps
    if not steps or any(s.params_with_grad for s in steps):
        return None
    if ctx.exception is not None and is_needs_grad_error(ctx.error_message):
        return None  # NB: the error card (missing-requires-grad) already tells this story
    tree = cell_tree(ctx.record.source)
    step = steps[0]
    opt = step.optimizer() if step.optimizer is not None else None
    label = (ctx.names.name_for(opt) if opt is not None else None) or step.optimizer_class
    if opt is not None and (tree is not None and model_re_created(ctx, tree, opt) or
                            trains_a_lost_model(ctx, opt, steps)):
        return None  # NB: optimizer-not-on-model tells this story
    cause = nothing_trained(ctx, tree, step.lineno)
    fix = frozen_fix(ctx, tree, cause) if tree is not None else None
    why = [ctx.say(f"training.frozen.why_{cause.kind}", optimizer=label, block=cause.block, loss=cause.loss)]
    if cause.kind == "no_grad":
        if not cause.backward:
            why.append(ctx.say("training.frozen.why_no_backward", optimizer=label))
        elif "requires_grad" in ctx.record.source:
            why.append(ctx.say("training.frozen.why_hack", block=cause.block, loss=cause.loss))
    if fix is None:
        why.append(ctx.say("training.frozen.why_no_fix"))
    return ctx.diagnosis(
        "frozen-by-no-grad", WARNING, title=ctx.say("training.frozen.title", optimizer=label),
        summary=ctx.say("training.frozen.summary", optimizer=label, lineno=step.lineno, total=len(steps)),
        what=ctx.say("training.frozen.what", optimizer=label, cls=step.optimizer_class, total=len(steps)),
        why=catalog.sentences(why, ctx.language), where=ctx.where(step.lineno),
        lines=sorted({n for n in cause.lines if n}), names=[label], fix=fix)


@rule("train-eval-mode", severity=WARNING, matches=(
    "silent: optimizer.step() on a model left in eval() mode that has Dropout/BatchNorm layers",
    "silent: an evaluation under torch.no_grad() with the model still in train() mode",
), fix="`<model>.train()` before the training loop, or `<model>.eval()` before the evaluation")
def train_eval_mode(ctx: RuleContext) -> Optional[Diagnosis]:
    """A model with Dropout/BatchNorm trained in eval() mode, or evaluated in train() mode."""
    src = ctx.record.source
    if not ctx.record.steps and not any(word in src for word in (".eval", *GRAD_OFF)):
        return None
    tree = cell_tree(src)
    if tree is None:
        return None
    slip = trained_in_eval(ctx, tree) if ctx.record.steps else evaluated_in_train(ctx, tree)
    return _mode_card(ctx, slip, mode_fix(ctx, slip)) if slip is not None else None


def _mode_card(ctx: RuleContext, slip: ModeSlip, fix: Optional[Fix]) -> Diagnosis:
    shown = catalog.listing(slip.layers, ctx.language, most=SHOWN_LAYERS)
    kind = "eval" if slip.which == "eval" else "train"
    name = slip.name
    why = [ctx.say(f"training.mode.why_{kind}", name=name, layers=shown)]
    if slip.which == "train":
        why.append(ctx.say("training.mode.why_eval_call", name=name, lineno=slip.eval_line) if slip.eval_line
                   else ctx.say("training.mode.why_came_in_eval", name=name))
    return ctx.diagnosis(
        "train-eval-mode", WARNING, title=ctx.say(f"training.mode.title_{kind}", name=name),
        summary=ctx.say(f"training.mode.summary_{kind}", name=name, lineno=slip.lineno),
        what=ctx.say(f"training.mode.what_{slip.which}", name=name, layers=shown, lineno=slip.eval_line or 0),
        why=catalog.sentences(why, ctx.language), where=ctx.where(slip.lineno),
        lines=sorted({n for n in (slip.eval_line, slip.lineno) if n}), names=[name], fix=fix)
