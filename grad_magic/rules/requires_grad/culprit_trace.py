"""Why nothing requires grad, the trace: from the tensor backward() was called on, back through the cell's
assignments (into functions, methods and modules' `forward` -- the cell's own or another cell's --, and out to
the caller's arguments when backward() ran in a helper), to the leaf, `no_grad` block, cut, op without a
gradient (argmax, a comparison, an integer cast) or frozen module that gave it no gradient. The records it
returns are culprit.py's; the cells it reads, culprit_units.py's.

May touch: the cell's ast; live objects through the NameIndex (and a module's attributes without running
code), torch metadata only. Never runs user code; makes no fix and no sentence.
"""
from __future__ import annotations

import ast
import dataclasses
import types
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import torch

from ..context import RuleContext
from ..kit import callee_name, dotted, grad_off_around, is_false, is_leaf, scope_statements, spans
from .culprit import (CUT, CUT_METHODS, COPIES, FACTORIES, FROZEN, GRAD, LEAF, METADATA, NO_GRAD, NONDIFF,
                      NONDIFF_METHODS, NOTHING, OUTSIDE, TAKES_REQUIRES_GRAD, Cause, Flow, Scope, appended_items, binds,
                      combine, false_arg)
from .culprit_roundtrip import round_trip
from .culprit_soft import thresholded
from .culprit_units import Unit, Units, caller_call, method_of, parameters, self_resolver, user_function
from ..places import global_assignment, method_place


def _loops_around(scope: Scope, lineno: int) -> List[ast.stmt]:
    return [s for s in scope.stmts if isinstance(s, (ast.For, ast.While))
            and s.body[0].lineno <= lineno <= (s.end_lineno or s.lineno)]


class Tracer:
    """Follows the loss back through the cell's assignments to what gave it no gradient."""

    def __init__(self, ctx: RuleContext, tree: ast.Module, error_scope: Scope, at: int) -> None:
        self.ctx, self.tree, self.source = ctx, tree, ctx.record.source
        self.error_scope, self.at = error_scope, at  # NB: live values are those of the line `at`
        self.module_scope = error_scope if isinstance(error_scope.node, ast.Module) else \
            Scope(tree, scope_statements(tree), ctx.names.lookup)
        self.units = Units(Unit.of(ctx, tree, self.module_scope))
        home = self.units.home
        self.module_scope.unit = error_scope.unit = home
        self.functions, self.classes, self.torch = home.functions, home.classes, home.torch
        self.path: Set[ast.stmt] = set()  # every assignment of this cell the loss was traced through
        self.paths: Dict[str, Set[ast.stmt]] = {}  # the same, for the other cells it went through
        self._done: Dict[int, Flow] = {}
        self._active: Set[int] = set()
        self._depth = 0
        self._under_cut = 0  # > 0 while looking at what a cut was applied to
        if ctx.elsewhere and not isinstance(error_scope.node, ast.Module) and not error_scope.args:
            found = caller_call(ctx, self.units)  # NB: backward() ran in a helper: its arguments are the caller's
            if found is not None:
                call, caller = found
                skip = 1 if isinstance(call.func, ast.Attribute) and parameters(error_scope.node)[:1] == ["self"] \
                    else 0
                error_scope.args = _bind(error_scope.node, call, caller, skip)

    def unit(self, scope: Scope) -> Unit:
        return scope.unit if scope.unit is not None else self.units.home

    def cause(self, kind: str, lineno: Optional[int], scope: Scope, name: str = "", node: Optional[ast.AST] = None,
              stmt: Optional[ast.stmt] = None, obj: Any = None) -> Cause:
        """A cause found in `scope`'s cell (its lines and nodes are that cell's)."""
        unit = self.unit(scope)
        home = unit is self.units.home
        return Cause(kind, lineno, name, node=node, stmt=stmt, obj=obj, where="" if home else unit.filename,
                     unit=None if home else unit)

    def _record(self, stmt: ast.stmt, scope: Scope) -> None:
        unit = self.unit(scope)
        (self.path if unit is self.units.home else self.paths.setdefault(unit.filename, set())).add(stmt)

    def path_in(self, unit: Unit) -> Set[ast.stmt]:
        return self.path if unit is self.units.home else self.paths.get(unit.filename, set())

    # -- expressions --
    def expr(self, e: Optional[ast.AST], scope: Scope, line: int) -> Flow:
        if e is None or isinstance(e, ast.Constant):
            return NOTHING
        if isinstance(e, ast.Name):
            return self.name(e.id, scope, line)
        if isinstance(e, ast.Attribute):
            return self.attribute(e, scope, line)
        if isinstance(e, ast.Call):
            return self.call(e, scope, line)
        if isinstance(e, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.expr(e.elt, scope, line)
        if isinstance(e, ast.DictComp):
            return self.expr(e.value, scope, line)
        if isinstance(e, ast.Lambda):
            return NOTHING
        flow = combine([self.expr(c, scope, line) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)])
        if isinstance(e, ast.Compare) and flow.grad:  # NB: `pred == y` is a bool tensor: no graph goes on
            cause = self.cause(NONDIFF, e.lineno, scope, node=e)
            return Flow(False, (dataclasses.replace(cause, inner=thresholded(self, e, scope, line)),))
        return flow

    def attribute(self, e: ast.Attribute, scope: Scope, line: int) -> Flow:
        if e.attr == "data":
            return self._cut(e, e.value, scope, line)
        if e.attr in METADATA:  # `x.dtype`, `x.shape`: no values, no graph
            return NOTHING
        if e.attr == "indices":  # `x.max(1).indices`, `x.topk(k).indices`
            return self._nondiff(e, [e.value], scope, line)
        path = dotted(e)
        obj = scope.live(path) if path else None
        if isinstance(obj, torch.nn.Parameter) and not obj.requires_grad:
            return Flow(False, (self.cause(FROZEN, e.lineno, scope, path or "", obj=obj),))
        if isinstance(obj, torch.Tensor):
            return GRAD if obj.requires_grad else NOTHING
        return self.expr(e.value, scope, line) if not isinstance(obj, torch.nn.Module) else NOTHING

    def call(self, e: ast.Call, scope: Scope, line: int) -> Flow:
        func = e.func
        attr = func.attr if isinstance(func, ast.Attribute) else None
        if attr in CUT_METHODS:
            inner = func.value
            while attr != "detach" and _is_passthrough(inner):  # `h.detach().cpu().numpy()`: the numpy is the cut
                inner = inner.value if isinstance(inner, ast.Attribute) else inner.func.value  # type: ignore
            return self._cut(e, inner, scope, line)
        if attr == "requires_grad_":
            return NOTHING if false_arg(e) else GRAD
        if attr in NONDIFF_METHODS:  # `x.argmax(1)`, `torch.argmax(x, 1)`, `x.long()`
            torch_call = isinstance(func.value, ast.Name) and func.value.id in self.unit(scope).torch
            return self._nondiff(e, e.args[:1] if torch_call else [func.value, *e.args], scope, line)
        if self.is_factory(e, scope):
            return self._factory(e, scope, line)
        if callee_name(e) == "Parameter":
            return NOTHING if any(k.arg == "requires_grad" and is_false(k.value) for k in e.keywords) else GRAD
        callee = self.resolve(dotted(func), scope)
        args = [*e.args, *(k.value for k in e.keywords)]
        if isinstance(callee, torch.nn.Module):
            return self._module_call(e, callee, scope, line, args)
        unit = self.unit(scope)
        if isinstance(func, ast.Name) and func.id in unit.functions and func.id not in _bound_in(scope, func.id):
            return self._function_call(unit.functions[func.id], e, scope, line, unit)
        found = self._elsewhere(func, callee, scope)
        if found is not None:
            return self._function_call(found[0], e, scope, line, found[1], found[2])
        if isinstance(func, ast.Subscript):  # `self.heads[name](x)`: an item of a ModuleDict / ModuleList
            container = self.resolve(dotted(func.value), scope)
            if isinstance(container, torch.nn.Module) and any(p.requires_grad for p in container.parameters()):
                return GRAD
        parts = [func.value] if isinstance(func, ast.Attribute) else []
        return combine([self.expr(a, scope, line) for a in [*parts, *args]])

    def _elsewhere(self, func: ast.AST, callee: Any, scope: Scope) -> Optional[Tuple[ast.AST, Unit, Any]]:
        """(def, its cell, the object it is bound to) of a user function or method a call reaches outside the
        cell's own functions: a helper of an earlier cell, `model.forward_train(...)`."""
        if isinstance(callee, (types.FunctionType, types.MethodType)):
            place = user_function(self.ctx, callee)
            if place is not None:
                return place.node, self.units.of_place(place), getattr(callee, "__self__", None)
        if isinstance(func, ast.Attribute) and callee is None:
            obj = self.resolve(dotted(func.value), scope)
            fn = method_of(obj, func.attr) if obj is not None and not isinstance(
                obj, (torch.Tensor, types.ModuleType, type)) else None
            place = user_function(self.ctx, fn) if fn is not None else None
            if place is not None:
                return place.node, self.units.of_place(place), obj
        return None

    def user_def(self, call: ast.Call, scope: Scope) -> Optional[ast.AST]:
        """The def of the plain function of the user's a call reaches (no bound method), if any."""
        func = call.func
        unit = self.unit(scope)
        if isinstance(func, ast.Name) and func.id in unit.functions:
            return unit.functions[func.id]
        found = self._elsewhere(func, self.resolve(dotted(func), scope), scope)
        return found[0] if found is not None and found[2] is None else None

    def _nondiff(self, e: ast.AST, inputs: Sequence[ast.AST], scope: Scope, line: int) -> Flow:
        """An op whose result has no gradient: the cause when what it was given had one."""
        flow = combine([self.expr(a, scope, line) for a in inputs])
        return Flow(False, (self.cause(NONDIFF, e.lineno, scope, node=e),)) if flow.grad else flow

    def resolve(self, path: Optional[str], scope: Scope) -> Any:
        """The live object a dotted name stands for here, following a parameter to the caller's argument."""
        if not path:
            return None
        head, _, rest = path.partition(".")
        if head in scope.args and not self.reaching(scope, head, 10 ** 9):
            arg, caller = scope.args[head]
            outer = dotted(arg)
            return self.resolve(f"{outer}.{rest}" if rest else outer, caller) if outer else None
        found = scope.live(path)
        if found is None and self.unit(scope) is not self.units.home and not isinstance(scope.node, ast.Module) \
                and head not in parameters(scope.node) and not _bound_in(scope, head):
            found = self.unit(scope).module_scope.live(path)  # NB: a global of another cell's helper
        return found

    def is_factory(self, e: ast.Call, scope: Optional[Scope] = None) -> bool:
        func = e.func
        aliases = self.unit(scope).torch if scope is not None else self.torch
        return isinstance(func, ast.Attribute) and func.attr in FACTORIES and \
            isinstance(func.value, ast.Name) and func.value.id in aliases

    def _factory(self, e: ast.Call, scope: Scope, line: int) -> Flow:
        if any(k.arg == "requires_grad" and not is_false(k.value) for k in e.keywords):
            return GRAD
        if e.func.attr in COPIES and e.args:  # type: ignore[attr-defined]
            inner = self.expr(e.args[0], scope, line)
            if inner.grad:  # NB: copy-constructing a tensor that has a graph keeps the values only
                return Flow(False, (self.cause(CUT, e.lineno, scope, node=e),))
            cuts = tuple(c for c in inner.causes if c.kind == CUT)
            source = round_trip(self, e.args[0], scope, line) if cuts else None
            if source is not None:  # `torch.tensor(x.detach().numpy())`: the round trip is the cut, `x` the fix
                return Flow(False, (dataclasses.replace(self.cause(CUT, e.lineno, scope, node=e),
                                                        inner=source if not e.keywords else None),))
            if cuts:  # `torch.from_numpy(h.detach().numpy())`: the cut inside is the cause
                return Flow(False, cuts)
        elif e.func.attr not in TAKES_REQUIRES_GRAD and e.args:  # type: ignore[attr-defined]
            inner = self.expr(e.args[0], scope, line)
            if inner.grad:  # `torch.as_tensor(t)` of a tensor with a graph is that tensor
                return GRAD
        return Flow(False, (self.cause(LEAF, e.lineno, scope, node=e),))

    def _cut(self, node: ast.AST, inner_expr: ast.AST, scope: Scope, line: int) -> Flow:
        self._under_cut += 1
        try:
            inner = self.expr(inner_expr, scope, line)
        finally:
            self._under_cut -= 1
        if inner.grad:
            return Flow(False, (self.cause(CUT, node.lineno, scope, node=node),))
        # NB: what feeds a cut is not to blame: giving it grad would not get past the cut
        return NOTHING

    def _module_call(self, e: ast.Call, module: torch.nn.Module, scope: Scope, line: int,
                     args: Sequence[ast.AST]) -> Flow:
        params = list(module.parameters())
        inputs = combine([self.expr(a, scope, line) for a in args])
        name = dotted(e.func) or ""
        if params and not any(p.requires_grad for p in params):
            frozen = self.cause(FROZEN, e.lineno, scope, name, obj=module)
            return inputs if inputs.grad else Flow(False, inputs.causes + (frozen,))
        forward = self._forward_of(module)
        if not params and (forward is None or not inputs.grad):  # NB: a loss module of the user's: its forward
            return inputs
        if forward is None or self._depth > 3:
            return GRAD
        node, unit = forward
        inner = Scope(node, scope_statements(node), self_resolver(module), _bind(node, e, scope, skip=1), unit)
        return self._returns(node, inner)

    def _forward_of(self, module: torch.nn.Module) -> Optional[Tuple[ast.FunctionDef, Unit]]:
        """The `forward` the module runs: its class's in this cell, else the user's in another cell (or file)."""
        cls = self.classes.get(type(module).__name__)
        for node in cls.body if cls is not None else ():
            if isinstance(node, ast.FunctionDef) and node.name == "forward":
                return node, self.units.home
        place = method_place(self.ctx, type(module), "forward") if cls is None else None
        if place is not None and isinstance(place.node, ast.FunctionDef):
            return place.node, self.units.of_place(place)
        return None

    def _function_call(self, fn: ast.AST, e: ast.Call, scope: Scope, line: int, unit: Optional[Unit] = None,
                       bound: Any = None) -> Flow:
        if self._depth > 3:
            return combine([self.expr(a, scope, line) for a in e.args])
        live = self_resolver(bound) if bound is not None else (lambda _name: None)
        skip = 1 if bound is not None else 0
        inner = Scope(fn, scope_statements(fn), live, _bind(fn, e, scope, skip), unit or self.units.home)
        return self._returns(fn, inner)

    def _returns(self, fn: ast.AST, scope: Scope) -> Flow:
        self._depth += 1
        try:
            ends = [s for s in scope.stmts if isinstance(s, ast.Return) and s.value is not None]
            flows = [self._statement_flow(s, s.value, "", scope) for s in ends]
            if not self._under_cut and any(not f.grad and f.causes for f in flows):
                # NB: the loss had no graph, so the return that ran gave none: of several, the gradless ones
                return Flow(False, tuple(dict.fromkeys(c for f in flows if not f.grad for c in f.causes)))
            return combine(flows) if ends else GRAD
        finally:
            self._depth -= 1

    # -- names and the assignments that made them --
    def name(self, name: str, scope: Scope, line: int) -> Flow:
        defs = self.reaching(scope, name, line)
        # NB: a name bound more than once has its live value from the failing line only
        once = len([s for s in scope.stmts if binds(s, name)]) <= 1
        obj = scope.live(name) if (scope is self.error_scope and line == self.at) or once else None
        if isinstance(obj, torch.Tensor) and obj.requires_grad:
            return GRAD
        if not defs and name in scope.args:
            arg, caller = scope.args[name]
            return self.expr(arg, caller, arg.lineno)
        if not defs and name in parameters(scope.node):
            return NOTHING
        outer = self.unit(scope).module_scope
        if not defs and outer is not None and scope is not outer:
            return self.name(name, outer, 10 ** 9)
        if not defs:
            if isinstance(obj, torch.Tensor) and is_leaf(obj):
                return Flow(False, (self._made_before(name, obj) or self.cause(OUTSIDE, None, scope, name, obj=obj),))
            return NOTHING
        flows = [self.definition(d, name, scope, obj) for d in defs]
        if isinstance(obj, torch.Tensor) or not self._under_cut and not all(f.grad for f in flows):
            # NB: the loss has no grad, so neither had any name on its way (short of a cut): of the bindings
            # that may have made this value, only the gradless ones can have
            return Flow(False, tuple(dict.fromkeys(c for f in flows if not f.grad for c in f.causes)))
        return combine(flows)

    def _made_before(self, name: str, obj: torch.Tensor) -> Optional[Cause]:
        """The leaf `obj`, a global made by a top-level `name = torch.randn(...)` of an earlier cell: a cause
        there (the namespace must hold that very tensor)."""
        if self.ctx.namespace.get(name) is not obj:
            return None
        place = global_assignment(self.ctx, name)
        stmt = place.node if place is not None else None
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            return None
        unit = self.units.of_place(place)
        scope = unit.module_scope
        return self.cause(LEAF, stmt.lineno, scope, name, node=stmt.value, stmt=stmt, obj=obj)

    def reaching(self, scope: Scope, name: str, line: int) -> List[ast.stmt]:
        """The last binding before `line`, and bindings later in a loop around `line` (the next pass)."""
        defs = [s for s in scope.stmts if binds(s, name)]
        before = [d for d in defs if d.lineno < line and not spans(d, line)] or \
            [d for d in defs if isinstance(d, ast.For) and spans(d, line)]
        found = before[-1:]
        for loop in _loops_around(scope, line):
            found += [d for d in defs if d.lineno > line and spans(loop, d.lineno) and d not in found]
        return found

    def definition(self, stmt: ast.stmt, name: str, scope: Scope, obj: Any) -> Flow:
        key = id(stmt)
        if key in self._active:
            return NOTHING  # NB: `w = f(w)` in a loop: the earlier binding answers for `w`
        if key not in self._done:
            self._active.add(key)
            try:
                self._done[key] = self._definition(stmt, name, scope, obj)
            finally:
                self._active.discard(key)
        return self._done[key]

    def _definition(self, stmt: ast.stmt, name: str, scope: Scope, obj: Any) -> Flow:
        if isinstance(stmt, ast.For):  # NB: loop variables carry no cause; a graph they iterate over, they carry
            return GRAD if self.expr(stmt.iter, scope, stmt.lineno).grad else NOTHING
        if isinstance(stmt, ast.With) or not hasattr(stmt, "value"):
            return NOTHING  # NB: `with ... as` carries no cause
        self._record(stmt, scope)
        if isinstance(stmt.value, ast.List) and not stmt.value.elts:  # `outs = []`, then `outs.append(...)`
            return combine([self.expr(a, scope, a.lineno) for a in appended_items(scope, name)])
        flow = self._statement_flow(stmt, stmt.value, name, scope)
        if isinstance(stmt, ast.AugAssign):
            flow = combine([flow, self.name(name, scope, stmt.lineno)])
        if not flow.grad and flow.causes and all(c.kind == LEAF and not c.name for c in flow.causes):
            # NB: the value is made here from nothing with a graph: this name is the gradless leaf
            live = obj if isinstance(obj, torch.Tensor) else None
            return Flow(False, (self.cause(LEAF, stmt.lineno, scope, name, node=stmt.value, stmt=stmt, obj=live),))
        return Flow(False, tuple(_named(c, name, stmt) for c in flow.causes)) if not flow.grad else flow

    def _statement_flow(self, stmt: ast.stmt, value: Optional[ast.AST], name: str, scope: Scope) -> Flow:
        self._record(stmt, scope)
        flow = self.expr(value, scope, stmt.lineno)
        off = grad_off_around(stmt, scope.node)
        if flow.grad and off is not None:
            return Flow(False, (self.cause(NO_GRAD, stmt.lineno, scope, name, node=off, stmt=stmt),))
        return flow


def _is_passthrough(node: ast.AST) -> bool:
    """`.detach()`, `.cpu()`, `.data`, `.clone()`: steps before `.numpy()` / `.item()` that change nothing."""
    if isinstance(node, ast.Attribute):
        return node.attr == "data"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args and \
        node.func.attr in ("detach", "cpu", "clone", "contiguous")


def _named(cause: Cause, name: str, stmt: ast.stmt) -> Cause:
    """A cut, no_grad or op without gradient found in a value is reported with the name it was assigned to."""
    if cause.kind in (CUT, NO_GRAD, NONDIFF) and not cause.name:
        return dataclasses.replace(cause, name=name, stmt=stmt)
    return cause


def _bind(fn: ast.AST, call: ast.Call, caller: Scope, skip: int = 0) -> Dict[str, Tuple[ast.expr, Scope]]:
    """A cell function's parameters bound to the caller's argument expressions (`skip` drops `self`)."""
    params = [a.arg for a in fn.args.args][skip:]  # type: ignore[attr-defined]
    bound = {p: (a, caller) for p, a in zip(params, call.args) if not isinstance(a, ast.Starred)}
    bound.update({k.arg: (k.value, caller) for k in call.keywords if k.arg in params})
    return bound


def _bound_in(scope: Scope, name: str) -> List[ast.stmt]:
    return [s for s in scope.stmts if binds(s, name)] if not isinstance(scope.node, ast.Module) else []
