"""The dtypes family's messages: torch's text -> `TargetDtypeError` or `DtypeMismatchError`.

Reads only the message; no torch import. Every message below was reproduced with torch 2.13 unless a
version is named; the comment above each says which op or kernel says it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

# torch >= 2.12 (nll_loss / cross_entropy, class-index targets): "... but got Float" (also Double, Int)
TARGET_LONG = re.compile(r"expected target dtype to be Long or Byte, but got (?P<found>[A-Za-z0-9]+)")
# torch 1.x: "Expected object of scalar type Long but got scalar type Float for argument #2 'target' ..."
OLD_ARG = re.compile(r"Expected object of scalar type (?P<expected>[A-Za-z0-9]+) but got scalar type "
                     r"(?P<found>[A-Za-z0-9]+) for argument #\d+ '(?P<arg>[A-Za-z0-9_]+)'")
# torch 1.7 ... 2.11 nll_loss targets, and in 2.13 still bmm, einsum, conv without bias ...
EXPECTED_FOUND = re.compile(r"expected scalar type (?P<expected>[A-Za-z0-9]+) but found (?P<found>[A-Za-z0-9]+)")
# TensorIterator's same-dtype check: binary_cross_entropy (2.13), mse_loss backward (torch 1.x)
FOUND_EXPECTED = re.compile(r"Found dtype (?P<found>[A-Za-z0-9]+) but expected (?P<expected>[A-Za-z0-9]+)")
# binary_cross_entropy_with_logits with integer targets (2.13)
CAST = re.compile(r"result type (?P<result>[A-Za-z0-9]+) can't be cast to the desired output type "
                  r"(?P<found>[A-Za-z0-9]+)")
# CUDA nll_loss with float targets (torch 1.10 ... 2.11), from torch's Loss.cu dispatch name
CUDA_TARGET = re.compile(r"\"nll_loss[a-z0-9_]*\" not implemented for '(?P<found>[A-Za-z0-9]+)'")
# integer logits: 2.13 NotImplementedError, RuntimeError before 2.0; "host_softmax" is CUDA / torch 1.x
INT_LOGITS = re.compile(r"\"(?:log_softmax|softmax|host_softmax|nll_loss)[a-z0-9_]*\" not implemented for "
                        r"'(?P<found>Long|Int|Short|Char|Byte|Bool)'")
# a regression loss given integer values (2.13: mse_loss / smooth_l1_loss / huber_loss when what it computes in
# is integer: a transformers model with num_labels=1 given int labels; the CUDA kernels say "mse_cuda")
REGRESSION_KERNEL = re.compile(r"\"(?:mse|smooth_l1|huber|l1)_[a-z0-9_]*\" not implemented for "
                               r"'(?P<found>Long|Int|Short|Char|Byte|Bool)'")
MISMATCH: Tuple[re.Pattern, ...] = (
    re.compile(r"mat1 and mat2 must have the same dtype(?:, but got (?P<a>[A-Za-z0-9]+) and "
               r"(?P<b>[A-Za-z0-9]+))?"),  # nn.Linear, addmm: torch >= 1.13 ("but got" since 2.1)
    re.compile(r"expected m1 and m2 to have the same dtype, but got: (?P<a>[A-Za-z0-9:]+) != "
               r"(?P<b>[A-Za-z0-9:]+)"),  # @, torch.mm, matmul
    re.compile(r"expected both vectors to have same dtype, but found (?P<a>[A-Za-z0-9]+) and "
               r"(?P<b>[A-Za-z0-9]+)"),  # dot, 1-D @
    # conv: "(double) and bias type (float)" (2.x), "(torch.DoubleTensor) and weight type (torch.FloatTensor)"
    re.compile(r"Input type \((?P<a>[A-Za-z0-9_.:]+(?: char)?)\) and (?:weight|bias) type "
               r"\((?P<b>[A-Za-z0-9_.:]+(?: char)?)\) should be the same"),  # NB: uint8 is "unsigned char"
    re.compile(r"RNN input dtype \((?P<a>[a-z0-9.]+)\) does not match weight dtype \((?P<b>[a-z0-9.]+)\)"),
    re.compile(r"mixed dtype \(CPU\): all inputs must share same datatype"),  # BatchNorm, LayerNorm
    re.compile(r"addmv input tensors must have the same dtype"),  # torch.mv
    EXPECTED_FOUND, FOUND_EXPECTED,
)
SCALAR = {"double": "float64", "float": "float32", "half": "float16", "bfloat16": "bfloat16",
          "long": "int64", "int": "int32", "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool",
          "unsigned char": "uint8", "signed char": "int8",
          "float64": "float64", "float32": "float32", "float16": "float16", "int64": "int64", "int32": "int32"}
INTEGRAL = frozenset({"int64", "int32", "int16", "int8", "uint8", "bool"})


def torch_dtype(text: Optional[str]) -> Optional[str]:
    """`Double`, `double`, `c10::Half`, `torch.DoubleTensor`, `torch.float64` -> `float64` (None if unknown)."""
    if not text:
        return None
    t = text.lower().replace("c10::", "").replace("torch.", "").replace("cuda.", "")
    t = t[:-len("tensor")] if t.endswith("tensor") else t
    return SCALAR.get(t)


@dataclass(frozen=True)
class TargetDtypeError:
    """A loss refused its targets' dtype (or an op refused a dtype in words a loss also uses)."""

    want: str  # "int64" (class labels) or "float32" (binary targets)
    found: Optional[str]  # the dtype given; None when the message's name for it is unknown
    sure: bool  # whether the message alone says it is the target
    regression: bool = False  # the message names a regression loss's kernel (mse, smooth_l1, huber)


def parse_target_dtype(message: str) -> Optional[TargetDtypeError]:
    m = TARGET_LONG.search(message)
    if m:
        return TargetDtypeError("int64", torch_dtype(m["found"]), True)
    m = OLD_ARG.search(message)
    if m and m["arg"] == "target":
        want = torch_dtype(m["expected"])
        return TargetDtypeError(want, torch_dtype(m["found"]), True) if want is not None else None
    m = CUDA_TARGET.search(message)
    if m and torch_dtype(m["found"]) not in INTEGRAL:
        return TargetDtypeError("int64", torch_dtype(m["found"]), True)
    m = EXPECTED_FOUND.search(message)
    if m and torch_dtype(m["expected"]) == "int64" and torch_dtype(m["found"]) not in INTEGRAL:
        return TargetDtypeError("int64", torch_dtype(m["found"]), False)
    m = REGRESSION_KERNEL.search(message)
    if m:
        return TargetDtypeError("float32", torch_dtype(m["found"]), False, regression=True)
    m = FOUND_EXPECTED.search(message) or CAST.search(message)
    if m and torch_dtype(m["found"]) in INTEGRAL:
        return TargetDtypeError("float32", torch_dtype(m["found"]), False)
    return None


@dataclass(frozen=True)
class DtypeMismatchError:
    """Two dtypes met in one op; either may be None when the message does not name it."""

    a: Optional[str]
    b: Optional[str]
    int_logits: bool  # integer scores fed to a softmax (the other side is float32)


def parse_dtype_mismatch(message: str) -> Optional[DtypeMismatchError]:
    m = INT_LOGITS.search(message)
    if m:
        return DtypeMismatchError(torch_dtype(m["found"]), "float32", True)
    for pattern in MISMATCH:
        m = pattern.search(message)
        if m:
            groups = m.groupdict()
            a_text, b_text = groups.get("a") or groups.get("found"), groups.get("b") or groups.get("expected")
            if ("cuda" in (a_text or "").lower()) != ("cuda" in (b_text or "").lower()):
                return None  # NB: "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor)"
            a, b = torch_dtype(a_text), torch_dtype(b_text)
            return None if a is not None and a == b else DtypeMismatchError(a, b, False)
    return None
