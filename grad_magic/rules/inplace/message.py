"""torch's messages of the inplace family -> frozen dataclasses. No torch import, no live object.

- `SavedTensorError`: the error itself, with what it says about the saved tensor (type, shape, producer,
  versions);
- `AnomalyReport`: anomaly mode's warning "Error detected in X", with the forward lines it names.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

HEAD = re.compile(r"one of the variables needed for gradient computation has been modified by an "
                  r"inplace operation")
# `[torch.FloatTensor [2]]` / `[torch.cuda.FloatTensor [2, 3]]` / `[CPUBFloat16Type [2]]`; the
# `which is output` clause is absent for a leaf; torch 2.13 names the op (`Sigmoid`), older torch the
# node (`SigmoidBackward0`; before 1.10 `SigmoidBackward`).
DETAIL = re.compile(r"\[(?P<type>[^\s\[\]]+) \[(?P<shape>[\d, ]*)\]\]"
                    r"(?:, which is output (?P<output>\d+) of (?P<grad_fn>[^\s,]+),)?"
                    r" is at version (?P<version>\d+); expected version (?P<expected>\d+) instead")
# torch replaces only CPU/CUDA Byte..Half types by their legacy names (`torch.cuda.HalfTensor`); other dtypes
# and backends print the dispatch key's type (`CPUBFloat16Type`, `MPSFloatType`)
LEGACY_TYPE = re.compile(r"torch\.(?:(?P<dev>\w+)\.)?(?P<scalar>\w+?)Tensor")
KEY_TYPE = re.compile(r"(?P<dev>CPU|CUDA|MPS|XPU|HIP|Meta)(?P<scalar>\w+?)Type")
SCALARS = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16",
           "ComplexFloat": "complex64", "ComplexDouble": "complex128", "ComplexHalf": "complex32"}
# "Error detected in X. Traceback of forward call that caused the error: File ..." -- or, when the forward
# ran without anomaly mode (an earlier plain cell): "Error detected in X. No forward pass information ..."
ANOMALY = re.compile(r"Error detected in (?P<node>\w+)\. (?P<info>Traceback of forward call|No forward pass)")
FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


@dataclass(frozen=True)
class SavedTensorError:
    """What torch's message says about the saved tensor."""

    type_text: str = ""
    shape: Optional[Tuple[int, ...]] = None
    dtype: Optional[str] = None
    device: Optional[str] = None  # "cpu", "cuda", ...: the device type only
    output: Optional[int] = None
    grad_fn: Optional[str] = None
    version: Optional[int] = None
    expected: Optional[int] = None


def parse_saved_tensor_error(message: str) -> Optional[SavedTensorError]:
    """None when `message` is not the saved-tensor error; the details it gives otherwise."""
    if not HEAD.search(message):
        return None
    m = DETAIL.search(message)
    if m is None:  # NB: very old torch said only the first sentence
        return SavedTensorError()
    dims = m["shape"].replace(" ", "")
    dtype, device = _type_facts(m["type"])
    return SavedTensorError(
        type_text=m["type"], shape=tuple(int(n) for n in dims.split(",")) if dims else (),
        dtype=dtype, device=device, output=int(m["output"]) if m["output"] else None,
        grad_fn=m["grad_fn"], version=int(m["version"]), expected=int(m["expected"]))


def _type_facts(type_text: str) -> Tuple[Optional[str], Optional[str]]:
    """`torch.cuda.HalfTensor` -> ('float16', 'cuda'); `CPUBFloat16Type` -> ('bfloat16', 'cpu')."""
    m = LEGACY_TYPE.fullmatch(type_text)
    if m:
        return SCALARS.get(m["scalar"]), (m["dev"] or "cpu").lower()
    m = KEY_TYPE.fullmatch(type_text)
    if m:
        return SCALARS.get(m["scalar"]), m["dev"].lower()
    return None, None


@dataclass(frozen=True)
class AnomalyReport:
    """Anomaly mode's warning: the backward node that failed and the forward call's frames."""

    node: str  # `SigmoidBackward0`
    frames: Tuple[Tuple[str, int], ...]  # (file, line) of the forward call's traceback, outermost first
    forward_seen: bool  # False: "No forward pass information" (the forward ran without anomaly mode)


def parse_anomaly(message: str) -> Optional[AnomalyReport]:
    m = ANOMALY.search(message)
    if m is None:
        return None
    frames = tuple((f["file"], int(f["line"])) for f in FRAME.finditer(message))
    return AnomalyReport(m["node"], frames, m["info"] != "No forward pass")
