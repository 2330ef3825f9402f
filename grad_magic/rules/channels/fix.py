"""The input's channels put in dimension 1 where the error line passes it: `images` ->
`images.permute(0, 3, 1, 2)`. Pure.

NB: integer pixels never reach this check: torch refuses a uint8 input for its dtype first (dtype-mismatch)."""
from __future__ import annotations

import ast
from typing import Optional

from ...cell import cell_tree, node_span
from ...edits import make_fix
from ...model import Fix, TextEdit
from ..kit import argument, parenthesised
from ..places import Place
from ..traced import Born
from ..shapes.culprit import fold
from .culprit import ConvInput, Layout


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


def kept_dim_fix(found: Born, given: ConvInput) -> Optional[Fix]:
    """`x[:, 0, :, :]` -> `x[:, 0:1, :, :]` where the run made the input by indexing dimension 1 with one number
    (a channel taken, its dimension dropped): the one-channel batch keeps its channel dimension for every use."""
    if given.layout is not Layout.NO_CHANNEL_DIM or found.birth is None or found.birth.op != "__getitem__":
        return None
    inputs = found.birth.inputs
    if not inputs or len(inputs[0].meta.shape) != len(given.shape) + 1:
        return None
    source = found.at.record.source
    tree = cell_tree(source)
    hits = [n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and n.lineno == found.lineno
            and isinstance(n.slice, ast.Tuple) and len(n.slice.elts) >= 2
            and isinstance(n.slice.elts[1], ast.Constant) and type(n.slice.elts[1].value) is int
            and isinstance(n.slice.elts[0], ast.Slice)] if tree is not None else []
    if len(hits) != 1:
        return None
    index = hits[0].slice.elts[1]
    start, end = node_span(source, index)
    k = index.value
    return make_fix(source, [TextEdit(start, end, f"{k}:{k + 1}")], found.at.say(
        "channels.fix.keep_dim", code=source[start:end], kept=f"{k}:{k + 1}", lineno=found.lineno))
