"""Why nothing requires grad, the trace: from the tensor backward() was called on, back through the cell's
assignments (into the cell's own functions and modules' `forward`), to the leaf, `no_grad` block, cut or
frozen module that gave it no gradient. The records it returns are culprit.py's.

May touch: the cell's ast; live objects through the NameIndex (and a module's attributes without running
code), torch metadata only. Never runs user code; makes no fix and no sentence.
"""
from __future__ import annotations

import ast
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import torch

from ...names import attribute_without_code
from ..context import RuleContext
from ..kit import callee_name, dotted, grad_off_around, is_false, is_leaf, scope_statements, spans, torch_aliases
from .culprit import (CUT, CUT_METHODS, COPIES, FACTORIES, FROZEN, GRAD, LEAF, NO_GRAD, NOTHING, OUTSIDE,
                      TAKES_REQUIRES_GRAD, Cause, Flow, Scope, binds, combine, false_arg)


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
        self.functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self.torch = torch_aliases(tree) | {"torch"}
        self.path: Set[ast.stmt] = set()  # every assignment the loss was traced through
        self._done: Dict[int, Flow] = {}
        self._active: Set[int] = set()
        self._depth = 0
        self._under_cut = 0  # > 0 while looking at what a cut was applied to

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
        if isinstance(e, (ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            return NOTHING
        return combine([self.expr(c, scope, line) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)])

    def attribute(self, e: ast.Attribute, scope: Scope, line: int) -> Flow:
        if e.attr == "data":
            return self._cut(e, e.value, scope, line)
        path = dotted(e)
        obj = scope.live(path) if path else None
        if isinstance(obj, torch.nn.Parameter) and not obj.requires_grad:
            return Flow(False, (Cause(FROZEN, e.lineno, path or "", obj=obj),))
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
        if self.is_factory(e):
            return self._factory(e, scope, line)
        if callee_name(e) == "Parameter":
            return NOTHING if any(k.arg == "requires_grad" and is_false(k.value) for k in e.keywords) else GRAD
        callee = self.resolve(dotted(func), scope)
        args = [*e.args, *(k.value for k in e.keywords)]
        if isinstance(callee, torch.nn.Module):
            return self._module_call(e, callee, scope, line, args)
        if isinstance(func, ast.Name) and func.id in self.functions and func.id not in _bound_in(scope, func.id):
            return self._function_call(self.functions[func.id], e, scope, line)
        parts = [func.value] if isinstance(func, ast.Attribute) else []
        return combine([self.expr(a, scope, line) for a in [*parts, *args]])

    def resolve(self, path: Optional[str], scope: Scope) -> Any:
        """The live object a dotted name stands for here, following a parameter to the caller's argument."""
        if not path:
            return None
        head, _, rest = path.partition(".")
        if head in scope.args and not self.reaching(scope, head, 10 ** 9):
            arg, caller = scope.args[head]
            outer = dotted(arg)
            return self.resolve(f"{outer}.{rest}" if rest else outer, caller) if outer else None
        return scope.live(path)

    def is_factory(self, e: ast.Call) -> bool:
        func = e.func
        return isinstance(func, ast.Attribute) and func.attr in FACTORIES and \
            isinstance(func.value, ast.Name) and func.value.id in self.torch

    def _factory(self, e: ast.Call, scope: Scope, line: int) -> Flow:
        if any(k.arg == "requires_grad" and not is_false(k.value) for k in e.keywords):
            return GRAD
        if e.func.attr in COPIES and e.args:  # type: ignore[attr-defined]
            inner = self.expr(e.args[0], scope, line)
            if inner.grad:  # NB: copy-constructing a tensor that has a graph keeps the values only
                return Flow(False, (Cause(CUT, e.lineno, node=e),))
            cuts = tuple(c for c in inner.causes if c.kind == CUT)
            if cuts:  # `torch.from_numpy(h.detach().numpy())`: the cut inside is the cause
                return Flow(False, cuts)
        elif e.func.attr not in TAKES_REQUIRES_GRAD and e.args:  # type: ignore[attr-defined]
            inner = self.expr(e.args[0], scope, line)
            if inner.grad:  # `torch.as_tensor(t)` of a tensor with a graph is that tensor
                return GRAD
        return Flow(False, (Cause(LEAF, e.lineno, node=e),))

    def _cut(self, node: ast.AST, inner_expr: ast.AST, scope: Scope, line: int) -> Flow:
        self._under_cut += 1
        try:
            inner = self.expr(inner_expr, scope, line)
        finally:
            self._under_cut -= 1
        if inner.grad:
            return Flow(False, (Cause(CUT, node.lineno, node=node),))
        # NB: what feeds a cut is not to blame: giving it grad would not get past the cut
        return NOTHING

    def _module_call(self, e: ast.Call, module: torch.nn.Module, scope: Scope, line: int,
                     args: Sequence[ast.AST]) -> Flow:
        params = list(module.parameters())
        inputs = combine([self.expr(a, scope, line) for a in args])
        if not params:
            return inputs
        name = dotted(e.func) or ""
        if not any(p.requires_grad for p in params):
            return inputs if inputs.grad else Flow(False, inputs.causes + (Cause(FROZEN, e.lineno, name, obj=module),))
        forward = self._forward_of(module)
        if forward is None or self._depth > 3:
            return GRAD
        inner = Scope(forward, scope_statements(forward), _attribute_resolver(module),
                      _bind(forward, e, scope, skip=1))
        return self._returns(forward, inner)

    def _forward_of(self, module: torch.nn.Module) -> Optional[ast.FunctionDef]:
        cls = self.classes.get(type(module).__name__)
        for node in cls.body if cls is not None else ():
            if isinstance(node, ast.FunctionDef) and node.name == "forward":
                return node
        return None

    def _function_call(self, fn: ast.FunctionDef, e: ast.Call, scope: Scope, line: int) -> Flow:
        if self._depth > 3:
            return combine([self.expr(a, scope, line) for a in e.args])
        inner = Scope(fn, scope_statements(fn), lambda _name: None, _bind(fn, e, scope))
        return self._returns(fn, inner)

    def _returns(self, fn: ast.AST, scope: Scope) -> Flow:
        self._depth += 1
        try:
            ends = [s for s in scope.stmts if isinstance(s, ast.Return) and s.value is not None]
            return combine([self._statement_flow(s, s.value, "", scope) for s in ends]) if ends else GRAD
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
        if not defs and name in _parameters(scope.node):
            return NOTHING
        if not defs and scope is not self.module_scope:
            return self.name(name, self.module_scope, 10 ** 9)
        if not defs:
            if isinstance(obj, torch.Tensor) and is_leaf(obj):
                return Flow(False, (Cause(OUTSIDE, None, name, obj=obj),))
            return NOTHING
        flows = [self.definition(d, name, scope, obj) for d in defs]
        if isinstance(obj, torch.Tensor) or not self._under_cut and not all(f.grad for f in flows):
            # NB: the loss has no grad, so neither had any name on its way (short of a cut): of the bindings
            # that may have made this value, only the gradless ones can have
            return Flow(False, tuple(dict.fromkeys(c for f in flows if not f.grad for c in f.causes)))
        return combine(flows)

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
        if isinstance(stmt, (ast.For, ast.With)) or not hasattr(stmt, "value"):
            return NOTHING  # NB: loop variables (batches of data) and `with ... as` carry no cause
        self.path.add(stmt)
        flow = self._statement_flow(stmt, stmt.value, name, scope)
        if isinstance(stmt, ast.AugAssign):
            flow = combine([flow, self.name(name, scope, stmt.lineno)])
        if not flow.grad and flow.causes and all(c.kind == LEAF and not c.name for c in flow.causes):
            # NB: the value is made here from nothing with a graph: this name is the gradless leaf
            live = obj if isinstance(obj, torch.Tensor) else None
            return Flow(False, (Cause(LEAF, stmt.lineno, name, node=stmt.value, stmt=stmt, obj=live),))
        return Flow(False, tuple(_named(c, name, stmt) for c in flow.causes)) if not flow.grad else flow

    def _statement_flow(self, stmt: ast.stmt, value: Optional[ast.AST], name: str, scope: Scope) -> Flow:
        self.path.add(stmt)
        flow = self.expr(value, scope, stmt.lineno)
        off = grad_off_around(stmt, scope.node)
        if flow.grad and off is not None:
            return Flow(False, (Cause(NO_GRAD, stmt.lineno, name, node=off, stmt=stmt),))
        return flow


def _is_passthrough(node: ast.AST) -> bool:
    """`.detach()`, `.cpu()`, `.data`, `.clone()`: steps before `.numpy()` / `.item()` that change nothing."""
    if isinstance(node, ast.Attribute):
        return node.attr == "data"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args and \
        node.func.attr in ("detach", "cpu", "clone", "contiguous")


def _named(cause: Cause, name: str, stmt: ast.stmt) -> Cause:
    """A cut or no_grad found in a value is reported with the name it was assigned to."""
    if cause.kind in (CUT, NO_GRAD) and not cause.name:
        return Cause(cause.kind, cause.lineno, name, node=cause.node, stmt=stmt, obj=cause.obj)
    return cause


def _attribute_resolver(module: torch.nn.Module) -> Callable[[str], Any]:
    def live(path: str) -> Any:
        head, _, rest = path.partition(".")
        if head != "self":
            return None
        obj: Any = module
        for part in rest.split(".") if rest else ():
            obj = attribute_without_code(obj, part)
            if obj is None:
                return None
        return obj

    return live


def _parameters(fn: ast.AST) -> List[str]:
    args = getattr(fn, "args", None)
    if args is None:
        return []
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]] + \
        [a.arg for a in (args.vararg, args.kwarg) if a is not None]


def _bind(fn: ast.AST, call: ast.Call, caller: Scope, skip: int = 0) -> Dict[str, Tuple[ast.expr, Scope]]:
    """A cell function's parameters bound to the caller's argument expressions (`skip` drops `self`)."""
    params = [a.arg for a in fn.args.args][skip:]  # type: ignore[attr-defined]
    bound = {p: (a, caller) for p, a in zip(params, call.args) if not isinstance(a, ast.Starred)}
    bound.update({k.arg: (k.value, caller) for k in call.keywords if k.arg in params})
    return bound


def _bound_in(scope: Scope, name: str) -> List[ast.stmt]:
    return [s for s in scope.stmts if binds(s, name)] if not isinstance(scope.node, ast.Module) else []
