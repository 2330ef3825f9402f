"""The input's channels put in dimension 1 where the error line passes it: `images` ->
`images.permute(0, 3, 1, 2)`. Pure.

NB: integer pixels never reach this check: torch refuses a uint8 input for its dtype first (dtype-mismatch)."""
from __future__ import annotations

import ast
from typing import Optional

from ...cell import node_span
from ...edits import make_fix
from ...model import Fix, TextEdit
from ..kit import argument, parenthesised
from ..places import Place
from ..shapes.culprit import fold
from .culprit import ConvInput


def layout_fix(source: str, given: ConvInput, description: str) -> Optional[Fix]:
    calls = given.layout.calls(len(given.shape))
    if not calls or given.argument is None:
        return None
    start, end = node_span(source, given.argument)
    text = parenthesised(source[start:end], given.argument) + calls
    return make_fix(source, [TextEdit(start, end, text)], description)


def in_channels_fix(place: Place, expected: int, got: int, description: str) -> Optional[Fix]:
    """The layer's literal `in_channels` (`nn.Conv2d(8, 16, 3)`: the 8) set to the channels it gets."""
    node = argument(place.node, 0, "in_channels") if isinstance(place.node, ast.Call) else None
    if node is None or fold(node) != expected:
        return None
    source = place.ctx.record.source
    start, end = node_span(source, node)
    return make_fix(source, [TextEdit(start, end, str(got))], description)
