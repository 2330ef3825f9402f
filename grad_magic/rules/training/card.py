"""The training family's rules and their cards: graph-kept-alive, frozen-by-no-grad, train-eval-mode.

All three are warnings (silent bugs), tried after every run, in this order. Wording only through the
catalog (`training.*` keys); the causes come from the culprit modules, the edits from fix.py.
"""
from __future__ import annotations

import ast
import dataclasses
from typing import List, Optional

from ... import catalog
from ...cell import cell_tree
from ...model import WARNING, Diagnosis, Fix
from ...record import StepEvent
from ..context import RuleContext
from ..kit import GRAD_OFF, function_around, holder_name, one_line, text_of
from ..places import root, view_on, with_lines
from ..registry import rule
from .culprit_frozen import model_re_created, nothing_trained, trains_a_lost_model
from .culprit_frozen_steps import FrozenElsewhere, frozen_elsewhere
from .culprit_graph import GrowingGraph, backpropagated, grown_by_steps, kept_graphs, last_grad_fn
from .culprit_mode import ModeSlip, evaluated_in_train, trained_in_eval
from .culprit_mode_steps import EvalSteps, trained_in_eval_steps
from .fix import decorator_fix, dedent_fix, frozen_fix, graph_fix, grown_fix, mode_fix, stack_fix, train_before_forward
from .message import is_needs_grad_error

SHOWN_LAYERS = 4


@rule("graph-kept-alive", severity=WARNING, matches=(
    "silent: a tensor with a grad_fn accumulated across loop iterations (`total += loss`, "
    "`losses.append(loss)`) and never backpropagated",
), fix="`.item()` (a scalar) or `.detach()` on what is accumulated")
def graph_kept_alive(ctx: RuleContext) -> Optional[Diagnosis]:
    """A loss with a grad_fn accumulated across loop iterations keeps every iteration's graph alive."""
    src = ctx.record.source
    tree = cell_tree(src) if "+" in src or "append" in src else None
    kept = kept_graphs(ctx, tree) if tree is not None else []
    if not kept:
        # NB: what the steps saw: a helper's running total or list whose graph grew at each step
        grown = grown_by_steps(ctx) if ctx.record.steps else []
        return _grown_card(ctx, [g for g in grown if g.view.record.filename == grown[0].view.record.filename]) \
            if grown else None
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


def _grown_card(ctx: RuleContext, grown: List[GrowingGraph]) -> Diagnosis:
    first = grown[0]
    view, acc, seen = first.view, first.acc, first.grown
    fix = grown_fix(grown)
    kind = "list" if seen.kind == "list" else "sum"
    why = [view.say("training.graph.why")]
    if fix is None:
        why.append(view.say("training.graph.why_no_fix"))
    return view.diagnosis(
        "graph-kept-alive", WARNING, title=view.say("training.graph.title", name=acc.name),
        summary=view.say(f"training.graph.summary_{kind}_steps", name=acc.name, lineno=acc.stmt.lineno,
                         count=seen.size, function=seen.function,
                         operand=text_of(view.record.source, acc.operand) or "?"),
        what=view.say(f"training.graph.what_{kind}_steps", name=acc.name, function=seen.function,
                      count=seen.size, grad_fn=seen.grad_fn or "?"),
        why=catalog.sentences(why, ctx.language), where=view.where(acc.stmt.lineno),
        lines=sorted({g.acc.stmt.lineno for g in grown}), names=list(dict.fromkeys(g.acc.name for g in grown)),
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
    if ctx.exception is not None and steps[-1].closure:
        return None  # NB: a step(closure) that raised: its gradients were never counted
    tree = cell_tree(ctx.record.source)
    step = steps[0]
    opt = step.optimizer() if step.optimizer is not None else None
    label = (holder_name(ctx, opt) if opt is not None else None) or step.optimizer_class
    if opt is not None and (tree is not None and model_re_created(ctx, tree, opt) or
                            trains_a_lost_model(ctx, opt, steps)):
        return None  # NB: optimizer-not-on-model tells this story
    inner = step.frames[0] if step.frames else None
    if inner is not None and inner[0] != ctx.record.filename or \
            nothing_trained(ctx, tree, step.lineno).kind in ("other", "detached"):
        # NB: the step, its forward or its loss in a helper or a method of another cell
        lost = frozen_elsewhere(ctx, steps)
        if lost is not None:
            return _lost_card(ctx, steps, label, lost)
    if inner is not None and inner[0] != ctx.record.filename:
        view = view_on(ctx, *inner)
        view_tree = cell_tree(view.record.source) if view is not None else None
        if view is not None and view_tree is not None:  # NB: the helper's function read as the cell
            ctx, tree = view, ast.Module(body=[function_around(view_tree, inner[1])], type_ignores=[])
            step = dataclasses.replace(step, lineno=inner[1])
    cause = nothing_trained(ctx, tree, step.lineno)
    fix = frozen_fix(ctx, tree, cause) if tree is not None else None
    why = [ctx.say(f"training.frozen.why_{cause.kind}", optimizer=label, block=cause.block, loss=cause.loss,
                   call=one_line(ctx.record.source, cause.cleared[1]) if cause.cleared else "")]
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


def _lost_card(ctx: RuleContext, steps: List[StepEvent], label: str, lost: FrozenElsewhere) -> Diagnosis:
    """frozen-by-no-grad told from the cell where the graph was lost (a decorator, a rebuilt loss)."""
    view, step = lost.view, steps[0]
    here = root(ctx)
    stepped = view_on(ctx, *step.frames[0]) if step.frames else None
    stepped = stepped if stepped is not None else here
    step_line = next((n for f, n in step.frames if f == stepped.record.filename), step.lineno)
    at = stepped.say("training.at", lineno=step_line) if stepped.elsewhere else \
        catalog.message("training.at_here" if view.elsewhere else "training.at", ctx.language, lineno=step_line)
    src = view.record.source
    if lost.kind in ("decorated", "no_grad"):
        fix = None if lost.hack_outside else decorator_fix(view, lost) if lost.kind == "decorated" else \
            dedent_fix(view, lost)
        lines = [lost.decorator.lineno if lost.decorator is not None else lost.block.lineno]
        why = [view.say("training.frozen.why_decorated", function=getattr(lost.function, "name", "?"),
                        decorator=text_of(src, lost.decorator), lineno=lines[0]) if lost.decorator is not None
               else view.say("training.frozen.why_no_grad", block=lines[0])]
        hack = _requires_grad_set(lost.function)
        if hack is not None:
            why.append(view.say("training.frozen.why_hack", loss=text_of(src, hack)))
    else:
        fix = stack_fix(view, lost)
        lines = [c.lineno for c in lost.rebuilt]
        why = [view.say("training.frozen.why_rebuilt", call=one_line(src, lost.rebuilt[0]), lineno=lines[0])]
    if fix is None:
        why.append(view.say("training.frozen.why_no_fix"))
    d = view.diagnosis(
        "frozen-by-no-grad", WARNING, title=view.say("training.frozen.title", optimizer=label),
        summary=catalog.tidy(catalog.message("training.frozen.summary_at", ctx.language, optimizer=label, at=at,
                                             total=len(steps)), ctx.language),
        what=view.say("training.frozen.what", optimizer=label, cls=step.optimizer_class, total=len(steps)),
        why=catalog.sentences(why, ctx.language), where=view.where(lines[0]), lines=sorted(set(lines)),
        names=[label], fix=fix)
    d = with_lines(d, stepped, [step_line])
    return with_lines(d, here, [step.lineno]) if stepped is not here else d


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
    slip = None if tree is None else trained_in_eval(ctx, tree) if ctx.record.steps else \
        evaluated_in_train(ctx, tree)
    if slip is not None:
        return _mode_card(ctx, slip, mode_fix(ctx, slip))
    # NB: what the steps saw: a loop in a helper of an earlier cell, an evaluation helper called inside it
    steps = trained_in_eval_steps(ctx) if ctx.record.steps else None
    return _steps_card(ctx, steps) if steps is not None else None


def _steps_card(ctx: RuleContext, steps: EvalSteps) -> Diagnosis:
    view, name = steps.view, steps.name
    shown = catalog.listing(steps.layers, ctx.language, most=SHOWN_LAYERS)
    fix = train_before_forward(steps)
    why = [view.say("training.mode.why_train", name=steps.path, layers=shown)]
    why += [at.say("training.mode.why_eval_call", name=name, lineno=line) for at, line in steps.evals[:2]]
    if steps.came_in_eval and not steps.evals:
        why.append(view.say("training.mode.why_came_in_eval", name=name))
    why += [view.say("training.mode.why_train_once", call=f"{steps.path}.train()", name=name, lineno=line)
            for line in steps.once[:1]]
    if fix is None:
        why.append(view.say("training.mode.why_no_fix_steps", call=f"{steps.path}.train()"))
    d = view.diagnosis(
        "train-eval-mode", WARNING, title=view.say("training.mode.title_train", name=name),
        summary=view.say("training.mode.summary_steps", name=name, lineno=steps.step_line or "?",
                         in_eval=steps.in_eval, total=steps.total),
        what=view.say("training.mode.what_steps", name=name, layers=shown, in_eval=steps.in_eval,
                      total=steps.total),
        why=catalog.sentences(why, ctx.language), where=view.where(steps.step_line),
        lines=sorted({n for n in (steps.step_line, steps.anchor.lineno if steps.anchor else None, *steps.once)
                      if n}), names=[name], fix=fix)
    for at, line in (*steps.evals, *steps.led):
        d = with_lines(d, at, [line])
    return d


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


def _requires_grad_set(function: ast.AST) -> Optional[ast.expr]:
    """`loss` in the function's first `loss.requires_grad_(...)` or `loss.requires_grad = True`."""
    for n in ast.walk(function):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "requires_grad_":
            return n.func.value
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Attribute) and \
                n.targets[0].attr == "requires_grad":
            return n.targets[0].value
    return None
