"""The dtypes family's fixes: one spot in the cell gets the dtype wanted -- where the tensor is made (`.float()`
after torch.from_numpy, `dtype=torch.float32` in torch.tensor, `.double()` -> `.float()`), else a conversion
at the use on the failing line.

Pure functions of the cause and the cell text; only the fix's description is worded (catalog `dtypes.fix.*`).
"""
from __future__ import annotations

import ast
import dataclasses
from typing import List, Optional

import torch

from ...cell import body_of, cell_tree, node_span
from ...edits import make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from ..kit import parenthesised, text_of
from .culprit_origin import Origin

WRITTEN = {"float32": "torch.float32", "int64": "torch.long", "float64": "torch.float64"}
METHOD = {"float32": "float", "int64": "long", "float64": "double"}
NUMPY = {"float32": "float32", "int64": "int64", "float64": "float64"}


def dtype_fix(ctx: RuleContext, origin: Optional[Origin], use: Optional[ast.AST], want: str,
              name: str, found: str = "") -> Optional[Fix]:
    """The dtype set where the tensor was made when a spot there says it, else converted at `use`. With `found`
    (the dtype the loss refused), the statements beside the origin that make a tensor by the same call and left
    one of that dtype in the failing frame get the same edit: they would fail next (`torch.full(size, label)` for
    the real and the fake targets of a GAN)."""
    src = ctx.record.source
    method = METHOD[want]
    if origin is not None and origin.spot is not None:
        said = ctx.say(f"dtypes.fix.{origin.how}", name=origin.name,
                       lineno=getattr(origin.spot, "lineno", origin.stmt.lineno), dtype=want, written=WRITTEN[want],
                       method=method)
        siblings = _siblings(ctx, origin, found) if found else []
        if siblings:
            said += ctx.say("dtypes.fix.siblings" if len(siblings) > 1 else "dtypes.fix.sibling",
                            names=", ".join(f"`{o.name}`" for o in siblings),
                            lines=", ".join(str(o.stmt.lineno) for o in siblings))
        return make_fix(src, [edit_where_made(src, o, want) for o in (origin, *siblings)], said)
    edit = cast_at_use(src, use, want)
    if edit is None:
        return None
    return make_fix(src, [edit], ctx.say("dtypes.fix.use", name=name or text_of(src, use), method=method,
                                         lineno=ctx.record.error_lineno, dtype=want))


def edit_where_made(source: str, origin: Origin, want: str) -> TextEdit:
    """The edit at the origin's spot that makes the tensor `want` (see `Origin.edit`)."""
    spot = origin.spot
    assert spot is not None, "an origin without a spot has no edit"
    start, end = node_span(source, spot)
    if origin.edit == "cast_method":  # NB: `x.double()`: the spot is the call; its name and `()` are replaced
        return TextEdit(end - len(spot.func.attr) - 2, end, f"{METHOD[want]}()")
    if origin.edit == "dtype":
        return TextEdit(start, end, WRITTEN[want])
    if origin.edit == "numpy_dtype":  # NB: `np.float64` -> `np.int64`, `"float64"` -> `"int64"`
        if isinstance(spot, ast.Attribute):
            return TextEdit(end - len(spot.attr), end, NUMPY[want])
        return TextEdit(start, end, f'"{NUMPY[want]}"')
    if origin.edit == "suffix":
        return TextEdit(end, end, f".{METHOD[want]}()")
    last = max([*spot.args, *spot.keywords], key=lambda a: (a.end_lineno, a.end_col_offset))
    _, at = node_span(source, last)
    return TextEdit(at, at, f", dtype={WRITTEN[want]}")


def cast_at_use(source: str, node: Optional[ast.AST], want: str) -> Optional[TextEdit]:
    """`y` -> `y.long()` (`(a + b).long()` for an expression) at the use on the failing line."""
    if node is None:
        return None
    start, end = node_span(source, node)
    return TextEdit(start, end, f"{parenthesised(source[start:end], node)}.{METHOD[want]}()")


def drop_cast_fix(ctx: RuleContext, cast: ast.AST, inner: ast.AST) -> Optional[Fix]:
    """`pred.long()` -> `pred`: scores cast to integers on the failing line, given as they are."""
    src = ctx.record.source
    text = text_of(src, inner)
    return make_fix(src, [TextEdit(*node_span(src, cast), text)], ctx.say(
        "dtypes.fix.drop_cast", inner=text, cast=text_of(src, cast), lineno=ctx.record.error_lineno))


def _siblings(ctx: RuleContext, origin: Origin, found: str) -> List[Origin]:
    """Origins like `origin` on the other plain assignments of its block: the same callee, the same kind of edit,
    a name the failing frame holds as a tensor of dtype `found`."""
    spot, local = origin.spot, ctx.record.error_locals or {}
    if not isinstance(spot, ast.Call) or origin.edit not in ("suffix", "dtype_keyword"):
        return []
    callee = ast.dump(spot.func)
    tree = cell_tree(ctx.record.source)
    block = (body_of(tree, origin.stmt) or []) if tree is not None else []
    found_list = []
    for stmt in block:
        if stmt is origin.stmt or not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                                       and isinstance(stmt.targets[0], ast.Name)):
            continue
        value, name = stmt.value, stmt.targets[0].id
        held = local.get(name)
        if isinstance(value, ast.Call) and ast.dump(value.func) == callee and type(held) is torch.Tensor \
                and str(held.dtype).replace("torch.", "") == found and \
                (origin.edit == "suffix" or not any(k.arg == "dtype" for k in value.keywords)):
            found_list.append(dataclasses.replace(origin, name=name, stmt=stmt, spot=value))
    return found_list
