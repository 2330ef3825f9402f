"""train-eval-mode from what the steps saw: the optimizer stepped a model whose Dropout/BatchNorm layers were
in eval() mode at that very step (the step watch read their `training` flags: stepwatch.HeldModel) -- also
when the training loop lives in a helper or a method of an earlier cell, and an evaluation helper it calls
leaves the model in eval() mode.

Where: the frame that held the model at the step (its cell, its name for the model: `self.model`, `model`);
the fix puts `<model>.train()` before the loop's forward there, so that each pass trains in train() mode
whatever ran before it. The card also names where the run put those layers in eval() mode and nothing put them
back before a step (the mode watch's record, modewatch.py: an `evaluate()` the loop calls, however deep its
`.eval()` sits), and a `<model>.train()` that runs once before the loop.
May touch: the run record's steps (their held models, weak references to the layers in eval() mode) and mode
switches, the models' registries (names of their layers), the syntax of the cells the frames ran in.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import torch

from ...cell import cell_tree, enclosing_statement
from ...record import distinct_steps, step_counts
from ..context import RuleContext
from ..kit import dotted, function_around, spans, starts_line
from ..places import cells_before, module_path, spelled, view_on
from .culprit import LOOPS, body_of, submodules

SHOWN = 8  # layers named


@dataclass(frozen=True)
class EvalSteps:
    """Steps that trained a model in eval() mode, and where `<path>.train()` makes them train in train() mode."""

    view: RuleContext  # the cell of the frame that held the model at the step
    name: str  # how the user holds the model: `model`
    path: str  # how that frame names it: `self.model`, `model`
    layers: Tuple[str, ...]  # "`model.features[5]` (Dropout2d)"
    in_eval: int  # steps that found the model in eval() mode
    total: int  # steps of the model
    step_line: Optional[int]  # the frame's line at the step, in its cell
    anchor: Optional[ast.stmt]  # the statement `<path>.train()` goes before (None: no certain place)
    evals: Tuple[Tuple[RuleContext, int], ...]  # the run's `.eval()` calls that left it in eval() mode at a step
    once: Tuple[int, ...]  # `<path>.train()` lines before the loop (in the view), run once
    came_in_eval: bool = False  # the first step already found it in eval() mode (an earlier cell put it there)
    led: Tuple[Tuple[RuleContext, int], ...] = ()  # the calls that led to those `.eval()` calls (`evaluate(m)`)


def trained_in_eval_steps(ctx: RuleContext) -> Optional[EvalSteps]:
    """The first model that some step found in eval() mode, with its layers then, and where to fix it."""
    found = None
    counts = {}
    times = step_counts(ctx.record.steps)
    for step in distinct_steps(ctx.record.steps):
        n = times[id(step)]  # NB: the steps this record stands for
        for held in step.models:
            model = held.model() if held.model is not None else None
            if not held.stepped or model is None:
                continue
            live = [m for m in (r() for r in held.eval_layers) if m is not None]
            total, in_eval = counts.get(id(model), (0, 0))
            counts[id(model)] = (total + n, in_eval + (n if live else 0))
            if live and found is None:
                found = (held, model, live)
    if found is None:
        return None
    held, model, live = found
    view = view_on(ctx, *held.site)
    tree = cell_tree(view.record.source) if view is not None else None
    if view is None or tree is None:
        return None
    name = view.names.name_for(model) or held.path
    layers = tuple(_layer(name, model, m) for m in live[:SHOWN])
    line = held.site[1]
    stmt = enclosing_statement(tree, line)
    loops = _loops_around(tree, line)
    anchor = _anchor(tree, stmt, held.path) if stmt is not None else None
    total, in_eval = counts[id(model)]
    evals, led = _switches_to_eval(ctx, live, sum(times.values()))
    came = in_eval == total
    if came and not evals:  # NB: the model came into the run in eval() mode: the earlier cell that put it there
        evals = [e for e in [_earlier_eval(ctx, name)] if e is not None]
    return EvalSteps(view, name, held.path, layers, in_eval, total, line, anchor, tuple(evals),
                     tuple(_train_once(tree, loops[-1], held.path)) if loops else (), came, tuple(led))


def _earlier_eval(ctx: RuleContext, name: str) -> Optional[Tuple[RuleContext, int]]:
    """The newest top-level `<name>.eval()` (or `.train(False)`) of the cells that ran before this one."""
    for _, filename in cells_before(ctx):
        view = view_on(ctx, filename, 1)
        tree = cell_tree(view.record.source) if view is not None else None
        calls = [s.value for s in (tree.body if tree is not None else []) if isinstance(s, ast.Expr)
                 and _mode_call(s.value, "eval") and dotted(s.value.func.value) == name]
        if calls:
            return view, calls[-1].lineno
        if tree is not None and any(_mode_call(s.value, "train") and dotted(s.value.func.value) == name
                                    for s in tree.body if isinstance(s, ast.Expr)):
            return None
    return None


def _layer(name: str, model: torch.nn.Module, layer: Any) -> str:
    path = module_path(model, layer)
    return f"`{spelled(name, path or '')}` ({type(layer).__name__})"


def _loops_around(tree: ast.Module, line: int) -> List[ast.stmt]:
    """The loops of the line's function around the line, outermost first."""
    function = function_around(tree, line)
    return sorted((n for n in ast.walk(function) if isinstance(n, LOOPS) and spans(n, line) and n.lineno < line),
                  key=lambda n: n.lineno)


def _calls_model(node: ast.AST, path: str) -> bool:
    """`path(...)` or `path.forward(...)`-like calls: the forward pass."""
    return any(isinstance(c, ast.Call) and (dotted(c.func) == path or isinstance(c.func, ast.Attribute) and
                                            dotted(c.func.value) == path and c.func.attr not in ("eval", "train"))
               for c in ast.walk(node))


def _uses_model(node: ast.AST, path: str) -> bool:
    """A call that is handed the model (`loss = train_step(model, x)`): the forward may run inside it."""
    return any(isinstance(c, ast.Call) and any(dotted(a) == path for a in [*c.args, *(k.value for k in c.keywords)])
               for c in ast.walk(node))


def _anchor(tree: ast.Module, stmt: ast.stmt, path: str) -> Optional[ast.stmt]:
    """The first statement of the step's block, up to the step, that runs the forward pass of `path`."""
    body = body_of(tree, stmt) or []
    upto = body[:body.index(stmt) + 1] if stmt in body else []
    for check in (_calls_model, _uses_model):
        found = next((s for s in upto if check(s, path)), None)
        if found is not None:
            return found
    return None


def _train_once(tree: ast.Module, loop: ast.stmt, path: str) -> List[int]:
    """`<path>.train()` calls in the loop's function before the loop: they run once, not before each pass."""
    function = function_around(tree, loop.lineno)
    return sorted({c.lineno for c in ast.walk(function) if _mode_call(c, "train") and dotted(c.func.value) == path
                   and c.lineno < loop.lineno})


def _mode_call(node: ast.AST, mode: str) -> bool:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if mode == "eval":
        return node.func.attr == "eval" or node.func.attr == "train" and bool(node.args) and \
            isinstance(node.args[0], ast.Constant) and node.args[0].value is False
    return node.func.attr == "train" and not node.args and not node.keywords


def _switches_to_eval(ctx: RuleContext, live: List[Any], ran: int
                      ) -> Tuple[List[Tuple[RuleContext, int]], List[Tuple[RuleContext, int]]]:
    """Where the run put the layers in `live` in eval() mode and nothing put them back before a step (the mode
    watch's record of the user's `train()`/`eval()` calls, modewatch.py): the call of each such switch (`m.eval()`),
    and the lines that led to it from outside (`set_mode('eval', ...)` in `check_accuracy`, `evaluate(m)` in
    the loop)."""
    switches = (ctx.record.outer or ctx.record).modes
    calls: List[Tuple[RuleContext, int]] = []
    callers: List[Tuple[RuleContext, int]] = []
    for i, switch in enumerate(switches):
        if switch.training or switch.after_steps >= ran or not _covers(switch, live):
            continue
        if any(later.training and later.after_steps == switch.after_steps and _covers(later, live)
               for later in switches[i + 1:]):
            continue  # NB: put back before the next step
        for k, (filename, line) in enumerate(switch.frames[:2]):
            view = view_on(ctx, filename, line)
            if view is not None:
                (callers if k else calls).append((view, line))
    return list(dict.fromkeys(calls)), list(dict.fromkeys(callers))


def _covers(switch: Any, live: List[Any]) -> bool:
    """Whether the switched module is one of the layers in `live` or holds one."""
    module = switch.ref() if switch.ref is not None else None
    if module is None:
        return False
    under = {id(m) for _, m in submodules("", module, set())}
    return any(id(layer) in under for layer in live)


def fix_spot_starts_line(steps: EvalSteps) -> bool:
    return steps.anchor is not None and starts_line(steps.view.record.source, steps.anchor)
