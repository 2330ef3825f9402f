"""Every text of a diagnosis within a stated bound, so a card stays small whatever the cell or the error holds
(a 1 MB comment on the failing line, a 200,000-character message, a name made of a long dict key).

The bounds, in characters:
- MAX_TEXT (2,000): each sentence (title, summary, what, why, where, a note, the fix's description, an
  extra), each name, each field of a tensor's facts;
- MAX_ERROR (20,000): the original error message;
- MAX_LINE (2,000): each line of code the card holds (the cell's `source`, a shown line, another cell's
  text), its end replaced by `… [N more characters]`;
- MAX_SOURCE (100,000): one cell's text in all; past it, only the lines within NEAR lines of a line the
  card shows are kept, the others left empty (so every line keeps its number).
A fix is a whole cell, inserted as it stands, so it is never clipped: a fix whose cells (as they ran or as
fixed) exceed a bound is withheld, and a note says why. Pure data: no torch, no renderer.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable, List, Optional, Set

from . import catalog
from .cell import split_lines
from .model import CellSource, Diagnosis, Fix, SourceLine, TensorFact

MAX_TEXT = 2_000
MAX_ERROR = 20_000
MAX_LINE = 2_000
MAX_SOURCE = 100_000
NEAR = 10


def clip(text: Optional[str], limit: int = MAX_TEXT) -> Optional[str]:
    """At most `limit` characters, then how many were left out."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def clip_code(source: str, shown: Iterable[int] = ()) -> str:
    """`source` with each line within MAX_LINE; over MAX_SOURCE in all, only the lines near `shown` kept."""
    if len(source) <= MAX_LINE:
        return source
    lines = split_lines(source, keepends=True)
    if max(map(len, lines), default=0) > MAX_LINE:
        lines = [_clip_line(line) for line in lines]
    if sum(map(len, lines)) > MAX_SOURCE:
        near: Set[int] = {n for s in shown for n in range(s - NEAR, s + NEAR + 1)}
        lines = [line if i in near else _ending(line) for i, line in enumerate(lines, 1)]
    return "".join(lines)


def _clip_line(line: str) -> str:
    if len(line) <= MAX_LINE:
        return line
    body = line.rstrip("\r\n")
    return clip(body, MAX_LINE) + line[len(body):]


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")):]


def fits(source: str) -> bool:
    """Whether a cell's text is within the bounds as it is."""
    return len(source) <= MAX_LINE or (
        len(source) <= MAX_SOURCE and all(len(line) <= MAX_LINE for line in split_lines(source)))


def bounded(found: List[Diagnosis]) -> List[Diagnosis]:
    """Each diagnosis with every text within its bound."""
    return [bound(d) for d in found]


def bound(d: Diagnosis) -> Diagnosis:
    fix, notes = d.fix, d.notes
    if fix is not None and not _fix_fits(d, fix):
        fix = None
        notes += (catalog.message("note.fix_withheld", d.language, reason=catalog.message(
            "bounds.fix_too_long", d.language, line=f"{MAX_LINE:,}", total=f"{MAX_SOURCE:,}")),)
    shown = [sl.lineno for sl in d.lines if not sl.elsewhere]
    return dataclasses.replace(
        d, title=clip(d.title), summary=clip(d.summary), what=clip(d.what), why=clip(d.why),
        where=clip(d.where), source=clip_code(d.source, shown), lines=tuple(_line(sl) for sl in d.lines),
        names=tuple(clip(n) for n in d.names), tensors=tuple(_fact(t) for t in d.tensors),
        error_type=clip(d.error_type), error_message=clip(d.error_message, MAX_ERROR),
        fix=None if fix is None else dataclasses.replace(fix, description=clip(fix.description)),
        notes=tuple(clip(n) for n in notes),
        elsewhere=tuple(_cell(c, d) for c in d.elsewhere))


def _fix_fits(d: Diagnosis, fix: Fix) -> bool:
    texts = [d.source, fix.source] + [t for c in fix.elsewhere for t in (c.original, c.source)]
    return all(fits(t) for t in texts)


def _line(sl: SourceLine) -> SourceLine:
    return dataclasses.replace(sl, text=_clip_line(sl.text), file=clip(sl.file), function=clip(sl.function))


def _fact(t: TensorFact) -> TensorFact:
    return dataclasses.replace(t, name=clip(t.name), kind=clip(t.kind), shape=clip(t.shape), dtype=clip(t.dtype),
                               device=clip(t.device), grad_fn=clip(t.grad_fn))


def _cell(c: CellSource, d: Diagnosis) -> CellSource:
    shown = [sl.lineno for sl in d.lines if sl.elsewhere and (sl.cell, sl.file) == (c.cell, c.file)]
    return dataclasses.replace(c, file=clip(c.file), source=clip_code(c.source, shown))
