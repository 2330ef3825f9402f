"""The shapes family's messages: torch's text -> `Product` (a matrix product that could not be done),
`BatchSizes` (a loss's input and target batch sizes) or `BadTarget` (a class label out of range).

Reads only the message; no torch import. The comment above each pattern says which torch version or kernel
says it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

# -- shape-mismatch --

# Each gives the two operands as (rows x inner) and (w_inner x cols); the comment says which kernel says it.
MATMUL: Tuple[re.Pattern, ...] = (
    # torch >= 1.9, CPU and CUDA addmm/mm (nn.Linear, @, torch.mm)
    re.compile(r"mat1 and mat2 shapes cannot be multiplied \((?P<a>\d+)x(?P<b>\d+) and (?P<c>\d+)x(?P<d>\d+)\)"),
    # torch >= 2.1 on MPS (Apple GPUs): nn.Linear's own check, rows are the input's second-last dimension
    re.compile(r"linear\(\): input and weight\.T shapes cannot be multiplied \((?P<a>\d+)x(?P<b>\d+) and "
               r"(?P<c>\d+)x(?P<d>\d+)\)"),
    # meta and fake tensors (torch.compile, device="meta"): torch/_meta_registrations.py
    re.compile(r"a and b must have same reduction dim, but got \[(?P<a>\d+), (?P<b>\d+)\] X "
               r"\[(?P<c>\d+), (?P<d>\d+)\]"),
    # torch <= 1.6 (TH)
    re.compile(r"size mismatch, m1: \[(?P<a>\d+) x (?P<b>\d+)\], m2: \[(?P<c>\d+) x (?P<d>\d+)\]"),
)


@dataclass(frozen=True)
class Product:
    """A matrix product that could not be done: (rows x inner) @ (w_inner x cols)."""

    rows: int
    inner: int
    w_inner: int
    cols: int


def parse_matmul_error(message: str) -> Optional[Product]:
    for pattern in MATMUL:
        m = pattern.search(message)
        if m is not None:
            return Product(int(m["a"]), int(m["b"]), int(m["c"]), int(m["d"]))
    return None


# -- batch-size-mismatch --

# every version since torch 1.0 (Python, then C++ TORCH_CHECK_VALUE): a ValueError
BATCH = re.compile(r"Expected input batch_size \((?P<input>\d+)\) to match target batch_size \((?P<target>\d+)\)")


@dataclass(frozen=True)
class BatchSizes:
    """A loss's input and target that disagree on the batch size."""

    input: int
    target: int


def parse_batch_error(message: str) -> Optional[BatchSizes]:
    m = BATCH.search(message)
    return BatchSizes(int(m["input"]), int(m["target"])) if m is not None else None


# -- target-out-of-range --

# ATen's CPU nll_loss / nll_loss2d since the port from THNN (torch 1.8); an IndexError in 2.x (2.13 checked)
TARGET = re.compile(r"Target (?P<n>-?\d+) is out of bounds")
# the CUDA kernels' CUDA_KERNEL_ASSERT (Loss.cu, NLLLoss2d.cu): the kernel prints it to stderr, the exception
# only says "device-side assert triggered" -- matched when a wrapper or a paste carries it; torch <= 1.5's THNN
# raised it on the CPU as "Assertion `cur_target >= 0 && cur_target < n_classes' failed."
ASSERT = re.compile(r"(?:t|cur_target) >= 0 && (?:t|cur_target) < n_classes")
DEVICE_ASSERT = "device-side assert triggered"  # RuntimeError, torch.AcceleratorError since 2.8


@dataclass(frozen=True)
class BadTarget:
    """A class label out of range, as the message tells it."""

    label: Optional[int]  # the label, when the message says it
    on_device: bool  # CUDA's device-side assert: the message may come from any kernel
    asserted: bool  # the message quotes the loss kernel's own assertion on the label


def parse_target_error(message: str) -> Optional[BadTarget]:
    asserted = ASSERT.search(message) is not None
    m = TARGET.search(message)
    if m is not None:
        return BadTarget(int(m["n"]), False, asserted)
    if asserted or DEVICE_ASSERT in message:
        return BadTarget(None, DEVICE_ASSERT in message, asserted)
    return None
