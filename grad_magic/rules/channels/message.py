"""torch's message for a convolution given an input whose dimension 1 is not the layer's channel count ->
`ChannelError`. Reads only the message; no torch import.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

# aten/src/ATen/native/Convolution.cpp (check_shape_forward), torch 1.5 ... 2.13, every kernel:
#   "Given groups=1, weight of size [40, 3, 3, 3], expected input[3, 196, 196, 3] to have 3 channels, but got
#   196 channels instead"; transposed convolutions say "Given transposed=1, weight of size [...]" and count
#   the weight's dimension 0; torch <= 1.4 wrote the weight's sizes without brackets ("weight of size 40 3 3 3").
# NB: an unbatched input (C, H, W) is shown with a 1 in front: input[1, 196, 196, 3] for a (196, 196, 3) image.
CHANNELS = re.compile(
    r"Given (?P<given>groups|transposed)=(?P<n>\d+), weight of size \[?(?P<weight>\d+(?:,? \d+)*)\]?, expected "
    r"input\[(?P<input>\d+(?:, \d+)*)\] to have (?P<expected>\d+) channels, but got (?P<got>\d+) channels instead")


@dataclass(frozen=True)
class ChannelError:
    """A convolution's input with `got` channels in dimension 1 where the weight takes `expected`."""

    weight: Tuple[int, ...]
    input: Tuple[int, ...]  # as torch shows it: an unbatched input with a 1 in front
    expected: int
    got: int
    transposed: bool

    @property
    def spatial(self) -> int:
        """The layer's spatial dimensions: 2 for a Conv2d."""
        return len(self.weight) - 2


def parse_channel_error(message: str) -> Optional[ChannelError]:
    m = CHANNELS.search(message)
    if m is None:
        return None
    weight = tuple(int(d) for d in re.split(r",? ", m["weight"]))
    return ChannelError(weight, tuple(int(d) for d in m["input"].split(", ")), int(m["expected"]), int(m["got"]),
                        m["given"] == "transposed")
