"""The last check a fix passes before the card offers it (issue 15's precision guard).

A rule proposes a fix from its evidence; this module checks the fix against the diagnosis it comes with,
without running anything: every changed cell is exactly its edits applied to the text that ran, and still
compiles; every changed cell is one the card names; every edited line lies in a function (or at the top
level) where the card names a line, or right next to a named line. A fix that fails is withheld: the card
keeps its words (what to change, and where) and says why there is no fixed copy. One button, one click
from the user's notebook: a fix that edits what the evidence never pointed at is not offered.

Pure data in, pure data out: reads `Diagnosis`, never the run.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from . import catalog
from .cell import cell_tree, line_offsets, qualname_at
from .edits import apply_edits, parses
from .model import Diagnosis, TextEdit

Place = Tuple[str, Optional[int], str]  # ("this", None, "") for the running cell, ("cell", k, file) otherwise


def guarded(d: Diagnosis) -> Diagnosis:
    """`d`, or `d` without its fix and with a note saying why, when the fix fails a check."""
    if d.fix is None:
        return d
    try:
        reason = withheld_because(d)
    except Exception:  # NB: a fix the guard cannot read is not offered; the card itself stays
        reason = "guard.inconsistent"
    if reason is None:
        return d
    note = catalog.message("note.fix_withheld", d.language, reason=catalog.message(reason, d.language))
    return dataclasses.replace(d, fix=None, notes=d.notes + (note,))


def agreeing(found: List[Diagnosis]) -> List[Diagnosis]:
    """One line, one fix: a card whose fix edits a line that an earlier card's fix (the error's, then the
    warnings' in order) also edits, differently, keeps its words and loses its fixed copy, with a note
    pointing to the earlier card's fix. The same edit on both cards is kept on both."""
    claimed: Dict[Tuple[Place, int], FrozenSet[TextEdit]] = {}  # (place, line) -> the earlier fix's edits there
    kept: List[Diagnosis] = []
    for d in found:
        if d.fix is not None:
            mine = _fixed_lines(d)
            if any(claimed.get(key, text) != text for key, text in mine.items()):
                note = catalog.message("note.fix_elsewhere", d.language)
                d = dataclasses.replace(d, fix=None, notes=d.notes + (note,))
            else:
                claimed.update(mine)
        kept.append(d)
    return kept


def _fixed_lines(d: Diagnosis) -> Dict[Tuple[Place, int], FrozenSet[TextEdit]]:
    """(place, line of the code that ran) -> the edits of `d`'s fix that change that line. NB: a new line
    inserted before a line leaves that line as it is: two fixes may both insert there."""
    out: Dict[Tuple[Place, int], Set[TextEdit]] = {}
    for place, original, _, edits in _changes(d):
        starts = set(line_offsets(original))
        for e in edits:
            if e.start == e.end and e.start in starts and e.text.endswith("\n"):
                continue
            for lineno in _edited_lines(original, (e,)):
                out.setdefault((place, lineno), set()).add(e)
    return {key: frozenset(edits) for key, edits in out.items()}


def withheld_because(d: Diagnosis) -> Optional[str]:
    """The catalog key of the first check the fix fails, or None when it passes them all."""
    named = _named_lines(d)
    for place, original, fixed, edits in _changes(d):
        if not edits or fixed == original or apply_edits(original, edits) != fixed:
            return "guard.inconsistent"
        if not parses(fixed):
            return "guard.does_not_compile"
        if place not in named:
            return "guard.unnamed_cell"
        if not _edits_near(original, edits, named[place]):
            return "guard.outside_evidence"
    return None


def _named_lines(d: Diagnosis) -> Dict[Place, Set[int]]:
    named: Dict[Place, Set[int]] = {}
    for sl in d.lines:
        place: Place = ("cell", sl.cell, sl.file) if sl.elsewhere else ("this", None, "")
        named.setdefault(place, set()).add(sl.lineno)
    return named


def _changes(d: Diagnosis) -> Iterator[Tuple[Place, str, str, Tuple[TextEdit, ...]]]:
    fix = d.fix
    assert fix is not None
    if fix.source:
        yield ("this", None, ""), d.source, fix.source, fix.edits
    for c in fix.elsewhere:
        yield ("cell", c.cell, c.file), c.original, c.source, c.edits


def _edits_near(original: str, edits: Tuple[TextEdit, ...], named: Set[int]) -> bool:
    """Every edited line is next to a named line, or in the same function as one (the top level counts as
    one scope: a cell's top-level code is the loop the card speaks of)."""
    tree = cell_tree(original)
    scopes = {qualname_at(tree, n) for n in named}
    near = {n + k for n in named for k in (-1, 0, 1)}
    for lineno in _edited_lines(original, edits):
        if lineno not in near and qualname_at(tree, lineno) not in scopes:
            return False
    return True


def _edited_lines(original: str, edits: Tuple[TextEdit, ...]) -> Set[int]:
    """The lines of `original` an edit replaces text on, or inserts before (an insertion at a line's start
    belongs to that line)."""
    offsets = line_offsets(original)

    def line_at(at: int) -> int:
        return max(n for n in range(1, len(offsets) + 1) if offsets[n - 1] <= at)

    lines: Set[int] = set()
    for e in edits:
        lines.update(range(line_at(e.start), line_at(max(e.start, e.end - 1)) + 1))
    return lines
