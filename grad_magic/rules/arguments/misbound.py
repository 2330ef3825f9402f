"""A value passed by position into another parameter than the one it is named for: `model(input_ids,
attention_mask, labels)` where the model's forward takes `token_type_ids` third and `labels` sixth -- the tag ids
go into a 2-row token-type table and torch raises "index out of range in self".

Found from the run, never by reading names alone: the user's call in the traceback, the frame it called (the
first one whose own parameters take the call's positional arguments: a Module's `__call__` and decorators that
pass `*args` on are stepped over), the parameter that frame bound the argument to (identity), and the failing
torch call's own frame holding that same value (identity). The name only says where the value was meant to go:
the called function has a parameter of exactly the argument's name, and bound it elsewhere.
"""
from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from ...cell import cell_tree, node_span, segment
from ...edits import make_fix
from ...model import ERROR, Diagnosis, TextEdit
from ..context import RuleContext
from ..kit import quote
from ..places import user_entries, view_on
from ..tb import UNKNOWN, call_at, entries_of, value_in

_VARARGS = inspect.CO_VARARGS


@dataclass(frozen=True)
class Misbound:
    """Argument `index` of the user's `call` (a name) went into the parameter `bound`; the called function
    takes a parameter of the argument's own name. `after`: the call's positional arguments after it with the
    parameters they went into (they become keywords too, so that nothing else moves)."""

    ctx: RuleContext  # the view on the user's frame that made the call
    call: ast.Call
    index: int
    argument: ast.Name
    bound: str
    callee: str  # the called function's qualified name
    after: Tuple[Tuple[ast.expr, str], ...]


def misbound(ctx: RuleContext) -> Optional[Misbound]:
    entries = entries_of(ctx.exception)
    if not entries:
        return None
    innermost = entries[-1].tb_frame
    for user in reversed(user_entries(ctx)):
        at = entries.index(user)
        if at == len(entries) - 1:
            continue  # NB: the user's own line raised: no call of theirs bound anything
        found = _at(ctx, user, entries[at + 1:], innermost)
        if found is not None:
            return found
    return None


def _at(ctx: RuleContext, user: Any, inner: List[Any], innermost: Any) -> Optional[Misbound]:
    view = view_on(ctx, user.tb_frame.f_code.co_filename, user.tb_lineno)
    if view is None:
        return None
    call = call_at(cell_tree(view.record.source), user)
    if call is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    callee = _callee(inner, len(call.args))
    if callee is None:
        return None
    code = callee.f_code
    names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    positional = names[:code.co_argcount]
    shift = 1 if positional[:1] == ["self"] else 0
    held = set(map(id, innermost.f_locals.values()))
    for i, arg in enumerate(call.args):
        if not isinstance(arg, ast.Name) or i + shift >= len(positional):
            continue
        bound = positional[i + shift]
        if arg.id == bound or arg.id not in names or arg.id in positional[:i + shift + 1]:
            continue
        value = value_in(user.tb_frame, arg)
        if value is UNKNOWN or callee.f_locals.get(bound, UNKNOWN) is not value or id(value) not in held:
            continue  # NB: bound there (identity), and the very value the failing torch call holds
        if callee.f_locals.get(arg.id) is not None:
            continue  # NB: the parameter it is named for got a value of its own
        after = tuple((a, positional[j + shift]) for j, a in enumerate(call.args[i + 1:], i + 1)
                      if j + shift < len(positional))
        if len(after) != len(call.args) - i - 1:
            return None
        return Misbound(view, call, i, arg, bound, code.co_qualname, after)
    return None


def _callee(inner: List[Any], given: int) -> Optional[Any]:
    """The frame that bound the call's positional arguments to its own parameters: the first one that takes
    at least that many by name (a Module's `__call__` / `_call_impl` and wrappers that take `*args` pass them on)."""
    for entry in inner[:6]:
        code = entry.tb_frame.f_code
        names = code.co_varnames[:code.co_argcount]
        own = code.co_argcount - (1 if names[:1] == ("self",) else 0)
        if own >= given and not (code.co_flags & _VARARGS and own < given):
            return entry.tb_frame
    return None


def misbound_card(ctx: RuleContext, m: Misbound, kind: str) -> Diagnosis:
    """The card: the argument, the parameter it went into and the one it is named for; the fix passes it (and
    the positional arguments after it) by name."""
    at = m.ctx
    source = at.record.source
    callee = quote(segment(source, m.call.func) or m.callee)
    name = m.argument.id
    edits = [TextEdit(*node_span(source, m.argument), f"{name}={name}")]
    edits += [TextEdit(*node_span(source, a), f"{param}={segment(source, a)}") for a, param in m.after]
    fix = make_fix(source, edits, at.say("arguments.misbound.fix", lineno=m.call.lineno, name=name))
    params = dict(callee=callee, argument=quote(name), bound=quote(m.bound), position=m.index + 1,
                  function=quote(m.callee))
    return at.diagnosis(
        kind, ERROR, title=at.say("arguments.misbound.title", **params), summary=at.say("arguments.misbound.summary"),
        what=at.say("arguments.misbound.what", lineno=m.call.lineno, **params),
        why=at.say("arguments.misbound.why", **params), where=at.where(m.call.lineno), lines=[m.call.lineno],
        names=[name], tensors=at.facts_on_line(m.call.lineno), fix=fix)
