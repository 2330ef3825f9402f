"""Shared helpers of the requires_grad family (rules/leaf.py uses them too): torch's names in the cell,
grad-disabling blocks, a node's text, a tensor's metadata where torch may refuse it.

May touch: the cell's ast and source text; of live objects, torch metadata only. Never runs user code.
"""
from __future__ import annotations

import ast
from typing import Any, List, Optional, Sequence, Set

import torch

from ... import catalog
from ...facts import fact_for as _fact_for
from ...cell import node_span
from ...model import TensorFact
from ..context import RuleContext

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


def join(ctx: RuleContext, items: Sequence[str]) -> str:
    """`a`, `b` and `c` (in the card's language)."""
    return catalog.listing(items, ctx.language)


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
