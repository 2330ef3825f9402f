"""Why nothing requires grad, the records: what a cause is, where backward() was called and on what, and the
cell's signs around it (the names it trains, the line that froze a module, the layers a block calls).
The trace that finds the causes is culprit_trace.py.

May touch: the cell's ast and source text; live objects through the NameIndex, torch metadata only. Never
runs user code; makes no fix and no sentence.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import torch

from ...cell import enclosing_statement
from ...model import TensorFact
from ..context import RuleContext
from ..kit import callee_name, code_text, dotted, fact_for, function_around, is_false, scope_statements, spans

# torch factories; those in the first set take `requires_grad=` (the others get `.requires_grad_()`)
TAKES_REQUIRES_GRAD = frozenset({
    "tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
    "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
    "randn_like", "randint_like"})
FACTORIES = TAKES_REQUIRES_GRAD | {"as_tensor", "from_numpy", "Tensor", "FloatTensor", "DoubleTensor",
                                  "normal", "asarray"}
# NB: `as_tensor(t)` / `asarray(t)` / `Tensor(t)` of a tensor keep its graph; `tensor(t)` copies the values only
COPIES = frozenset({"tensor", "from_numpy"})
CUT_METHODS = frozenset({"detach", "item", "tolist", "numpy"})

LEAF, NO_GRAD, CUT, FROZEN, OUTSIDE, NONDIFF = "leaf", "no_grad", "cut", "frozen", "outside", "nondiff"
# ops whose result is an index, an integer or a boolean: it has no grad_fn, so a loss computed through it has no
# graph (round / floor / sign keep one, with zero gradients: not these)
NONDIFF_METHODS = frozenset({"argmax", "argmin", "argsort", "long", "int", "bool", "short", "byte", "eq", "ne",
                             "gt", "lt", "ge", "le"})


METADATA = frozenset({"dtype", "device", "shape", "ndim", "is_cuda", "layout"})  # attributes: no values, no graph


@dataclass(frozen=True)
class Cause:
    """Why one input of the loss carries no gradient."""

    kind: str  # LEAF, NO_GRAD, CUT, FROZEN, OUTSIDE, NONDIFF
    lineno: Optional[int]
    name: str = ""  # the user's name for the tensor or module ("" when unnamed)
    node: Optional[ast.AST] = field(default=None, compare=False)  # creating call / cut / with / decorator
    stmt: Optional[ast.stmt] = field(default=None, compare=False)  # the assignment that made it
    obj: Any = field(default=None, compare=False, repr=False)  # the live tensor or module, if known
    where: str = ""  # the file of the cell the lines and nodes are in ("" : the trace's own cell)
    unit: Any = field(default=None, compare=False, repr=False)  # that cell (culprit_units.Unit); None: own
    # a NumPy round trip (`torch.tensor(x.detach().numpy())`): the tensor with a graph the copy was made from
    inner: Optional[ast.AST] = field(default=None, compare=False)


@dataclass(frozen=True)
class Flow:
    grad: bool
    causes: Tuple[Cause, ...] = ()


GRAD, NOTHING = Flow(True), Flow(False)


def combine(flows: Sequence[Flow]) -> Flow:
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
    unit: Any = None  # the cell it is in (culprit_units.Unit); None: the trace's own cell


# -- the cell's syntax --

def binds(stmt: ast.stmt, name: str) -> bool:
    """Whether `stmt` binds `name`: an assignment, a for-target, `with ... as name`."""
    targets: List[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For)):
        targets = [stmt.target]
    elif isinstance(stmt, ast.With):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))


def false_arg(call: ast.Call) -> bool:
    return any(is_false(a) for a in call.args) or any(is_false(k.value) for k in call.keywords)


def cut_kind(node: Optional[ast.AST]) -> str:
    """"data", "detach", "item", "tolist", "numpy", or "copy" (`torch.tensor(t)`)."""
    if isinstance(node, ast.Attribute):
        return "data"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CUT_METHODS:
        return node.func.attr
    return "copy"


def short_cut(node: Optional[ast.AST]) -> str:
    """The cut as a card names it: `.data`, `.detach()`, `torch.tensor(...)`."""
    kind = cut_kind(node)
    if kind == "data":
        return ".data"
    if kind == "copy" and isinstance(node, ast.Call):
        return (dotted(node.func) or "torch.tensor") + "(...)"
    return f".{kind}()"


# -- where backward() was called --

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
        name = callee_name(call)
        if name == "backward" and isinstance(call.func, ast.Attribute) and dotted(call.func) not in (
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
    node = function_around(tree, stmt.lineno)
    return Scope(node, scope_statements(node), ctx.names.lookup)


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
        name = dotted(site.target) if site.target is not None else None
        obj = site.scope.live(name) if name else None
        func = site.call.func
        call = f"{text}.backward()" if isinstance(func, ast.Attribute) and func.value is site.target else \
            f"{code_text(ctx.record.source, func)}(...)"
        return Loss(text, name or "", obj if isinstance(obj, torch.Tensor) else None, site.stmt.lineno, call)

    def facts(self) -> List[TensorFact]:
        fact = fact_for(self.name, self.tensor) if self.tensor is not None and self.name else None
        return [fact] if fact is not None else []


# -- the cell's signs around the cause --

def grad_evidence(tree: ast.AST) -> Set[str]:
    """Names the cell treats as trained: their `.grad` is read, or they are given to an optimizer."""
    found: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.value, ast.Name):
            found.add(node.value.id)
        callee = dotted(node.func) or "" if isinstance(node, ast.Call) else ""
        if callee.split(".")[-2:-1] == ["optim"] and node.args:
            found |= {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name)}
        if callee.endswith("autograd.grad") and len(node.args) > 1:  # `autograd.grad(y, [w, b])`
            found |= {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
    return found


def freeze_statement(tree: ast.Module, module: str) -> Optional[ast.stmt]:
    """The first statement that turns requires_grad off (`p.requires_grad = False`, `.requires_grad_(False)`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and is_false(node.value) and any(
                isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in node.targets):
            found.append(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                callee_name(node.value) == "requires_grad_" and false_arg(node.value):
            found.append(node)
    head = module.split(".")[0]
    mine = [n for n in found if head in {x.id for x in ast.walk(n) if isinstance(x, ast.Name)}]
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For) and head in {
        x.id for x in ast.walk(n.iter) if isinstance(x, ast.Name)} and any(spans(n, f.lineno) for f in found)]
    best = sorted(mine + [f for f in found for lp in loops if spans(lp, f.lineno)], key=lambda n: n.lineno)
    return best[0] if best else (found[0] if found else None)


def last_child(name: str, module: Any) -> str:
    """`model.fc` / `model[2]`: how to spell the module's last child, the usual head to train."""
    children = list(module.named_children()) if isinstance(module, torch.nn.Module) else []
    if not children:
        return name
    child = children[-1][0]
    return f"{name}[{child}]" if child.isdigit() else f"{name}.{child}"


def modules_called(ctx: RuleContext, block: ast.With, path: Set[ast.stmt]) -> int:
    """How many layers the traced lines in `block` call (`self.fc(x)`, `model(x)`): two or more may be a frozen
    part + a head."""
    called = set()
    for stmt in (s for s in path if spans(block, s.lineno)):
        for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
            name = dotted(call.func) or ""
            if name.startswith("self.") or isinstance(ctx.names.lookup(name), torch.nn.Module):
                called.add(name)
    return len(called)


def root(expr: ast.AST) -> Optional[str]:
    """`a` for `a`, `a.sum()`, `a[0]`, `a.b.mean(1)`: the name an expression is computed from, if one."""
    while isinstance(expr, (ast.Attribute, ast.Call, ast.Subscript)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def copies_tensors(ctx: RuleContext, call: Optional[ast.AST]) -> bool:
    """`torch.tensor([a, b])` whose items are each computed from a tensor: `torch.stack` would keep their graph."""
    arg = call.args[0] if isinstance(call, ast.Call) and len(call.args) == 1 else None
    return isinstance(arg, (ast.List, ast.Tuple)) and bool(arg.elts) and all(
        isinstance(ctx.names.lookup(root(e) or ""), torch.Tensor) for e in arg.elts)


def appended_items(scope: Scope, name: str) -> List[ast.expr]:
    """What `name.append(x)` / `name.extend(xs)` statements of the scope add to the list."""
    return [s.value.args[0] for s in scope.stmts if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
            and isinstance(s.value.func, ast.Attribute) and s.value.func.attr in ("append", "extend")
            and isinstance(s.value.func.value, ast.Name) and s.value.func.value.id == name and s.value.args]
