"""Rules of the requires_grad family: backward() on a result that never required grad, and
requires_grad asked of a tensor that cannot have it.

Kinds:
- `missing-requires-grad`: RuntimeError "element N of tensors does not require grad and does not have a
  grad_fn" (before torch 0.4: "... of variables ..."). The cause is traced back from the tensor backward()
  was called on, through the cell's assignments (ast), checked against the live objects (metadata only):
  a leaf created without `requires_grad=True` (fix: add it where the leaf is made); a forward computed
  under `torch.no_grad()` / `torch.inference_mode()` (fix: move those lines out of the block); the chain
  cut by `.detach()` / `.data` / `.item()` / `.numpy()` / `torch.tensor(t)` (fix: drop a `.detach()` or
  `.data` when nothing after it needs the cut; `.requires_grad_()` after a manual update's `.detach()`);
  every parameter of the model frozen (explained, no fix). When no cause is found, the card says what is
  known and proposes no fix.
- `integer-requires-grad`: RuntimeError "Only Tensors of floating point and complex dtype can require
  gradients" (torch 1.6+; "only Tensors of floating point dtype ..." from `requires_grad_()`, and from
  everything before 1.6). Fix: give the creating call a floating-point dtype.

The ast helpers at the end (torch's name in the cell, grad-disabling blocks) are shared with rules/leaf.py.
Never runs user code: live objects are read through the NameIndex and torch metadata only.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import torch

from ..facts import dtype_name, fact_for as _fact_for
from ..fixes import cell_tree, enclosing_statement, indent_of, line_offsets, make_fix, node_span
from ..model import ERROR, Diagnosis, Fix, TensorFact, TextEdit
from .context import RuleContext
from .registry import rule

KIND = "missing-requires-grad"
INT_KIND = "integer-requires-grad"
NO_GRAD_FN = re.compile(r"element (?P<index>\d+) of (?:tensors|variables) does not require grad and does "
                        r"not have a grad_fn")
NOT_FLOAT = re.compile(r"[Oo]nly Tensors of floating point (?:and complex )?dtype can require gradients")
MAX_LEAVES = 4  # NB: more gradless leaves than this and marking them all would be a guess

LEAF, NO_GRAD, CUT, FROZEN, OUTSIDE = "leaf", "no_grad", "cut", "frozen", "outside"
# torch factories; those in the first set take `requires_grad=` (the others get `.requires_grad_()`)
_TAKES_REQUIRES_GRAD = frozenset({
    "tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
    "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
    "randn_like", "randint_like"})
_FACTORIES = _TAKES_REQUIRES_GRAD | {"as_tensor", "from_numpy", "Tensor", "FloatTensor", "DoubleTensor",
                                     "normal", "asarray"}
# NB: `as_tensor(t)` / `asarray(t)` / `Tensor(t)` of a tensor keep its graph; `tensor(t)` copies the values only
_COPIES = frozenset({"tensor", "from_numpy"})
_CUT_METHODS = frozenset({"detach", "item", "tolist", "numpy"})
_GRAD_OFF = frozenset({"no_grad", "inference_mode", "set_grad_enabled"})


def is_leaf(t: torch.Tensor) -> Optional[bool]:
    """`t.is_leaf`, or None where torch refuses to say (a view made under no_grad, then changed in place)."""
    try:
        return t.is_leaf
    except RuntimeError:
        return None


def grad_fn_name(t: torch.Tensor) -> Optional[str]:
    """The name of `t.grad_fn` ("" for none), or None where torch refuses to say."""
    try:
        return type(t.grad_fn).__name__ if t.grad_fn is not None else ""
    except RuntimeError:
        return None


def fact_for(name: str, obj: Any) -> Optional[TensorFact]:
    """facts.fact_for, or None for a tensor whose metadata torch refuses to give (see `is_leaf`)."""
    try:
        return _fact_for(name, obj)
    except RuntimeError:
        return None


def match_no_grad_fn(message: str) -> Optional[int]:
    """The element index when `message` is the "does not require grad" error, else None."""
    m = NO_GRAD_FN.search(message)
    return int(m["index"]) if m else None


def match_not_float(message: str) -> bool:
    return NOT_FLOAT.search(message) is not None


# -- what the trace finds --

@dataclass(frozen=True)
class Cause:
    """Why one input of the loss carries no gradient."""

    kind: str  # LEAF, NO_GRAD, CUT, FROZEN, OUTSIDE
    lineno: Optional[int]
    name: str = ""  # the user's name for the tensor or module ("" when unnamed)
    node: Optional[ast.AST] = field(default=None, compare=False)  # creating call / cut / with / decorator
    stmt: Optional[ast.stmt] = field(default=None, compare=False)  # the assignment that made it
    obj: Any = field(default=None, compare=False, repr=False)  # the live tensor or module, if known


@dataclass(frozen=True)
class Flow:
    grad: bool
    causes: Tuple[Cause, ...] = ()


GRAD, NOTHING = Flow(True), Flow(False)


def _combine(flows: Sequence[Flow]) -> Flow:
    if any(f.grad for f in flows):
        return GRAD
    return Flow(False, tuple(dict.fromkeys(c for f in flows for c in f.causes)))


@dataclass
class Scope:
    """A function's (or the cell's) own statements, how its names resolve to live objects, its arguments."""

    node: ast.AST
    stmts: List[ast.stmt]
    live: Callable[[str], Any]
    args: Dict[str, Tuple[ast.expr, "Scope"]] = field(default_factory=dict)


def scope_statements(node: ast.AST) -> List[ast.stmt]:
    """Statements of a module / function body, nested blocks included, nested defs and classes not."""
    found: List[ast.stmt] = []

    def walk(body: Sequence[ast.stmt]) -> None:
        for stmt in body:
            found.append(stmt)
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for name in ("body", "orelse", "finalbody"):
                walk(getattr(stmt, name, ()) or ())
            for handler in getattr(stmt, "handlers", ()) or ():
                walk(handler.body)

    walk(getattr(node, "body", []))
    return found


def _binds(stmt: ast.stmt, name: str) -> bool:
    targets: List[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For)):
        targets = [stmt.target]
    elif isinstance(stmt, ast.With):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))


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
        return _combine([self.expr(c, scope, line) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)])

    def attribute(self, e: ast.Attribute, scope: Scope, line: int) -> Flow:
        if e.attr == "data":
            return self._cut(e, e.value, scope, line)
        dotted = dotted_text(e)
        obj = scope.live(dotted) if dotted else None
        if isinstance(obj, torch.nn.Parameter) and not obj.requires_grad:
            return Flow(False, (Cause(FROZEN, e.lineno, dotted or "", obj=obj),))
        if isinstance(obj, torch.Tensor):
            return GRAD if obj.requires_grad else NOTHING
        return self.expr(e.value, scope, line) if not isinstance(obj, torch.nn.Module) else NOTHING

    def call(self, e: ast.Call, scope: Scope, line: int) -> Flow:
        func = e.func
        attr = func.attr if isinstance(func, ast.Attribute) else None
        if attr in _CUT_METHODS:
            inner = func.value
            while attr != "detach" and _is_passthrough(inner):  # `h.detach().cpu().numpy()`: the numpy is the cut
                inner = inner.value if isinstance(inner, ast.Attribute) else inner.func.value  # type: ignore
            return self._cut(e, inner, scope, line)
        if attr == "requires_grad_":
            return NOTHING if _false_arg(e) else GRAD
        if self.is_factory(e):
            return self._factory(e, scope, line)
        if _callee_name(e) == "Parameter":
            return NOTHING if any(k.arg == "requires_grad" and _is_false(k.value) for k in e.keywords) else GRAD
        callee = self.resolve(dotted_text(func), scope)
        args = [*e.args, *(k.value for k in e.keywords)]
        if isinstance(callee, torch.nn.Module):
            return self._module_call(e, callee, scope, line, args)
        if isinstance(func, ast.Name) and func.id in self.functions and func.id not in _bound_in(scope, func.id):
            return self._function_call(self.functions[func.id], e, scope, line)
        parts = [func.value] if isinstance(func, ast.Attribute) else []
        return _combine([self.expr(a, scope, line) for a in [*parts, *args]])

    def resolve(self, dotted: Optional[str], scope: Scope) -> Any:
        """The live object a dotted name stands for here, following a parameter to the caller's argument."""
        if not dotted:
            return None
        head, _, rest = dotted.partition(".")
        if head in scope.args and not self.reaching(scope, head, 10 ** 9):
            arg, caller = scope.args[head]
            outer = dotted_text(arg)
            return self.resolve(f"{outer}.{rest}" if rest else outer, caller) if outer else None
        return scope.live(dotted)

    def is_factory(self, e: ast.Call) -> bool:
        func = e.func
        return isinstance(func, ast.Attribute) and func.attr in _FACTORIES and \
            isinstance(func.value, ast.Name) and func.value.id in self.torch

    def _factory(self, e: ast.Call, scope: Scope, line: int) -> Flow:
        if any(k.arg == "requires_grad" and not _is_false(k.value) for k in e.keywords):
            return GRAD
        if e.func.attr in _COPIES and e.args:  # type: ignore[attr-defined]
            inner = self.expr(e.args[0], scope, line)
            if inner.grad:  # NB: copy-constructing a tensor that has a graph keeps the values only
                return Flow(False, (Cause(CUT, e.lineno, node=e),))
            cuts = tuple(c for c in inner.causes if c.kind == CUT)
            if cuts:  # `torch.from_numpy(h.detach().numpy())`: the cut inside is the cause
                return Flow(False, cuts)
        elif e.func.attr not in _TAKES_REQUIRES_GRAD and e.args:  # type: ignore[attr-defined]
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
        inputs = _combine([self.expr(a, scope, line) for a in args])
        if not params:
            return inputs
        name = dotted_text(e.func) or ""
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
            return _combine([self.expr(a, scope, line) for a in e.args])
        inner = Scope(fn, scope_statements(fn), lambda _name: None, _bind(fn, e, scope))
        return self._returns(fn, inner)

    def _returns(self, fn: ast.AST, scope: Scope) -> Flow:
        self._depth += 1
        try:
            ends = [s for s in scope.stmts if isinstance(s, ast.Return) and s.value is not None]
            return _combine([self._statement_flow(s, s.value, "", scope) for s in ends]) if ends else GRAD
        finally:
            self._depth -= 1

    # -- names and the assignments that made them --
    def name(self, name: str, scope: Scope, line: int) -> Flow:
        defs = self.reaching(scope, name, line)
        # NB: a name bound more than once has its live value from the failing line only
        once = len([s for s in scope.stmts if _binds(s, name)]) <= 1
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
        return _combine(flows)

    def reaching(self, scope: Scope, name: str, line: int) -> List[ast.stmt]:
        """The last binding before `line`, and bindings later in a loop around `line` (the next pass)."""
        defs = [s for s in scope.stmts if _binds(s, name)]
        before = [d for d in defs if d.lineno < line and not _contains_line(d, line)] or \
            [d for d in defs if isinstance(d, ast.For) and _contains_line(d, line)]
        found = before[-1:]
        for loop in _loops_around(scope, line):
            found += [d for d in defs if d.lineno > line and _contains_line(loop, d.lineno) and d not in found]
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
            flow = _combine([flow, self.name(name, scope, stmt.lineno)])
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
    from ..names import attribute_without_code

    def live(dotted: str) -> Any:
        head, _, rest = dotted.partition(".")
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
    return [s for s in scope.stmts if _binds(s, name)] if not isinstance(scope.node, ast.Module) else []


def _contains_line(stmt: ast.stmt, line: int) -> bool:
    return stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)


def _is_false(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _false_arg(call: ast.Call) -> bool:
    return any(_is_false(a) for a in call.args) or any(_is_false(k.value) for k in call.keywords)


def _callee_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def dotted_text(node: ast.AST) -> Optional[str]:
    """`model.fc.weight` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


# -- where backward was called, and on what --

@dataclass(frozen=True)
class BackwardSite:
    stmt: ast.stmt
    call: ast.Call
    target: Optional[ast.expr]  # the expression whose graph backward() wanted
    scope: Scope


def backward_site(ctx: RuleContext, tree: ast.Module, index: int) -> Optional[BackwardSite]:
    lineno = ctx.record.error_lineno
    stmt = enclosing_statement(tree, lineno) if lineno else None
    if stmt is None:
        return None
    for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
        name = _callee_name(call)
        if name == "backward" and isinstance(call.func, ast.Attribute) and dotted_text(call.func) not in (
                "torch.autograd.backward", "autograd.backward"):
            return BackwardSite(stmt, call, call.func.value, error_scope(ctx, tree, stmt))
        if name in ("backward", "grad") and call.args:
            first = call.args[0]
            if isinstance(first, (ast.List, ast.Tuple)):
                first = first.elts[index] if index < len(first.elts) else None
            return BackwardSite(stmt, call, first, error_scope(ctx, tree, stmt))
    return None


def error_scope(ctx: RuleContext, tree: ast.Module, stmt: ast.stmt) -> Scope:
    """The innermost function around `stmt` (its locals are the error frame's), else the cell."""
    best: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _contains_line(node, stmt.lineno) \
                and node.lineno >= getattr(best, "lineno", 0):
            best = node
    return Scope(best, scope_statements(best), ctx.names.lookup)


# -- the missing-requires-grad rule --

@rule(KIND, matches=(
    "element 0 of tensors does not require grad and does not have a grad_fn",
), fix="per cause: `requires_grad=True` on the creating call; the forward moved out of `torch.no_grad()`; "
       "the `.detach()` / `.data` cut dropped")
def missing_requires_grad(ctx: RuleContext) -> Optional[Diagnosis]:
    """backward() was called on a tensor that has no graph: nothing on its way requires grad."""
    if not isinstance(ctx.exception, RuntimeError):
        return None
    index = match_no_grad_fn(ctx.error_message)
    if index is None:
        return None
    tree = cell_tree(ctx.record.source)
    site = backward_site(ctx, tree, index) if tree is not None else None
    if site is None or site.target is None:
        return _unknown(ctx, None, None, unseen=tree is not None)
    tracer = Tracer(ctx, tree, site.scope, site.stmt.lineno)
    flow = tracer.expr(site.target, site.scope, site.stmt.lineno)
    loss = Loss.of(ctx, site)
    return explain(ctx, tracer, site, loss, flow)


@dataclass(frozen=True)
class Loss:
    """What backward() was called on: its text in the cell, its name and live tensor when it has them."""

    text: str
    name: str
    tensor: Optional[torch.Tensor]
    lineno: int
    call: str  # `loss.backward()`, `torch.autograd.grad(...)`

    @staticmethod
    def of(ctx: RuleContext, site: BackwardSite) -> "Loss":
        text = code_text(ctx.record.source, site.target)
        dotted = dotted_text(site.target) if site.target is not None else None
        obj = site.scope.live(dotted) if dotted else None
        func = site.call.func
        call = f"{text}.backward()" if isinstance(func, ast.Attribute) and func.value is site.target else \
            f"{code_text(ctx.record.source, func)}(...)"
        return Loss(text, dotted or "", obj if isinstance(obj, torch.Tensor) else None, site.stmt.lineno, call)

    def facts(self) -> List[TensorFact]:
        fact = fact_for(self.name, self.tensor) if self.tensor is not None and self.name else None
        return [fact] if fact is not None else []


def explain(ctx: RuleContext, tracer: Tracer, site: BackwardSite, loss: Loss, flow: Flow) -> Diagnosis:
    causes = [] if flow.grad else list(flow.causes)
    if loss.tensor is not None and loss.tensor.is_inference() and not any(c.kind == NO_GRAD for c in causes):
        return _unknown(ctx, loss, "missing_rg.why_inference")
    for kind, explain_kind in ((NO_GRAD, _no_grad), (CUT, _cut), (FROZEN, _frozen)):
        found = [c for c in causes if c.kind == kind]
        if found:
            return explain_kind(ctx, tracer, site, loss, found)
    leaves = [c for c in causes if c.kind in (LEAF, OUTSIDE)]
    if leaves:
        return _leaves(ctx, tracer, site, loss, leaves)
    why = None if torch.is_grad_enabled() else "missing_rg.why_grad_mode_off"
    return _unknown(ctx, loss, why)


def _diagnosis(ctx: RuleContext, loss: Optional[Loss], *, title: str, summary: str, why: str,
               lines: Sequence[Optional[int]], names: Sequence[str], tensors: Sequence[TensorFact],
               fix: Optional[Fix]) -> Diagnosis:
    line = ctx.record.error_lineno
    what = ctx.say("missing_rg.what", loss=loss.text, lineno=loss.lineno, call=loss.call) if loss is not None else \
        ctx.say("missing_rg.what_unseen", lineno=line)
    shown = sorted({n for n in lines if n}) or [line]
    facts = (loss.facts() if loss is not None else []) + [t for t in tensors if t is not None]
    return ctx.diagnosis(KIND, ERROR, title=title, summary=summary, what=what, why=why, where=ctx.where(line),
                         lines=shown, names=list(dict.fromkeys(n for n in names if n)),
                         tensors=list({f.name: f for f in facts}.values()), fix=fix)


def _unknown(ctx: RuleContext, loss: Optional[Loss], why_key: Optional[str], unseen: bool = True) -> Diagnosis:
    """What is known when the cause was not found; `unseen`: backward() ran in code outside the cell."""
    line = ctx.record.error_lineno
    why = [ctx.say("missing_rg.why_graph")]
    if loss is None and unseen:
        why.append(ctx.say("missing_rg.why_unseen", lineno=line, code=_line_code(ctx, line)))
    why.append(ctx.say(why_key) if why_key else ctx.say("missing_rg.why_unknown"))
    tensors = _facts_on_line(ctx, line)
    title, summary = (ctx.say("missing_rg.title_unknown", loss=loss.text),
                      ctx.say("missing_rg.summary_unknown", loss=loss.text)) if loss is not None else \
        (ctx.say("missing_rg.title_unseen"),
         ctx.say("missing_rg.summary_unseen" if unseen else "missing_rg.summary_unread", lineno=line))
    return _diagnosis(ctx, loss, title=title, summary=summary, why=" ".join(why), lines=[line],
                      names=[t.name for t in tensors], tensors=tensors, fix=None)


def _facts_on_line(ctx: RuleContext, lineno: Optional[int]) -> Sequence[TensorFact]:
    try:
        return ctx.facts_on_line(lineno)
    except RuntimeError:  # NB: facts of an inference tensor (its version) or a no_grad view torch will not give
        return ()


def _line_code(ctx: RuleContext, lineno: Optional[int]) -> str:
    return " ".join(ctx.record.source_line(lineno).split("#")[0].split())


def join(ctx: RuleContext, items: Sequence[str]) -> str:
    """`a`, `b` and `c` (in the card's language)."""
    items = list(items)
    if len(items) < 2:
        return "".join(items)
    return ctx.say("missing_rg.list", head=ctx.say("missing_rg.comma").join(items[:-1]), last=items[-1])


def _leaves(ctx: RuleContext, tracer: Tracer, site: BackwardSite, loss: Loss, leaves: List[Cause]
            ) -> Diagnosis:
    src = ctx.record.source
    named = list(dict.fromkeys(leaves))
    evidence = grad_evidence(tracer.tree)
    chosen = [c for c in named if c.name in evidence] or named
    shown = {c: quote(c.name) if c.name else f"`{code_text(src, c.node)}`" for c in chosen}
    names = join(ctx, list(shown.values()))
    why = [ctx.say("missing_rg.why_graph")]
    for c in chosen:
        why.append(ctx.say("missing_rg.why_leaf", name=shown[c], lineno=c.lineno,
                           code=code_text(src, c.stmt or c.node)) if c.kind == LEAF else
                   ctx.say("missing_rg.why_outside", name=shown[c]))
    used = [c for c in chosen if c.name in evidence]
    fix = _leaf_fix(ctx, tracer, chosen)
    if used:
        why.append(ctx.say("missing_rg.why_evidence", names=join(ctx, [quote(c.name) for c in used])))
    elif len(chosen) > 1:
        why.append(ctx.say("missing_rg.why_no_evidence" if fix is not None else "missing_rg.why_no_evidence_no_fix"))
    if fix is None and any(c.kind == OUTSIDE for c in chosen):
        why.append(ctx.say("missing_rg.why_outside_fix"))
    return _diagnosis(
        ctx, loss, title=ctx.say("missing_rg.title_leaf", loss=loss.text, names=names),
        summary=ctx.say("missing_rg.summary_leaf", loss=loss.text, names=names), why=" ".join(why),
        lines=[c.lineno for c in chosen] + [site.stmt.lineno], names=[c.name for c in chosen],
        tensors=[_fact(site.scope, c) for c in chosen], fix=fix)


def _fact(scope: Scope, cause: Cause) -> Optional[TensorFact]:
    obj = cause.obj if cause.obj is not None else scope.live(cause.name) if cause.name else None
    return fact_for(cause.name, obj) if obj is not None else None


def _leaf_fix(ctx: RuleContext, tracer: Tracer, chosen: List[Cause]) -> Optional[Fix]:
    if not chosen or len(chosen) > MAX_LEAVES or any(c.kind != LEAF for c in chosen):
        return None
    edits: List[TextEdit] = []
    for c in chosen:
        if isinstance(c.obj, torch.Tensor) and not (c.obj.is_floating_point() or c.obj.is_complex()):
            return None  # NB: requires_grad=True on an integer tensor would raise
        found = leaf_edits(ctx.record.source, c.node, tracer.torch)
        if not found:
            return None
        edits += found
    lines = sorted({str(c.lineno) for c in chosen if c.lineno}, key=int)
    names = join(ctx, [quote(c.name) or f"`{code_text(ctx.record.source, c.node)}`" for c in chosen])
    where = ctx.say("missing_rg.on_line" if len(lines) == 1 else "missing_rg.on_lines", lines=join(ctx, lines))
    return make_fix(ctx.record.source, edits, ctx.say("missing_rg.fix_leaf", names=names, where=where))


def leaf_edits(source: str, value: Optional[ast.AST], aliases: Set[str]) -> List[TextEdit]:
    """`torch.zeros(3)` -> `torch.zeros(3, requires_grad=True)`; any other value `v` -> `v.requires_grad_()`."""
    if not isinstance(value, ast.expr):
        return []
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
            value.func.attr in _TAKES_REQUIRES_GRAD and isinstance(value.func.value, ast.Name) and \
            value.func.value.id in aliases:
        for k in value.keywords:
            if k.arg == "requires_grad":
                return [TextEdit(*node_span(source, k.value), "True")]
            if k.arg is None:
                return []  # NB: **kwargs may already hold requires_grad
        last = (value.args + [k.value for k in value.keywords])
        if not last:
            return []
        _, end = node_span(source, last[-1])
        return [TextEdit(end, end, ", requires_grad=True")]
    start, end = node_span(source, value)
    if isinstance(value, (ast.Call, ast.Name, ast.Attribute, ast.Subscript)):
        return [TextEdit(end, end, ".requires_grad_()")]
    return [TextEdit(start, start, "("), TextEdit(end, end, ").requires_grad_()")]


def _no_grad(ctx: RuleContext, tracer: Tracer, site: BackwardSite, loss: Loss, found: List[Cause]
             ) -> Diagnosis:
    first = min(found, key=lambda c: c.lineno or 0)
    block = first.node
    header = code_text(ctx.record.source, block).splitlines()[0].rstrip(":") if not isinstance(
        block, ast.expr) else "@" + code_text(ctx.record.source, block)
    names = [c.name for c in found if c.name]
    name = quote(names[0]) if names else loss.text
    why = [ctx.say("missing_rg.why_graph"),
           ctx.say("missing_rg.why_no_grad", name=name, lineno=first.lineno, header=header,
                   block_line=block.lineno)]
    fix = no_grad_fix(ctx, tracer, site, block) if isinstance(block, (ast.With, ast.expr)) else None
    if fix is None:
        why.append(ctx.say("missing_rg.why_no_grad_no_fix", header=header))
    elif isinstance(block, ast.With) and _modules_called(ctx, block, tracer) > 1:
        why.append(ctx.say("missing_rg.why_no_grad_part", header=header))
    return _diagnosis(
        ctx, loss, title=ctx.say("missing_rg.title_no_grad", name=name, header=header),
        summary=ctx.say("missing_rg.summary_no_grad", name=name, lineno=first.lineno, header=header,
                        loss=loss.text),
        why=" ".join(why), lines=[block.lineno, first.lineno, site.stmt.lineno], names=names,
        tensors=[], fix=fix)


def _modules_called(ctx: RuleContext, block: ast.With, tracer: Tracer) -> int:
    """How many layers the moved lines call (`self.fc(x)`, `model(x)`): two or more may be a frozen part + a head."""
    called = set()
    for stmt in (s for s in tracer.path if _contains_line(block, s.lineno)):
        for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
            dotted = dotted_text(call.func) or ""
            if dotted.startswith("self.") or isinstance(ctx.names.lookup(dotted), torch.nn.Module):
                called.add(dotted)
    return len(called)


def no_grad_fix(ctx: RuleContext, tracer: Tracer, site: BackwardSite, block: ast.AST) -> Optional[Fix]:
    """Move the forward out of the grad-disabling block: dedent those lines, keep the rest in the block."""
    src = ctx.record.source
    lines = src.splitlines(keepends=True)
    offs = line_offsets(src)
    if isinstance(block, ast.expr):  # a decorator: drop its line when the whole step runs in that function
        fn = site.scope.node
        if block not in getattr(fn, "decorator_list", ()) or block.lineno != block.end_lineno or \
                lines[block.lineno - 1].strip() != "@" + code_text(src, block):
            return None
        edit = TextEdit(offs[block.lineno - 1], offs[block.lineno], "")
        return make_fix(src, [edit], ctx.say("missing_rg.fix_decorator", lineno=block.lineno))
    if len(block.items) != 1 or block.body[0].lineno == block.lineno or \
            block.items[0].context_expr.end_lineno != block.lineno:
        return None
    body = block.body
    inside = [i for i, s in enumerate(body) if any(_contains_line(s, p.lineno) for p in tracer.path)
              or _contains_line(s, site.stmt.lineno)]
    if not inside:
        return None
    first, last = min(inside), max(inside)
    head = lines[block.lineno - 1]
    outer, inner = indent_of(head), indent_of(lines[body[0].lineno - 1])
    if not inner.startswith(outer) or inner == outer:
        return None
    step = len(inner) - len(outer)
    start, end = body[first].lineno, body[last].end_lineno or body[last].lineno
    edits = [TextEdit(offs[n - 1], offs[n - 1] + step, "") for n in range(start, end + 1)
             if lines[n - 1].startswith(inner)]
    if first == 0:
        edits.append(TextEdit(offs[block.lineno - 1], offs[block.lineno], ""))
    if last < len(body) - 1:
        edits.append(TextEdit(offs[body[last + 1].lineno - 1], offs[body[last + 1].lineno - 1],
                              head if head.endswith("\n") else head + "\n"))
    key = "missing_rg.fix_no_grad_line" if start == end else "missing_rg.fix_no_grad"
    return make_fix(src, edits, ctx.say(key, start=start, end=end, header=head.strip().rstrip(":")))


def _cut(ctx: RuleContext, tracer: Tracer, site: BackwardSite, loss: Loss, found: List[Cause]) -> Diagnosis:
    c = found[0]
    src = ctx.record.source
    how = _cut_kind(c.node)
    cut = _short_cut(c.node)
    # NB: after `.item()` / `.numpy()` the name holds a number or an array: say what lost its grad instead
    name = quote(c.name) if c.name and how in ("detach", "data", "copy") else f"`{loss.text}`"
    code = code_text(src, enclosing_statement(tracer.tree, c.lineno) if c.lineno else None) or cut
    why = [ctx.say("missing_rg.why_graph"),
           ctx.say(f"missing_rg.why_cut_{how}", name=name, lineno=c.lineno, cut=cut, code=code)]
    fix, key = cut_fix(ctx, tracer, c)
    why.append(ctx.say(key, name=name, lineno=c.lineno, cut=cut))
    return _diagnosis(
        ctx, loss, title=ctx.say("missing_rg.title_cut", cut=_short_cut(c.node), lineno=c.lineno, loss=loss.text),
        summary=ctx.say("missing_rg.summary_cut", cut=_short_cut(c.node), lineno=c.lineno, loss=loss.text),
        why=" ".join(why), lines=[c.lineno, site.stmt.lineno], names=[c.name], tensors=[], fix=fix)


def _cut_kind(node: Optional[ast.AST]) -> str:
    if isinstance(node, ast.Attribute):
        return "data"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CUT_METHODS:
        return node.func.attr
    return "copy"


def _short_cut(node: Optional[ast.AST]) -> str:
    kind = _cut_kind(node)
    if kind == "data":
        return ".data"
    if kind == "copy" and isinstance(node, ast.Call):
        return (dotted_text(node.func) or "torch.tensor") + "(...)"
    return f".{kind}()"


def cut_fix(ctx: RuleContext, tracer: Tracer, cause: Cause) -> Tuple[Optional[Fix], str]:
    """(fix, the sentence saying what to do): drop the cut, or make a manual update's result a leaf again."""
    src, node, stmt = ctx.record.source, cause.node, cause.stmt
    kind = _cut_kind(node)
    if kind == "copy" and isinstance(node, ast.Call):
        return _copy_fix(ctx, node)
    if kind not in ("detach", "data") or stmt is None:
        return None, "missing_rg.why_cut_no_fix"
    target = cause.name
    value = getattr(stmt, "value", None)
    inner = node.func.value if kind == "detach" else node.value  # type: ignore[union-attr]
    if kind == "detach" and value is node and target and _reads(inner, target, grad=True):
        # NB: `w = (w - lr * w.grad).detach()`: a manual update that rebuilds the leaf, minus requires_grad
        _, end = node_span(src, node)
        fix = make_fix(src, [TextEdit(end, end, ".requires_grad_()")],
                       ctx.say("missing_rg.fix_update_leaf", name=quote(target), lineno=cause.lineno))
        return fix, "missing_rg.why_cut_update"
    container = enclosing_statement(tracer.tree, node.lineno)
    if container is None or _cut_below(container, node):
        return None, "missing_rg.why_cut_no_fix"
    _, inner_end = node_span(src, inner)
    _, end = node_span(src, node)
    fix = make_fix(src, [TextEdit(inner_end, end, "")],
                   ctx.say("missing_rg.fix_cut", cut=_short_cut(node), lineno=cause.lineno))
    return fix, "missing_rg.why_cut_fix"


def _copy_fix(ctx: RuleContext, call: ast.Call) -> Tuple[Optional[Fix], str]:
    """`torch.tensor([a, b])` -> `torch.stack([a, b])`; `torch.tensor(t)` -> `t.clone()`: copies that keep the graph."""
    src = ctx.record.source
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "tensor" and isinstance(func.value, ast.Name)) or \
            len(call.args) != 1 or call.keywords:
        return None, "missing_rg.why_cut_no_fix"
    arg = call.args[0]
    if isinstance(arg, (ast.List, ast.Tuple)):
        if not arg.elts or not all(isinstance(ctx.names.lookup(_root(e) or ""), torch.Tensor) for e in arg.elts):
            return None, "missing_rg.why_cut_no_fix"
        edit = TextEdit(*node_span(src, func), f"{func.value.id}.stack")
        text = f"{func.value.id}.stack(...)"
    else:
        inner = code_text(src, arg)
        text = f"{inner}.clone()" if isinstance(arg, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else \
            f"({inner}).clone()"
        edit = TextEdit(*node_span(src, call), text)
    fix = make_fix(src, [edit], ctx.say("missing_rg.fix_copy", code=text, lineno=call.lineno))
    return fix, ("missing_rg.why_cut_copy_fix" if fix is not None else "missing_rg.why_cut_no_fix")


def _root(expr: ast.AST) -> Optional[str]:
    """`a` for `a`, `a.sum()`, `a[0]`, `a.b.mean(1)`: the name an expression is computed from, if one."""
    while isinstance(expr, (ast.Attribute, ast.Call, ast.Subscript)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _reads(expr: ast.AST, name: str, grad: bool = False) -> bool:
    """Whether `expr` reads `name` (with `grad`: reads `name.grad`)."""
    for n in ast.walk(expr):
        if grad and isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.value, ast.Name) \
                and n.value.id == name:
            return True
        if not grad and isinstance(n, ast.Name) and n.id == name:
            return True
    return False


def _cut_below(value: ast.AST, cut: ast.AST) -> bool:
    """Another cut (`.numpy()`, `.item()`, `torch.tensor(...)`) wraps `cut` inside `value`: dropping it alone breaks."""
    for n in ast.walk(value):
        if n is cut or not isinstance(n, (ast.Call, ast.Attribute)):
            continue
        wraps = any(c is cut for c in ast.walk(n))
        if wraps and (isinstance(n, ast.Attribute) and n.attr == "data" or isinstance(n, ast.Call) and (
                _callee_name(n) in _CUT_METHODS | _COPIES or _callee_name(n) in ("float", "int", "array"))):
            return True
    return False


def _frozen(ctx: RuleContext, tracer: Tracer, site: BackwardSite, loss: Loss, found: List[Cause]) -> Diagnosis:
    c = found[0]
    freeze = freeze_statement(tracer.tree, c.name)
    why = [ctx.say("missing_rg.why_graph"),
           ctx.say("missing_rg.why_frozen", name=quote(c.name), lineno=c.lineno,
                   count=sum(1 for _ in c.obj.parameters()) if c.obj is not None else 0)]
    why.append(ctx.say("missing_rg.why_frozen_here", lineno=freeze.lineno, code=code_text(ctx.record.source, freeze))
               if freeze is not None else ctx.say("missing_rg.why_frozen_before", name=quote(c.name)))
    head = _last_child(c.name, c.obj)
    why.append(ctx.say("missing_rg.why_frozen_no_fix" if head != c.name else "missing_rg.why_frozen_no_fix_all",
                       name=c.name, head=head))
    facts = [fact_for(c.name, c.obj)] if c.obj is not None else []
    return _diagnosis(
        ctx, loss, title=ctx.say("missing_rg.title_frozen", name=quote(c.name)),
        summary=ctx.say("missing_rg.summary_frozen", name=quote(c.name), loss=loss.text), why=" ".join(why),
        lines=[freeze.lineno if freeze is not None else None, c.lineno, site.stmt.lineno], names=[c.name],
        tensors=facts, fix=None)


def _last_child(name: str, module: Any) -> str:
    """`model.fc` / `model[2]`: how to spell the module's last child, the usual head to train."""
    children = list(module.named_children()) if isinstance(module, torch.nn.Module) else []
    if not children:
        return name
    child = children[-1][0]
    return f"{name}[{child}]" if child.isdigit() else f"{name}.{child}"


def freeze_statement(tree: ast.Module, module: str) -> Optional[ast.stmt]:
    """The first statement that turns requires_grad off (`p.requires_grad = False`, `.requires_grad_(False)`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_false(node.value) and any(
                isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in node.targets):
            found.append(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                _callee_name(node.value) == "requires_grad_" and _false_arg(node.value):
            found.append(node)
    head = module.split(".")[0]
    mine = [n for n in found if head in {x.id for x in ast.walk(n) if isinstance(x, ast.Name)}]
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For) and head in {
        x.id for x in ast.walk(n.iter) if isinstance(x, ast.Name)} and any(_contains_line(n, f.lineno) for f in found)]
    best = sorted(mine + [f for f in found for lp in loops if _contains_line(lp, f.lineno)], key=lambda n: n.lineno)
    return best[0] if best else (found[0] if found else None)


# -- the integer-requires-grad rule --

@rule(INT_KIND, matches=(
    "Only Tensors of floating point and complex dtype can require gradients",
    "only Tensors of floating point dtype can require gradients (older torch)",
), fix="a floating point tensor (`dtype=torch.float32`, `1.0` literals, `.float()`)")
def integer_requires_grad(ctx: RuleContext) -> Optional[Diagnosis]:
    """requires_grad was asked of an integer (or bool) tensor: only floating point can have gradients."""
    if not isinstance(ctx.exception, RuntimeError) or not match_not_float(ctx.error_message):
        return None
    lineno = ctx.record.error_lineno
    tree = cell_tree(ctx.record.source)
    stmt = enclosing_statement(tree, lineno) if tree is not None and lineno else None
    aliases = (torch_aliases(tree) if tree is not None else set()) | {"torch"}
    found = _int_creation(ctx, tree, stmt, aliases) if stmt is not None else None
    call, name, obj = found if found is not None else (None, "", None)
    dtype = dtype_name(obj.dtype) if isinstance(obj, torch.Tensor) else _literal_dtype(call)
    subject = quote(name) if name else (f"`{code_text(ctx.record.source, call)}`" if call is not None else
                                        ctx.say("int_rg.the_tensor"))
    dtype = dtype or ctx.say("int_rg.an_integer")
    why = [ctx.say("int_rg.why", name=subject, dtype=dtype)]
    if call is not None and _callee_name(call) in ("tensor", "arange") and \
            not any(k.arg == "dtype" for k in call.keywords):
        why.append(ctx.say("int_rg.why_literal", call=_callee_name(call)))
    fix = _float_fix(ctx, call, subject) if call is not None else None
    why.append(ctx.say("int_rg.why_fix" if fix is not None else "int_rg.why_no_fix",
                       default=dtype_name(torch.get_default_dtype())))
    facts = [f for f in [fact_for(name, obj)] if f is not None] if name and obj is not None else []
    return ctx.diagnosis(
        INT_KIND, ERROR, title=ctx.say("int_rg.title", name=subject, dtype=dtype),
        summary=ctx.say("int_rg.summary", name=subject, dtype=dtype),
        what=ctx.say("int_rg.what", lineno=lineno, name=subject, dtype=dtype), why=" ".join(why),
        where=ctx.where(lineno),
        lines=sorted({n for n in (getattr(call, "lineno", None), lineno) if n}), names=[name] if name else [],
        tensors=facts, fix=fix)


def _int_creation(ctx: RuleContext, tree: ast.Module, stmt: ast.stmt, aliases: Set[str]
                  ) -> Optional[Tuple[ast.Call, str, Any]]:
    """(the call that made the integer tensor, its name, the live tensor) for the failing statement."""
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
    name = (dotted_text(target) or "") if target is not None else ""
    for call in calls:  # `torch.tensor([1, 2], requires_grad=True)`
        if _is_torch_factory(call, aliases) and any(k.arg == "requires_grad" for k in call.keywords):
            return call, name, None
    subject: Optional[ast.AST] = None
    for call in calls:  # `x.requires_grad_()`, `nn.Parameter(x)`
        if _callee_name(call) == "requires_grad_" and isinstance(call.func, ast.Attribute):
            subject = call.func.value
        elif _callee_name(call) == "Parameter" and call.args:
            subject = call.args[0]
    if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                                            for t in stmt.targets):  # `x.requires_grad = True`
        subject = next(t.value for t in stmt.targets if isinstance(t, ast.Attribute))
    if isinstance(subject, ast.Call) and _is_torch_factory(subject, aliases):
        return subject, name, None
    if isinstance(subject, ast.Name):
        obj = ctx.names.lookup(subject.id)
        made = [s for s in scope_statements(tree) if isinstance(s, ast.Assign) and _binds(s, subject.id)
                and s.lineno < stmt.lineno]
        value = made[-1].value if made else None
        if isinstance(value, ast.Call) and _is_torch_factory(value, aliases):
            return value, subject.id, obj
        return None if obj is None else (None, subject.id, obj)  # type: ignore[return-value]
    return None


def _is_torch_factory(call: ast.Call, aliases: Set[str]) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in _FACTORIES and isinstance(func.value, ast.Name) \
        and func.value.id in aliases


def _literal_dtype(call: Optional[ast.Call]) -> Optional[str]:
    """The dtype a creating call gives, read from its text (`dtype=`, or the kind of its literal)."""
    if call is None:
        return None
    for k in call.keywords:
        if k.arg == "dtype":
            spelled = getattr(torch, (dotted_text(k.value) or "").split(".")[-1] or "_", None)
            return dtype_name(spelled) if isinstance(spelled, torch.dtype) else None
    values = [n.value for a in call.args[:1] for n in ast.walk(a) if isinstance(n, ast.Constant)]
    if _callee_name(call) == "tensor" and values and all(isinstance(v, bool) for v in values):
        return "bool"
    return "int64" if _callee_name(call) in ("arange", "randint", "randperm", "tensor") else None


def _float_fix(ctx: RuleContext, call: ast.Call, subject: str) -> Optional[Fix]:
    """Give the creating call a floating-point dtype: add `dtype=torch.float32`, or replace an integer one."""
    src = ctx.record.source
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in _TAKES_REQUIRES_GRAD:
        return None
    module = call.func.value.id  # type: ignore[attr-defined]
    dtype = f"{module}.{dtype_name(torch.get_default_dtype())}"
    edits: List[TextEdit] = []
    for k in call.keywords:
        if k.arg == "dtype":
            edits = [TextEdit(*node_span(src, k.value), dtype)]
        elif k.arg is None:
            return None
    if not edits:
        args = call.args + [k.value for k in call.keywords]
        if not args:
            return None
        anchor = next((k for k in call.keywords if k.arg == "requires_grad"), None)
        if anchor is not None:
            start, _ = node_span(src, anchor.value)
            at = start - len("requires_grad=")
            if src[at:start] != "requires_grad=":
                return None
            edits = [TextEdit(at, at, f"dtype={dtype}, ")]
        else:
            _, end = node_span(src, args[-1])
            edits = [TextEdit(end, end, f", dtype={dtype}")]
    return make_fix(src, edits, ctx.say("int_rg.fix", lineno=call.lineno, dtype=dtype, name=subject))


# -- shared ast helpers (rules/leaf.py uses them too) --

def torch_aliases(tree: ast.AST) -> Set[str]:
    """Names the cell binds to the torch module (`import torch as T` -> {'T'})."""
    found: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.asname or a.name for a in node.names if a.name == "torch"}
    return found


def torch_name(ctx: RuleContext, tree: Optional[ast.AST]) -> Optional[str]:
    """How the cell spells `torch`: its own `import torch as T`, else a name bound to torch in the namespace."""
    aliases = sorted(torch_aliases(tree)) if tree is not None else []
    if aliases:
        return "torch" if "torch" in aliases else aliases[0]
    if ctx.names.lookup("torch") is torch:
        return "torch"
    return next((name for name, obj in ctx.names.objects() if obj is torch), None)


def grad_off_call(node: ast.AST) -> bool:
    """`torch.no_grad()`, `inference_mode()`, `set_grad_enabled(False)`: a call that turns autograd off."""
    if not isinstance(node, ast.Call):
        return False
    name = _callee_name(node)
    if name not in _GRAD_OFF:
        return False
    args = [*node.args, *(k.value for k in node.keywords)]
    if name == "set_grad_enabled":
        return bool(args) and _is_false(args[0])
    return not args or not _is_false(args[0])


def grad_off_around(stmt: ast.stmt, scope: ast.AST) -> Optional[ast.AST]:
    """The innermost `with torch.no_grad():` (or inference_mode) in `scope` around `stmt`, or a no_grad
    decorator of the function `scope` is; None when autograd is on there."""
    best: Optional[ast.AST] = None
    for node in scope_statements(scope):
        if isinstance(node, (ast.With, ast.AsyncWith)) and node.body[0].lineno <= stmt.lineno <= \
                (node.end_lineno or node.lineno) and any(grad_off_call(i.context_expr) for i in node.items):
            if best is None or node.lineno > best.lineno:
                best = node
    if best is None:
        for deco in getattr(scope, "decorator_list", ()):
            if grad_off_call(deco) or (dotted_text(deco) or "").split(".")[-1] in ("no_grad", "inference_mode"):
                return deco
    return best


def grad_evidence(tree: ast.AST) -> Set[str]:
    """Names the cell treats as trained: their `.grad` is read, or they are given to an optimizer."""
    found: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.value, ast.Name):
            found.add(node.value.id)
        callee = dotted_text(node.func) or "" if isinstance(node, ast.Call) else ""
        if callee.split(".")[-2:-1] == ["optim"] and node.args:
            found |= {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name)}
        if callee.endswith("autograd.grad") and len(node.args) > 1:  # `autograd.grad(y, [w, b])`
            found |= {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
    return found


def code_text(source: str, node: Optional[ast.AST]) -> str:
    """A node's source as one line (or a statement's first line), without its comment."""
    if node is None or not hasattr(node, "lineno"):
        return ""
    start, end = node_span(source, node)
    text = source[start:end]
    if isinstance(node, ast.stmt) and not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
        text = text.splitlines()[0]
    return " ".join(text.split())


def quote(name: str) -> str:
    return f"`{name}`" if name else ""
