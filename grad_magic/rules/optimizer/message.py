"""The optimizer family's one torch message: an optimizer built on no parameters.

May touch: the message text only. No torch import.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

# torch/optim/optimizer.py, Optimizer.__init__, unchanged from 0.4 to 2.13 (a ValueError)
EMPTY = "optimizer got an empty parameter list"


@dataclass(frozen=True)
class EmptyParameterList:
    """`optimizer got an empty parameter list`: the message names neither the optimizer nor its argument."""


def parse_empty_parameter_list(message: str) -> Optional[EmptyParameterList]:
    return EmptyParameterList() if EMPTY in message else None
