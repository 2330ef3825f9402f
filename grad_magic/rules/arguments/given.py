"""The value of the wrong type and the user's argument that held it, read from the traceback: never by running
code. torch's frames say which value the C function got (its argument at the message's position, in the
innermost frame); the user's frame says which of its call's arguments held that value (by identity).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Optional, Tuple

from ...cell import cell_tree
from ..context import RuleContext
from ..kit import function_around
from ..places import root, view_on
from ..tb import UNKNOWN, call_at, entries_of, file_tree, value_in
from .message import BadArgument


@dataclass(frozen=True)
class Given:
    """The user's call that passed the value: the view on its cell or file, that cell's tree, the call, the
    argument expression that held the value (None: not one of the call's own), the value (UNKNOWN: not held)."""

    ctx: RuleContext
    tree: ast.Module
    call: ast.Call
    argument: Optional[ast.expr]
    value: Any
    direct: bool  # the user's line called torch's function itself (no torch frame in between)
    frame: Any = field(default=None, compare=False, repr=False)  # the user's frame that made the call

    @property
    def lineno(self) -> int:
        return self.call.lineno


def given(ctx: RuleContext, err: BadArgument) -> Optional[Given]:
    entries = entries_of(ctx.exception)
    top = root(ctx)
    sources = top.record.sources
    users = [i for i, e in enumerate(entries) if e.tb_frame.f_code.co_filename == top.record.filename
             or sources is not None and sources.is_user(e.tb_frame.f_code.co_filename)]
    if not users:
        return None
    entry = entries[users[-1]]
    view, tree, call = _call_of(ctx, entry)
    if call is None:
        return None
    if entry is entries[-1]:
        arg = _argument(call, err)
        found = Given(view, tree, call, arg, value_in(entry.tb_frame, arg), True, entry.tb_frame)
    else:
        inner = entries[-1]
        inner_call = call_at(file_tree(inner.tb_frame.f_code.co_filename), inner)
        value = value_in(inner.tb_frame, _argument(inner_call, err)) if inner_call is not None else UNKNOWN
        arg = _holding(entry.tb_frame, call, value) or _bound_to(entries[users[-1] + 1].tb_frame, call, value)
        found = Given(view, tree, call, arg, value, False, entry.tb_frame)
    for outer in reversed(users[:-1]):  # NB: a parameter passed on as it came: the caller's argument made it
        if not _passed_on(found):
            break
        step = _given_at(ctx, entries[outer], found.value)
        if step is None or step.argument is None:
            break
        found = step
    return found


def _holding(frame: Any, call: ast.Call, value: Any) -> Optional[ast.expr]:
    """The one argument of `call` that holds `value` in `frame` (identity); a call's only argument when none
    is known to."""
    args = [*call.args, *(k.value for k in call.keywords)]
    held = [a for a in args if value is not UNKNOWN and value_in(frame, a) is value]
    return held[0] if len(held) == 1 else args[0] if len(args) == 1 and not held else None


def _bound_to(callee: Any, call: ast.Call, value: Any) -> Optional[ast.expr]:
    """The call's positional argument that the called frame got `value` in: `Module.__call__`'s `*args`, or a
    parameter of a plain function (identity; `self` left out)."""
    if value is UNKNOWN or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    local = callee.f_locals
    code = callee.f_code
    names = list(code.co_varnames[:code.co_argcount])
    values = list(local.get("args", ())) if code.co_flags & 0x04 and isinstance(local.get("args"), tuple) else \
        [local.get(n, UNKNOWN) for n in names[1 if names[:1] == ["self"] else 0:]]
    at = [i for i, v in enumerate(values) if v is value]
    return call.args[at[0]] if len(at) == 1 and at[0] < len(call.args) else None


def _call_of(ctx: RuleContext, entry: Any) -> Tuple[Any, Any, Optional[ast.Call]]:
    """The view on the entry's cell or file, its tree, and the call at the instruction that raised there."""
    view = view_on(ctx, entry.tb_frame.f_code.co_filename, entry.tb_lineno)
    tree = cell_tree(view.record.source) if view is not None else None
    return view, tree, call_at(tree, entry) if tree is not None else None


def _given_at(ctx: RuleContext, entry: Any, value: Any) -> Optional[Given]:
    view, tree, call = _call_of(ctx, entry)
    if call is None or value is UNKNOWN:
        return None
    args = [*call.args, *(k.value for k in call.keywords)]
    held = [a for a in args if value_in(entry.tb_frame, a) is value]
    return Given(view, tree, call, held[0], value, False, entry.tb_frame) if len(held) == 1 else None


def _passed_on(g: Given) -> bool:
    """The argument is a parameter of the function it is passed in, not bound again before the call."""
    if not isinstance(g.argument, ast.Name) or g.value is UNKNOWN:
        return False
    scope = function_around(g.tree, g.lineno)
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    params = {a.arg for a in (*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs)}
    bound = any(isinstance(t, ast.Name) and t.id == g.argument.id and t.lineno < g.lineno
                and isinstance(t.ctx, ast.Store) for t in ast.walk(scope))
    return g.argument.id in params and not bound


def _argument(call: Optional[ast.Call], err: BadArgument) -> Optional[ast.expr]:
    if call is None:
        return None
    named = [k.value for k in call.keywords if err.name and k.arg == err.name]
    if named:
        return named[0]
    if err.position is not None and err.position < len(call.args) and \
            not any(isinstance(a, ast.Starred) for a in call.args[:err.position + 1]):
        return call.args[err.position]
    return None


def local_value(g: Given, node: Optional[ast.AST]) -> Any:
    """What `node` (a name or dict-held attribute chain) holds in the frame of the user's call."""
    return value_in(g.frame, node) if g.frame is not None else UNKNOWN
