"""Where the in-place op is written in the cell: `x += y`, `x.add_(y)`, `torch.relu_(x)`, `x[0] = 0`,
`ReLU(inplace=True)`, `F.relu(x, True)`, `out=x` -- the spot fix.py edits.

May touch: the cell's ast and source text; live objects through the NameIndex (is the receiver a torch
module? where does a callee take `inplace`?). Never runs user code; makes no fix and no sentence.
"""
from __future__ import annotations

import ast
import inspect
import types
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

import torch

from ...cell import cell_tree, enclosing_statement, segment
from ...record import OpEvent
from ..context import RuleContext
from ..kit import callee_name

# augmented assignment -> (the in-place op torch records, the operator)
AUG = {ast.Add: ("add_", "+"), ast.Sub: ("sub_", "-"), ast.Mult: ("mul_", "*"), ast.Div: ("div_", "/"),
       ast.FloorDiv: ("floor_divide_", "//"), ast.Mod: ("remainder_", "%"), ast.Pow: ("pow_", "**"),
       ast.BitAnd: ("__iand__", "&"), ast.BitOr: ("__ior__", "|"), ast.BitXor: ("__ixor__", "^"),
       ast.LShift: ("__ilshift__", "<<"), ast.RShift: ("__irshift__", ">>")}


@dataclass(frozen=True)
class InPlaceSpot:
    """Where the in-place op is written: `form` is augassign, element (`laterals[i] += y`, an item of a list or a
    dict), method, function, setitem, keyword (`inplace=True`), positional (`F.relu(x, True)`) or out."""

    form: str
    tree: ast.Module
    stmt: ast.stmt
    node: ast.AST  # the AugAssign, the Call, the Subscript, or the `True` of a keyword or positional flag
    target: Optional[str]  # the written tensor's expression (`x`, `self.h`), when it is a plain name
    twin: Optional[str] = None  # the out-of-place function (`add` for `add_`), when torch has one
    call: Optional[ast.Call] = None  # the call a keyword or positional flag is given to


def inplace_spot(ctx: RuleContext, event: OpEvent) -> Optional[InPlaceSpot]:
    """The spot of the recorded in-place op `event` on its line, or None when the line does not show it."""
    tree = cell_tree(ctx.record.source) if event.lineno else None
    stmt = enclosing_statement(tree, event.lineno) if tree is not None else None
    if stmt is None:
        return None
    src = ctx.record.source
    if event.how == "inplace=True":
        return _keyword_spot(ctx, tree, stmt, event.name)
    if event.how == "setitem":  # `x[0] = 0`, `x[0] += 1`
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        sub = next((t for t in targets if isinstance(t, ast.Subscript)), None)
        return InPlaceSpot("setitem", tree, stmt, sub, _plain(src, sub.value)) if sub else None
    if event.how == "out=":
        call = next((c for c in _calls(stmt) if any(k.arg == "out" for k in c.keywords)), None)
        out = next((k for k in call.keywords if k.arg == "out"), None) if call else None
        return InPlaceSpot("out", tree, stmt, call, _plain(src, out.value)) if out else None
    if isinstance(stmt, ast.AugAssign) and AUG.get(type(stmt.op), ("",))[0] == event.name:
        if isinstance(stmt.target, ast.Subscript) and not _tensor_setitem_on(ctx, event.lineno):
            return InPlaceSpot("element", tree, stmt, stmt, _plain(src, stmt.target.value))
        target = stmt.target.value if isinstance(stmt.target, ast.Subscript) else stmt.target
        return InPlaceSpot("augassign", tree, stmt, stmt, _plain(src, target))
    return _call_spot(ctx, tree, stmt, event.name)


def _tensor_setitem_on(ctx: RuleContext, lineno: Optional[int]) -> bool:
    """Whether a tensor's `__setitem__` ran on the line: `x[i] += y` on a tensor writes back into `x` (the
    tracker sees it); on a list (`laterals[i] += y`) only the element is written, in place."""
    return any(e.how == "setitem" and e.lineno == lineno for e in ctx.record.inplace_ops)


def _plain(src: str, node: Optional[ast.AST]) -> Optional[str]:
    """The text of `x` or `self.h` (a name or a chain of attributes on one), else None."""
    inner = node
    while isinstance(inner, ast.Attribute):
        inner = inner.value
    return segment(src, node) if isinstance(inner, ast.Name) else None


def _calls(stmt: ast.AST) -> Iterator[ast.Call]:
    return (n for n in ast.walk(stmt) if isinstance(n, ast.Call))


def _call_spot(ctx: RuleContext, tree: ast.Module, stmt: ast.stmt, name: str) -> Optional[InPlaceSpot]:
    """`x.add_(1)` (method) or `torch.relu_(x)` (function) on the statement."""
    calls = [c for c in _calls(stmt) if isinstance(c.func, ast.Attribute) and c.func.attr == name]
    if len(calls) != 1:
        return None
    call, src = calls[0], ctx.record.source
    owner = ctx.names.lookup(segment(src, call.func.value) or "")
    if isinstance(owner, types.ModuleType) and owner.__name__.startswith("torch"):
        twin = name[:-1] if callable(getattr(owner, name[:-1], None)) else None
        target = _plain(src, call.args[0]) if call.args else None
        return InPlaceSpot("function", tree, stmt, call, target, twin)
    twin = name[:-1] if name.endswith("_") and hasattr(torch.Tensor, name[:-1]) else None
    return InPlaceSpot("method", tree, stmt, call, _plain(src, call.func.value), twin)


def _keyword_spot(ctx: RuleContext, tree: ast.Module, stmt: ast.stmt, op: str) -> Optional[InPlaceSpot]:
    """`inplace=True` (or a positional `True` where the callee takes `inplace`) on the line, else the one
    `ReLU(inplace=True)` in the cell that made this op."""
    def flagged(where: ast.AST) -> List[Tuple[ast.Call, ast.AST, str]]:
        found = []
        for c in _calls(where):
            if callee_name(c).lower().replace("_", "") != op.replace("_", ""):
                continue
            k = next((k for k in c.keywords if k.arg == "inplace"), None)
            flag = k.value if k is not None else _positional_flag(ctx, c)
            if isinstance(flag, ast.Constant) and flag.value is True:
                found.append((c, flag, "keyword" if k is not None else "positional"))
        return found

    here = flagged(stmt)
    if len(here) != 1:
        here = flagged(tree)
    if len(here) != 1:
        return None
    src = ctx.record.source
    args = {_plain(src, c.args[0]) for c in _calls(stmt) if c.args} - {None}
    call, flag, form = here[0]
    return InPlaceSpot(form, tree, stmt, flag, args.pop() if len(args) == 1 else None, call=call)


def _positional_flag(ctx: RuleContext, call: ast.Call) -> Optional[ast.AST]:
    """The argument `call` passes at the callee's `inplace` position (`F.relu(x, True)`, `F.dropout(x, p,
    training, True)`), when the callee is known and takes one."""
    callee = ctx.names.lookup(segment(ctx.record.source, call.func) or "")
    try:
        index = list(inspect.signature(callee).parameters).index("inplace") if callable(callee) else -1
    except (ValueError, TypeError):
        return None
    if 0 <= index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return call.args[index]
    return None
