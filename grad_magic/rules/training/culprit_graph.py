"""graph-kept-alive's culprit: what a loop accumulates (`total += loss`, `total = total + loss`,
`losses.append(loss)`) and whether the accumulated tensors still hold a graph: in the running cell, read from
the accumulators' values after it; in a helper or a method of another cell, from what the step watch saw at
each step (a local whose graph grew from one step to the next: stepwatch.GrowingLocal).

May touch: the cells' ast, the run record's steps, and the accumulators' live values through the NameIndex
(grad_fn, numel: metadata only, never data).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import torch

from ...cell import cell_tree
from ...names import instance_dict
from ...record import distinct_steps
from ..context import RuleContext
from ..kit import dotted, function_around, grad_fn_name
from ..places import method_place, view_on
from .culprit import LOOPS, SCOPES, backward_receivers, is_name, names_in

ALREADY_PLAIN = frozenset({"item", "detach", "tolist", "numpy", "cpu"})


@dataclass(frozen=True)
class Accumulation:
    """`name += operand`, `name = name + operand` or `name.append(operand)` inside `loop`."""

    name: str
    stmt: ast.stmt
    operand: ast.expr
    loop: ast.stmt


@dataclass(frozen=True)
class KeptGraph:
    """An accumulation whose values keep their graphs, and what makes its operand plain."""

    acc: Accumulation
    how: str  # ".item()" (one number, never used as a tensor later) or ".detach()"


def kept_graphs(ctx: RuleContext, tree: ast.Module) -> List[KeptGraph]:
    """The cell's accumulations that keep every iteration's graph alive, in source order. In a loop that steps
    an optimizer, only those the step watch saw grow from one step into the next (growing.py): a sum rebuilt
    and backpropagated at each step never does, however it is written; in a loop that steps none (a
    validation loop), those whose value holds a graph after the run and that the cell never backpropagates."""
    grown = grown_in_cell(ctx)
    stepping = stepping_loops(tree, distinct_steps(ctx.record.steps))
    return [KeptGraph(a, _how(ctx, tree, a)) for a in accumulations(tree)
            if (a.name in grown if _inside(a.stmt, stepping) else _keeps_graph(ctx, tree, a))]


def grown_in_cell(ctx: RuleContext) -> Set[str]:
    """The names of the running cell's own frame whose graph the step watch saw grow from step to step."""
    return {g.name for s in distinct_steps(ctx.record.steps) for g in s.growing
            if g.site[0] == ctx.record.filename and g.function == "<module>"}


def stepping_loops(tree: ast.Module, steps: Sequence[Any]) -> List[ast.stmt]:
    """The cell's loops around a line an optimizer stepped on."""
    lines = {s.lineno for s in steps if s.lineno}
    return [n for n in ast.walk(tree) if isinstance(n, LOOPS) and
            any(n.lineno <= line <= (n.end_lineno or n.lineno) for line in lines)]


def _inside(stmt: ast.stmt, loops: Sequence[ast.stmt]) -> bool:
    return any(loop.lineno <= stmt.lineno <= (loop.end_lineno or loop.lineno) for loop in loops)


def backpropagated(tree: ast.Module, acc: Accumulation) -> bool:
    """Whether the cell calls backward() on something the accumulated operand names."""
    return bool(names_in(acc.operand) & backward_receivers(tree))


def last_grad_fn(value: Any) -> str:
    """The grad_fn of the (last) accumulated tensor: `AddBackward0`; "?" when there is none."""
    t = value[-1] if isinstance(value, list) and value else value
    return (grad_fn_name(t) or "?") if isinstance(t, torch.Tensor) else "?"


def _keeps_graph(ctx: RuleContext, tree: ast.Module, acc: Accumulation) -> bool:
    value = ctx.names.lookup(acc.name)
    if isinstance(value, list):
        items = [value[0], value[-1]] if value else []
        if not items or not all(_has_grad_fn(t) for t in items):
            return False
    elif not _has_grad_fn(value):
        return False
    # NB: summed on purpose to backpropagate through the sum (an RNN over time steps) is no bug
    return acc.name not in backward_receivers(tree)


def _has_grad_fn(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.grad_fn is not None


def _how(ctx: RuleContext, tree: ast.Module, acc: Accumulation) -> str:
    """`.item()` for one number, unless the cell later uses the accumulator as a tensor; else `.detach()`."""
    value = ctx.names.lookup(acc.name)
    t = value[-1] if isinstance(value, list) else value
    if t.numel() != 1 or used_as_tensor(tree, acc.name):
        return ".detach()"
    return ".item()"


def used_as_tensor(tree: ast.Module, name: str) -> bool:
    """Whether the cell uses `name` in a way a float or a list of floats would not survive."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and is_name(n.value, name) and n.attr not in ("append", "extend"):
            return True
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Subscript) and is_name(n.value.value, name):
            return True
        if isinstance(n, ast.Call) and "torch" in names_in(n.func) and \
                any(name in names_in(a) for a in n.args):
            return True
    return False


# -- the accumulations --

def walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk, not entering nested functions, lambdas or classes."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop(0)
        yield n
        if not isinstance(n, SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def accumulations(tree: ast.Module) -> List[Accumulation]:
    innermost: Dict[int, Tuple[ast.stmt, ast.stmt]] = {}
    for loop in ast.walk(tree):
        if isinstance(loop, LOOPS):
            for stmt in (n for body in (loop.body,) for s in body for n in [s, *walk_scope(s)]):
                if isinstance(stmt, ast.stmt):
                    innermost[id(stmt)] = (stmt, loop)  # NB: BFS: inner loops come later and win
    found = []
    for stmt, loop in sorted(innermost.values(), key=lambda p: (p[0].lineno, p[0].col_offset)):
        acc = _accumulation(stmt, loop)
        if acc is not None and not _already_plain(acc.operand):
            found.append(acc)
    return found


def _accumulation(stmt: ast.stmt, loop: ast.stmt) -> Optional[Accumulation]:
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and isinstance(stmt.op, ast.Add):
        value = stmt.value
        if isinstance(value, ast.List):
            value = value.elts[0] if len(value.elts) == 1 else None
        return Accumulation(stmt.target.id, stmt, value, loop) if _operand_ok(value) else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Add):
        name = stmt.targets[0].id
        left, right = stmt.value.left, stmt.value.right
        other = right if is_name(left, name) else left if is_name(right, name) else None
        return Accumulation(name, stmt, other, loop) if _operand_ok(other) else None
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if isinstance(call.func, ast.Attribute) and call.func.attr == "append" and \
                dotted(call.func.value) is not None and len(call.args) == 1 and not call.keywords \
                and _operand_ok(call.args[0]):
            return Accumulation(dotted(call.func.value), stmt, call.args[0], loop)  # `losses`, `self.losses`
    return None


def _operand_ok(node: Optional[ast.expr]) -> bool:
    return node is not None and any(isinstance(n, (ast.Name, ast.Call)) for n in ast.walk(node))


def _already_plain(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        node.func.attr in ALREADY_PLAIN


# -- what the steps saw: a helper's local that grew from step to step --

@dataclass(frozen=True)
class GrowingGraph:
    """An accumulation in a helper or a method of another cell whose value grew a graph step after step."""

    view: RuleContext  # the cell of the frame that held it
    acc: Accumulation
    grown: Any  # stepwatch.GrowingLocal: what the step watch saw (kind, size, newest item, grad_fn)
    how: str  # ".item()", ".detach()", or "dict" (each value of a dict detached); "" when no certain edit


def grown_by_steps(ctx: RuleContext) -> List[GrowingGraph]:
    """The accumulations whose locals the step watch saw grow at each step, in the cell whose frame held them
    (the innermost first): `e_train += loss` in `run_epoch`, `outputs.append(output)` in `train_epoch`."""
    last: Dict[Tuple[str, str, str], Any] = {}
    for step in distinct_steps(ctx.record.steps):  # NB: each local in the order the steps first saw it ...
        for g in step.growing:
            last.setdefault((g.site[0], g.function, g.name), g)
    for step in distinct_steps(ctx.record.steps, last=True):  # ... as the newest step saw it
        for g in step.growing:
            last[(g.site[0], g.function, g.name)] = g
    found: List[GrowingGraph] = []
    for g in last.values():
        if g.function == "<module>" and "." in g.name:  # NB: held by an object the cell names
            held = _held_grown(ctx, g)
            if held is not None and all(f.acc.stmt is not held.acc.stmt for f in found):
                found.append(held)
            continue
        view = view_on(ctx, *g.site)
        tree = cell_tree(view.record.source) if view is not None else None
        function = function_around(tree, g.site[1]) if tree is not None else None
        if function is None or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        accs = [a for a in accumulations(function) if a.name == g.name]
        if len(accs) != 1 or g.name in backward_receivers(function):
            continue
        found.append(GrowingGraph(view, accs[0], g, _how_grown(function, accs[0], g)))
    return found


def _how_grown(function: ast.AST, acc: Accumulation, grown: Any) -> str:
    """`.item()` for one number the function only keeps as a number; `.detach()` for a tensor it returns or
    stores or uses as a tensor; "dict" for a dict of tensors (each value detached)."""
    if grown.item == "dict":
        display = isinstance(acc.operand, ast.Dict) and None not in acc.operand.keys  # NB: no `**d` in it
        return "dict" if display or isinstance(acc.operand, (ast.Name, ast.Attribute, ast.Subscript)) else ""
    if grown.item != "tensor":
        return ""
    kept = "." in acc.name or acc.name in _returned_names(function) or used_as_tensor(function, acc.name)
    return ".item()" if grown.numel == 1 and not kept else ".detach()"


def _returned_names(function: ast.AST) -> set:
    return {n.id for r in ast.walk(function) if isinstance(r, ast.Return) and r.value is not None
            for n in ast.walk(r.value) if isinstance(n, ast.Name)}


def _held_grown(ctx: RuleContext, grown: Any) -> Optional[GrowingGraph]:
    """An object's tensor the step watch saw grow (`metrics.losses_track.train_losses['total']`): the method of
    its holder's class that adds to that attribute in a loop (`self.train_losses[key] += loss[key]`), the one
    statement that does. The holder is read through instance dicts (no user code runs)."""
    path = grown.name.split("[", 1)[0].split(".")
    if len(path) < 2 or not all(p.isidentifier() for p in path):
        return None
    holder = ctx.namespace.get(path[0])
    for part in path[1:-1]:
        holder = (instance_dict(holder) or {}).get(part)
    if holder is None:
        return None
    found = []
    for klass in type(holder).__mro__[:-1]:
        for name, fn in list(vars(klass).items()):
            place = method_place(ctx, type(holder), name) if callable(fn) and name != "__init__" else None
            if place is None or not place.node.args.args:
                continue
            me = place.node.args.args[0].arg
            for loop in (n for n in ast.walk(place.node) if isinstance(n, LOOPS)):
                for stmt in (n for n in ast.walk(loop) if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add)):
                    target = stmt.target.value if isinstance(stmt.target, ast.Subscript) else stmt.target
                    if dotted(target) == f"{me}.{path[-1]}" and _operand_ok(stmt.value) and \
                            not _already_plain(stmt.value):
                        found.append(GrowingGraph(place.ctx, Accumulation(f"{me}.{path[-1]}", stmt, stmt.value, loop),
                                                  grown, ".detach()" if grown.item == "tensor" else ""))
    return found[0] if len({id(f.acc.stmt) for f in found}) == 1 else None
