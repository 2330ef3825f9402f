"""torch's messages of the requires_grad family -> frozen dataclasses. No torch import, no live object.

- `NoGradFn`: backward() was given a tensor with no graph (missing-requires-grad);
- `NotFloat`: requires_grad was asked of a tensor that is not floating point (integer-requires-grad).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

# "element N of tensors does not require grad and does not have a grad_fn" since torch 0.4 (checked with
# torch 2.1, 2.10, 2.11, 2.12, 2.13); "... of variables ..." before 0.4 (torch/csrc/autograd/python_engine.cpp
# of that time). N is the position among the tensors given to backward() / autograd.backward().
NO_GRAD_FN = re.compile(r"element (?P<index>\d+) of (?:tensors|variables) does not require grad and does "
                        r"not have a grad_fn")
# torch 1.6+: "Only Tensors of floating point and complex dtype can require gradients" (torch.tensor(...,
# requires_grad=True), `x.requires_grad = True`, nn.Parameter); "only Tensors of floating point dtype ..."
# from `requires_grad_()`, and from everything before complex autograd (1.5 and older).
NOT_FLOAT = re.compile(r"[Oo]nly Tensors of floating point (?P<complex>and complex )?dtype can require gradients")


@dataclass(frozen=True)
class NoGradFn:
    """backward() found no graph behind one of its tensors."""

    index: int  # which of the tensors given to backward() (0 for `loss.backward()`)


def parse_no_grad_fn(message: str) -> Optional[NoGradFn]:
    m = NO_GRAD_FN.search(message)
    return NoGradFn(int(m["index"])) if m else None


@dataclass(frozen=True)
class NotFloat:
    """requires_grad was asked of an integer (or bool) tensor."""

    complex_allowed: bool  # the message says complex dtypes may require grad too (torch 1.6+)


def parse_not_float(message: str) -> Optional[NotFloat]:
    m = NOT_FLOAT.search(message)
    return NotFloat(bool(m["complex"])) if m else None
