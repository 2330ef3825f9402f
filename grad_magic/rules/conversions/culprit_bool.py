"""bool-ambiguous's culprit: the truth test on the failing line that got a tensor of several values (or none).

The tests Python makes on the line (`BoolSite`: an `if`/`while`/`assert` test, an `and`/`or`/`not` operand, a
conditional expression's test), the shape each has when names, numbers and element-wise operators make it,
and the one that raised when that can be told. May touch: the cell's ast and text, the NameIndex (tensor
shapes only). Never runs user code; no wording.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence, Tuple

import torch

from ..context import RuleContext
from ..kit import dotted, lookup, one_line


@dataclass(frozen=True)
class BoolSite:
    """An expression Python asks for one truth value: an `if`/`while`/`assert` test, an `and`/`or`/`not`
    operand, a conditional expression's test."""

    node: ast.expr
    text: str
    statement: str  # "if", "while", "assert" (a conditional expression or a comprehension's test: "if")
    shape: Optional[Tuple[int, ...]]  # None when not known without running code


def bool_sites(ctx: RuleContext, stmt: Optional[ast.stmt], exprs: Sequence[ast.expr]) -> List[BoolSite]:
    """The truth tests on the failing line, in the order Python evaluates them."""
    tests: List[Tuple[ast.expr, str]] = []
    if isinstance(stmt, (ast.If, ast.While)):
        tests.append((stmt.test, "while" if isinstance(stmt, ast.While) else "if"))
    elif isinstance(stmt, ast.Assert):
        tests.append((stmt.test, "assert"))
        exprs = [e for e in exprs if e is not stmt.test]
    for e in exprs:
        for n in ast.walk(e):
            if isinstance(n, ast.IfExp) or (isinstance(n, ast.comprehension) and n.ifs):
                tests.extend((t, "if") for t in ([n.test] if isinstance(n, ast.IfExp) else n.ifs))
    sites: List[BoolSite] = []
    for test, kind in tests:
        for node in _truth_operands(test):
            sites.append(BoolSite(node, one_line(ctx.record.source, node), kind, _shape(ctx, node)))
    return sites


def _truth_operands(node: ast.expr) -> Iterator[ast.expr]:
    """`a > 0 and not m` -> `a > 0`, `m`: what bool() is called on."""
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _truth_operands(value)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield from _truth_operands(node.operand)
    else:
        yield node


def _shape(ctx: RuleContext, node: ast.expr) -> Optional[Tuple[int, ...]]:
    """The shape an expression of names, numbers and element-wise operators has (metadata only)."""
    if isinstance(node, ast.Constant) or isinstance(node, ast.Compare) and \
            all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
        return ()  # NB: a literal, or an identity test: a Python value, never a tensor
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _shape(ctx, node.operand)
    if isinstance(node, (ast.Compare, ast.BinOp)) and not isinstance(getattr(node, "op", None), ast.MatMult):
        parts = [node.left, *node.comparators] if isinstance(node, ast.Compare) else [node.left, node.right]
        shapes = [_shape(ctx, p) for p in parts]
        if any(s is None for s in shapes):
            return None
        try:
            return tuple(torch.broadcast_shapes(*shapes))
        except RuntimeError:
            return None
    value = lookup(ctx, node)
    if isinstance(value, torch.Tensor):
        return tuple(int(n) for n in value.shape)
    if isinstance(value, (int, float, bool)):
        return ()
    return None


def pinned_site(sites: List[BoolSite], empty: bool) -> Optional[BoolSite]:
    """The test that raised: the first whose shape is known to be wrong, every test before it known to
    hold one value; or the only test on the line."""
    for site in sites:
        if site.shape is None:
            return site if len(sites) == 1 else None
        numel = math.prod(site.shape)
        if (numel == 0) if empty else (numel > 1):
            return site
        if numel != 1:
            return None
    return None


def named_tensors(ctx: RuleContext, site: Optional[BoolSite]) -> List[Tuple[str, ast.AST]]:
    """The tensors the test names, outermost name first (`a.b` and not also `a`)."""
    if site is None:
        return []
    seen: List[Tuple[str, ast.AST]] = []
    for node in ast.walk(site.node):
        name = dotted(node)
        if name and isinstance(lookup(ctx, node), torch.Tensor) and \
                all(name != s and not s.startswith(name + ".") for s, _ in seen):
            seen.append((name, node))
    return seen


def tensors_of_one_shape(ctx: RuleContext, site: BoolSite) -> bool:
    """`assert a == b` on two tensors of the same shape, in a namespace where `torch` is torch: the test
    `torch.equal(a, b)` can stand for."""
    node = site.node
    if not (site.statement == "assert" and isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], ast.Eq)):
        return False
    left, right = lookup(ctx, node.left), lookup(ctx, node.comparators[0])
    return isinstance(left, torch.Tensor) and isinstance(right, torch.Tensor) and left.shape == right.shape and \
        ctx.names.lookup("torch") is torch
