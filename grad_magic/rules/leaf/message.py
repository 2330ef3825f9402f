"""torch's messages of the leaf family -> frozen dataclasses. No torch import, no live object.

- `LeafInPlace`: the error of an in-place change to a leaf that requires grad (leaf-modified-in-place);
- `match_non_leaf_grad`: the UserWarning of a `.grad` read on a tensor that is not a leaf (non-leaf-grad).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

# torch 1.5+ (checked with 2.1, 2.10, 2.11, 2.12, 2.13): "a leaf Variable that requires grad is being used in
# an in-place operation." and, for a write through a view, "a view of a leaf Variable that requires grad is
# being used in an in-place operation."; before torch 1.5: "... has been used in an in-place operation."
LEAF_INPLACE = re.compile(r"a (?P<view>view of a )?leaf Variable that requires grad (?:is being|has been) used "
                          r"in an in-place operation")
# The UserWarning of torch 2.13 ("... for more information.", TensorBody.h:493) and torch 2.1 ("... for more
# informations.", TensorBody.h:489): "The .grad attribute of a Tensor that is not a leaf Tensor is being
# accessed. Its .grad attribute won't be populated during autograd.backward(). ..."
NON_LEAF_GRAD = re.compile(r"The \.grad attribute of a Tensor that is not a leaf Tensor is being accessed")


@dataclass(frozen=True)
class LeafInPlace:
    """A leaf that requires grad was changed in place."""

    view: bool  # the write went through a view of the leaf (`w[0].add_(1)`)


def parse_leaf_inplace(message: str) -> Optional[LeafInPlace]:
    m = LEAF_INPLACE.search(message)
    return None if m is None else LeafInPlace(bool(m["view"]))


def match_non_leaf_grad(message: str) -> bool:
    """Whether a warning's message is torch's non-leaf `.grad` warning."""
    return NON_LEAF_GRAD.search(message) is not None
