"""What the training family's three rules read alike: the cell's loops, backward() calls, grad-off blocks
and optimizer steps, and the modules the cell names.

May touch: the cell's ast, the run record's optimizer steps, and live objects through the NameIndex (a
module's registries read from its dicts; never tensor data, never user code).
"""
from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Set, Tuple

import torch

from ...cell import names_in_order
from ..context import RuleContext
from ...cell import body_of  # noqa: F401 -- the rules import it from here
from ..kit import callee_name, grad_off_call, module_parameters, submodules  # noqa: F401 -- used here and by the rules

LOOPS = (ast.For, ast.AsyncFor, ast.While)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def names_in(node: ast.AST) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


# -- backward() calls --

def backward_calls(tree: ast.Module) -> Iterator[Tuple[ast.Call, Optional[ast.expr]]]:
    """(call, what it differentiates): `x.backward()`, `torch.autograd.backward(x)`, `autograd.grad(x, ...)`."""
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        func, attr = n.func, callee_name(n)
        if attr == "backward" and isinstance(func, ast.Attribute) and not n.args and \
                not is_name(func.value, "autograd"):
            yield n, func.value
        elif attr in ("backward", "grad") and n.args and "autograd" in ast.dump(func):
            yield n, n.args[0]


def backward_receivers(tree: ast.Module) -> Set[str]:
    return {name for _, target in backward_calls(tree) if target is not None for name in names_in(target)}


def backward_receiver_names(tree: ast.Module) -> List[str]:
    return list(dict.fromkeys(t.id for _, t in backward_calls(tree) if isinstance(t, ast.Name)))


def backward_lines(tree: ast.Module) -> List[int]:
    return sorted({c.lineno for c, _ in backward_calls(tree)})


def calls_backward(tree: ast.Module) -> bool:
    return next(backward_calls(tree), None) is not None


# -- grad-off blocks and steps --

def grad_off_withs(tree: ast.Module) -> List[ast.stmt]:
    """Every `with torch.no_grad():` (inference_mode(), set_grad_enabled(False)) in the cell, in line order."""
    found = [n for n in ast.walk(tree) if isinstance(n, (ast.With, ast.AsyncWith))
             and any(grad_off_call(i.context_expr) for i in n.items)]
    return sorted(found, key=lambda n: n.lineno)


def step_statement(tree: ast.Module, lineno: Optional[int]) -> Optional[ast.stmt]:
    """The statement `<optimizer>.step()` on `lineno`."""
    if lineno is None:
        return None
    for n in ast.walk(tree):
        if isinstance(n, ast.Expr) and n.lineno == lineno and isinstance(n.value, ast.Call) and \
                callee_name(n.value) == "step":
            return n
    return None


# -- modules --

def cell_modules(ctx: RuleContext, tree: ast.Module) -> List[Tuple[str, torch.nn.Module]]:
    """Modules of the namespace named in the cell, in order of first use."""
    seen: Set[int] = set()
    found = []
    for name in names_in_order(tree):
        value = ctx.names.lookup(name)
        if isinstance(value, torch.nn.Module) and id(value) not in seen:
            seen.add(id(value))
            found.append((name, value))
    return found


def parameter_ids(module: torch.nn.Module) -> Set[int]:
    return {id(p) for p in module_parameters(module)}
