"""What the text and HTML cards share: the excerpt around the culprit lines and the fix's diff."""
from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from typing import Any, List, Optional, Set, Tuple

from .. import catalog
from ..cell import split_lines
from ..model import Diagnosis, TextEdit

CONTEXT = 2  # lines shown around each culprit line
MAX_FIELD = 2_000  # characters of one explanation field shown on a card
MAX_ERROR = 20_000  # characters of the original error message shown (collapsed) on a card


def clip(text: str, limit: int = MAX_FIELD) -> str:
    """At most `limit` characters, saying how many were left out."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


_CODE = re.compile(r"`([^`\n]+)`")


def code_spans(text: str) -> List[Tuple[bool, str]]:
    """(is code, text) parts of `text`: what stands between backticks is code (the catalog's way of quoting
    code), the rest prose; a lone backtick stays as it is."""
    parts: List[Tuple[bool, str]] = []
    at = 0
    for m in _CODE.finditer(text or ""):
        if m.start() > at:
            parts.append((False, text[at:m.start()]))
        parts.append((True, m.group(1)))
        at = m.end()
    if at < len(text or ""):
        parts.append((False, text[at:]))
    return parts


def clean(text: str) -> str:
    """Text any frontend can encode: lone surrogates (from bytes decoded with surrogateescape) become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def cleaned(value: Any) -> Any:
    """`clean` applied to every string in nested lists and dicts."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(k) if isinstance(k, str) else k: cleaned(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [cleaned(v) for v in value]
    return value


@dataclass(frozen=True)
class ExcerptLine:
    lineno: int
    text: str
    culprit: bool
    gap_before: bool  # lines were skipped before this one


@dataclass(frozen=True)
class Excerpt:
    """The lines shown from one cell: another cell (`cell`, In [k]; or a user's `file`) or the running one."""

    cell: Optional[int]
    file: str
    function: str  # of the first culprit line there
    elsewhere: bool
    source: str
    lines: List[ExcerptLine]


def excerpts(d: Diagnosis, context: int = CONTEXT) -> List[Excerpt]:
    """One excerpt per cell the culprit lines are in: other cells first, as the lines list them, then the
    running cell (also when it has no culprit line but nothing else is shown); `context` lines around each
    culprit line (0: the marked lines alone, what the card shows first)."""
    texts = {(c.cell, c.file): c.source for c in d.elsewhere}
    places: List[Tuple[Optional[int], str, bool]] = []
    for sl in d.lines:
        place = (sl.cell, sl.file, sl.elsewhere)
        if place not in places:
            places.append(place)
    places.sort(key=lambda p: not p[2])
    found = []
    for cell, file, elsewhere in places:
        source = texts.get((cell, file), "") if elsewhere else d.source
        marked = [sl for sl in d.lines if (sl.cell, sl.file, sl.elsewhere) == (cell, file, elsewhere)]
        found.append(Excerpt(cell, file, next((sl.function for sl in marked if sl.function), ""), elsewhere,
                             source, _around(source, {sl.lineno for sl in marked}, context)))
    return found


def _around(source: str, culprits: Set[int], context: int = CONTEXT) -> List[ExcerptLine]:
    lines = split_lines(source)  # NB: numbered as the culprit lines are
    keep = sorted({n for c in culprits for n in range(c - context, c + context + 1)
                   if 1 <= n <= len(lines)})
    return [ExcerptLine(n, lines[n - 1], n in culprits, i > 0 and n != keep[i - 1] + 1)
            for i, n in enumerate(keep)]


@dataclass(frozen=True)
class FixedCell:
    """One cell a fix changes: the running cell (`this`), an earlier cell (`cell`) or a user's `file`."""

    this: bool
    cell: Optional[int]
    file: str
    original: str
    source: str  # the complete fixed text, as the notebook would hold it
    edits: Tuple[TextEdit, ...]
    diff: List[Tuple[str, str]]
    rerun: Tuple[int, ...] = ()  # the cells between it and the running one that a re-run runs again
    reload: str = ""  # a file's: the cell that reloads its module


def fixed_cells(d: Diagnosis) -> List[FixedCell]:
    """The cells the fix changes: other cells first (definitions run before the cell that uses them)."""
    if d.fix is None:
        return []
    found = [FixedCell(False, c.cell, c.file, c.original, notebook_cell(c.source), c.edits,
                       _diff(c.original, c.source), c.rerun, c.reload) for c in d.fix.elsewhere]
    if d.fix.source:
        found.append(FixedCell(True, d.cell, "", d.source, notebook_cell(d.fix.source), d.fix.edits,
                               _diff(d.source, d.fix.source)))
    return found


def diff_lines(d: Diagnosis) -> List[Tuple[str, str]]:
    """('-'|'+'|'@', text) for the edited lines of the running cell; empty when the fix leaves it alone."""
    if d.fix is None or not d.fix.source:
        return []
    return _diff(d.source, d.fix.source)


def _diff(before: str, after: str) -> List[Tuple[str, str]]:
    out: List[Tuple[str, str]] = []
    for line in difflib.unified_diff(split_lines(before), split_lines(after), n=0, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        out.append((line[0], line[1:] if line[0] in "+-" else line))
    return out


def place_label(language: str, cell: Optional[int], file: str, this: bool) -> str:
    """How a card titles a cell: `In [3]`, `model.py`, "this cell"."""
    if this:
        return catalog.message("card.this_cell", language)
    if cell is not None:
        return f"In [{cell}]"
    return os.path.basename(file)


def tensor_rows(d: Diagnosis) -> List[Tuple[str, ...]]:
    def flag(value: object) -> str:
        return "" if value is None else str(value)

    return [(t.name, t.shape, t.dtype, t.device, flag(t.requires_grad), flag(t.version))
            for t in d.tensors]


def notebook_cell(source: str) -> str:
    """A cell's text as the notebook holds it: IPython hands a cell magic its body with a newline
    appended, which would put an extra blank line at the end of an inserted cell."""
    return source[:-1] if source.endswith("\n") else source
