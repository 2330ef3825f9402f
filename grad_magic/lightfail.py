"""Fast mode's record of the torch call that raised (`rebuild_failure`), read from the traceback after the run.

Fast mode (lighttrack.py) records only in-place calls, as they run. For any other torch call that raised --
`F.nll_loss` given labels out of range, a Linear given the wrong shape -- the rules still want what full mode's
TorchFunctionMode records: the call's name, its line and frames, and the tensors it was given. They are read
from the traceback once the run is over, never by running code: the first torch function entered from code
that is not torch's, else the C call at the instruction that raised.
"""
from __future__ import annotations

import ast
import linecache
import os
import textwrap
import types
from typing import Any, Iterable, List, Tuple

import torch

from .lighttrack import tensors_in
from .names import instance_dict
from .record import OpEvent
from .tracker import TORCH_DIR, OpLog, snapshot

_NN_MODULES = os.path.dirname(torch.nn.Module.__call__.__code__.co_filename) + os.sep
_PUBLIC_CODE: List[Any] = []
_BINARY = {ast.MatMult: "matmul", ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div",
           ast.Pow: "pow", ast.Mod: "remainder", ast.FloorDiv: "floor_divide"}


def _public_code() -> Any:
    """The code of torch's public functions written in Python (F.nll_loss, Tensor.backward, autograd.grad)."""
    if not _PUBLIC_CODE:
        import torch.functional

        codes = set()
        for space in (torch, torch.functional, torch.nn.functional, torch.Tensor, torch.autograd):
            for value in list(vars(space).values()):
                while isinstance(value, types.FunctionType):  # NB: and what a decorator wraps
                    codes.add(value.__code__)
                    value = vars(value).get("__wrapped__")
        _PUBLIC_CODE.append(frozenset(codes))
    return _PUBLIC_CODE[0]


def rebuild_failure(exc: BaseException, log: OpLog) -> None:
    """The torch call that raised `exc`, as the mode would have recorded it (`log.failed`): name, line, frames,
    and its tensor arguments -- read from the traceback, never by running code.

    The call is the first torch function entered from code that is not torch's (its frame's arguments: what
    `F.nll_loss`, `Tensor.backward` were given), else the C call on the innermost line that raised, found by
    the instruction's position (`co_positions`): its name, and the tensors its arguments name (variables of
    that frame, and parameters/buffers of a module they name -- `self.weight` in `Linear.forward`). An argument
    computed on that line (`f(x) @ w`) is not known. Nothing when an in-place wrapper recorded the failure.
    """
    if not isinstance(exc, Exception) or log.failed and log.failed[-1].name and _raised_here(exc, log):
        return
    entries = []
    tb = exc.__traceback__
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    if not entries:
        return
    name, tensors = _failed_call(entries)
    if not name:
        return
    shots = tuple(snapshot(t) for t in tensors)[:16]
    lineno, frames = log.sources.stack(entries[-1].tb_frame, log.filename)
    log.add(log.failed, OpEvent(name, lineno, shots, "raised", frames=frames))


def _failed_call(entries: List[Any]) -> Tuple[str, List[torch.Tensor]]:
    outside = [i for i, e in enumerate(entries) if not e.tb_frame.f_code.co_filename.startswith(TORCH_DIR)]
    at = entries[outside[-1]] if outside else entries[0]  # NB: the frame whose line made the call
    public = _public_code()
    for entry in entries[(outside[-1] + 1 if outside else 0):]:
        code = entry.tb_frame.f_code
        if code in public:  # NB: a torch function written in Python: what it was given
            return code.co_name, _arguments(entry.tb_frame)
        if not code.co_filename.startswith(_NN_MODULES):
            break  # NB: torch's internals (a meta kernel, a decomposition): the call is on `at`'s line
        at = entry  # NB: a module's plumbing, forward or helper (Conv2d._conv_forward): the C call is inside
    return _call_at(at)


def _raised_here(exc: BaseException, log: OpLog) -> bool:
    """Whether the last failed event is this exception's (an in-place wrapper recorded it as it raised; its
    frame is not in the traceback)."""
    return log.wrapped_failure is exc


def _arguments(frame: Any) -> List[torch.Tensor]:
    code, values = frame.f_code, frame.f_locals
    count = code.co_argcount + code.co_kwonlyargcount
    return [t for name in code.co_varnames[:count] for t in tensors_in(values.get(name))]


def _call_at(entry: Any) -> Tuple[str, List[torch.Tensor]]:
    """The call or operator at the instruction that raised, and the tensors its arguments name."""
    frame = entry.tb_frame
    try:
        first, last, start, end = list(frame.f_code.co_positions())[entry.tb_lasti // 2]
        text = "".join(linecache.getlines(frame.f_code.co_filename)[first - 1:last])
        dedented = textwrap.dedent(text)
        tree = ast.parse(dedented)
        shift = len(text.encode()) - len(dedented.encode()) if first == last else \
            len(text.splitlines()[0].encode()) - len(dedented.splitlines()[0].encode())
        span = (1, start - shift, last - first + 1, end - shift)
    except (IndexError, TypeError, SyntaxError, ValueError):  # NB: part of a longer statement, or no position
        return "", []
    for node in ast.walk(tree):
        if (getattr(node, "lineno", None), getattr(node, "col_offset", None),
                getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)) != span:
            continue
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            receiver = [func.value] if isinstance(func, ast.Attribute) else []
            return name, _named(frame, [*receiver, *node.args, *(k.value for k in node.keywords)])
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)], _named(frame, [node.left, node.right])
    return "", []


def _named(frame: Any, nodes: Iterable[ast.AST]) -> List[torch.Tensor]:
    """The tensors the argument expressions name: a variable, a list of them, a module's parameter, buffer or
    list of tensors (read from its registries and its own dict: no attribute access runs)."""
    found: List[torch.Tensor] = []
    for node in nodes:
        items = node.elts if isinstance(node, (ast.List, ast.Tuple)) else [node]
        for item in items:
            found.extend(tensors_in(_value(frame, item)))
    return found


def _value(frame: Any, node: ast.AST) -> Any:
    if isinstance(node, ast.Name):
        return frame.f_locals.get(node.id, frame.f_globals.get(node.id))
    if isinstance(node, ast.Attribute):
        owner = _value(frame, node.value)
        if isinstance(owner, torch.nn.Module):
            held = instance_dict(owner) or {}
            for registry in ("_parameters", "_buffers", "_modules"):
                table = held.get(registry)
                if isinstance(table, dict) and node.attr in table:
                    return table[node.attr]
            return held.get(node.attr)  # NB: a plain attribute (an RNN's `_flat_weights` list): the dict's own
    return None
