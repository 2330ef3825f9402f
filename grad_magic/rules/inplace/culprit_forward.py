"""Which forward line saved the tensor, in a run without anomaly mode (--fast, always-on).

Anomaly mode's forward trace names the line; without it, three pieces of runtime evidence narrow a search of
the user's text: the node whose saved value torch refuses now (graphprobe: `TanhBackward0`, and whether it
saved its output or an input), the write the tracker recorded (its innermost user frame, its target), and the
text of the function that made the write. The line is the last statement before the write, in that function,
whose expression makes a node of that type from the written tensor: its output assigned to the tensor's name
(`x = torch.tanh(a)` for a saved result), or the tensor's name an operand (`c = a * b` for a saved `self`).
A line that cannot be tied to all three is never claimed: the node alone is said then.

May touch: the run record (RunRecord.probed, the write's frames and modules), the user's text, module
registries of the modules that ran the write (never a module's attributes through its class). Never runs
user code; no wording.
"""
from __future__ import annotations

import ast
import re
import types
from typing import Any, FrozenSet, Iterator, List, Optional, Set, Tuple

import torch

from ...cell import cell_tree, enclosing_statement
from ...names import instance_dict
from ..context import RuleContext
from ..kit import callee_name, calls_in, dotted, function_around, scope_statements
from .culprit import Saved
from .culprit_place import Placed
from .message import SavedTensorError, parse_saved_tensor_error

# node (without "Backward0") -> the callee names that make it, and the operators that do
_MAKERS = {
    "Tanh": ({"tanh"}, ()), "Sigmoid": ({"sigmoid", "expit"}, ()), "Exp": ({"exp"}, ()),
    "Log": ({"log"}, ()), "Sqrt": ({"sqrt"}, ()), "Rsqrt": ({"rsqrt"}, ()), "Relu": ({"relu"}, ()),
    "Softmax": ({"softmax"}, ()), "LogSoftmax": ({"log_softmax"}, ()), "Sin": ({"sin"}, ()),
    "Cos": ({"cos"}, ()), "Pow": ({"pow", "square"}, (ast.Pow,)), "Mul": ({"mul", "multiply"}, (ast.Mult,)),
    "Div": ({"div", "divide", "true_divide"}, (ast.Div,)), "Mm": ({"mm", "matmul"}, (ast.MatMult,)),
    "Addmm": ({"addmm", "linear"}, (ast.MatMult,)), "Bmm": ({"bmm", "matmul"}, (ast.MatMult,)),
    "Gelu": ({"gelu"}, ()), "Silu": ({"silu"}, ()), "Erf": ({"erf"}, ()), "Reciprocal": ({"reciprocal"}, ()),
}
# a torch.nn module class -> the nodes its forward makes
_MODULES = {"Tanh": {"Tanh"}, "Sigmoid": {"Sigmoid"}, "ReLU": {"Relu"}, "Softmax": {"Softmax"},
            "LogSoftmax": {"LogSoftmax"}, "GELU": {"Gelu"}, "SiLU": {"Silu"}, "Linear": {"Addmm", "Mm", "Linear"}}
_VIEWS = frozenset({"view", "reshape", "narrow", "select", "transpose", "t", "unsqueeze", "squeeze", "expand",
                    "permute", "flatten", "view_as", "unflatten", "chunk", "split", "unbind"})


def forward_from_graph(ctx: RuleContext, err: SavedTensorError, p: Placed) -> Optional[Saved]:
    """The saved tensor as anomaly mode would have told it (the node, the forward line), from the graph after
    the failure; None when the graph gave nothing (a run with anomaly mode, or no node refuses this value)."""
    node = refusing_node(ctx, err)
    if node is None:
        return None  # NB: none, or several nodes of different types: which one backward() met is not known
    site = _forward_line(ctx, p, node, _saved_as(ctx, err))
    if site is None:
        return Saved(err, node, None, False)
    here = p.here.record.filename
    return Saved(err, node, site[1] if site[0] == here else None, True, site)


def _forward_line(ctx: RuleContext, p: Placed, node: str, saved: FrozenSet[str]) -> Optional[Tuple[str, int]]:
    """(file, line) of the last statement before the write, in the write's function, that makes `node` from
    the written tensor -- or, when the tensor is a parameter of that function (a helper that writes into its
    argument), before the call in its caller's, from the argument given; None when no statement is tied."""
    event, sources = p.event, ctx.record.sources
    if not event.frames or sources is None:
        return None
    output = all(s.startswith("result") for s in saved)
    if not output and any(s.startswith("result") for s in saved):
        return None  # NB: one node type saving the tensor as its output and as an input: not one way to look
    base = re.sub(r"Backward\d*$", "", node)
    modules = [m for m in (ref() for ref in getattr(event, "modules", ())) if m is not None]
    param: Optional[Tuple[str, int, str]] = None  # (function, position, name): the caller's argument is the tensor
    for filename, lineno in event.frames[:4]:
        tree = cell_tree(sources.text(filename))
        stmt = enclosing_statement(tree, lineno) if tree is not None else None
        if stmt is None:
            return None
        target = _written_name(stmt) if param is None else _argument_name(stmt, *param)
        if target is None:
            return None
        scope = function_around(tree, lineno)
        before = sorted((s for s in scope_statements(scope) if _simple(s) and s.lineno < stmt.lineno),
                        key=lambda s: s.lineno)
        names = {target, *_bases(before, target)}
        for s in reversed(before):
            if any(_makes(e, base, modules, scope, filename) for e in _tied(s, names, output)):
                return filename, s.lineno
        param = _parameter(scope, target, before)
        if param is None:
            return None
    return None


def _parameter(scope: ast.AST, name: str, before: List[ast.stmt]) -> Optional[Tuple[str, int, str]]:
    """(function, position, name) when `name` is a parameter of the function `scope` never bound again before
    the write: the caller's argument is the tensor."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    params = [a.arg for a in [*scope.args.posonlyargs, *scope.args.args]]
    bound = any(isinstance(s, (ast.Assign, ast.AnnAssign)) and any(
        dotted(t) == name for t in (s.targets if isinstance(s, ast.Assign) else [s.target])) for s in before)
    return (scope.name, params.index(name), name) if name in params and not bound else None


def _argument_name(stmt: ast.stmt, function: str, position: int, parameter: str) -> Optional[str]:
    """The name the caller's statement gives `function` for that parameter, when it is one plain name."""
    found = set()
    for call in calls_in(stmt):
        if callee_name(call) != function:
            continue
        keyword = next((k.value for k in call.keywords if k.arg == parameter), None)
        given = keyword if keyword is not None else call.args[position] if len(call.args) > position and not any(
            isinstance(a, ast.Starred) for a in call.args[:position + 1]) else None
        found.add(dotted(given) if given is not None else None)
    return found.pop() if len(found) == 1 else None


def _simple(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return))


def _written_name(stmt: ast.stmt) -> Optional[str]:
    """The one tensor name the write's statement writes: `x *= 2`, `x[0] = 0`, `x.add_(1)`, `torch.relu_(x)`,
    `F.relu(x, inplace=True)` / `self.act(x)` (the first argument), `out=x`; None when not exactly one."""
    found: Set[str] = set()
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    for t in targets:
        if isinstance(stmt, ast.AugAssign) or isinstance(t, ast.Subscript):
            name = dotted(t.value if isinstance(t, ast.Subscript) else t)
            found |= {name} if name else set()
    for call in calls_in(stmt):
        out = next((k.value for k in call.keywords if k.arg == "out"), None)
        name = callee_name(call)
        if out is not None:
            found.add(dotted(out) or "")
        elif name.endswith("_") and not name.startswith("_") and isinstance(call.func, ast.Attribute):
            receiver = dotted(call.func.value)
            if receiver in ("torch", "F", "torch.nn.functional", "nn.functional"):
                found.add(dotted(call.args[0]) or "" if call.args else "")
            else:
                found.add(receiver or "")
        elif call.args and not found:
            found.add(dotted(call.args[0]) or "")
    found.discard("")
    return found.pop() if len(found) == 1 else None


def _bases(before: List[ast.stmt], name: str) -> Set[str]:
    """The tensor a view name was cut from (`row = x[0]`, `v = x.view(-1)`), one step back."""
    for s in reversed(before):
        if isinstance(s, ast.Assign) and any(dotted(t) == name for t in s.targets):
            value = s.value
            if isinstance(value, ast.Subscript):
                return {dotted(value.value)} - {None}
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _VIEWS:
                return {dotted(value.func.value)} - {None}
            return set()
    return set()


def _tied(stmt: ast.stmt, names: Set[str], output: bool) -> Iterator[ast.AST]:
    """The expressions of `stmt` tied to the written tensor: its whole value when it is assigned to the tensor's
    name (a saved output); each expression with the name as a direct operand (a saved input)."""
    if output:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and any(dotted(t) in names for t in targets if t):
            yield stmt.value
        return
    for e in ast.walk(stmt):
        operands = [e.left, e.right] if isinstance(e, ast.BinOp) else \
            [*e.args, *([e.func.value] if isinstance(e.func, ast.Attribute) else [])] if isinstance(e, ast.Call) \
            else []
        if any(dotted(o) in names for o in operands):
            yield e


def _makes(e: ast.AST, base: str, modules: List[Any], scope: ast.AST, filename: str) -> bool:
    """Whether the expression `e` (its outermost op) makes a node `base`: a call of a torch function or method
    of that name, an operator, or a call of a torch.nn module of that kind (found in the write's modules)."""
    callees, operators = _MAKERS.get(base, ((), ()))
    if isinstance(e, ast.BinOp):
        return isinstance(e.op, operators)
    if not isinstance(e, ast.Call):
        return False
    if callee_name(e) in callees:
        return True
    module = _module_called(e, modules, scope, filename)
    return module is not None and base in _MODULES.get(type(module).__name__, ()) \
        and type(module).__module__.startswith("torch.nn.")


def _defines(cls: type, scope: ast.FunctionDef, filename: str) -> bool:
    """Whether the method `scope` of the user's text is the one a class (or a base) holds under its name."""
    first = min([scope.lineno, *(d.lineno for d in scope.decorator_list)])
    for c in cls.__mro__:
        func = vars(c).get(scope.name)
        if type(func) is types.FunctionType:  # NB: a plain function's code, from the class dict
            return func.__code__.co_filename == filename and func.__code__.co_firstlineno == first
        if func is not None:
            return False
    return False


def _module_called(call: ast.Call, modules: List[Any], scope: ast.AST, filename: str) -> Optional[Any]:
    """The module `self.gate(...)` calls, inside a method of one of the modules that ran the write, read from
    their `_modules` registries."""
    path = (dotted(call.func) or "").split(".")
    if len(path) < 2 or not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) or not scope.args.args \
            or path[0] != scope.args.args[0].arg:
        return None
    owners = [m for m in modules if _defines(type(m), scope, filename)]
    if len(owners) != 1:
        return None
    found: Any = owners[0]
    for part in path[1:]:
        found = ((instance_dict(found) or {}).get("_modules") or {}).get(part)
        if not issubclass(type(found), torch.nn.Module):
            return None
    return found


# -- an optimizer step between the forward and its backward (a GAN's D stepped before G's backward) --

def forward_of_step(ctx: RuleContext, err: SavedTensorError, param: torch.Tensor) -> Optional[Saved]:
    """The saved parameter's forward line, when a step updated it: the last statement of this cell, before the
    failing backward(), that feeds the tensor backward() was called on and calls a module holding `param`
    in a torch.nn layer that makes the refusing node (`g_loss = -D(fake).mean()`: D's Linear, AddmmBackward0).
    None when the graph gave nothing."""
    found = refusing_node(ctx, err)
    if found is None:
        return None
    tree = cell_tree(ctx.record.source)
    lineno = ctx.record.error_lineno
    stmt = enclosing_statement(tree, lineno) if tree is not None and lineno else None
    need = {dotted(c.func.value) for c in calls_in(stmt) if isinstance(c.func, ast.Attribute)
            and c.func.attr == "backward"} - {None} if stmt is not None else set()
    base = re.sub(r"Backward\d*$", "", found)
    before = sorted((s for s in scope_statements(function_around(tree, lineno)) if need and s.lineno < stmt.lineno
                     and isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None), key=lambda s: s.lineno)
    for s in reversed(before):
        targets = {dotted(t) for t in (s.targets if isinstance(s, ast.Assign) else [s.target])}
        if not targets & need:
            continue
        if any(_holds_in_layer(ctx.names.lookup(dotted(c.func) or ""), param, base) for c in calls_in(s.value)):
            return Saved(err, found, s.lineno, True, (ctx.record.filename, s.lineno))
        need |= {n.id for n in ast.walk(s.value) if isinstance(n, ast.Name)}
    return Saved(err, found, None, False)


def refusing_node(ctx: RuleContext, err: SavedTensorError) -> Optional[str]:
    """The one node type whose saved value torch refuses with this error's words, else None."""
    nodes = {b.node for b in _refusing(ctx, err)}
    return nodes.pop() if len(nodes) == 1 else None


def _saved_as(ctx: RuleContext, err: SavedTensorError) -> FrozenSet[str]:
    return frozenset(b.saved for b in _refusing(ctx, err))


def _refusing(ctx: RuleContext, err: SavedTensorError) -> List[Any]:
    """The broken saved values graphprobe found whose message is this error's (RunRecord.probed)."""
    record = ctx.record.outer if ctx.record.outer is not None else ctx.record
    graph = getattr(getattr(ctx.record, "probed", None) or getattr(record, "probed", None), "graph", None)
    return [b for b in graph.broken if not b.freed and parse_saved_tensor_error(b.message) == err] \
        if graph is not None else []


def _holds_in_layer(module: Any, param: torch.Tensor, base: str) -> bool:
    """Whether `module` (or a submodule, from the registries) holds `param` directly in a torch.nn layer whose
    forward makes the node `base`."""
    todo, seen = [module], set()
    while todo and len(seen) < 10_000:
        m = todo.pop()
        if not issubclass(type(m), torch.nn.Module) or id(m) in seen:
            continue
        seen.add(id(m))
        attrs = instance_dict(m) or {}
        if any(p is param for p in list((attrs.get("_parameters") or {}).values())):
            return base in _MODULES.get(type(m).__name__, ()) and type(m).__module__.startswith("torch.nn.")
        todo.extend(list((attrs.get("_modules") or {}).values()))
    return False
