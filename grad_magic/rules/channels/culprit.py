"""The convolution's input as the run recorded it (the failing op's operands: shapes only), how its
dimensions are laid out against the layer's channel count (`Layout`), the user's name for the layer, and the
argument on the error line that holds that tensor.

May touch: the failed op's operands (weak references), the NameIndex, the cell's ast. Never runs user code.
"""
from __future__ import annotations

import ast
import enum
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch

from ...cell import cell_tree
from ..context import RuleContext
from ..kit import calls_on_line, lookup
from ..places import Place, made_at, spelled
from ..traced import born, failing_operands
from .message import ChannelError


class Layout(enum.Enum):
    """How the input's dimensions sit against the layer's `expected` channels; each plan carries its catalog
    key and, where the numbers make it certain, the method calls that put the channels in dimension 1."""

    CHANNELS_LAST = "channels_last"  # (N, H, W, C): images as PIL, NumPy and OpenCV lay them out
    ONE_IMAGE_CHANNELS_LAST = "one_image"  # (H, W, C): one image, channels last, no batch dimension
    NO_CHANNEL_DIM = "no_channel_dim"  # (N, H, W) into a one-channel layer: torch reads N as the channels
    OTHER_IMAGES = "other_images"  # 1, 3 or 4 channels where the layer takes another of these (grayscale / RGB)
    LAYER = "layer"  # the channels differ for another reason: the layer before, or the data

    @property
    def key(self) -> str:
        return f"channels.why.{self.value}"

    def calls(self, ndim: int) -> str:
        """The calls appended to the input (`.permute(0, 3, 1, 2)`); "" when no fix is certain."""
        if self is Layout.CHANNELS_LAST:
            return f".permute(0, {ndim - 1}, {', '.join(str(i) for i in range(1, ndim - 1))})"
        if self is Layout.ONE_IMAGE_CHANNELS_LAST:
            return f".permute({ndim - 1}, {', '.join(str(i) for i in range(ndim - 1))}).unsqueeze(0)"
        if self is Layout.NO_CHANNEL_DIM:
            return ".unsqueeze(1)"
        return ""


IMAGE_CHANNELS = frozenset({1, 3, 4})  # grayscale, RGB, RGBA


def layout_of(shape: Tuple[int, ...], err: ChannelError, from_layer: bool) -> Layout:
    """Which plan the input's shape calls for (`shape` as the user's tensor has it). `from_layer`: a
    convolution or pooling of the user's made its dimension 1 (then no layout of data is to blame)."""
    batched = len(shape) == err.spatial + 2
    unbatched = len(shape) == err.spatial + 1
    # NB: channels last in an image (2d, 3d) are 1, 3 or 4; a 1d signal's features (N, L, E) may be any number
    last_is_channels = err.spatial == 1 or err.expected in IMAGE_CHANNELS
    if from_layer or err.transposed:
        return Layout.LAYER
    if batched and shape[-1] == err.expected != shape[1] and last_is_channels:
        return Layout.CHANNELS_LAST
    if unbatched and shape[-1] == err.expected != shape[0] and last_is_channels:
        return Layout.ONE_IMAGE_CHANNELS_LAST
    if unbatched and err.expected == 1:
        return Layout.NO_CHANNEL_DIM
    if batched and {shape[1], err.expected} <= IMAGE_CHANNELS:
        return Layout.OTHER_IMAGES
    return Layout.LAYER


@dataclass(frozen=True)
class ConvInput:
    """The tensor the convolution got, measured, and where the error line holds it."""

    shape: Tuple[int, ...]
    layout: Layout
    layer: str  # the user's name for the layer: `model.conv1`, `model[0]`; "" when none
    argument: Optional[ast.expr]  # the argument on the error line that holds the input
    name: str  # how the cell writes that argument: `images`


def conv_input(ctx: RuleContext, err: ChannelError) -> ConvInput:
    operands = failing_operands(ctx)
    t = operands[0] if operands else None
    weight = operands[1] if len(operands) > 1 else None
    shape = tuple(t.shape) if t is not None else err.input
    argument = argument_holding(ctx, t, shape) if t is not None else None
    name = ast.get_source_segment(ctx.record.source, argument) or "" if argument is not None else ""
    return ConvInput(shape, layout_of(shape, err, made_by_a_layer(ctx, err.got)), layer_name(ctx, weight), argument,
                     " ".join(name.split()))


def argument_holding(ctx: RuleContext, t: torch.Tensor, shape: Tuple[int, ...]) -> Optional[ast.expr]:
    """The one argument of a call on the error line that names `t` itself, else the one that names a tensor of
    its shape (`model(images)` where the model's forward made `x = images.float()`)."""
    same: List[ast.expr] = []
    alike: List[ast.expr] = []
    for call in calls_on_line(cell_tree(ctx.record.source), ctx.record.error_lineno):
        for arg in call.args:
            value = lookup(ctx, arg)
            if value is t:
                same.append(arg)
            elif isinstance(value, torch.Tensor) and tuple(value.shape) == shape:
                alike.append(arg)
    found = same or alike
    return found[0] if len({ast.dump(a) for a in found}) == 1 else None


def layer_name(ctx: RuleContext, weight: Optional[torch.Tensor]) -> str:
    """`model.features[0]` for the layer whose weight is `weight` (the user's shortest name outside `self.`)."""
    names = [n[:-len(".weight")] for n in ctx.names.names_for(weight) if n.endswith(".weight")] \
        if weight is not None else []
    outside = [n for n in names if not n.startswith("self.")] or names
    if not outside:
        return ""
    head, _, path = min(outside, key=len).partition(".")
    return spelled(head, path)


def layer_built_at(ctx: RuleContext, given: ConvInput) -> Optional[Place]:
    """The `nn.Conv2d(...)` call in the user's `__init__` that made the layer (`model.conv2` -> its
    `self.conv2 = ...` line), an earlier cell's usually."""
    head, _, path = given.layer.replace("[", ".").replace("]", "").partition(".")
    model = ctx.names.lookup(head) if head else None
    return made_at(ctx, model, path) if path and isinstance(model, torch.nn.Module) else None


def made_by_a_layer(ctx: RuleContext, got: int) -> bool:
    """Whether the run made the input's `got` channels with a convolution or pooling of the user's (the layer
    before): then the layer that refuses them was built for another count, and the count it gets is certain."""
    operands = failing_operands(ctx)
    found = born(ctx, operands[0], lambda m: len(m.shape) > 1 and m.shape[1] == got) if operands else None
    return found is not None and found.birth is not None and any(w in found.birth.op for w in ("conv", "pool"))
