"""Why nothing requires grad, a NumPy round trip: `torch.tensor(x.detach().cpu().numpy())`, or through a one-line
helper of the user's (`torch.tensor(to_numpy(x))`), rebuilds a tensor from values only. The trace
(culprit_trace.py) asks here for the tensor with a graph the copy was made from: giving the loss that tensor
itself is the fix.

May touch: the cell's ast; the tracer's own lookups (live objects through the NameIndex, metadata only). Never
runs user code; makes no fix and no sentence.
"""
from __future__ import annotations

import ast
from typing import Any, Optional

from .culprit import Scope

PASSTHROUGH = ("numpy", "detach", "cpu", "clone", "contiguous")


def round_trip(tracer: Any, arg: ast.AST, scope: Scope, line: int) -> Optional[ast.AST]:
    """The tensor with a graph that `arg` turns into NumPy (`x.detach().cpu().numpy()`, or a one-line helper
    of the user's returning its parameter that way, `to_numpy(x)`), else None."""
    numpy = False
    for _ in range(8):
        if isinstance(arg, ast.Attribute) and arg.attr == "data":
            arg = arg.value
        elif isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and not arg.args and \
                not arg.keywords and arg.func.attr in PASSTHROUGH:
            numpy = numpy or arg.func.attr == "numpy"
            arg = arg.func.value
        elif isinstance(arg, ast.Call) and len(arg.args) == 1 and not arg.keywords and not numpy and \
                _converter(tracer.user_def(arg, scope)):
            return arg.args[0] if tracer.expr(arg.args[0], scope, line).grad else None
        else:
            break
    return arg if numpy and tracer.expr(arg, scope, line).grad else None



def _converter(fn: Optional[ast.AST]) -> bool:
    """`def to_numpy(t): return t.detach().cpu().numpy()`: one parameter, one statement returning it as NumPy."""
    args = getattr(fn, "args", None)
    body = getattr(fn, "body", [])
    if args is None or len(args.args) != 1 or args.vararg or args.kwarg or args.kwonlyargs:
        return False
    body = body[1:] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else body
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return False
    value, numpy = body[0].value, False
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and not value.args and \
            value.func.attr in PASSTHROUGH:
        numpy = numpy or value.func.attr == "numpy"
        value = value.func.value
    return numpy and isinstance(value, ast.Name) and value.id == args.args[0].arg
