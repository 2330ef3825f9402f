"""The backward family's culprits shared by its kinds, and those of backward-non-scalar and out-with-grad.

The failing statement and the backward()/autograd.grad() call in it (`Site`); the tensor backward() refused
(`Refused`: its text, name, shape and what a reduction of it should be); the one `out=` call of the line
(`OutCall`). May touch: the cell's ast and text, the run record's failed ops, the NameIndex -- of live
objects, torch metadata only. Never runs user code; no wording.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import List, Optional, Set, Tuple

import torch

from ...cell import assignments_to, cell_tree, enclosing_statement, indent_of
from ...facts import shape_text
from ...model import TensorFact
from ..context import RuleContext
from ..kit import callee_name, calls_in, dotted, fact_for, one_line

_LOSS_NAME = re.compile(r"loss|cost|err|objective|risk|nll|mse|bce", re.IGNORECASE)


# -- the failing statement --

@dataclass(frozen=True)
class Site:
    """The failing statement and the backward()/autograd.grad call in it, if there is exactly one."""

    tree: ast.Module
    stmt: ast.stmt
    call: Optional[ast.Call]
    receiver: Optional[ast.expr]  # `loss` in `loss.backward()`, the first argument of autograd.grad
    method: bool  # `x.backward()` (not torch.autograd.backward / grad)

    @staticmethod
    def find(ctx: RuleContext) -> Optional["Site"]:
        lineno = ctx.record.error_lineno
        tree = cell_tree(ctx.record.source) if lineno else None
        stmt = enclosing_statement(tree, lineno) if tree is not None else None
        if stmt is None:
            return None
        found = [c for c in calls_in(stmt) if backward_receiver(c) is not None]
        if len(found) != 1:
            return Site(tree, stmt, None, None, False)
        receiver, method = backward_receiver(found[0])
        owner = ctx.names.lookup(dotted(receiver) or "") if method else None
        if owner is not None and not isinstance(owner, torch.Tensor) and found[0].args:
            receiver = found[0].args[0]  # NB: `accelerator.backward(loss)`, Fabric's too: the loss is the argument
        return Site(tree, stmt, found[0], receiver, method)


def backward_receiver(call: ast.Call) -> Optional[Tuple[ast.expr, bool]]:
    """(what `call` differentiates, whether it is `x.backward()`) for a backward()/autograd.grad call."""
    func = call.func
    name = callee_name(call)
    owner = dotted(func.value) if isinstance(func, ast.Attribute) else None
    if name in ("backward", "grad") and owner and owner.split(".")[-1] == "autograd" or \
            name == "grad" and isinstance(func, ast.Name):
        # NB: not kit.argument: a starred first argument (`autograd.backward(*losses)`) is still the receiver
        first = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg in ("outputs", "tensors")), None)
        return (first, False) if first is not None else None
    if name == "backward" and isinstance(func, ast.Attribute):
        return func.value, True
    return None


def named_fact(ctx: RuleContext, name: Optional[str]) -> Optional[TensorFact]:
    """The fact of the tensor or module a dotted name holds (an inference tensor's too), else None."""
    return fact_for(name, ctx.names.lookup(name)) if name else None


def names_in(node: Optional[ast.AST], ctx_type: type = ast.Load) -> Set[str]:
    """The plain names `node` reads (or, with ast.Store, binds)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx_type)} \
        if node is not None else set()


def submodules(module: torch.nn.Module, most: int = 500) -> List[torch.nn.Module]:
    """The module and its children, breadth first, read from their `_modules` dicts (no method of theirs runs)."""
    found: List[torch.nn.Module] = []
    todo, seen = [module], set()
    while todo and len(found) < most:
        m = todo.pop(0)
        if id(m) in seen:
            continue
        seen.add(id(m))
        found.append(m)
        children = vars(m).get("_modules")
        todo += [c for c in (children.values() if isinstance(children, dict) else ()) if isinstance(c, torch.nn.Module)]
    return found


def alone_on_lines(ctx: RuleContext, stmt: ast.stmt) -> bool:
    """The statement is alone on its lines (no `;` neighbours), so whole lines can move."""
    first = ctx.record.source_line(stmt.lineno)
    last = ctx.record.source_line(stmt.end_lineno or stmt.lineno)
    rest = last.encode("utf-8")[stmt.end_col_offset or 0:].decode("utf-8", errors="ignore").strip()
    return stmt.col_offset == len(indent_of(first).encode("utf-8")) and (not rest or rest.startswith("#"))


# -- backward-non-scalar: the tensor backward() refused --

@dataclass(frozen=True)
class Refused:
    """The tensor of several elements backward() (or autograd.grad) was called on, as far as it is known."""

    site: Optional[Site]
    expr: str  # its text in the cell, "" when not known
    name: Optional[str]  # its dotted name, when it is one
    fact: Optional[TensorFact]
    shape: str  # "(4, 3)", "" when not known
    call: str  # "backward()" or "autograd.grad()"


def refused_tensor(ctx: RuleContext) -> Refused:
    site = Site.find(ctx)
    receiver = site.receiver if site else None
    expr = one_line(ctx.record.source, receiver) if site else ""
    name = dotted(receiver) if receiver is not None else None
    fact = named_fact(ctx, name)
    shape = fact.shape if fact else _failed_shape(ctx)
    call = "backward()" if site is None or site.method else "autograd.grad()"
    return Refused(site, expr, name, fact, shape, call)


def _failed_shape(ctx: RuleContext) -> str:
    """The shape of the tensor backward()/grad() refused, as the op tracker saw it ("" if it did not)."""
    for op in reversed(ctx.record.failed_ops):
        if op.name in ("backward", "grad") and op.lineno == ctx.record.error_lineno and op.targets:
            return shape_text(op.targets[0].shape)
    return ""


def reduction(ctx: RuleContext, refused: Refused) -> Tuple[str, str]:
    """("mean" | "sum", "") or ("", the catalog key saying why there is no fix)."""
    site, name = refused.site, refused.name
    if site is None or site.receiver is None or isinstance(site.receiver, (ast.List, ast.Tuple)):
        return "", ""
    if name and _made_with_reduction_none(ctx, site, name):
        return "", "backward.scalar.why_reduction_none"
    last = (name or "").split(".")[-1]
    return ("mean" if _LOSS_NAME.search(last) else "sum"), ""


def _made_with_reduction_none(ctx: RuleContext, site: Site, name: str) -> bool:
    """`loss = F.mse_loss(a, b, reduction="none")`, or a criterion built with reduction='none'."""
    before = [s for s in assignments_to(site.tree, name) if s.lineno <= site.stmt.lineno]
    value = getattr(before[-1], "value", None) if before else None
    for call in calls_in(value):
        if any(k.arg == "reduction" and isinstance(k.value, ast.Constant) and k.value.value == "none"
               for k in call.keywords):
            return True
        callee = dotted(call.func)
        module = ctx.names.lookup(callee) if callee else None
        if isinstance(module, torch.nn.Module) and module.__dict__.get("reduction") == "none":
            return True
    return False


# -- out-with-grad: the call given `out=` --

@dataclass(frozen=True)
class OutCall:
    """The one call of the failing statement given `out=`, and the tensors on the line that require grad."""

    site: Optional[Site]
    call: Optional[ast.Call]  # None when the line has none, or several
    out_node: Optional[ast.expr]
    out: str  # the text of `out=`'s value, "" when not known
    graded: Tuple[TensorFact, ...]


def out_call(ctx: RuleContext) -> OutCall:
    site = Site.find(ctx)
    calls: List[ast.Call] = [c for c in calls_in(site.stmt) if any(k.arg == "out" for k in c.keywords)] \
        if site else []
    call = calls[0] if len(calls) == 1 else None
    out_node = next(k.value for k in call.keywords if k.arg == "out") if call else None
    out = one_line(ctx.record.source, out_node) if call else ""
    graded = tuple(f for f in ctx.facts_on_line(ctx.record.error_lineno) if f.requires_grad and f.name != out)
    return OutCall(site, call, out_node, out, graded)
