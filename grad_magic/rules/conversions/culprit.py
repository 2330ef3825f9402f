"""The conversions family's culprits: where on the failing line a tensor was turned into a NumPy array.

Whether the conversion happened on the cell's own line or inside a library it called (the traceback's file
names only), the expressions the failing statement evaluates, and the tensors converted there (`Conversion`).
May touch: the traceback's file names, the cell's ast and text, the NameIndex -- tensors are known by name,
metadata only; array makers (np.array, ...) by identity. Never runs user code; no wording.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

import torch

from ...cell import body_of, cell_tree, enclosing_statement
from ..context import RuleContext
from ..kit import lookup, one_line, text_of

try:  # NB: numpy is optional for torch, and so for grad_magic
    import numpy as np
except ImportError:  # pragma: no cover - without numpy nothing in a cell can call np.array
    np = None
# NB: known by identity: reading `__name__` or `__module__` of a user object could run its code
_ARRAY_MAKERS = frozenset(id(f) for f in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray,
                                          np.asfortranarray)) if np is not None else frozenset()
# NB: the package grad_magic, two folders up from rules/conversions/
_INTERNALS = tuple(os.path.dirname(m.__file__) + os.sep for m in (torch, np) if m is not None) + (
    os.path.dirname(os.path.dirname(os.path.dirname(__file__))) + os.sep,)


# -- where the conversion happened --

def converted_on_the_line(ctx: RuleContext) -> bool:
    """True when, after the cell's innermost frame, the traceback runs only through torch, numpy and
    grad_magic: the conversion is on the cell's line, not inside a library the line called."""
    tb, after = getattr(ctx.exception, "__traceback__", None), []
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        after = [] if name == ctx.record.filename else after + [name]
        tb = tb.tb_next
    return all(name.startswith(_INTERNALS) for name in after)


def statement_exprs(ctx: RuleContext, lineno: Optional[int]) -> Tuple[Optional[ast.stmt], List[ast.expr]]:
    """The statement on the failing line and the expressions it evaluates there (a compound statement's
    header only: `if t > 0:` gives `t > 0`, not its body)."""
    tree = cell_tree(ctx.record.source) if lineno else None
    stmt = enclosing_statement(tree, lineno) if tree is not None else None
    if stmt is None:
        return None, []
    if isinstance(stmt, (ast.If, ast.While)):
        return stmt, [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return stmt, [stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return stmt, [i.context_expr for i in stmt.items]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try)):
        return stmt, []
    return stmt, [n for n in ast.iter_child_nodes(stmt) if isinstance(n, ast.expr)]


# -- numpy conversions --

@dataclass(frozen=True)
class Conversion:
    """One tensor turned into an array on the failing line: `x.numpy()`, `np.array(x)`, `plot(x)`."""

    node: ast.expr  # the tensor expression converted
    text: str
    call: str  # how: "numpy()", "np.asarray", "plot"
    tensor: Optional[torch.Tensor]  # when `node` names a tensor


def refused_conversions(ctx: RuleContext, refused: Callable[[torch.Tensor], bool]) -> Tuple[bool, List[Conversion]]:
    """(whether the conversion is on the cell's line, the conversions there of tensors torch `refused` or
    not known by name). Inside a library only the tensors we can name are known to be the ones."""
    on_line = converted_on_the_line(ctx)
    lineno = ctx.record.error_lineno
    _, exprs = statement_exprs(ctx, lineno)
    found = [c for c in conversions(ctx, exprs, on_line) if c.tensor is None or refused(c.tensor)] if lineno else []
    if not on_line:
        found = [c for c in found if c.tensor is not None]
    return on_line, found


def conversions(ctx: RuleContext, exprs: Sequence[ast.expr], on_line: bool) -> List[Conversion]:
    """The conversions on the line, in source order. A call into a library (`on_line` False) counts only
    with tensors passed by name."""
    found: List[Conversion] = []
    for call in sorted((n for e in exprs for n in ast.walk(e) if isinstance(n, ast.Call)),
                       key=lambda n: (n.lineno, n.col_offset)):
        func = text_of(ctx.record.source, call.func)
        if isinstance(call.func, ast.Attribute) and call.func.attr == "numpy":
            if not any(k.arg == "force" for k in call.keywords):
                found.append(_conversion(ctx, call.func.value, "numpy()"))
            continue
        # NB: an expression (`np.array(a * b)`) counts only as the first argument of an array maker on the line
        maker = on_line and id(lookup(ctx, call.func)) in _ARRAY_MAKERS
        for i, arg in enumerate(_arguments(call)):
            value = lookup(ctx, arg)
            if isinstance(value, torch.Tensor) or (maker and i == 0 and value is None):
                found.append(_conversion(ctx, arg, func))
    return found


def _conversion(ctx: RuleContext, node: ast.expr, call: str) -> Conversion:
    value = lookup(ctx, node)
    return Conversion(node, one_line(ctx.record.source, node), call,
                      value if isinstance(value, torch.Tensor) else None)


def _arguments(call: ast.Call) -> Iterator[ast.expr]:
    """Positional and keyword arguments, and the items of a list or tuple passed (`np.stack([a, b])`)."""
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        if isinstance(arg, (ast.List, ast.Tuple)):
            yield from arg.elts
        elif not isinstance(arg, ast.Starred):
            yield arg


def sibling_conversions(ctx: RuleContext, found: Sequence[Conversion]) -> List[Conversion]:
    """The same conversions on the simple statements after the failing one in its block (`np.copy(w)`, then
    `np.copy(v)` ...), of tensors the frame holds that require grad: they would fail next, the same way."""
    lineno = ctx.record.error_lineno
    stmt, _ = statement_exprs(ctx, lineno)
    tree = cell_tree(ctx.record.source)
    calls = {c.call for c in found}
    block = (body_of(tree, stmt) or []) if tree is not None and stmt is not None else []
    more: List[Conversion] = []
    for later in block[block.index(stmt) + 1:] if stmt in block else []:
        if isinstance(later, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)):
            exprs = [n for n in ast.iter_child_nodes(later) if isinstance(n, ast.expr)]
            more += [c for c in conversions(ctx, exprs, True) if c.call in calls and c.tensor is not None
                     and c.tensor.requires_grad]
    return more
