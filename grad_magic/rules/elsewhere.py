"""A run seen from one user frame outside the running cell: the method three cells up where torch raised,
the helper whose loop called `backward()`.

`seen_from` re-bases a record on that frame (its cell's text, its line, its variables; every event's line
is its line in that cell), so a rule reads a view exactly as it reads the running cell. `from_view` turns
what a rule says from a view into a diagnosis of the running cell: the lines are marked with their cell,
the running cell's calling line joins them, and a fix becomes a fixed copy of that cell. Pure data.
"""
from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

from .. import catalog
from ..cell import split_lines
from ..model import CellFix, CellSource, Diagnosis, Fix, SourceLine
from ..record import RunRecord
from ..sources import Frame


def seen_from(record: RunRecord, frame: Frame) -> RunRecord:
    filename = frame.site.filename
    text = record.sources.text(filename) if record.sources is not None else ""

    def moved(event):  # NB: its line in this view's cell: the innermost frame there, else None
        return dataclasses.replace(event, lineno=next((n for f, n in event.frames if f == filename), None))

    return dataclasses.replace(
        record, filename=filename, source=text, error_lineno=frame.site.lineno,
        error_locals=frame.local_names, inplace_ops=[moved(e) for e in record.inplace_ops],
        failed_ops=[moved(e) for e in record.failed_ops], steps=[moved(e) for e in record.steps],
        cell=frame.site.cell, focus=frame, outer=record)


def from_view(d: Diagnosis, view: RunRecord) -> Diagnosis:
    outer = view.outer if view.outer is not None else view
    file = "" if view.cell is not None else view.filename
    calling = _line(outer, outer.error_lineno)
    where = d.where if calling is None else catalog.message("where.via", d.language, where=d.where,
                                                            lineno=calling.lineno)
    return dataclasses.replace(
        d, source=outer.source, cell=outer.cell, where=where,
        lines=d.lines + ((calling,) if calling is not None else ()),
        elsewhere=(CellSource(view.cell, file, view.source),) + d.elsewhere,
        fix=_moved_fix(d.fix, view, file))


def _moved_fix(fix: Optional[Fix], view: RunRecord, file: str) -> Optional[Fix]:
    if fix is None or not fix.source:
        return fix
    moved: Tuple[CellFix, ...] = (CellFix(view.cell, file, view.source, fix.source, fix.edits),)
    return Fix(fix.description, "", (), moved + fix.elsewhere)


def _line(record: RunRecord, lineno: Optional[int]) -> Optional[SourceLine]:
    lines = split_lines(record.source)
    if lineno is None or not 1 <= lineno <= len(lines):
        return None
    return SourceLine(lineno, lines[lineno - 1], record.cell)
