"""backward-twice's culprits in the view that calls backward(): why it ran into a graph an earlier backward()
had freed.

Tried in this order: a state carried across loop iterations (`out, h = rnn(x, h)`), each loss of a list
backpropagated in turn (`for loss in losses: loss.backward()`), a graph built once before the loop and
backpropagated in every iteration, and an earlier backward() in the same block (with an optimizer step in
between: a GAN whose first loss reads the generator's output undetached). Each is a `Cause` (causes.py) with
the `Remedy` the fix applies, when the cell allows one; causes across frames and cells are culprit_across.py's.
May touch: the cell's ast and text, the NameIndex (only whether a name holds a tensor with a grad_fn, or a
tuple or list of them; the leaves its graph's nodes reach) and optimizers' param_groups. Never runs user code;
no wording.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Set, Tuple

import torch

from ...cell import assignments_to
from ..context import RuleContext
from ..kit import calls_in, dotted, function_around, names_an_argument, one_line, optimizer_params, \
    scope_statements
from ..places import global_assignment, root
from ..traced import failing_operands
from .causes import Cause, Detach, DetachReads, Move, Recompute, Retain, State, Sum
from .culprit import Site, alone_on_lines, backward_receiver, names_in

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def twice_cause(ctx: RuleContext, site: Site) -> Optional[Cause]:
    path = path_to(site.tree, site.stmt)
    if path is None:
        return None
    loop_at = max((i for i, (owner, _, _) in enumerate(path) if isinstance(owner, _LOOPS)), default=None)
    if loop_at is not None:
        loop = path[loop_at][0]
        found = carried_state(ctx, site.tree, site.receiver, loop) or _each_loss(ctx, site, loop) or \
            _graph_before_loop(ctx, site, loop, path[loop_at - 1] if loop_at else None)
        if found is not None:
            return found
    return _second_backward(ctx, site, path[-1])


def in_loop(site: Site) -> bool:
    """Whether the failing statement is in a loop of its function (or of the cell)."""
    path = path_to(site.tree, site.stmt)
    return path is not None and any(isinstance(owner, _LOOPS) for owner, _, _ in path)


# A path is [(owner, body, index)]: `owner.body[index]` leads to the failing statement (owner None: the cell).
PathStep = Tuple[Optional[ast.AST], List[ast.stmt], int]


def path_to(tree: ast.Module, target: ast.stmt) -> Optional[List[PathStep]]:
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


def assigns(loop: ast.AST) -> Dict[str, List[ast.stmt]]:
    """name -> the statements in the loop body that bind it (nested functions left out)."""
    found: Dict[str, List[ast.stmt]] = {}
    for stmt in scope_statements(loop):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
            stmt, (ast.AnnAssign, ast.AugAssign, ast.For)) else []
        for name in set().union(*(names_in(t, ast.Store) for t in targets)) if targets else ():
            found.setdefault(name, []).append(stmt)
    return found


def has_graph(value: Any) -> bool:
    items = value if isinstance(value, (tuple, list)) else (value,)
    return any(isinstance(t, torch.Tensor) and t.grad_fn is not None for t in items[:8])


def feeds(node: Optional[ast.AST], assigned: Dict[str, List[ast.stmt]]) -> Set[str]:
    """The names `node` (the receiver of backward(), a call's arguments) is computed from, inside the loop
    (its own names included)."""
    feeds: Set[str] = set()
    todo = list(names_in(node))
    while todo:
        name = todo.pop()
        if name in feeds:
            continue
        feeds.add(name)
        for stmt in assigned.get(name, ()):
            todo.extend(names_in(getattr(stmt, "value", None)))
    return feeds


# -- a state carried across iterations --

def carried_state(ctx: RuleContext, tree: ast.Module, read: ast.AST, loop: ast.AST,
                  key: str = "backward.twice.why_carried") -> Optional[Cause]:
    """A tensor with a graph that one iteration hands to the next (`out, h = rnn(x, h)`) and that feeds the
    backward (`read`: its receiver, or the call that leads to it): the next backward runs into the previous
    iteration's freed graph."""
    assigned = assigns(loop)
    carried = []
    for name in sorted(feeds(read, assigned) & set(assigned)):
        first = min(assigned[name], key=lambda s: s.lineno)
        reads = [n for s in scope_statements(loop) for n in ast.walk(getattr(s, "value", s))
                 if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        early = any(n.lineno < first.lineno for n in reads) or name in names_in(getattr(first, "value", None))
        if early and has_graph(ctx.names.lookup(name)):
            carried.append(name)
    if not carried:
        return None
    states = tuple(state_of(ctx, tree, n, loop.lineno) for n in carried)
    made = min(assigned[carried[0]], key=lambda s: s.lineno).lineno
    return Cause(key, (loop.lineno, made), tuple(carried),
                 {"state": tuple(f"`{n}`" for n in carried), "lineno": made, "loop": loop.lineno},
                 Detach(loop, states))


def state_of(ctx: RuleContext, tree: ast.Module, name: str, before: int) -> State:
    """The state `name` as its live value shows it; it starts as None if the cell binds None to it before
    line `before`, or, when the cell does not bind it there, if the earlier cell that last bound it bound None
    (`h_state = None` in a cell of its own)."""
    value = ctx.names.lookup(name)
    container = "tuple" if isinstance(value, tuple) else "list" if isinstance(value, list) else ""
    before_loop = [s for s in assignments_to(tree, name) if s.lineno < before]
    earlier = global_assignment(root(ctx), name) if not before_loop else None
    starts_none = any(_binds_none(s, name) for s in before_loop + ([earlier.node] if earlier is not None else []))
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


# -- each loss of a list backpropagated in turn --

def _each_loss(ctx: RuleContext, site: Site, loop: ast.AST) -> Optional[Cause]:
    """`for loss in losses: loss.backward()`: the losses of one forward pass share its graph, and the first
    backward() frees it; one backward() of their sum gives each the same gradient."""
    target, receiver = getattr(loop, "target", None), site.receiver
    if not (isinstance(loop, ast.For) and isinstance(target, ast.Name) and isinstance(receiver, ast.Name)
            and receiver.id == target.id):
        return None
    losses = dotted(loop.iter)
    value = ctx.names.lookup(losses) if losses else None
    if not (isinstance(value, (tuple, list)) and value and all(isinstance(t, torch.Tensor) for t in value)
            and has_graph(value)):
        return None
    params = {"losses": f"`{losses}`", "loop": loop.lineno, "lineno": site.stmt.lineno}
    alone = len(loop.body) == 1 and loop.body[0] is site.stmt and isinstance(site.stmt, ast.Expr) and \
        site.stmt.value is site.call and not site.call.args and not site.call.keywords and not loop.orelse
    scope = function_around(site.tree, loop.lineno)
    remedy = Sum(loop, losses) if alone and not _read_after(scope, loop, target.id) else None
    return Cause("backward.twice.why_each", (loop.lineno, site.stmt.lineno), (losses,), params, remedy)


def _read_after(scope: ast.AST, loop: ast.stmt, name: str) -> bool:
    """Whether code after the loop reads its variable (a comprehension that binds the name again does not)."""
    def reads(node: ast.AST) -> bool:
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) and \
                any(name in names_in(g.target, ast.Store) for g in node.generators):
            return False
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            return True
        return any(reads(child) for child in ast.iter_child_nodes(node))

    end = loop.end_lineno or loop.lineno
    return any(reads(stmt) for stmt in scope_statements(scope) if stmt.lineno > end and stmt is not loop)


# -- a graph built before the loop --

def _graph_before_loop(ctx: RuleContext, site: Site, loop: ast.AST,
                       outer: Optional[PathStep]) -> Optional[Cause]:
    """`loss` (or a tensor it is built on, `emb = C[xs]`) computed once before the loop and backpropagated in
    every iteration: move the statements that built that graph into the loop."""
    assigned = assigns(loop)
    roots = sorted(n for n in feeds(site.receiver, assigned) if n not in assigned and has_graph(ctx.names.lookup(n))
                   and not names_an_argument(ctx, ast.Name(n, ast.Load()), site.stmt.lineno))
    if not roots:  # NB: a graph the caller passed in is explained from the caller's line (culprit_across)
        return None
    body, at = (outer[1], outer[2]) if outer is not None else (None, None)
    if body is None or body[at] is not loop:
        return None
    receiver = dotted(site.receiver)
    graph = receiver if receiver in roots else roots[0]
    key = "backward.twice.why_before_loop" if graph == receiver else "backward.twice.why_part_before_loop"
    moved = _graph_statements(ctx, body[:at], set(roots), set(assigned))
    made = next((s.lineno for s in reversed(body[:at]) if graph in names_in(s, ast.Store)), None)
    if made is None:  # NB: not made here: an earlier cell's (culprit_across)
        return None
    params = {"graph": f"`{graph}`", "lineno": made, "loop": loop.lineno}
    detached = _critic_reads(ctx, site, loop, graph) if graph != receiver else None
    if detached is not None:  # NB: a critic's loop over a generator's output made once: the loss reads it detached
        reads, opt = detached
        return Cause("backward.twice.why_before_loop_detach", (made, loop.lineno, *(r.lineno for r in reads)),
                     (graph,), {**params, "optimizer": f"`{opt}`"}, DetachReads(reads, site.stmt.lineno, True))
    if not moved or not _movable(ctx, body[body.index(moved[0]):at], moved, loop):
        return Cause(key, (made, loop.lineno), (graph,), params)
    return Cause(key, (*(s.lineno for s in moved), loop.lineno), (graph,), params, Move(loop, tuple(moved)))


def _graph_statements(ctx: RuleContext, before: List[ast.stmt], need: Set[str], assigned: Set[str]) -> List[ast.stmt]:
    """The assignments before the loop that build `need` (and what they read), in source order: each binds
    only tensors with a graph, none that the loop binds again."""
    moved: List[ast.stmt] = []
    for stmt in reversed(before):
        targets = names_in(stmt, ast.Store) if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else set()
        if targets & need and all(has_graph(ctx.names.lookup(t)) for t in targets) and not targets & assigned:
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
    steps = [c for s in body[body.index(stmt):at] for c in calls_in(s)
             if isinstance(c.func, ast.Attribute) and c.func.attr == "step"]
    if any(k.arg == "retain_graph" for k in call.keywords) or not method:
        return Cause(key, (stmt.lineno,), (), params)
    if steps:  # NB: a GAN: the step in between changed weights the first graph saved; retain_graph won't do
        return _shared_detached(ctx, site, body[:at], stmt, receiver, steps) or \
            Cause("backward.twice.why_stepped", (stmt.lineno,), (), params)
    if _weights_changed(ctx):  # NB: the same, seen in the run: the graph's weights changed in place since
        return _recomputed(ctx, site, body[:at], stmt, params) or \
            Cause("backward.twice.why_stepped", (stmt.lineno,), (), params)
    return Cause(key, (stmt.lineno,), (), params, Retain(call, params["first"], stmt.lineno))


def _weights_changed(ctx: RuleContext) -> bool:
    """Whether the run saw parameters of the failing backward()'s graph changed in place after the ops that read
    them (an optimizer's step, `p.add_(e_w)` under no_grad): retain_graph=True would only trade this error
    for "modified by an inplace operation"."""
    lineage = root(ctx).record.lineage
    operands = failing_operands(ctx)
    return lineage is not None and bool(operands) and bool(lineage.changed_leaves(operands[0]))


def _recomputed(ctx: RuleContext, site: Site, before: List[ast.stmt], first: ast.stmt,
                params: Dict[str, Any]) -> Optional[Cause]:
    """The second backward() reads one tensor the block made before the first (`output = model(images)`), with
    a call whose names are not bound again since: that call made again where the tensor is read."""
    at = before.index(first)
    reads = [n for n in ast.walk(site.receiver) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)] \
        if site.receiver is not None else []
    found = []
    for name in dict.fromkeys(n.id for n in reads):
        made = [s for s in before[:at] if isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
        later = before[before.index(made[-1]) + 1:] if made else []
        if made and isinstance(made[-1].value, ast.Call) and \
                not names_in(made[-1].value) & set().union(set(), *(names_in(s, ast.Store) for s in later)):
            found.append((name, made[-1]))
    if len(found) != 1:
        return None
    name, made = found[0]
    value = one_line(ctx.record.source, made.value)
    return Cause("backward.twice.why_recompute", (first.lineno, made.lineno), (name,),
                 {**params, "name": f"`{name}`", "made": made.lineno, "value": value},
                 Recompute(tuple(n for n in reads if n.id == name), value))


# -- a GAN's generator output, backpropagated by the discriminator's loss too --

def _shared_detached(ctx: RuleContext, site: Site, before: List[ast.stmt], first: ast.stmt,
                     receiver: ast.expr, steps: List[ast.Call]) -> Optional[Cause]:
    """One tensor (`fake`) feeds both losses, and the optimizer stepped after the first backward() holds none
    of the parameters behind it: the first loss should see it detached (`D(fake.detach())`), so that only
    the second backward() goes through its graph."""
    at = before.index(first)
    first_feeds, first_stmts = _block_feeds(receiver, before[:at])
    second_feeds, _ = _block_feeds(site.receiver, before)
    rebound = set().union(*(names_in(s, ast.Store) for s in before[at:])) if before[at:] else set()
    shared = [n for n in sorted(first_feeds & second_feeds - rebound)
              if isinstance(ctx.names.lookup(n), torch.Tensor) and has_graph(ctx.names.lookup(n))]
    if len(shared) != 1 or not _foreign(ctx, ctx.names.lookup(shared[0]), steps):
        return None
    made = max((i for i, s in enumerate(before[:at]) if shared[0] in names_in(s, ast.Store)), default=-1)
    reads = tuple(n for s in [*(s for s in first_stmts if before.index(s) > made), first]
                  for n in _graph_reads(s.value if s is not first else receiver) if n.id == shared[0])
    lines = tuple(sorted({first.lineno, *(r.lineno for r in reads)}))
    opt = dotted(steps[0].func.value)
    return Cause("backward.twice.why_stepped_shared", lines, (shared[0],),
                 {"first": one_line(ctx.record.source, receiver), "lineno": first.lineno,
                  "shared": f"`{shared[0]}`", "optimizer": f"`{opt}`"}, DetachReads(reads, first.lineno))


def _critic_reads(ctx: RuleContext, site: Site, loop: ast.AST, graph: str) -> Optional[Tuple[Tuple[ast.Name, ...], str]]:
    """The reads of `graph` that feed the loop's loss, when the optimizers the loop steps hold none of the
    parameters behind it; and the first of those optimizers."""
    steps = [c for s in scope_statements(loop) for c in calls_in(s)
             if isinstance(c.func, ast.Attribute) and c.func.attr == "step"]
    if not steps or not _foreign(ctx, ctx.names.lookup(graph), steps):
        return None
    _, used = _block_feeds(site.receiver, [s for s in scope_statements(loop) if s.lineno < site.stmt.lineno])
    reads = tuple(n for node in [*(s.value for s in used), site.receiver] for n in _graph_reads(node) if n.id == graph)
    return (reads, dotted(steps[0].func.value) or "") if reads else None


def _foreign(ctx: RuleContext, tensor: Any, steps: List[ast.Call]) -> bool:
    """`tensor` has a graph, and the optimizers of these `.step()` calls hold none of the parameters behind it."""
    params = {id(p) for c in steps for p in optimizer_params(ctx.names.lookup(dotted(c.func.value) or ""))}
    return isinstance(tensor, torch.Tensor) and has_graph(tensor) and bool(params) and \
        not any(id(p) in params for p in _leaves(tensor))


def _block_feeds(node: ast.AST, before: List[ast.stmt]) -> Tuple[Set[str], List[ast.stmt]]:
    """The names `node` is computed from through the block's statements before it (the last binding of each
    counts), and those statements; `x.detach()` and `x.data` read no graph."""
    need = {n.id for n in _graph_reads(node)}
    used: List[ast.stmt] = []
    for stmt in reversed(before):
        bound = names_in(stmt, ast.Store) if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else set()
        if bound & need:
            used.insert(0, stmt)
            need |= {n.id for n in _graph_reads(stmt.value)}
    return need, used


def _graph_reads(node: Optional[ast.AST]) -> List[ast.Name]:
    """The names an expression reads into its graph: not under `.detach()` or `.data`."""
    if node is None:
        return []
    if isinstance(node, ast.Attribute) and node.attr in ("detach", "data"):
        return []
    if isinstance(node, ast.Name):
        return [node] if isinstance(node.ctx, ast.Load) else []
    return [n for child in ast.iter_child_nodes(node) for n in _graph_reads(child)]


def _leaves(t: Any, most: int = 20_000) -> List[torch.Tensor]:
    """The leaf tensors (parameters) a tensor's graph reaches, read from its nodes (no saved tensor touched)."""
    found, seen = [], set()
    todo = [getattr(t, "grad_fn", None)]
    while todo and len(seen) < most:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.Tensor):
            found.append(variable)
        todo.extend(n for n, _ in getattr(node, "next_functions", ()))
    return found
