"""Which write changed the saved tensor: the in-place op the tracker recorded whose target fits torch's message,
else an optimizer step that updated a parameter fitting it; and where the tensor was saved (anomaly mode).
Where the op is written in the cell is culprit_spot.py's.

May touch: the run record (in-place ops, optimizer steps, warnings), live tensors' metadata through the
NameIndex (version, shape, `_base`) -- never tensor data. Never runs user code; makes no fix and no sentence.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set, Tuple

import torch

from ...cell import cell_tree, enclosing_statement
from ...facts import dtype_name
from ...graphprobe import broken_nodes
from ...names import NameIndex
from ...record import OpEvent, StepEvent, TensorSnapshot
from ..context import RuleContext, dotted_names
from ..kit import dotted, optimizer_params
from .message import SavedTensorError, parse_anomaly, parse_saved_tensor_error


@dataclass(frozen=True)
class Saved:
    """The saved tensor as torch's message and anomaly mode's warning describe it."""

    err: SavedTensorError
    node: Optional[str]  # the backward node that needed it (anomaly mode only)
    line: Optional[int]  # the forward line that saved it, when it is a line of this view's cell (anomaly mode)
    forward_seen: bool = True  # False: the forward ran without anomaly mode
    site: Optional[Tuple[str, int]] = None  # (file, line) of the innermost user frame that saved it, any cell


def saved_tensor(ctx: RuleContext, err: SavedTensorError) -> Saved:
    """The message's saved tensor, with the backward node and forward line of anomaly mode's last warning."""
    sources = ctx.record.sources
    for w in reversed(ctx.record.warnings):
        report = parse_anomaly(w.message)
        if report is None:
            continue
        lines = [line for file, line in report.frames if file == ctx.record.filename]
        users = [(file, line) for file, line in report.frames
                 if file == ctx.record.filename or sources is not None and sources.is_user(file)]
        return Saved(err, report.node, lines[-1] if lines else None, report.forward_seen,
                     users[-1] if users else None)
    return Saved(err, None, None, False)


def anomaly_was_on(ctx: RuleContext) -> bool:
    """Without --fast anomaly mode was on; its warning may still be missing (filtered by the user)."""
    return any("Anomaly Detection has been enabled" in w.message for w in ctx.record.warnings) or \
        "backtrace further above" in ctx.error_message


def live(ref: Any) -> Optional[torch.Tensor]:
    """The tensor a snapshot's weak reference still holds, else None."""
    obj = ref() if ref is not None else None
    return obj if isinstance(obj, torch.Tensor) else None


def saved_candidates(ctx: RuleContext, err: SavedTensorError) -> List[torch.Tensor]:
    """Named tensors that fit the message: its shape, and its version now."""
    wanted = (err.shape, err.version)
    return ctx.memo(("saved-candidates", wanted), lambda: [
        obj for _, obj in ctx.names.objects() if _shape_and_version(obj) == wanted])


def _shape_and_version(obj: Any) -> Optional[Tuple[Tuple[int, ...], int]]:
    if not isinstance(obj, torch.Tensor):
        return None
    try:
        return tuple(obj.shape), obj._version
    except (RuntimeError, NotImplementedError):  # NB: a nested or sparse-compressed tensor has no sizes
        return None


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """a and b are one tensor, or views of one another / of one base (metadata only)."""
    return a is b or a._base is b or b._base is a or (a._base is not None and a._base is b._base)


def _fits(err: SavedTensorError, t: TensorSnapshot) -> bool:
    if err.expected is not None and not err.expected < t.version <= err.version:
        return False  # NB: a write after the save leaves the version in (expected, version]
    if err.dtype and t.dtype != err.dtype:
        return False
    if err.grad_fn and not t.requires_grad:
        return False  # NB: a tensor with a grad_fn requires grad (a .grad zeroed in place never fits)
    return not err.device or t.device.split(":")[0] == err.device


def writing_op(ctx: RuleContext, err: SavedTensorError, forward_line: Optional[int]
               ) -> Optional[Tuple[OpEvent, TensorSnapshot]]:
    """The recorded in-place op that changed the saved tensor; None when not seen or ambiguous (see
    `tied_writes` for a tie between lines that make the same write)."""
    winners = _best_writes(ctx, err, forward_line)
    if len({_site(e) for e, _ in winners}) > 1:
        return None  # NB: two lines fit equally well: naming one would be a guess (a block's forward that
        # runs twice is one line)
    return winners[-1] if winners else None


def tied_writes(ctx: RuleContext, err: SavedTensorError, forward_line: Optional[int]
                ) -> List[Tuple[OpEvent, TensorSnapshot]]:
    """The writes of a tie between lines that make the same in-place op on tensors fitting the message equally
    well (`F.dropout(x, p, training, True)` after each `F.relu(..., True)` of a forward): each changed a saved
    tensor of the same description, so each is a write to undo. The last one made (the first backward meets)
    last; [] when there is no such tie (one site, writes of different ops, or a target whose producer before
    the write is not the op the message names)."""
    winners = _best_writes(ctx, err, forward_line)
    sites = {_site(e) for e, _ in winners}
    if len(sites) < 2 or len({(e.name, e.how) for e, _ in winners}) != 1 \
            or len({s[0] for s in sites if isinstance(s, tuple)}) > 1 \
            or not err.grad_fn or any(_node(err.grad_fn) not in _producers(e) for e, _ in winners):
        return []
    last: Dict[Any, Tuple[OpEvent, TensorSnapshot]] = {}
    for e, t in winners:  # NB: one write per site, the newest
        last.pop(_site(e), None)
        last[_site(e)] = (e, t)
    return list(last.values())


def _site(event: OpEvent) -> Any:
    return event.frames[0] if event.frames else event.lineno


def _best_writes(ctx: RuleContext, err: SavedTensorError, forward_line: Optional[int]
                 ) -> List[Tuple[OpEvent, TensorSnapshot]]:
    """The recorded in-place ops that fit the saved tensor best, in the order they were made.

    A write fits by the message's version, dtype and device; it is the saved tensor by its shape (2), by the
    backward node its target had before the write, which the message names (3), by identity with a named
    tensor of that shape and version (2), by a name on the forward line (1); the first write after the save
    (version expected + 1) wins a tie (1). Writes made outside this view's cell
    count too (their innermost frame says where they are).
    """
    saved = saved_candidates(ctx, err)
    named = set(dotted_names(ctx.record.source_line(forward_line)))
    best: List[Tuple[int, OpEvent, TensorSnapshot]] = []
    for event in ctx.record.inplace_ops:
        for t in event.targets if event.lineno is not None or event.frames else ():
            if not _fits(err, t):
                continue
            obj = live(t.ref)
            score = 2 if err.shape is not None and t.shape == err.shape else 0
            if score and err.grad_fn and _node(err.grad_fn) in _producers(event):
                score += 3  # NB: the tensor torch names ("output 0 of Tanh") is the one this op wrote
            if obj is not None and any(_same_storage(obj, s) for s in saved):
                score += 2
            if obj is not None and set(ctx.names.names_for(obj)) & named:
                score += 1
            if score:
                best.append((score + (err.expected is not None and t.version == err.expected + 1), event, t))
    if not best:
        return []
    top = max(s for s, _, _ in best)
    return [(e, t) for s, e, t in best if s == top]


def _node(name: str) -> str:
    """`Tanh`, `TanhBackward0`, `TanhBackward` -> `Tanh` (torch 2.13 names the op, older torch the node)."""
    return re.sub(r"Backward\d*$", "", name)


def _producers(event: OpEvent) -> Set[str]:
    return {_node(p) for p in getattr(event, "producers", ()) if p}


def base_of(ctx: RuleContext, err: SavedTensorError, written: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    """The saved tensor when the op wrote through a view of it (`row = x[0]; row.add_(1)`), else None."""
    if written is None or err.shape is None:
        return None
    for t in saved_candidates(ctx, err):
        if t is not written and _same_storage(t, written):
            return t
    return None


def stepped_parameter(ctx: RuleContext, err: SavedTensorError) -> Optional[Tuple[StepEvent, torch.Tensor]]:
    """An optimizer step that updated a parameter fitting the message (GAN: D stepped before G's backward)."""
    if err.shape is None or err.version is None:
        return None
    numel = math.prod(err.shape)
    fits = []
    for step in ctx.record.steps:
        opt = step.optimizer() if step.optimizer is not None and step.lineno is not None else None
        for p in optimizer_params(opt):
            if p._version == err.version and p.numel() == numel \
                    and (not err.dtype or dtype_name(p.dtype) == err.dtype):
                fits.append((tuple(p.shape) == err.shape, step, p))
    if not fits:
        return None
    exact = [f for f in fits if f[0]] or fits
    return exact[-1][1], exact[-1][2]


def holds_any(module: Any, ids: Set[int]) -> bool:
    """Whether a parameter of `module` or of its submodules (read from their registries, no user code) is one of
    the tensors whose ids are `ids`."""
    seen: Set[int] = set()
    todo = [module]
    while todo and len(seen) < 10_000:
        m = todo.pop()
        if not isinstance(m, torch.nn.Module) or id(m) in seen:
            continue
        seen.add(id(m))
        if any(id(p) in ids for p in list((m.__dict__.get("_parameters") or {}).values()) if p is not None):
            return True
        todo.extend(list((m.__dict__.get("_modules") or {}).values()))
    return False


# -- every saved tensor the run's writes spoiled, not only the one backward() met first --

def spoiled(ctx: RuleContext) -> List[SavedTensorError]:
    """Each saved tensor of the failing backward's graph that an in-place write changed, as torch itself says it
    when the saved tensor is asked for (the same message as the error's). A fix that undoes one write while
    others remain would fail the same way: these are the others. Unpacking a saved tensor reads no data; the
    nodes backward() already ran have freed theirs (those were intact)."""
    return ctx.memo(("inplace-spoiled",), lambda: _spoiled(_backward_roots(ctx)))


def _spoiled(roots: List[torch.Tensor]) -> List[SavedTensorError]:
    found: List[SavedTensorError] = []
    # NB: graphprobe reads saved values as torch does, never through an unpack hook or a custom Function's class
    for broken in broken_nodes(roots).broken:
        err = parse_saved_tensor_error(broken.message)
        if err is not None and err not in found:
            found.append(err)
    return found


def _backward_roots(ctx: RuleContext) -> List[torch.Tensor]:
    """The tensors the failing backward() started from: those named in `loss.backward()`, `(a + b).backward()`,
    `y.sum().backward()` or `torch.autograd.backward(loss)` on the innermost user line of the traceback, looked
    up in that frame's variables."""
    record = ctx.record.outer if ctx.record.outer is not None else ctx.record
    frame = record.frames[-1] if record.frames else None
    filename, lineno = (frame.site.filename, frame.site.lineno) if frame else (record.filename, record.error_lineno)
    text = record.sources.text(filename) if frame and record.sources is not None else record.source
    tree = cell_tree(text)
    stmt = enclosing_statement(tree, lineno) if tree is not None and lineno else None
    names = NameIndex(frame.local_names, ctx.namespace) if frame else ctx.names
    found: List[torch.Tensor] = []
    for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)) if stmt is not None else ():
        if getattr(call.func, "attr", getattr(call.func, "id", "")) != "backward":
            continue
        for part in (getattr(call.func, "value", None), *call.args[:1]):
            for node in ast.walk(part) if part is not None else ():
                obj = names.lookup(dotted(node) or "") if isinstance(node, (ast.Name, ast.Attribute)) else None
                if isinstance(obj, torch.Tensor) and obj.grad_fn is not None and all(obj is not f for f in found):
                    found.append(obj)
    return found
