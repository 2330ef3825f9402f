"""The rule `conv-channels` and its card (catalog keys `channels.*`)."""
from __future__ import annotations

import dataclasses
from typing import Optional

from ... import catalog
from ...facts import shape_text
from ...model import ERROR, Diagnosis, Fix
from ..context import RuleContext
from ..kit import names_an_argument, quote
from ..places import Place, with_lines
from ..registry import rule
from ..traced import born, failing_operands, marked
from .culprit import ConvInput, Layout, conv_input, layer_built_at, made_by_a_layer
from .fix import in_channels_fix, kept_dim_fix, layout_fix
from .message import ChannelError, parse_channel_error

KIND = "conv-channels"


@rule(KIND, raises=RuntimeError, parse=parse_channel_error, matches=(
    "Given groups=1, weight of size [40, 3, 3, 3], expected input[3, 196, 196, 3] to have 3 channels, but got "
    "196 channels instead",
    "Given transposed=1, weight of size [4, 8, 3, 3], expected input[2, 3, 5, 5] to have 4 channels, but got 3 "
    "channels instead",
), fix="channels-last images moved to dimension 1 where the line passes them (`x.permute(0, 3, 1, 2)`; one "
       "(H, W, C) image: `.permute(2, 0, 1).unsqueeze(0)`), a missing channel dimension added (`x.unsqueeze(1)`), "
       "or a layer's literal in_channels set to what the convolution before it gives")
def conv_channels(ctx: RuleContext, err: ChannelError) -> Optional[Diagnosis]:
    """A convolution given an input whose dimension 1 is not the layer's number of input channels."""
    given = conv_input(ctx, err)
    lineno = ctx.record.error_lineno
    if given.layout is not Layout.LAYER and given.argument is not None and \
            names_an_argument(ctx, given.argument, lineno):
        return None  # NB: the data came from the caller: its line is where the layout is fixed
    shown = quote(given.name) or ctx.say("channels.the_input")
    layer = quote(given.layer) or ctx.say("channels.the_layer")
    place = layer_built_at(ctx, given) if given.layout is Layout.LAYER else None
    fix = _fix(ctx, err, given, place)
    parts = [ctx.say(given.layout.key, input=shown, layer=layer, shape=shape_text(given.shape), got=err.got,
                     expected=err.expected, calls=given.layout.calls(len(given.shape)))]
    if place is not None:
        parts.append(place.ctx.say("channels.built_at", layer=layer, lineno=place.node.lineno,
                                   code=place.ctx.record.source_line(place.node.lineno).strip()))
    parts.append(_remedy(ctx, err, given, layer, fix))
    at = place.ctx if place is not None and fix is not None else ctx  # NB: the card is where its fix is
    d = at.diagnosis(
        KIND, ERROR, title=ctx.say("channels.title", input=shown, layer=layer, got=err.got, expected=err.expected),
        summary=ctx.say("channels.summary"),
        what=ctx.say("channels.what", lineno=lineno or "?", layer=layer, weight=shape_text(err.weight),
                     shape=shape_text(given.shape), got=err.got),
        why=catalog.sentences(parts, ctx.language, capitalise=True), where=ctx.where(lineno),
        lines=[place.node.lineno] if at is not ctx else [lineno],
        names=[n for n in (given.name, given.layer) if n.isidentifier()], tensors=ctx.facts_on_line(lineno), fix=fix)
    if place is not None:
        return with_lines(d, ctx, [lineno]) if at is not ctx else with_lines(d, place.ctx, [place.node.lineno])
    return _origin(ctx, d, given)


def _fix(ctx: RuleContext, err: ChannelError, given: ConvInput, place: Optional[Place]) -> Optional[Fix]:
    if place is not None:
        return in_channels_fix(place, err.expected, err.got, place.ctx.say(
            "channels.fix.in_channels", layer=given.layer, got=err.got, lineno=place.node.lineno)) \
            if made_by_a_layer(ctx, err.got) else None
    if not given.name or not given.layout.calls(len(given.shape)):
        return None
    return layout_fix(ctx.record.source, given, ctx.say(f"channels.fix.{given.layout.value}", name=given.name,
                                                        lineno=ctx.record.error_lineno or "?"))


def _remedy(ctx: RuleContext, err: ChannelError, given: ConvInput, layer: str, fix: Optional[Fix]) -> str:
    calls = given.layout.calls(len(given.shape))
    if given.layout is Layout.LAYER:
        return ctx.say("channels.why.in_channels" if fix else "channels.why.no_fix_layer", layer=layer, got=err.got)
    if calls and fix is None:
        return ctx.say("channels.why.no_name", calls=calls)
    return ""


def _origin(ctx: RuleContext, d: Diagnosis, given: ConvInput) -> Diagnosis:
    """`d` with the line marked where the run gave the input its shape (an op of the user's, or the statement of
    an earlier cell that bound it), for a layout the data brought."""
    operands = failing_operands(ctx)
    if given.layout is Layout.LAYER or not operands:
        return d
    shape = given.shape
    # NB: each image's own layout, whatever the batch's size: a collated batch is followed into its samples
    found = born(ctx, operands[0], lambda m: tuple(m.shape[1:]) == shape[1:] and len(m.shape) == len(shape))
    if found is None or (found.at.record is ctx.record and found.lineno == ctx.record.error_lineno):
        return d
    said = found.at.say("channels.origin", lineno=found.lineno, shape=shape_text(shape),
                        code=found.at.record.source_line(found.lineno).strip())
    d = marked(dataclasses.replace(d, why=catalog.sentences([d.why, said], ctx.language)), found, ctx)
    kept = kept_dim_fix(found, given) if found.at.record is ctx.record else None
    # NB: fixed where the dimension was dropped: every later use of the tensor needs it
    return d if kept is None else dataclasses.replace(d, fix=kept)
