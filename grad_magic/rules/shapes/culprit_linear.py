"""shape-mismatch's culprit: the Linear layer whose weight did not fit (by its weight's shape, from the failing
op or the namespace), the input it was given (as the call on the error line writes it, and its shape from the
tracker's snapshot), where the cell last assigned that input, and the `nn.Linear(...)` calls that made it.

May touch: the cell's ast, the run record (the failing op's snapshots: shapes only), the NameIndex.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch

from ...cell import cell_tree
from ...model import TensorFact
from ...record import OpEvent, TensorSnapshot
from ..context import RuleContext
from ..kit import argument, calls_on_line, lookup, one_line
from .culprit import LinearCall, fact, last_assignment, linear_calls, made_in_init, module_name, snapshot_tensor
from .message import Product

PRODUCTS = ("linear", "matmul", "mm", "addmm", "__matmul__", "__rmatmul__", "mv")  # the tracked ops that say so


@dataclass(frozen=True)
class Layer:
    """The Linear layer whose weight did not fit, as the user names it."""

    name: str  # `model.fc1`; the weight's name for `F.linear(x, w)`
    module: Optional[torch.nn.Module]
    weight: Optional[torch.Tensor]
    in_features: int
    out_features: int


def find_layer(ctx: RuleContext, op: Optional[OpEvent], p: Product) -> Optional[Layer]:
    """The Linear whose weight is (cols, w_inner): the failing op's own weight, else the one such in the
    namespace."""
    weights = _weights(ctx, op, p)
    if len(weights) != 1:
        return None
    w = weights[0]
    modules = [m for m in (ctx.names.lookup(n[:-7]) for n in ctx.names.names_for(w) if n.endswith(".weight"))
               if isinstance(m, torch.nn.Linear)]
    module = modules[0] if modules else None
    name = module_name(ctx, module, w) if module is not None else ctx.names.name_for(w) or ""
    if not name:
        return None
    return Layer(name, module, w, p.w_inner, p.cols)


def _weights(ctx: RuleContext, op: Optional[OpEvent], p: Product) -> List[torch.Tensor]:
    weights: List[torch.Tensor] = []
    if op is not None and op.name == "linear" and len(op.targets) >= 2:
        w = snapshot_tensor(op.targets[1])
        if w is not None and tuple(w.shape) == (p.cols, p.w_inner):
            return [w]
    for name, obj in ctx.names.objects():
        if isinstance(obj, torch.nn.Linear) and not isinstance(obj, torch.nn.LazyLinear):
            obj = obj.__dict__.get("_parameters", {}).get("weight")
        elif not (name.endswith(".weight") and isinstance(ctx.names.lookup(name[:-7]), torch.nn.Linear)):
            continue
        if isinstance(obj, torch.Tensor) and tuple(obj.shape) == (p.cols, p.w_inner) and \
                all(obj is not w for w in weights):
            weights.append(obj)
    return weights


@dataclass(frozen=True)
class LinearInput:
    """What the Linear was given, where it came from, and the cell's calls that made the Linear."""

    layer: Layer
    product: Product
    call: Optional[ast.Call]  # `self.fc1(x)` on the error line
    arg: Optional[ast.AST]  # the input as that call writes it
    shot: Optional[TensorSnapshot]  # the input as the tracker saw it
    name: str  # the user's name for the input, "" when none
    origin_line: Optional[int]  # where the cell last assigned the input
    ctors: Tuple[LinearCall, ...]  # `nn.Linear(in_features, ...)` calls that may have made the layer
    flatten_prefix: Optional[str]  # `nn.` when the one such call is in an nn.Sequential and `nn.Flatten` is torch's
    # the view on the cell that holds `ctors` when it is not this one: the `__init__` (of an earlier cell) that
    # made the layer, found from the live model by the layer's path in it
    ctor_at: Optional[RuleContext] = None

    @property
    def shape(self) -> Tuple[int, ...]:
        return self.shot.shape if self.shot is not None else ()

    @property
    def features(self) -> int:
        return self.shape[-1] if self.shape else self.product.inner

    @property
    def flat(self) -> Optional[int]:
        """The values per sample, for an input of more than two dimensions."""
        if len(self.shape) <= 2:
            return None
        n = 1
        for d in self.shape[1:]:
            n *= d
        return n

    @property
    def ctor_line(self) -> Optional[int]:
        return self.ctors[0].call.lineno if len(self.ctors) == 1 else None


def find_input(ctx: RuleContext, p: Product, op: Optional[OpEvent], layer: Layer) -> LinearInput:
    tree = cell_tree(ctx.record.source)
    shot = op.targets[0] if op is not None and op.name == "linear" and op.targets else None
    call = _call_on_line(ctx, tree, layer)
    arg = _input_node(call, layer)
    name = one_line(ctx.record.source, arg) if arg is not None else _shot_name(ctx, shot)
    found = last_assignment(tree, name, call.lineno) if tree is not None and name.isidentifier() and call else None
    ctors = _ctors(ctx, tree, layer)
    at = None
    if not ctors and layer.module is not None:
        at, ctors = made_in_init(ctx, layer.module, layer.name)
    return LinearInput(layer, p, call, arg, shot, name, found.lineno if found is not None else None, ctors,
                       _flatten_prefix(at or ctx, ctors), at)


def _call_on_line(ctx: RuleContext, tree: Optional[ast.Module], layer: Layer) -> Optional[ast.Call]:
    targets = (layer.module, torch.nn.functional.linear)
    for call in calls_on_line(tree, ctx.record.error_lineno):
        if any(lookup(ctx, call.func) is t for t in targets if t is not None):
            return call
    return None


def _input_node(call: Optional[ast.Call], layer: Layer) -> Optional[ast.AST]:
    if call is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if layer.module is None:  # F.linear(input, weight, bias)
        return argument(call, 0, "input")
    return call.args[0] if len(call.args) == 1 and not call.keywords else None


def _shot_name(ctx: RuleContext, shot: Optional[TensorSnapshot]) -> str:
    t = snapshot_tensor(shot) if shot is not None else None
    return ctx.names.name_for(t) or "" if t is not None else ""


def _ctors(ctx: RuleContext, tree: Optional[ast.Module], layer: Layer) -> Tuple[LinearCall, ...]:
    ctors = [c for c in linear_calls(ctx, tree) if c.in_features == layer.in_features
             and c.out_features in (layer.out_features, None)]
    if len(ctors) > 1:  # `self.fc1 = nn.Linear(...)` and `self.fc2 = nn.Linear(...)` with equal sizes
        last = layer.name.rpartition(".")[2]
        ctors = [c for c in ctors if c.target == last] or ctors
    return tuple(ctors)


def _flatten_prefix(ctx: RuleContext, ctors: Tuple[LinearCall, ...]) -> Optional[str]:
    """`nn.` for the one `nn.Linear(...)` in an `nn.Sequential(...)`, when `nn.Flatten` is torch's."""
    if len(ctors) != 1 or not ctors[0].in_sequential:
        return None
    prefix = one_line(ctx.record.source, ctors[0].call.func)[:-len("Linear")]
    return prefix if ctx.names.lookup(prefix + "Flatten") is torch.nn.Flatten else None


def product_operands(ctx: RuleContext, op: Optional[OpEvent]) -> List[Tuple[str, TensorFact]]:
    """The user's names for the two operands of a matrix product that failed, with their facts."""
    found: List[Tuple[str, TensorFact]] = []
    for shot in (op.targets[:2] if op is not None else ()):
        t = snapshot_tensor(shot)
        name = ctx.names.name_for(t) if t is not None else None
        if name:
            found.append((name, fact(name, shot)))
    return found
