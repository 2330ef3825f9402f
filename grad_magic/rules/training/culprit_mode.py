"""train-eval-mode's culprit: a model with Dropout/BatchNorm trained while in eval() mode, or evaluated
(under a grad-off block, in a cell whose words say it evaluates) while in train() mode.

Only when the cell's shape makes it evident: a step inside a function, a model handed to a function that may
switch modes, or a mode switched later in the cell is left alone.
May touch: the cell's ast, the optimizer steps of the run record, and modules through the NameIndex (their
`training` flags, Dropout's `p` and BatchNorm's weight, read from their dicts).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import List, Optional, Set, Tuple

import torch

from ...record import distinct_steps
from ..context import RuleContext
from ..kit import callee_name, is_false, optimizer_params, starts_line, stepped_optimizers
from .culprit import (LOOPS, SCOPES, body_of, cell_modules, grad_off_withs, is_name, parameter_ids,
                      step_statement, submodules)

EVALUATION = re.compile(r"acc|correct|eval|valid|(?<![a-z])val|test|metric|argmax|predict|score|"
                        r"precision|recall|f1", re.IGNORECASE)
ON_PURPOSE = re.compile(r"mc_|monte|carlo|uncertain|bayes", re.IGNORECASE)
HARMLESS_CALLS = ("print", "len", "isinstance", "type", "id", "repr", "str")  # they never switch a mode


@dataclass(frozen=True)
class ModeSlip:
    """A model in the wrong mode, and the line before which the call that sets it right goes."""

    which: str  # "train" / "train_loop" (trained in eval() mode; the fix at the top of the loop), "eval"
    name: str
    layers: Tuple[str, ...]  # "`model.3` (Dropout)"
    lineno: int  # the first step (trained) or the evaluation's grad-off block (evaluated)
    anchor: int
    eval_line: Optional[int] = None  # the `name.eval()` that left the model in eval() mode, when the cell shows it


def trained_in_eval(ctx: RuleContext, tree: ast.Module) -> Optional[ModeSlip]:
    stepped = {id(p) for opt, _ in stepped_optimizers(ctx) for p in optimizer_params(opt)}
    step_lines = sorted({s.lineno for s in distinct_steps(ctx.record.steps) if s.lineno})
    if not step_lines:
        return None
    for name, module in cell_modules(ctx, tree):
        if module.__dict__.get("training", True) or not (parameter_ids(module) & stepped):
            continue
        layers = mode_layers(name, module, training=False, stepped=stepped)
        if not layers:
            continue
        spot = train_spot(ctx.record.source, tree, name, step_lines[0])
        if spot is None:
            continue  # NB: e.g. `model.eval()` after the loop: the loop may well have trained in train()
        anchor, inside, eval_line = spot
        return ModeSlip("train_loop" if inside else "train", name, tuple(layers), step_lines[0], anchor, eval_line)
    return None


def evaluated_in_train(ctx: RuleContext, tree: ast.Module) -> Optional[ModeSlip]:
    if not looks_like_evaluation(tree):
        return None
    for block in grad_off_withs(tree):
        for name in called_names(block):
            module = ctx.names.lookup(name)
            if not isinstance(module, torch.nn.Module) or not module.__dict__.get("training", False):
                continue
            if mode_calls(tree, name):
                continue  # NB: `.train()`/`.eval()` in the cell: the mode is chosen on purpose (MC dropout)
            layers = mode_layers(name, module, training=True, stepped=None)
            if not layers or not starts_line(ctx.record.source, block):
                continue
            return ModeSlip("eval", name, tuple(layers), block.lineno, block.lineno)
    return None


def mode_layers(name: str, module: torch.nn.Module, training: bool, stepped: Optional[Set[int]]) -> List[str]:
    """`name.sub` (Class) of each Dropout (p > 0) / BatchNorm layer in mode `training`.

    When training (`stepped` given), a BatchNorm counts only when its weight is trained: a frozen
    BatchNorm kept in eval() on purpose (fine-tuning a backbone) is no bug.
    """
    found = []
    for dotted, m in submodules(name, module, set()):
        if m.__dict__.get("training") is not training:
            continue
        if isinstance(m, torch.nn.modules.dropout._DropoutNd):
            if not m.__dict__.get("p"):
                continue
        elif isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            weight = (m.__dict__.get("_parameters") or {}).get("weight")
            if stepped is not None and (weight is None or id(weight) not in stepped
                                        or not weight.requires_grad):
                continue
        else:
            continue
        found.append(f"`{dotted}` ({type(m).__name__})")
    return found


def mode_calls(tree: ast.Module, name: str) -> List[Tuple[int, str, ast.Call]]:
    """(lineno, "train" | "eval", call) for `name.train()`, `name.train(False)`, `name.eval()`."""
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and is_name(n.func.value, name) \
                and n.func.attr in ("train", "eval"):
            mode = n.func.attr
            arg = n.args[0] if n.args else n.keywords[0].value if n.keywords else None
            if mode == "train" and arg is not None and is_false(arg):
                mode = "eval"
            found.append((n.lineno, mode, n))
    return sorted(found, key=lambda t: t[0])


def statements_around(tree: ast.Module, target: ast.stmt) -> List[ast.AST]:
    """The statements around `target`, outermost first (target excluded)."""
    path: List[ast.AST] = []
    node: ast.AST = tree
    while True:
        child = next((c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)
                      and c.lineno <= target.lineno <= (c.end_lineno or c.lineno) and c is not target
                      and any(d is target for d in ast.walk(c))), None)
        if child is None:
            return path
        path.append(child)
        node = child


def train_spot(src: str, tree: ast.Module, name: str, step_line: int) -> Optional[Tuple[int, bool, Optional[int]]]:
    """(line to put `name.train()` before, whether that is the top of the loop, the eval() line), or None
    when the cell does not make it evident that the steps ran in eval() mode."""
    stmt = step_statement(tree, step_line)
    if stmt is None:
        return None
    path = statements_around(tree, stmt)
    if any(isinstance(p, SCOPES) for p in path):
        return None  # NB: a step inside a function: where and when it runs is not in this cell's shape
    if _handed_away(tree, name):
        return None
    loop = next((p for p in path if isinstance(p, LOOPS)), None)
    calls = mode_calls(tree, name)
    if loop is None:
        return _spot_without_loop(src, tree, name, stmt, calls)
    inside = [c for c in calls if loop.lineno <= c[0] <= loop.end_lineno]
    if inside:
        if any(mode == "train" for _, mode, _ in inside):
            return None
        top = loop.body[0]
        return (top.lineno, True, inside[0][0]) if starts_line(src, top) else None
    if any(mode == "train" for _, mode, _ in calls) or any(c[0] > loop.end_lineno for c in calls):
        return None
    if not starts_line(src, loop):
        return None
    before = [c[0] for c in calls if c[0] < loop.lineno]
    return loop.lineno, False, (before[-1] if before else None)


def _spot_without_loop(src: str, tree: ast.Module, name: str, stmt: ast.stmt,
                       calls: List[Tuple[int, str, ast.Call]]) -> Optional[Tuple[int, bool, Optional[int]]]:
    """A single step: `name.train()` before the first statement of its block that calls the model."""
    if any(mode == "train" or line > stmt.lineno for line, mode, _ in calls):
        return None
    body = body_of(tree, stmt) or []
    first = next((s for s in body[:body.index(stmt)] if _calls(s, name)), None) if stmt in body else None
    if first is None or not starts_line(src, first):
        return None
    return first.lineno, False, (calls[-1][0] if calls else None)


def _handed_away(tree: ast.Module, name: str) -> bool:
    """`evaluate(model)`: a function that may switch the mode gets the model (or the cell defines one
    that switches modes)."""
    for n in ast.walk(tree):
        if isinstance(n, SCOPES) and any(isinstance(c, ast.Call) and callee_name(c) in ("train", "eval")
                                         for c in ast.walk(n)):
            return True
        if isinstance(n, ast.Call) and not is_name(n.func, name) and \
                any(is_name(a, name) for a in [*n.args, *(k.value for k in n.keywords)]) and \
                callee_name(n) not in HARMLESS_CALLS:
            return True
    return False


def _calls(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and is_name(n.func, name) for n in ast.walk(node))


def called_names(block: ast.stmt) -> List[str]:
    return list(dict.fromkeys(n.func.id for n in ast.walk(block)
                              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)))


def looks_like_evaluation(tree: ast.Module) -> bool:
    """Whether the cell's own words say it evaluates (accuracy, validation, test...)."""
    words = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            words.add(n.id)
        elif isinstance(n, ast.Attribute):
            words.add(n.attr)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            words.add(n.name)
        elif isinstance(n, ast.arg):
            words.add(n.arg)
    text = " ".join(sorted(words))[:100_000]
    return bool(EVALUATION.search(text)) and not ON_PURPOSE.search(text)
