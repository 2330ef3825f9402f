"""optimizer-not-on-model's culprit: an optimizer stepping parameters no name holds any more, shaped like
those of a model the cell calls (the model was re-created after the optimizer was built).

May touch: the optimizer steps of the run record, the optimizers' param_groups (read from their dicts), the
cell's ast and the modules it calls by name (their parameters' shapes and identities: never data).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import torch

from ...cell import cell_tree, segment
from ...record import StepEvent
from ..context import RuleContext
from ..kit import optimizer_params, stepped_optimizers


@dataclass(frozen=True)
class Stray:
    """An optimizer whose parameters belong to a discarded twin of `model`."""

    optimizer: Any
    step: StepEvent  # its first step
    model_name: str
    model: torch.nn.Module
    count: int  # how many tensors the optimizer steps


def stray_optimizer(ctx: RuleContext) -> Optional[Stray]:
    """The first optimizer that stepped parameters of a discarded model shaped like one the cell calls."""
    called = called_modules(ctx)
    if not called:
        return None
    for opt, step in stepped_optimizers(ctx):
        params = optimizer_params(opt)
        if not params:
            continue
        shapes = sorted(tuple(p.shape) for p in params)
        for model_name, model in called:
            own = list(model.parameters())
            if own and sorted(tuple(p.shape) for p in own) == shapes and \
                    not {id(p) for p in own} & {id(p) for p in params}:
                # NB: last, as it indexes the namespace: a parameter some name still holds (a
                # temperature `w`, another model) is no stray
                if any(ctx.names.name_for(p) is not None for p in params):
                    break
                return Stray(opt, step, model_name, model, len(params))
    return None


def called_modules(ctx: RuleContext) -> List[Tuple[str, torch.nn.Module]]:
    """Modules the cell calls by a name (`model(x)`, `net.encoder(x)`), in the order they appear."""
    tree = cell_tree(ctx.record.source)
    if tree is None:
        return []
    found: Dict[str, torch.nn.Module] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            name = segment(ctx.record.source, node.func) or ""
            module = ctx.names.lookup(name)
            if isinstance(module, torch.nn.Module):
                found.setdefault(name, module)
    return list(found.items())
