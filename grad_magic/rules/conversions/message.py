"""The conversions family's messages: torch's text -> a frozen dataclass, one parser per kind.

May touch: the message string only (no torch import, no cell, no live objects).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

# NB: the version ranges of the older wordings come from user reports, not from running each release.
# torch 2.13 (reproduced, also through np.array / np.asarray, which call Tensor.__array__) and reports since 2022:
#   "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
# older releases (reports with torch 1.1 and 1.3.1): "... on Variable that requires grad. Use var.detach()..."
NEEDS_DETACH = re.compile(r"Can't call numpy\(\) on (?:Tensor|Variable) that requires grad")
# reports since late 2020 and torch 2.13 (CUDA builds): "can't convert cuda:0 device type tensor to numpy. Use
#   Tensor.cpu() to copy the tensor to host memory first." (reproduced on 2.13 with "meta"; "mps:0" alike)
# older releases (reports from 2019): "can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy ..."
NEEDS_CPU = re.compile(r"can't convert (?P<device>[A-Za-z_]{1,40}(?::\d{1,6})?)(?: device type)? tensor to numpy")
# torch 2.13 (reproduced): "Boolean value of Tensor with more than one value is ambiguous", and for an empty
#   tensor "... with no values is ambiguous"; older releases (reports from 2018 to 2021): "bool value of ..."
AMBIGUOUS = re.compile(r"(?:Boolean|bool) value of Tensor with (?P<what>more than one value|no values) "
                       r"is ambiguous")


@dataclass(frozen=True)
class NeedsDetach:
    """numpy() (or np.array) refused a tensor that requires grad (every wording alike)."""


@dataclass(frozen=True)
class NeedsCpu:
    """numpy() (or np.array) refused a tensor on another device than the CPU."""

    device: str  # as the message names it, lower case: "cuda:0", "cuda" (older wording), "mps:0", "meta"


@dataclass(frozen=True)
class Ambiguous:
    """bool() of a tensor that does not hold exactly one value."""

    empty: bool  # "with no values" (else "with more than one value")


def parse_needs_detach(message: str) -> Optional[NeedsDetach]:
    return NeedsDetach() if NEEDS_DETACH.search(message) else None


def parse_needs_cpu(message: str) -> Optional[NeedsCpu]:
    m = NEEDS_CPU.search(message)
    return NeedsCpu(m["device"].lower()) if m is not None else None


def parse_ambiguous(message: str) -> Optional[Ambiguous]:
    m = AMBIGUOUS.search(message)
    return Ambiguous(empty=m["what"] == "no values") if m is not None else None
