"""optimizer-not-on-model's culprit: an optimizer stepping parameters no name holds any more, that no backward()
gave a gradient since its previous step (`StepEvent.fresh_params`: an ensemble in a list, pairs of model and
optimizer, every member trained, is no stray however it is held), while the model the
training uses -- called by the cell, or held by the frames that stepped (a helper three cells up reading the
global `rnn`, `self.model`) -- has parameters of its own, of the same kinds, that it never touches. And where
the story happened: the statement that built the optimizer, and the later one that made the model again or
changed its layers (`rnn = RNN(...)` in a later cell, `speedup_model(model, keep)`).

May touch: the optimizer steps of the run record (what their frames held: stepframes' HeldModel), the
optimizers' param_groups (read from their dicts), the modules' parameters (identities, shapes: never data),
and the syntax of the cells that ran (their top-level statements).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from ...cell import callee_texts, cell_tree
from ...record import StepEvent, distinct_steps
from ..context import RuleContext
from ..kit import dotted, holder_name, module_parameters, optimizer_params, stepped_optimizers
from ..places import cells_before, root, view_on

HARMLESS_CALLS = ("print", "display", "len", "isinstance", "type", "id", "repr", "str")  # they change no model


@dataclass(frozen=True)
class Stray:
    """An optimizer whose parameters belong to a discarded twin of `model`."""

    optimizer: Any
    step: StepEvent  # its first step
    model_name: str
    model: torch.nn.Module
    count: int  # how many tensors the optimizer steps
    same_shapes: bool  # the twin's parameters have the very shapes of the model's (else: the layers changed)


@dataclass(frozen=True)
class Statement:
    """A top-level statement of a cell that ran (or of the running cell): its view, and the statement."""

    ctx: RuleContext
    stmt: ast.stmt


def stray_optimizer(ctx: RuleContext) -> Optional[Stray]:
    """The first optimizer that stepped parameters of a discarded model twinned with one the training uses."""
    called = called_modules(ctx)
    for opt, step in stepped_optimizers(ctx):
        params = optimizer_params(opt)
        if not params:
            continue
        steps = [s for s in distinct_steps(ctx.record.steps) if s.optimizer is not None and s.optimizer() is opt]
        if any(s.fresh_params for s in steps):
            continue  # NB: a backward reached its parameters: whatever else the cell calls, it trains them
        held = _held_twins(ctx, steps)
        loose = {id(m) for _, m in held}  # NB: the run itself says these trained while the optimizer did not
        for model_name, model in called + held:
            own = module_parameters(model)
            if not own or {id(p) for p in own} & {id(p) for p in params}:
                continue
            same = sorted(tuple(p.shape) for p in own) == sorted(tuple(p.shape) for p in params)
            if not same and not (id(model) in loose and twin(own, params)):
                continue
            # NB: last, as it indexes the namespace: a parameter some name still holds (a temperature `w`,
            # another model) is no stray
            if any(ctx.names.name_for(p) is not None for p in params):
                break
            return Stray(opt, step, model_name, model, len(params), same)
    return None


def _held_twins(ctx: RuleContext, steps: Sequence[StepEvent]) -> List[Tuple[str, torch.nn.Module]]:
    """Models the frames that stepped held, when none of them was stepped and no step found a gradient:
    the training ran a model this optimizer does not hold."""
    if not steps or any(s.params_with_grad for s in steps):
        return []
    found: Dict[int, Tuple[str, torch.nn.Module]] = {}
    for step in steps:
        for held in step.models:
            if held.stepped:
                return []
            model = held.model() if held.model is not None else None
            if isinstance(model, torch.nn.Module):
                found.setdefault(id(model), (holder_name(ctx, model) or held.path, model))
    return list(found.values())


def twin(own: Sequence[torch.Tensor], params: Sequence[torch.Tensor]) -> bool:
    """As many tensors, with the same numbers of dimensions: the same layers, some of them resized."""
    return len(own) == len(params) and sorted(p.dim() for p in own) == sorted(p.dim() for p in params)


def called_modules(ctx: RuleContext) -> List[Tuple[str, torch.nn.Module]]:
    """Modules the cell calls by a name (`model(x)`, `net.encoder(x)`), in the order they appear."""
    found = []
    for name in callee_texts(ctx.record.source):
        module = ctx.names.lookup(name)
        if isinstance(module, torch.nn.Module):
            found.append((name, module))
    return found


# -- where: the optimizer built, then the model made again --

def built_and_remade(ctx: RuleContext, optimizer: str, model: str
                     ) -> Tuple[Optional[Statement], Optional[Statement]]:
    """The last top-level `optimizer = ...` of the cells that ran (the running cell's before its first step
    included), and the last statement after it that made `model` again or changed it: `model = ...`,
    `model.fc = ...`, `prune(model)`."""
    built: Optional[Statement] = None
    remade: Optional[Statement] = None
    for view, tree in _cells_in_order(ctx):
        for stmt in tree.body:
            if _assigns(stmt, optimizer):
                built, remade = Statement(view, stmt), None
            elif built is not None and _remakes(stmt, model):
                remade = Statement(view, stmt)
    return built, remade


def _cells_in_order(ctx: RuleContext) -> List[Tuple[RuleContext, ast.Module]]:
    top = root(ctx)
    found = []
    for _, filename in reversed(cells_before(ctx)):
        view = view_on(ctx, filename, 1)
        tree = cell_tree(view.record.source) if view is not None else None
        if tree is not None:
            found.append((view, tree))
    tree = cell_tree(top.record.source)
    if tree is not None:
        steps = [s.lineno for s in distinct_steps(top.record.steps) if s.lineno]
        first = min(steps) if steps else None
        # NB: the running cell's statements before its first step only: what ran before the training
        tree = ast.Module(body=[s for s in tree.body if first is None or s.lineno < first], type_ignores=[])
        found.append((top, tree))
    return found


def _assigns(stmt: ast.stmt, name: str) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
        if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))


def _remakes(stmt: ast.stmt, model: str) -> bool:
    """`model = ...`, `model.fc = ...` / `model[0] = ...`, or `model` passed to a call (`speedup(model)`);
    for a model held as an attribute, `trainer.model = ...`."""
    if _assigns(stmt, model):
        return True
    targets = stmt.targets if isinstance(stmt, ast.Assign) else []
    if any(dotted(t) == model or isinstance(t, (ast.Attribute, ast.Subscript)) and _base(t) == model
           for t in targets):
        return True
    if not isinstance(stmt, (ast.Expr, ast.Assign)):
        return False
    return any(isinstance(c, ast.Call) and getattr(c.func, "id", "") not in HARMLESS_CALLS and any(
        isinstance(a, ast.Name) and a.id == model for a in [*c.args, *(k.value for k in c.keywords)])
        for c in ast.walk(stmt))


def _base(node: ast.AST) -> Optional[str]:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
