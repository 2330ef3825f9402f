"""backward-twice's culprits: why a backward() ran into a graph an earlier backward() had freed.

Three causes, tried in this order: a state carried across loop iterations (`out, h = rnn(x, h)`), a graph
built once before the loop and backpropagated in every iteration, and an earlier backward() in the same
block. Each is a `Cause` (the catalog key that explains it, the lines and names it involves) with the
`Remedy` the fix applies, when the cell allows one. May touch: the cell's ast and text, the NameIndex (only
whether a name holds a tensor with a grad_fn, or a tuple or list of them). Never runs user code; no wording.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple, Union

import torch

from ...cell import assignments_to
from ..context import RuleContext
from ..kit import calls_in, dotted, one_line, scope_statements
from .culprit import Site, alone_on_lines, backward_receiver, names_in

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True)
class State:
    """A state one iteration hands to the next, to be detached."""

    name: str
    container: str  # "tuple" or "list" of tensors, "" for a tensor
    starts_none: bool  # `h = None` before the loop: the first iteration gets no state


@dataclass(frozen=True)
class Detach:
    """Remedy: `h = h.detach()` as the loop body's first statement."""

    loop: ast.stmt
    states: Tuple[State, ...]


@dataclass(frozen=True)
class Move:
    """Remedy: the statements that build the graph moved to the top of the loop body."""

    loop: ast.stmt
    moved: Tuple[ast.stmt, ...]


@dataclass(frozen=True)
class Retain:
    """Remedy: `retain_graph=True` on the earlier backward() call."""

    call: ast.Call
    first: str  # the text of what that call differentiates
    lineno: int


Remedy = Union[Detach, Move, Retain]


@dataclass(frozen=True)
class Cause:
    key: str  # catalog key of the explanation; key + "_title" is the card's title
    lines: Tuple[int, ...]
    names: Tuple[str, ...]
    params: Mapping[str, Any]
    remedy: Optional[Remedy] = None


def twice_cause(ctx: RuleContext, site: Site) -> Optional[Cause]:
    path = _path_to(site.tree, site.stmt)
    if path is None:
        return None
    loop_at = max((i for i, (owner, _, _) in enumerate(path) if isinstance(owner, _LOOPS)), default=None)
    if loop_at is not None:
        loop = path[loop_at][0]
        found = _carried_state(ctx, site, loop) or _graph_before_loop(ctx, site, loop, path[loop_at - 1]
                                                                       if loop_at else None)
        if found is not None:
            return found
    return _second_backward(ctx, site, path[-1])


# A path is [(owner, body, index)]: `owner.body[index]` leads to the failing statement (owner None: the cell).
PathStep = Tuple[Optional[ast.AST], List[ast.stmt], int]


def _path_to(tree: ast.Module, target: ast.stmt) -> Optional[List[PathStep]]:
    """From the innermost function (or the cell) down to `target`."""
    def walk(owner: Optional[ast.AST], body: List[ast.stmt], trail: List[PathStep]) -> Optional[List[PathStep]]:
        for i, stmt in enumerate(body):
            here = trail + [(owner, body, i)]
            if stmt is target:
                return here
            if stmt.lineno <= target.lineno <= (stmt.end_lineno or stmt.lineno):
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, field, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        found = walk(stmt, inner, [] if isinstance(stmt, _SCOPES) else here)
                        if found:
                            return found
                for handler in getattr(stmt, "handlers", []) or []:
                    found = walk(handler, handler.body, here)
                    if found:
                        return found
        return None

    return walk(None, tree.body, [])


def _assigns(loop: ast.AST) -> Dict[str, List[ast.stmt]]:
    """name -> the statements in the loop body that bind it (nested functions left out)."""
    found: Dict[str, List[ast.stmt]] = {}
    for stmt in scope_statements(loop):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
            stmt, (ast.AnnAssign, ast.AugAssign, ast.For)) else []
        for name in set().union(*(names_in(t, ast.Store) for t in targets)) if targets else ():
            found.setdefault(name, []).append(stmt)
    return found


def _has_graph(value: Any) -> bool:
    items = value if isinstance(value, (tuple, list)) else (value,)
    return any(isinstance(t, torch.Tensor) and t.grad_fn is not None for t in items[:8])


def _feeds(site: Site, assigned: Dict[str, List[ast.stmt]]) -> Set[str]:
    """The names the receiver is computed from, inside the loop (itself included)."""
    feeds: Set[str] = set()
    todo = list(names_in(site.receiver))
    while todo:
        name = todo.pop()
        if name in feeds:
            continue
        feeds.add(name)
        for stmt in assigned.get(name, ()):
            todo.extend(names_in(getattr(stmt, "value", None)))
    return feeds


# -- a state carried across iterations --

def _carried_state(ctx: RuleContext, site: Site, loop: ast.AST) -> Optional[Cause]:
    """A tensor with a graph that one iteration hands to the next (`out, h = rnn(x, h)`) and that feeds the
    backward: the next backward runs into the previous iteration's freed graph."""
    assigned = _assigns(loop)
    carried = []
    for name in sorted(_feeds(site, assigned) & set(assigned)):
        first = min(assigned[name], key=lambda s: s.lineno)
        reads = [n for s in scope_statements(loop) for n in ast.walk(getattr(s, "value", s))
                 if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        early = any(n.lineno < first.lineno for n in reads) or name in names_in(getattr(first, "value", None))
        if early and _has_graph(ctx.names.lookup(name)):
            carried.append(name)
    if not carried:
        return None
    states = tuple(_state(ctx, site, loop, n) for n in carried)
    made = min(assigned[carried[0]], key=lambda s: s.lineno).lineno
    return Cause("backward.twice.why_carried", (loop.lineno, made), tuple(carried),
                 {"state": tuple(f"`{n}`" for n in carried), "lineno": made, "loop": loop.lineno},
                 Detach(loop, states))


def _state(ctx: RuleContext, site: Site, loop: ast.AST, name: str) -> State:
    value = ctx.names.lookup(name)
    container = "tuple" if isinstance(value, tuple) else "list" if isinstance(value, list) else ""
    starts_none = any(_binds_none(s, name) for s in assignments_to(site.tree, name) if s.lineno < loop.lineno)
    return State(name, container, starts_none)


def _binds_none(stmt: ast.stmt, name: str) -> bool:
    """`h = None`, `h, c = None, None`: the state starts as None (the first iteration gets no state)."""
    pairs = []
    for target in getattr(stmt, "targets", [getattr(stmt, "target", None)]):
        value = getattr(stmt, "value", None)
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            pairs += list(zip(target.elts, value.elts))
        else:
            pairs.append((target, value))
    return any(isinstance(t, ast.Name) and t.id == name and isinstance(v, ast.Constant) and v.value is None
               for t, v in pairs)


# -- a graph built before the loop --

def _graph_before_loop(ctx: RuleContext, site: Site, loop: ast.AST,
                       outer: Optional[PathStep]) -> Optional[Cause]:
    """`loss` (or a tensor it is built on, `emb = C[xs]`) computed once before the loop and backpropagated in
    every iteration: move the statements that built that graph into the loop."""
    assigned = _assigns(loop)
    roots = sorted(n for n in _feeds(site, assigned) if n not in assigned and _has_graph(ctx.names.lookup(n)))
    if not roots:
        return None
    body, at = (outer[1], outer[2]) if outer is not None else (None, None)
    if body is None or body[at] is not loop:
        return None
    receiver = dotted(site.receiver)
    graph = receiver if receiver in roots else roots[0]
    key = "backward.twice.why_before_loop" if graph == receiver else "backward.twice.why_part_before_loop"
    moved = _graph_statements(ctx, body[:at], set(roots), set(assigned))
    made = next((s.lineno for s in reversed(body[:at]) if graph in names_in(s, ast.Store)), None)
    params = {"graph": f"`{graph}`", "lineno": made or "?", "loop": loop.lineno}
    if not moved or not _movable(ctx, body[body.index(moved[0]):at], moved, loop):
        return Cause(key, tuple(n for n in (made, loop.lineno) if n), (graph,), params)
    return Cause(key, (*(s.lineno for s in moved), loop.lineno), (graph,), params, Move(loop, tuple(moved)))


def _graph_statements(ctx: RuleContext, before: List[ast.stmt], need: Set[str], assigned: Set[str]) -> List[ast.stmt]:
    """The assignments before the loop that build `need` (and what they read), in source order: each binds
    only tensors with a graph, none that the loop binds again."""
    moved: List[ast.stmt] = []
    for stmt in reversed(before):
        targets = names_in(stmt, ast.Store) if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else set()
        if targets & need and all(_has_graph(ctx.names.lookup(t)) for t in targets) and not targets & assigned:
            moved.insert(0, stmt)
            need |= names_in(stmt.value)
    return moved


def _movable(ctx: RuleContext, between: List[ast.stmt], moved: List[ast.stmt], loop: ast.AST) -> bool:
    """Nothing left before the loop reads what moves; every moved statement owns its lines."""
    if not all(alone_on_lines(ctx, s) for s in [*moved, loop.body[0]]):
        return False
    if loop.body[0].lineno == loop.lineno:
        return False
    gone = set().union(*(names_in(s, ast.Store) for s in moved))
    header = loop.iter if isinstance(loop, (ast.For, ast.AsyncFor)) else loop.test
    return not any(names_in(s) & gone for s in between if s not in moved) and not names_in(header) & gone


# -- an earlier backward() in the same block --

def _second_backward(ctx: RuleContext, site: Site, step: PathStep) -> Optional[Cause]:
    """An earlier backward() in the same block went through the same graph and freed it."""
    _, body, at = step
    earlier = [(s, c) for s in body[:at] for c in calls_in(s) if backward_receiver(c) is not None]
    if not earlier:
        return None
    stmt, call = earlier[-1]
    receiver, method = backward_receiver(call)
    src = ctx.record.source
    params = {"first": one_line(src, receiver), "lineno": stmt.lineno}
    key = "backward.twice.why_same" if params["first"] == one_line(src, site.receiver) else \
        "backward.twice.why_second"
    stepped = any(isinstance(c.func, ast.Attribute) and c.func.attr == "step"
                  for s in body[body.index(stmt):at] for c in calls_in(s))
    if any(k.arg == "retain_graph" for k in call.keywords) or not method:
        return Cause(key, (stmt.lineno,), (), params)
    if stepped:  # NB: a GAN: the step in between changed weights the first graph saved; retain_graph won't do
        return Cause("backward.twice.why_stepped", (stmt.lineno,), (), params)
    return Cause(key, (stmt.lineno,), (), params, Retain(call, params["first"], stmt.lineno))
