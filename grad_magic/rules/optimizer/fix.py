"""The optimizer family's fixes: small text edits on the cell, from the cause the culprit found.

- grads-not-zeroed: `<optimizer>.zero_grad()` on its own line where each step's gradients start (in the cell
  whose code steps); after a hand-written update, `<param>.grad.zero_()` on its own line;
- optimizer-not-on-model: the optimizer's own statement copied right after the one that made the model again;
- empty-parameter-list: `nn.ModuleList(...)` / `nn.ModuleDict(...)` around layers kept in a plain list or
  dict, or `list(...)` around a `.parameters()` generator that was used up.
May touch: the cell's text and ast only; a description comes from the catalog (ctx.say).
"""
from __future__ import annotations

import ast
from typing import Dict, Optional, Sequence, Tuple

from ... import catalog
from ...cell import indent_of, node_span, segment, split_lines
from ...edits import insert_line_before, make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from .culprit_empty import EmptyCause
from .culprit_manual import ManualUpdate, starts_their_lines
from .culprit_stray import Statement
from .culprit_zero import ZeroGradSpot


# -- grads-not-zeroed --

def zero_grad_fix(ctx: RuleContext, spots: Sequence[ZeroGradSpot]) -> Optional[Fix]:
    src = ctx.record.source
    edits: Dict[Tuple[int, str], TextEdit] = {}
    for spot in spots:
        edit = zero_grad_edit(src, spot)
        edits.setdefault((edit.start, edit.text), edit)
    # NB: the parts said plainly: the sentence they join is said in the view's cell once, as a whole
    parts = dict.fromkeys(catalog.message("optimizer.zero.fix_before" if s.before else "optimizer.zero.fix_after",
                                          ctx.language, call=f"{s.receiver}.zero_grad()", lineno=s.anchor.lineno)
                          for s in spots)
    described = ctx.say("optimizer.zero.fix", parts=ctx.say("optimizer.zero.joiner").join(parts))
    return make_fix(src, sorted(edits.values(), key=lambda e: e.start), described)


def zero_grad_edit(source: str, spot: ZeroGradSpot, method: str = "zero_grad()") -> TextEdit:
    lines = split_lines(source)
    text = f"{indent_of(lines[spot.anchor.lineno - 1])}{spot.receiver}.{method}"
    if spot.before:
        return insert_line_before(source, spot.anchor.lineno, text)
    end = spot.anchor.end_lineno or spot.anchor.lineno
    if end < len(lines):
        return insert_line_before(source, end + 1, text)
    return TextEdit(len(source), len(source), ("" if source.endswith("\n") else "\n") + text + "\n")


def cleared_after_updates(update: ManualUpdate) -> Optional[Fix]:
    """`<param>.grad.zero_()` on its own line right after each hand-written update (in the update's cell)."""
    view = update.view
    src = view.record.source
    if not starts_their_lines(src, update):
        return None
    edits = [zero_grad_edit(src, ZeroGradSpot(f"{target}.grad", stmt, False, None), "zero_()")
             for stmt, target in zip(update.statements, update.targets)]
    parts = dict.fromkeys(catalog.message("optimizer.zero.fix_after_update", view.language,
                                          call=f"{t}.grad.zero_()", lineno=s.lineno)
                          for s, t in zip(update.statements, update.targets))
    return make_fix(src, edits, view.say("optimizer.zero.fix_manual",
                                         parts=view.say("optimizer.zero.joiner").join(parts)))


# -- optimizer-not-on-model --

def rebuilt_optimizer_fix(built: Statement, remade: Statement, model: str, description: str) -> Optional[Fix]:
    """The statement that built the optimizer, copied as it is right after the one that made `model` again (in
    that cell): the optimizer is built again on the new parameters. Only when that statement reads `model`
    and both are whole top-level lines."""
    text = segment(built.ctx.record.source, built.stmt)
    src = remade.ctx.record.source
    value = getattr(built.stmt, "value", None)
    if not text or value is None or not any(isinstance(n, ast.Name) and n.id == model for n in ast.walk(value)):
        return None
    if not (whole_line(built.ctx.record.source, built.stmt) and whole_line(src, remade.stmt)):
        return None
    end = remade.stmt.end_lineno or remade.stmt.lineno
    lines = split_lines(src)
    edit = insert_line_before(src, end + 1, text) if end < len(lines) else \
        TextEdit(len(src), len(src), ("" if src.endswith("\n") else "\n") + text + "\n")
    return make_fix(src, [edit], description)


def whole_line(source: str, stmt: ast.stmt) -> bool:
    """A statement alone on its lines (a comment after it aside), starting at the margin."""
    lines = split_lines(source)
    if stmt.col_offset != 0 or not lines[stmt.lineno - 1].startswith(segment(source, stmt).split("\n")[0]):
        return False
    last = lines[(stmt.end_lineno or stmt.lineno) - 1]
    rest = last[len(last.encode("utf-8")[:stmt.end_col_offset].decode("utf-8", "ignore")):].strip()
    return not rest or rest.startswith("#")


# -- empty-parameter-list --

def empty_fix(ctx: RuleContext, cause: EmptyCause) -> Optional[Fix]:
    """The plain list (or dict) wrapped in `cause.wrapper`, or the generator's call in `list(...)`."""
    if cause.target is None:
        return None
    ctx = cause.view or ctx  # NB: the cell the display is written in
    src = ctx.record.source
    start, end = node_span(src, cause.target)
    text = segment(src, cause.target) or ""
    if cause.kind == "plain_list":
        return make_fix(src, [TextEdit(start, end, f"{cause.wrapper}({text})")],
                        ctx.say("optimizer.empty.fix_module_list", new=f"{cause.wrapper}(...)",
                                attr=cause.params["attr"], lineno=cause.lineno))
    return make_fix(src, [TextEdit(start, start, f"{cause.wrapper}("), TextEdit(end, end, ")")],
                    ctx.say("optimizer.empty.fix_list", new=f"{cause.wrapper}({text})", lineno=cause.lineno))
