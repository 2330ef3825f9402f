"""Rules of the memory family: an allocation failed (CUDA, XPU, MPS or CPU out of memory).

A small family in one module, in the four seams' order: the message (torch's text -> `OomError`), the
culprit (the namespace's largest tensors, from grad_magic.inventory's report: metadata only; a running total
`total += loss` that keeps every step's graph alive), the fix (`total += loss` -> `total += loss.item()`,
when the total is a one-element tensor with a grad_fn) and the card (catalog keys `memory.*`).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, List, Optional

import torch

from .. import catalog
from ..cell import cell_tree, node_span, segment
from ..inventory.build import build_report
from ..inventory.report import DeviceOptions, TensorRow
from ..edits import make_fix
from ..facts import shape_text
from ..model import ERROR, Diagnosis, Fix, TensorFact, TextEdit
from ..units import human_bytes
from .context import RuleContext
from .registry import rule

KIND = "cuda-oom"

# -- the message --

# c10/cuda/CUDACachingAllocator.cpp, torch >= 2.1 (torch.OutOfMemoryError):
#   "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which
#    1.23 GiB is free. Including non-PyTorch memory, this process has 77.91 GiB memory in use. ..."
# torch 1.x ... 2.0: "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; ..."
# XPU (torch >= 2.4): "XPU out of memory. Tried to allocate ..."; MPS (aten/src/ATen/mps/MPSAllocator.mm):
#   "MPS backend out of memory (MPS allocated: 1.2 GB, ...). Tried to allocate 256 MB on private pool. ..."
# A cudaMalloc outside the caching allocator: "CUDA error: out of memory".
GPU_OOM = re.compile(r"(?P<backend>CUDA|XPU|HIP|MPS backend) out of memory")
CUDA_ERROR = re.compile(r"CUDA error: out of memory")
TRIED = re.compile(r"Tried to allocate (?P<size>\d{1,12}(?:\.\d{1,6})? ?[KMGT]?i?B)")
GPU_INDEX = re.compile(r"GPU (?P<index>\d{1,4})")
# c10/core/impl/alloc_cpu.cpp (2.13: "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't
# allocate memory: you tried to allocate 4611686018427387904 bytes. Error code 12 (Cannot allocate memory)";
# older: "[enforce fail at CPUAllocator.cpp:68] . DefaultCPUAllocator: can't allocate memory: ...")
CPU_OOM = re.compile(r"DefaultCPUAllocator: can't allocate memory: you tried to allocate (?P<bytes>\d{1,30}) bytes")
TOP = 3


@dataclass(frozen=True)
class OomError:
    device: str  # "CUDA", "XPU", "HIP", "MPS" or "CPU"
    index: Optional[int]
    size: str  # "2.00 GiB", or "" when the message does not say


def parse_oom(message: str) -> Optional[OomError]:
    m = GPU_OOM.search(message)
    if m is not None:
        backend = m["backend"].split()[0]
        tried = TRIED.search(message)
        index = GPU_INDEX.search(message) if backend != "MPS" else None
        return OomError(backend, int(index["index"]) if index else None, tried["size"] if tried else "")
    if CUDA_ERROR.search(message):
        return OomError("CUDA", None, "")
    m = CPU_OOM.search(message)
    if m is not None:
        return OomError("CPU", None, human_bytes(int(m["bytes"])))
    return None


# -- the culprit --

def _largest(ctx: RuleContext, err: OomError) -> List[TensorRow]:
    """The largest tensors the names hold, those on the failing device first (metadata only)."""
    try:
        report = build_report(dict(ctx.namespace), DeviceOptions(sort="size", max_tensors=20_000))
    except Exception:  # NB: the report is a hint; an odd namespace must not cost the card
        return []
    wanted = {"CUDA": "cuda", "HIP": "cuda", "XPU": "xpu", "MPS": "mps", "CPU": "cpu"}[err.device]
    on_device = [r for r in report.rows if r.device.split(":")[0] == wanted]
    return (on_device or list(report.rows))[:TOP]


def _fact(row: TensorRow) -> TensorFact:
    return TensorFact(name=row.path, kind="parameter" if row.role == "parameter" else "tensor",
                      shape=shape_text(row.shape), dtype=row.dtype, device=row.device,
                      requires_grad=row.requires_grad, is_leaf=row.is_leaf, grad_fn=row.grad_fn)


@dataclass(frozen=True)
class RunningTotal:
    """`total += loss` in the cell, where `total` is a one-element tensor still attached to a graph."""

    total: str
    value: ast.expr
    value_text: str
    lineno: int
    grad_fn: str

    @staticmethod
    def find(ctx: RuleContext) -> Optional["RunningTotal"]:
        tree = cell_tree(ctx.record.source)
        if tree is None:
            return None
        found: List[RunningTotal] = []
        for node in ast.walk(tree):
            if not (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)
                    and isinstance(node.target, ast.Name)):
                continue
            value = ctx.names.lookup(node.target.id)
            if not _graph_scalar(value):
                continue
            text = segment(ctx.record.source, node.value) or ""
            found.append(RunningTotal(node.target.id, node.value, text, node.lineno,
                                      type(value.grad_fn).__name__))
        return found[0] if len(found) == 1 else None


def _graph_scalar(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.grad_fn is not None and value.numel() == 1


# -- the fix --

def item_fix(ctx: RuleContext, total: RunningTotal) -> Optional[Fix]:
    """`.item()` after the added value, when it is a name, attribute, call or subscript (`loss`, `out.loss`,
    `out.abs().mean()`): `.item()` then binds to all of it."""
    if not isinstance(total.value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        return None
    _, end = node_span(ctx.record.source, total.value)
    return make_fix(ctx.record.source, [TextEdit(end, end, ".item()")],
                    ctx.say("memory.oom.fix", value=total.value_text, total=total.total, lineno=total.lineno))


# -- the card --

@rule(KIND, raises=RuntimeError, parse=parse_oom, matches=(
    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of … (torch >= 2.1)",
    "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; … (torch < 2.1)",
    "XPU out of memory. … / MPS backend out of memory … / CUDA error: out of memory",
    "DefaultCPUAllocator: can't allocate memory: you tried to allocate N bytes",
), fix="`total += loss` -> `total += loss.item()` when a running total keeps every step's graph")
def cuda_oom(ctx: RuleContext, err: OomError) -> Diagnosis:
    """An allocation failed: the device (or the CPU) ran out of memory."""
    # NB: torch.OutOfMemoryError is a RuntimeError
    lineno = ctx.record.error_lineno
    rows = _largest(ctx, err)
    total = RunningTotal.find(ctx)
    fix = item_fix(ctx, total) if total is not None else None
    device = err.device if err.index is None else f"{err.device.lower()}:{err.index}"
    why = [ctx.say("memory.oom.why")]
    if rows:
        why.append(ctx.say("memory.oom.largest", tensors=catalog.listing((
            f"`{r.path}` {shape_text(r.shape)} {human_bytes(r.nbytes)}" for r in rows), ctx.language)))
    if total is not None:
        why.append(ctx.say("memory.oom.graph_kept", total=total.total, value=total.value_text,
                           lineno=total.lineno, grad_fn=total.grad_fn))
    why.append(ctx.say("memory.oom.fixes"))
    if fix is None:
        why.append(ctx.say("memory.oom.why_no_fix"))
    size = ctx.say("memory.oom.size", size=err.size) if err.size else ctx.say("memory.oom.size_unknown")
    lines = sorted({n for n in (lineno, total.lineno if total else None) if n})
    return ctx.diagnosis(
        KIND, ERROR, title=ctx.say("memory.oom.title", device=device),
        summary=ctx.say("memory.oom.summary", device=device, size=size),
        what=ctx.say("memory.oom.what", device=device, size=size, lineno=lineno or "?"),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno), lines=lines,
        names=[r.path for r in rows] + ([total.total] if total else []),
        tensors=[_fact(r) for r in rows], fix=fix)
