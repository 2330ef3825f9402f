"""Why nothing requires grad, a threshold: `(probs > 0.5).float()` in a loss turns probabilities into a 0/1 mask,
which has no gradient. The trace (culprit_trace.py) asks here whether the compared side is a probability (made by
sigmoid or softmax, here or in the caller's argument) and the other side carries no graph (a threshold): then
the loss computed from the probabilities themselves is the honest fix (a soft Dice, a BCE on probabilities).

May touch: the cell's ast; the tracer's own lookups (metadata only). Never runs user code; makes no fix and no
sentence.
"""
from __future__ import annotations

import ast
from typing import Any, Optional

from ..kit import callee_name
from .culprit import Scope, binds

PROBABILITIES = frozenset({"sigmoid", "softmax"})


def thresholded(tracer: Any, compare: ast.Compare, scope: Scope, line: int) -> Optional[ast.AST]:
    """The probabilities of `probs > t` / `probs >= t` whose threshold `t` has no graph, else None."""
    if len(compare.ops) != 1 or not isinstance(compare.ops[0], (ast.Gt, ast.GtE)):
        return None
    left, right = compare.left, compare.comparators[0]
    if not tracer.expr(left, scope, line).grad or tracer.expr(right, scope, line).grad:
        return None
    return left if _probability(left, scope, 0) else None


def _probability(expr: ast.AST, scope: Scope, depth: int) -> bool:
    """`torch.sigmoid(x)` / `x.softmax(1)`, or a name bound to one (in the function, or as the caller's argument)."""
    if isinstance(expr, ast.Call):
        return callee_name(expr) in PROBABILITIES
    if not isinstance(expr, ast.Name) or depth > 3:
        return False
    made = [s for s in scope.stmts if binds(s, expr.id)]
    if made:
        value = getattr(made[-1], "value", None)
        return len(made) == 1 and isinstance(made[-1], ast.Assign) and value is not None and \
            _probability(value, scope, depth + 1)
    if expr.id in scope.args:
        arg, caller = scope.args[expr.id]
        return _probability(arg, caller, depth + 1)
    return False
