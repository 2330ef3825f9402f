"""backward-twice across frames and cells: the backward() that failed runs in a helper (`train_step`, cells
up) while the graph it reaches back into was carried by the caller's loop, passed in by the caller, left by
an earlier cell, or kept on a module (`self.hidden`, assigned in `forward`).

`twice_found` reads the run from the rule's view -- the statement that calls backward(), or a call that led
to it -- and a view that finds no cause yields to a frame that called it and finds one (the engine tries
those next). May touch: the cells' ast and text, the traceback's frames and their variables; of live objects
only whether tensors have a grad_fn, their identity, and modules' own attributes (no user code runs). No
wording.
"""
from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Tuple

import torch

from ...cell import assignments_to, cell_tree, enclosing_statement
from ..context import RuleContext
from ..kit import dotted, function_around, one_line, scope_statements, starts_line
from ..places import method_place, root, view_on
from ...growing import node_key
from ..traced import failing_operands
from .causes import Cause, DetachAt, Drop, State
from .culprit import Site, alone_on_lines, names_in, submodules
from .culprit_twice import has_graph, in_loop, state_of, twice_cause


@dataclass(frozen=True)
class Found:
    """What one view tells: its failing statement, the backward() call (here or in a frame it called), the
    cause when it finds one."""

    site: Optional[Site]
    bctx: RuleContext  # the view whose statement calls backward(): this one, or an inner frame's
    backward: Optional[Site]
    cause: Optional[Cause]


def twice_found(ctx: RuleContext) -> Optional[Found]:
    """The cause as this view sees it; None when it sees none and a frame that called it does."""
    found = _found_here(ctx)
    if found.cause is None and any(_found_here(v).cause is not None for v in _outer_views(ctx)):
        return None
    return found


def _found_here(ctx: RuleContext) -> Found:
    site = Site.find(ctx)
    if site is None:
        return Found(None, ctx, None, None)
    if site.receiver is not None:
        cause = twice_cause(ctx, site) or _module_state(ctx, site) or _earlier_cell(ctx, site, site.receiver)
        return Found(site, ctx, site, cause)
    inner = _inner_backward(ctx)
    if site.call is not None:
        return Found(site, ctx, None, None)
    if inner is None:  # NB: a library ran backward() (Lightning's fit): a state the model keeps is still the user's
        return Found(site, ctx, None, _module_state(ctx, site) or _backward_before(ctx))
    # NB: the call that led to backward() reads what its graph was built from: its arguments, the state
    read = getattr(site.stmt, "value", None) or site.stmt
    cause = twice_cause(ctx, dataclasses.replace(site, receiver=read)) or _passed_in(ctx, site, read, inner) \
        or _earlier_cell(ctx, site, read)
    return Found(site, inner[0], inner[1], cause)


# -- the frames around a view --

def _outer_views(ctx: RuleContext) -> List[RuleContext]:
    """The frames that called this view's, innermost first, then the running cell."""
    focus, top = ctx.record.focus, root(ctx)
    frames = list(top.record.frames)
    at = next((i for i, f in enumerate(frames) if f is focus), None)
    if focus is None or at is None:
        return []
    return [top.view(f) for f in reversed(frames[:at]) if f.site.filename != top.record.filename] + [top]


def _inner_backward(ctx: RuleContext) -> Optional[Tuple[RuleContext, Site]]:
    """The innermost frame called from this view's whose statement calls backward(), with that statement."""
    focus, top = ctx.record.focus, root(ctx)
    frames = list(top.record.frames)
    at = next((i for i, f in enumerate(frames) if f is focus), -1)
    for frame in reversed(frames[at + 1:]):
        if frame.site.filename == top.record.filename:
            continue
        view = top.view(frame)
        site = Site.find(view)
        if site is not None and site.receiver is not None:
            return view, site
    return None


# -- a graph the caller passed in --

def _passed_in(ctx: RuleContext, site: Site, read: ast.AST, inner: Tuple[RuleContext, Site]) -> Optional[Cause]:
    """The tensor the helper backpropagates is one this statement passes it, computed once before."""
    bctx, backward = inner
    wanted = bctx.names.lookup(dotted(backward.receiver) or "")
    if not isinstance(wanted, torch.Tensor):
        return None
    passed = next((n for n in sorted(names_in(read)) if ctx.names.lookup(n) is wanted), None)
    if passed is None:
        return None
    made = [s.lineno for s in assignments_to(site.tree, passed) if s.lineno < site.stmt.lineno]
    lines = tuple(sorted({*made[-1:], site.stmt.lineno}))
    key = "backward.twice.why_passed_loop" if in_loop(backward) else "backward.twice.why_passed"
    params = {"graph": f"`{passed}`", "function": f"`{bctx.record.focus.site.function}`"}
    return Cause(key, lines, (passed,), params)


# -- a state or graph left by an earlier cell --

def _earlier_cell(ctx: RuleContext, site: Site, read: ast.AST) -> Optional[Cause]:
    """A tensor this cell reads before it binds it, still attached to a graph an earlier cell's backward()
    freed: a recurrent state (`out, h = rnn(x, h)`) to detach, or a forward pass to run again."""
    if ctx.elsewhere:
        return None
    before = [s for s in scope_statements(site.tree) if s.lineno <= site.stmt.lineno]
    need, states, graphs = set(names_in(read)), [], []
    for stmt in reversed(before):
        if names_in(stmt, ast.Store) & need and isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            need |= names_in(stmt.value)
    for name in sorted(need):
        if not has_graph(ctx.names.lookup(name)):
            continue
        bound = [s for s in assignments_to(site.tree, name) if s.lineno <= site.stmt.lineno]
        if not bound:
            graphs.append(name)
        elif name in names_in(getattr(bound[0], "value", None)) or _read_before(before, name, bound[0].lineno):
            states.append(name)
    # NB: a tensor this cell never binds surely held its graph before the cell ran; a rebound state may not have
    if states and not graphs and not in_loop(site):
        return _detach_state(ctx, site, before, states)
    if graphs:
        first = min(s.lineno for s in before if set(graphs) & names_in(s))
        return Cause("backward.twice.why_earlier_graph", (first,), tuple(graphs),
                     {"graph": tuple(f"`{n}`" for n in graphs), "lineno": first})
    return None


def _read_before(statements: List[ast.stmt], name: str, lineno: int) -> bool:
    return any(s.lineno < lineno and name in names_in(s) for s in statements)


def _detach_state(ctx: RuleContext, site: Site, before: List[ast.stmt], names: List[str]) -> Cause:
    """`h = h.detach()` before the top-level statement that first reads the state."""
    first = min(s.lineno for s in before if set(names) & names_in(s))
    stmt = next(s for s in site.tree.body if s.lineno <= first <= (s.end_lineno or s.lineno))
    states = tuple(state_of(ctx, site.tree, n, stmt.lineno) for n in names)
    params = {"state": tuple(f"`{n}`" for n in names), "lineno": first}
    fits = alone_on_lines(ctx, stmt) and starts_line(ctx.record.source, stmt)
    return Cause("backward.twice.why_earlier_state", (first,), tuple(names), params,
                 DetachAt(stmt, states) if fits else None)


# -- a state a module keeps on itself --

def _module_state(ctx: RuleContext, site: Site) -> Optional[Cause]:
    """A module reached from what this scope reads keeps a tensor with a graph as a plain attribute, and one of
    its methods assigns that attribute from its own previous value (`out, self.hidden = self.lstm(x,
    self.hidden)`): each forward continues the previous step's graph."""
    scope = function_around(site.tree, site.stmt.lineno)
    carried = []  # NB: every state the module carries on: (view, stmt, first read, its State), in attribute order
    for module, attr, value in _kept_states(ctx, sorted(names_in(scope))):
        found = _carrying_statement(ctx, type(module), attr)
        if found is None or carried and carried[0][3] is not module:
            continue
        view, stmt, owner, first_read = found
        container = "tuple" if isinstance(value, tuple) else "list" if isinstance(value, list) else ""
        name = f"{owner}.{attr}"
        starts_none = any(_sets_none(s, owner, attr) for s in ast.walk(cell_tree(view.record.source)))
        carried.append((view, stmt, first_read, module, State(name, container, starts_none)))
    if not carried:
        return None
    view, stmt, first_read, _, _ = carried[0]
    # NB: the states whose old graph is cut at the same statement go in one fix: cutting one of two (an attention
    # memory's `M` and `z`) leaves the other's graph, and backward() reaches it again
    states = tuple(c[4] for c in carried if c[0].record.filename == view.record.filename
                   and c[2].lineno == first_read.lineno)
    fits = alone_on_lines(view, first_read) and starts_line(view.record.source, first_read) and \
        len(states) == len(carried)
    params = {"state": tuple(f"`{s.name}`" for s in states), "lineno": stmt.lineno,
              "function": f"`{view.record.focus.site.function}`" if view.elsewhere else "`forward`"}
    remedy = DetachAt(first_read, states) if fits else None
    # NB: the line where forward first reads the state is shown too when the fix goes there
    lines = (stmt.lineno,) if remedy is None or first_read.lineno <= stmt.lineno else (stmt.lineno, first_read.lineno)
    return Cause("backward.twice.why_module_state", lines, (), params, remedy, view)


def _kept_states(ctx: RuleContext, names: List[str]) -> Iterator[Tuple[Any, str, Any]]:
    """(module, attribute, value) for each plain attribute of a module (or of its children) that holds a
    tensor with a graph, or a tuple or list of them; parameters and buffers are not plain attributes."""
    seen = set()
    for name in names:
        top = ctx.names.lookup(name)
        if not isinstance(top, torch.nn.Module):
            continue
        for module in submodules(top):
            if id(module) in seen:
                continue
            seen.add(id(module))
            for attr, value in list(vars(module).items()):
                items = value if isinstance(value, (tuple, list)) else (value,)
                if not attr.startswith("_") and items and all(isinstance(t, torch.Tensor) for t in items) \
                        and not isinstance(value, torch.nn.Parameter) and has_graph(value):
                    yield module, attr, value


def _carrying_statement(ctx: RuleContext, cls: type, attr: str
                        ) -> Optional[Tuple[RuleContext, ast.stmt, str, ast.stmt]]:
    """The statement of one of the module's methods (`forward` first, then the others its class defines:
    Lightning's `training_step`) that assigns `self.<attr>` after the method read it, and the first statement
    that read it (where the old graph is cut off)."""
    names = ["forward"] + [n for k in _user_classes(cls) for n, v in vars(k).items()
                           if n not in ("forward", "__init__") and callable(v)]
    for name in dict.fromkeys(names):
        place = method_place(ctx, cls, name)
        if place is None:
            continue
        args = place.node.args.args
        owner = args[0].arg if args else "self"
        for stmt in scope_statements(place.node):
            if not isinstance(stmt, ast.Assign) or \
                    not any(_is_attr(n, owner, attr) for t in stmt.targets for n in ast.walk(t)):
                continue
            read = [s for s in scope_statements(place.node) if s.lineno <= stmt.lineno
                    and any(_is_attr(n, owner, attr) and isinstance(n.ctx, ast.Load)
                            for n in ast.walk(s.value if s is stmt else s))]
            if read:
                view = view_on(ctx, place.ctx.record.filename, stmt.lineno)
                first = _read_by_forward(ctx, cls, attr, place) if name != "forward" else None
                return (view, stmt, owner, first or read[0]) if view is not None else None
    return None


def _read_by_forward(ctx: RuleContext, cls: type, attr: str, carrier: Any) -> Optional[ast.stmt]:
    """The statement of `forward`'s own body that first reads `self.<attr>`, itself or through a method of the
    class that reads it (an attention memory read by `_retrieve` before `_update` assigns it): the old graph
    is cut there, before any read of the step. None when `forward` is in another file than the carrier."""
    place = method_place(ctx, cls, "forward")
    if place is None or place.ctx.record.filename != carrier.ctx.record.filename:
        return None
    args = place.node.args.args
    owner = args[0].arg if args else "self"
    readers = {n for k in _user_classes(cls) for n, v in vars(k).items() if callable(v) and n != "forward"
               and (m := method_place(ctx, cls, n)) is not None and m.ctx.record.filename == place.ctx.record.filename
               and any(_is_attr(x, m.node.args.args[0].arg if m.node.args.args else "self", attr)
                       and isinstance(x.ctx, ast.Load) for x in ast.walk(m.node))}
    for stmt in place.node.body:
        for node in ast.walk(stmt):
            if _is_attr(node, owner, attr) and isinstance(node.ctx, ast.Load) or isinstance(node, ast.Call) and \
                    isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and \
                    node.func.value.id == owner and node.func.attr in readers:
                return stmt
    return None


def _user_classes(cls: type) -> List[type]:
    """The classes of `cls`'s MRO below torch's and Lightning's own (the user's)."""
    found = []
    for klass in cls.__mro__:
        module = vars(klass).get("__module__", "")
        if module.split(".")[0] in ("torch", "lightning", "pytorch_lightning", "builtins"):
            break
        found.append(klass)
    return found


def _backward_before(ctx: RuleContext) -> Optional[Cause]:
    """A backward() the user's code ran on the same graph before the library's (a `loss.backward()` in
    Lightning's `training_step`, which Lightning makes itself on what the step returns), as the run recorded
    it (provenance.Lineage.backwards): that statement, to delete."""
    top = root(ctx)
    lineage = top.record.lineage
    failing = failing_operands(ctx)[:1]
    if lineage is None or not failing:
        return None
    for key, frames in reversed(lineage.backwards):
        if not frames or not _same_graph(failing[0], key):
            continue
        filename, lineno = frames[0]
        view = view_on(top, filename, lineno)
        tree = cell_tree(view.record.source) if view is not None else None
        stmt = enclosing_statement(tree, lineno) if tree is not None else None
        if stmt is None:
            return None
        remedy = Drop(stmt) if isinstance(stmt, ast.Expr) else None
        params = {"code": f"`{one_line(view.record.source, stmt)}`", "lineno": lineno,
                  "function": f"`{view.record.focus.site.function}`" if view.elsewhere else "`<module>`"}
        return Cause("backward.twice.why_backward_before", (lineno,), (), params, remedy, view)
    return None


def _same_graph(t: torch.Tensor, key: Tuple[str, int], depth: int = 4) -> bool:
    """The backward node `key` is `t`'s, or among the nodes it reaches in a few steps (`loss / n` of the loss)."""
    nodes = [t.grad_fn] if t.grad_fn is not None else []
    for _ in range(depth):
        if any(node_key(n) == key for n in nodes):
            return True
        nodes = [f for n in nodes for f, _ in n.next_functions if f is not None]
    return False


def _is_attr(node: ast.AST, owner: str, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) and \
        node.value.id == owner


def _sets_none(node: ast.AST, owner: str, attr: str) -> bool:
    """`self.hidden = None`: the state starts as None."""
    return isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is None \
        and any(_is_attr(t, owner, attr) for t in node.targets)
