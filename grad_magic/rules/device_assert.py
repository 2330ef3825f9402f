"""The device-assert rule: a GPU kernel stopped on its own check of a value (`CUDA error: device-side assert
triggered`), most often a class label or an index out of range.

A small family in one module, in the four seams' order: the message (the CUDA or HIP runtime's words; torch 1.0's
"cuda runtime error (59)"), the culprit (the calls of the cell whose kernels check values on the GPU: class-index
losses, embeddings -- the cell's own or inside a model it calls --, gather / scatter / index_select, binary
cross-entropy's [0, 1], multinomial's probabilities), no fix (the values that broke the check can no longer be
read: after the assert the GPU refuses every call) and the card (catalog keys `assert.*`).

target-out-of-range (rules/shapes) answers first when the class-index loss call is on the line that reported
the assert; this rule answers the rest. CUDA reports a failed kernel at the next call that waits for the GPU,
so the line the traceback names is where the error surfaced, not always where the kernel was launched: every
such call of the cell is named, in a loop those after the reporting line too (an earlier turn ran them). Reads
the cell's text and the metadata of live objects only (a tensor's shape, a module's type and sizes): reading GPU
memory would raise the same error again.

Seen on an H200 with torch 2.11 (AcceleratorError, a RuntimeError), and in public reports: pytorch/pytorch#18014
and #44355 (the error surfaced at a later print / display of the loss), datawhalechina/leedl-tutorial#89 (label -1
in CrossEntropyLoss), smartyfh/DST-STAR#7 (labels not numbered from 0).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import torch
import torch.nn.functional as F

from .. import catalog
from ..cell import cell_tree
from ..model import ERROR, Diagnosis, TensorFact
from .context import RuleContext
from .kit import argument, dotted, fact_for, lookup, one_line, submodules
from .registry import rule

KIND = "cuda-device-assert"

# -- the message --

# c10/cuda/CUDAException.h, torch >= 1.8 (2.11 verbatim, as torch.AcceleratorError):
#   "CUDA error: device-side assert triggered\nSearch for `cudaErrorAssert' in https://docs.nvidia.com/...
#   CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be
#   incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` ..."
# ROCm: "HIP error: device-side assert triggered"; torch 1.0: "cuda runtime error (59) : device-side assert
# triggered at /pytorch/aten/src/THCUNN/generic/ClassNLLCriterion.cu:111"
ASSERT = re.compile(r"(?:(?P<backend>CUDA|HIP) error|(?P<old>cuda) runtime error \(59\)) ?: "
                    r"device-side assert triggered")
MAX_CHECKS = 6  # calls named on a card


@dataclass(frozen=True)
class DeviceAssert:
    backend: str  # "CUDA" or "HIP"


def parse_device_assert(message: str) -> Optional[DeviceAssert]:
    m = ASSERT.search(message)
    if m is None:
        return None
    return DeviceAssert(m["backend"] or "CUDA")


# -- the culprit: the calls whose kernels check values --

CLASS_LOSSES = (F.cross_entropy, F.nll_loss, torch.nn.CrossEntropyLoss, torch.nn.NLLLoss)
UNIT_LOSSES = (F.binary_cross_entropy, torch.nn.BCELoss)
INDEX_METHODS = frozenset({"gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "index_select",
                           "index_add", "index_add_", "index_copy", "index_copy_", "index_fill", "index_fill_",
                           "take", "take_along_dim", "embedding"})


@dataclass(frozen=True)
class Check:
    """One call of the cell whose kernel checks values on the GPU, and what it checks."""

    lineno: int
    key: str  # catalog key of the sentence: assert.check.classes, .embedding, .index, .unit, .multinomial
    params: Tuple[Tuple[str, Any], ...]
    names: Tuple[str, ...]  # the names of the values checked (targets, indices), for the card's table


def checks_in(ctx: RuleContext) -> List[Check]:
    """The calls of the cell (of the frame a view reads) whose kernels check values, in the cell's order."""
    tree = cell_tree(ctx.record.source)
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset)) \
        if tree is not None else []
    found: List[Check] = []
    for call in calls:
        check = _check(ctx, call)
        if check is not None:
            found.append(check)
            if len(found) == MAX_CHECKS:
                break
    return found


def _is(obj: Any, kinds: tuple) -> bool:
    """`obj` is one of `kinds` (a function, a module class) or an instance of one of the classes."""
    return any(obj is k or isinstance(k, type) and isinstance(obj, k) for k in kinds)


def _check(ctx: RuleContext, call: ast.Call) -> Optional[Check]:
    source = ctx.record.source
    callee = call.func.func if isinstance(call.func, ast.Call) else call.func  # `nn.CrossEntropyLoss()(...)`
    obj = lookup(ctx, callee)
    if isinstance(obj, type) and callee is call.func:
        return None  # NB: `nn.CrossEntropyLoss()`, `nn.Embedding(100, 16)`: a module made, no kernel run
    text = one_line(source, call)
    if obj is not None and _is(obj, CLASS_LOSSES):
        target = argument(call, 1, "target")
        classes = _classes(lookup(ctx, argument(call, 0, "input")))
        key = "assert.check.classes" if classes is not None else "assert.check.classes_unknown"
        return Check(call.lineno, key, (("call", text), ("target", one_line(source, target)),
                                        ("last", classes - 1 if classes else 0)), _names(target))
    if obj is not None and _is(obj, UNIT_LOSSES):
        return Check(call.lineno, "assert.check.unit", (("call", text),),
                     _names(argument(call, 0, "input"), argument(call, 1, "target")))
    if obj is torch.multinomial or isinstance(call.func, ast.Attribute) and call.func.attr == "multinomial":
        return Check(call.lineno, "assert.check.multinomial", (("call", text),), ())
    if obj is F.embedding or isinstance(obj, torch.nn.Embedding):
        table = obj if isinstance(obj, torch.nn.Embedding) else None
        return _embedding(call, text, dotted(callee) or "", table)
    if isinstance(obj, torch.nn.Module):  # a model the cell calls: the embeddings inside it
        name = dotted(callee) or ""
        inner = next(((path, m) for path, m in submodules(name, obj, set())
                      if isinstance(m, torch.nn.Embedding)), None)
        if inner is not None:
            return _embedding(call, text, inner[0], inner[1])
        return None
    if isinstance(call.func, ast.Attribute) and call.func.attr in INDEX_METHODS:
        index = argument(call, 1, "index") if call.func.attr not in ("take",) else argument(call, 0, "index")
        return Check(call.lineno, "assert.check.index", (("call", text),), _names(index))
    return None


def _embedding(call: ast.Call, text: str, path: str, table: Optional[torch.nn.Embedding]) -> Check:
    """`F.embedding(...)` (its table unknown here), or an nn.Embedding the call runs, with its row count."""
    if table is None:
        return Check(call.lineno, "assert.check.embedding_unknown", (("call", text),), ())
    rows = int(table.num_embeddings)
    return Check(call.lineno, "assert.check.embedding", (("call", text), ("table", path), ("rows", rows),
                                                         ("last", rows - 1)), ())


def _classes(logits: Any) -> Optional[int]:
    """The class count of a loss's input: its size along dim 1 (dim 0 for a 1-D input); None when unknown."""
    if not isinstance(logits, torch.Tensor):
        return None
    shape = tuple(logits.shape)
    return int(shape[1]) if len(shape) >= 2 else int(shape[0]) if shape else None


def _names(*nodes: Optional[ast.AST]) -> Tuple[str, ...]:
    return tuple(name for name in (dotted(n) for n in nodes if n is not None) if name)


# -- the card --

@rule(KIND, raises=RuntimeError, parse=parse_device_assert, matches=(
    "CUDA error: device-side assert triggered (torch.AcceleratorError since torch 2.8; RuntimeError before)",
    "HIP error: device-side assert triggered / cuda runtime error (59) : device-side assert triggered (torch 1.0)",
))
def cuda_device_assert(ctx: RuleContext, err: DeviceAssert) -> Diagnosis:
    """A GPU kernel found a value out of its range and stopped; the process's GPU is unusable until a restart."""
    lineno = ctx.record.error_lineno
    checks = checks_in(ctx)
    device = err.backend
    why = [ctx.say("assert.why")]
    if checks:
        why.append(ctx.say("assert.checks", checks=ctx.say("assert.sep").join(
            ctx.say(c.key, lineno=c.lineno, **dict(c.params)) for c in checks)))
    else:
        why.append(ctx.say("assert.common"))
    why.append(ctx.say("assert.why_no_fix"))
    names = list(dict.fromkeys(n for c in checks for n in c.names))
    facts: List[TensorFact] = [f for f in (fact_for(n, ctx.names.lookup(n)) for n in names) if f is not None]
    return ctx.diagnosis(
        KIND, ERROR, title=ctx.say("assert.title", device=device),
        summary=ctx.say("assert.summary", device=device),
        what=ctx.say("assert.what", lineno=lineno or "?", device=device),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno),
        lines=sorted({n for n in (lineno, *(c.lineno for c in checks)) if n}),
        names=names, tensors=facts)
