"""bool-ambiguous (and the like) raised while a module was being *built* from the user's line: the traceback goes
from the user's frame straight into a module class's `__init__` (`nn.CrossEntropyLoss(logits, y)`: the tensors
land in the options `weight`, `size_average`, `reduce`, and torch tests one for truth). The module was meant to
be made first, then called on the tensors.

May touch: the exception's traceback (frames' code and their `self`), the cell's ast, the NameIndex. Never runs
user code; no wording.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import Optional

import torch

from ...cell import cell_tree
from ..context import RuleContext
from ..kit import calls_in, dotted, lookup, spans

_TORCH_NN = os.path.join(os.path.dirname(torch.__file__), "nn") + os.sep


@dataclass(frozen=True)
class BuiltWithTensors:
    """The call on the failing line that built a module from tensors: the call, its class as written."""

    call: ast.Call
    written: str  # `nn.CrossEntropyLoss`
    cls: type


def built_with_tensors(ctx: RuleContext) -> Optional[BuiltWithTensors]:
    """The call of a torch.nn module class, with tensor arguments, on this view's failing line, when the run went
    from that line into the class's `__init__`."""
    lineno = ctx.record.error_lineno
    tb = ctx.exception.__traceback__ if ctx.exception is not None else None
    while tb is not None and not (tb.tb_frame.f_code.co_filename == ctx.record.filename and tb.tb_lineno == lineno
                                  and tb.tb_next is not None
                                  and tb.tb_next.tb_frame.f_code.co_filename != ctx.record.filename):
        tb = tb.tb_next
    inner = tb.tb_next if tb is not None else None
    code = inner.tb_frame.f_code if inner is not None else None
    if code is None or code.co_name != "__init__" or not code.co_filename.startswith(_TORCH_NN):
        return None
    owner = inner.tb_frame.f_locals.get("self")
    if not isinstance(owner, torch.nn.Module):
        return None
    tree = cell_tree(ctx.record.source)
    for call in calls_in(tree) if tree is not None else ():
        if not spans(call, lineno) or not call.args:
            continue
        cls = lookup(ctx, call.func)
        if cls is type(owner) and any(isinstance(lookup(ctx, a), torch.Tensor) or not isinstance(a, ast.Constant)
                                      for a in call.args):
            return BuiltWithTensors(call, dotted(call.func) or type(owner).__name__, type(owner))
    return None
