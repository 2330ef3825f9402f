"""The optimizer family's fixes: small text edits on the cell, from the cause the culprit found.

- grads-not-zeroed: `<optimizer>.zero_grad()` on its own line where each step's gradients start;
- empty-parameter-list: `nn.ModuleList(...)` / `nn.ModuleDict(...)` around layers kept in a plain list or
  dict, or `list(...)` around a `.parameters()` generator that was used up.
May touch: the cell's text and ast only; a description comes from the catalog (ctx.say).
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

from ...cell import indent_of, node_span, segment, split_lines
from ...edits import insert_line_before, make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from .culprit_empty import EmptyCause
from .culprit_zero import ZeroGradSpot


# -- grads-not-zeroed --

def zero_grad_fix(ctx: RuleContext, spots: Sequence[ZeroGradSpot]) -> Optional[Fix]:
    src = ctx.record.source
    edits: Dict[Tuple[int, str], TextEdit] = {}
    for spot in spots:
        edit = zero_grad_edit(src, spot)
        edits.setdefault((edit.start, edit.text), edit)
    parts = dict.fromkeys(ctx.say("optimizer.zero.fix_before" if s.before else "optimizer.zero.fix_after",
                                  call=f"{s.receiver}.zero_grad()", lineno=s.anchor.lineno) for s in spots)
    described = ctx.say("optimizer.zero.fix", parts=ctx.say("optimizer.zero.joiner").join(parts))
    return make_fix(src, sorted(edits.values(), key=lambda e: e.start), described)


def zero_grad_edit(source: str, spot: ZeroGradSpot) -> TextEdit:
    lines = split_lines(source)
    text = f"{indent_of(lines[spot.anchor.lineno - 1])}{spot.receiver}.zero_grad()"
    if spot.before:
        return insert_line_before(source, spot.anchor.lineno, text)
    end = spot.anchor.end_lineno or spot.anchor.lineno
    if end < len(lines):
        return insert_line_before(source, end + 1, text)
    return TextEdit(len(source), len(source), ("" if source.endswith("\n") else "\n") + text + "\n")


# -- empty-parameter-list --

def empty_fix(ctx: RuleContext, cause: EmptyCause) -> Optional[Fix]:
    """The plain list (or dict) wrapped in `cause.wrapper`, or the generator's call in `list(...)`."""
    if cause.target is None:
        return None
    src = ctx.record.source
    start, end = node_span(src, cause.target)
    text = segment(src, cause.target) or ""
    if cause.kind == "plain_list":
        return make_fix(src, [TextEdit(start, end, f"{cause.wrapper}({text})")],
                        ctx.say("optimizer.empty.fix_module_list", new=f"{cause.wrapper}(...)",
                                attr=cause.params["attr"], lineno=cause.lineno))
    return make_fix(src, [TextEdit(start, start, f"{cause.wrapper}("), TextEdit(end, end, ")")],
                    ctx.say("optimizer.empty.fix_list", new=f"{cause.wrapper}({text})", lineno=cause.lineno))
