"""A `view` / `reshape` that writes the batch size as a number: it fits every batch but the last, smaller one
(`shape '[4, 10]' is invalid for input of size 20`). Seen in what the run holds: the tensor the call reshaped
(its frame, at the instruction that raised) has a first dimension that, times the other sizes asked for, makes
its size; the fix lets torch work the first size out (`-1`). Never runs user code.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from math import prod
from typing import Any, Optional, Tuple

import torch

from ...cell import cell_tree, node_span
from ...edits import make_fix
from ...model import Fix, TextEdit
from ..tb import call_at, local_value_in
from ..context import RuleContext
from ..places import root, user_entries, view_on

# aten/src/ATen/InferSize.h, torch 1.x ... 2.13 (view, reshape, unflatten)
VIEW = re.compile(r"shape '\[(?P<dims>-?\d+(?:, -?\d+)*)\]' is invalid for input of size (?P<size>\d+)")


@dataclass(frozen=True)
class ViewSize:
    dims: Tuple[int, ...]
    size: int


def parse_view_size(message: str) -> Optional[ViewSize]:
    m = VIEW.search(message)
    return ViewSize(tuple(int(d) for d in m["dims"].split(", ")), int(m["size"])) if m else None


@dataclass(frozen=True)
class FixedBatch:
    """The reshape whose first size is the batch written as a number: its view (cell or file), line, the
    tensor's real batch, and the fix."""

    at: RuleContext
    lineno: int
    receiver: str
    batch: int
    fix: Optional[Fix]


def fixed_batch(ctx: RuleContext, err: ViewSize) -> Optional[FixedBatch]:
    rest = prod(err.dims[1:])
    if len(err.dims) < 2 or min(err.dims) < 1 or rest == 0 or err.size % rest:
        return None
    top = root(ctx)
    users = user_entries(ctx)
    if not users:
        return None
    entry = users[-1]
    at = view_on(ctx, entry.tb_frame.f_code.co_filename, entry.tb_lineno)
    tree = cell_tree(at.record.source) if at is not None else None
    call = call_at(tree, entry) if tree is not None else None
    if call is None or not isinstance(call.func, ast.Attribute) or call.func.attr not in ("view", "reshape"):
        return None
    shape = _shape(top, local_value_in(entry.tb_frame, call.func.value))
    if not shape or prod(shape) != err.size or shape[0] * rest != err.size or shape[0] == err.dims[0]:
        return None  # NB: the first dimension is not the batch the rest of the sizes make
    first = _first_size(call, len(err.dims))
    source = at.record.source
    fix = None
    if first is not None:
        start, end = node_span(source, first)
        fix = make_fix(source, [TextEdit(start, end, "-1")], at.say(
            "shapes.view.fix", code=source[start:end], lineno=first.lineno))
    receiver = source[slice(*node_span(source, call.func.value))]
    return FixedBatch(at, call.lineno, receiver, shape[0], fix)


def _shape(top: RuleContext, tensor: Any) -> Tuple[int, ...]:
    """The reshaped tensor's shape: the frame's variable, else what the run recorded of the failing call."""
    if isinstance(tensor, torch.Tensor):
        return tuple(tensor.shape)
    failed = top.record.failed_ops[-1] if top.record.failed_ops else None
    if failed is None or failed.name not in ("view", "reshape", "_reshape_alias") or not failed.targets:
        return ()
    return tuple(failed.targets[0].shape)


def _first_size(call: ast.Call, count: int) -> Optional[ast.expr]:
    """The argument that gives the first size: `x.view(n, 10)` or `x.view((n, 10))`; not a literal -1."""
    args: Any = call.args
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = args[0].elts
    if len(args) != count or call.keywords or any(isinstance(a, ast.Starred) for a in args):
        return None
    return args[0]
