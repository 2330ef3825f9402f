"""The dtypes family's culprit on the failing line: the loss called there (and the dtype it wants its targets
in), the tensors and modules the line reads with their dtypes, and which of them is the odd one.

May touch: the cell's ast, the run record (the failing line), the NameIndex; of live objects, dtypes only.
Never runs user code. Where the odd tensor was made: culprit_origin.py.
"""
from __future__ import annotations

import ast
import types
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import torch

from ...cell import cell_tree, enclosing_statement
from ...facts import dtype_name
from ...model import TensorFact
from ..context import RuleContext
from ..kit import LossCall, calls_in, dotted, fact_for, lookup, loss_calls, text_of
from .message import INTEGRAL, DtypeMismatchError

CLASS_LOSSES = frozenset({"cross_entropy", "nll_loss", "CrossEntropyLoss", "NLLLoss"})
BINARY_LOSSES = frozenset({"binary_cross_entropy", "binary_cross_entropy_with_logits", "BCELoss",
                           "BCEWithLogitsLoss"})
REGRESSION_LOSSES = frozenset({"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "MSELoss", "L1Loss",
                               "SmoothL1Loss", "HuberLoss"})
WANT = "float32"  # NB: two float types meeting: the fix always makes the odd one float32, the weights' type


def failing_statement(ctx: RuleContext) -> Tuple[Optional[ast.Module], Optional[ast.stmt]]:
    """The cell's tree and the statement of the failing line (None for a block's header line)."""
    lineno = ctx.record.error_lineno
    tree = cell_tree(ctx.record.source) if lineno else None
    stmt = enclosing_statement(tree, lineno) if tree is not None else None
    if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.FunctionDef, ast.ClassDef, ast.Try)):
        stmt = None  # NB: the failing line is a block's header: only its own expression counts
    return tree, stmt


# -- the loss call on the failing line --

@dataclass(frozen=True)
class DtypeLoss:
    """The one loss called on the failing line, by name, and the dtype it wants its targets in."""

    call: LossCall
    name: str  # "cross_entropy", "BCEWithLogitsLoss", ...
    wants: str  # "int64" (class labels) or "float32" (binary targets)


def loss_on(ctx: RuleContext, stmt: ast.stmt) -> Optional[DtypeLoss]:
    """The loss the statement calls, when it calls exactly one a dtype check knows."""
    found = []
    for call in loss_calls(ctx, calls_in(stmt), lambda _: True):  # NB: a loss is known by its name, below
        name = loss_name(call)
        if name in CLASS_LOSSES or name in BINARY_LOSSES or name in REGRESSION_LOSSES:
            found.append(DtypeLoss(call, name, "int64" if name in CLASS_LOSSES else "float32"))
    return found[0] if len(found) == 1 else None


def loss_name(loss: LossCall) -> Optional[str]:
    """`criterion` -> "CrossEntropyLoss", `F.nll_loss` -> "nll_loss", `nn.BCELoss()` (called at once) ->
    "BCELoss"; None for a constructor `nn.BCELoss` itself."""
    obj = loss.loss
    if isinstance(loss.call.func, ast.Call):
        return obj.__name__ if isinstance(obj, type) else None
    if isinstance(obj, type):
        return None
    if isinstance(obj, torch.nn.Module):
        return type(obj).__name__
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        return obj.__name__
    return loss.written.rpartition(".")[2]  # NB: some other callable: known by the name it is called as


def dtype_of(ctx: RuleContext, node: Optional[ast.AST]) -> Optional[str]:
    """The dtype of a plain (dotted) name the failing frame holds, else None: nothing is evaluated."""
    obj = lookup(ctx, node)
    return dtype_name(obj.dtype) if isinstance(obj, torch.Tensor) else None


def blames_target(ctx: RuleContext, loss: Optional[DtypeLoss], found: Optional[str]) -> bool:
    """Whether a message other ops also say is this loss's: its target has the found type (or is not known
    and its input has not)."""
    if loss is None:
        return False
    target = dtype_of(ctx, loss.call.target)
    if target is None:
        return dtype_of(ctx, loss.call.input) != found
    return target == found


def names_of(ctx: RuleContext, node: Optional[ast.AST]) -> List[str]:
    """The user's names for the object `node` writes out: as written first, then the others (by identity)."""
    text = text_of(ctx.record.source, node)
    obj = ctx.names.lookup(text) if text else None
    return [text, *ctx.names.names_for(obj)] if obj is not None else [text] if text else []


# -- the operands of a failing op --

@dataclass(frozen=True)
class Operand:
    """A tensor or module the failing statement reads."""

    name: str  # `x`, `model.fc`
    node: ast.AST
    obj: Any  # the tensor or module
    dtype: str  # "float64"; a module's: its parameters' dtypes


def operands(ctx: RuleContext, stmt: ast.stmt) -> List[Operand]:
    """Each tensor or module the statement reads, outermost dotted name first."""
    found: List[Operand] = []
    covered = set()
    for node in ast.walk(stmt):
        if id(node) in covered or not isinstance(node, (ast.Name, ast.Attribute)) or \
                not isinstance(getattr(node, "ctx", None), ast.Load):
            continue
        name = dotted(node)
        obj = ctx.names.lookup(name) if name else None
        if isinstance(obj, (torch.Tensor, torch.nn.Module)):
            found.append(Operand(name, node, obj, dtype_text(obj)))
            covered.update(id(n) for n in ast.walk(node))
    return found


def dtype_text(obj: Any) -> str:
    if isinstance(obj, torch.Tensor):
        return dtype_name(obj.dtype)
    return ", ".join(sorted({dtype_name(p.dtype) for p in obj.parameters()}))


def odd_operand(err: DtypeMismatchError, seen: Sequence[Operand]) -> Optional[Operand]:
    """The operand of the odd dtype: integer scores, or the one not float32 of the two dtypes that met."""
    if err.int_logits:
        odd = {o.dtype for o in seen if o.dtype in INTEGRAL}
    else:
        told = {d for d in (err.a, err.b) if d}
        present = {o.dtype for o in seen}
        pool = told if len(told) == 2 else present if len(present) == 2 else set()
        odd = pool - {WANT} if WANT in pool else set()
    return next((o for o in seen if o.dtype in odd), None)


INT_CASTS = frozenset({"long", "int", "short", "byte", "char", "bool"})


def cast_scores(ctx: RuleContext, stmt: ast.stmt) -> Optional[Tuple[ast.Call, ast.AST]]:
    """The loss's scores cast to integers on the line itself (`loss_fn(pred.long(), y)`, `.to(torch.long)`):
    (the cast call, what it casts). The scores are what is wrong then, never the target."""
    loss = loss_on(ctx, stmt)
    scores = loss.call.input if loss is not None else None
    if not (isinstance(scores, ast.Call) and isinstance(scores.func, ast.Attribute)) or scores.keywords:
        return None
    attr = scores.func.attr
    if attr in INT_CASTS and not scores.args:
        return scores, scores.func.value
    told = dotted(scores.args[0]) if len(scores.args) == 1 else None
    if attr in ("to", "type") and told and told.rpartition(".")[2] in (
            "long", "int64", "int", "int32", "LongTensor", "IntTensor"):
        return scores, scores.func.value
    return None


def not_target(ctx: RuleContext, stmt: ast.stmt, seen: Sequence[Operand]) -> List[Operand]:
    """The operands that are not (inside) the target of the loss on the line: integer scores are never it."""
    loss = loss_on(ctx, stmt)
    target = loss.call.target if loss is not None else None
    inside = {id(n) for n in ast.walk(target)} if target is not None else set()
    return [o for o in seen if id(o.node) not in inside]


def calls_backward(stmt: ast.stmt) -> bool:
    """`loss.backward()`, `torch.autograd.grad(...)`: the failing op ran in the backward pass, not on this line."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("backward", "grad")
               for n in ast.walk(stmt))


def met_by(stmt: Optional[ast.stmt], seen: Sequence[Operand], node: ast.AST) -> List[str]:
    """The names read in the smallest call or operator that takes `node`: the operands it met."""
    if stmt is None:
        return []
    parent = {id(child): p for p in ast.walk(stmt) for child in ast.iter_child_nodes(p)}
    at = parent.get(id(node))
    while at is not None:
        if isinstance(at, (ast.Call, ast.BinOp)):
            inside = {id(x) for x in ast.walk(at)}
            names = [o.name for o in seen if o.node is not node and id(o.node) in inside]
            if names:
                return names
        at = parent.get(id(at))
    return []


def facts(ctx: RuleContext, names: Sequence[str]) -> List[TensorFact]:
    """The tensor facts of `names`, those the names hold and torch describes."""
    found = (fact_for(name, ctx.names.lookup(name)) for name in names)
    return [f for f in found if f is not None]
