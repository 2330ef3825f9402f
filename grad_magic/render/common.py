"""What the text and HTML cards share: the excerpt around the culprit lines and the fix's diff."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, List, Tuple

from ..cell import split_lines
from ..model import Diagnosis

CONTEXT = 2  # lines shown around each culprit line
MAX_FIELD = 2_000  # characters of one explanation field shown on a card
MAX_ERROR = 20_000  # characters of the original error message shown (collapsed) on a card


def clip(text: str, limit: int = MAX_FIELD) -> str:
    """At most `limit` characters, saying how many were left out."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


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


def excerpt(d: Diagnosis) -> List[ExcerptLine]:
    lines = split_lines(d.source)  # NB: numbered as the culprit lines are
    culprits = {sl.lineno for sl in d.lines}
    keep = sorted({n for c in culprits for n in range(c - CONTEXT, c + CONTEXT + 1)
                   if 1 <= n <= len(lines)})
    return [ExcerptLine(n, lines[n - 1], n in culprits, i > 0 and n != keep[i - 1] + 1)
            for i, n in enumerate(keep)]


def diff_lines(d: Diagnosis) -> List[Tuple[str, str]]:
    """('-'|'+'|'@', text) for the edited lines of the fix; empty without a fix."""
    if d.fix is None:
        return []
    out: List[Tuple[str, str]] = []
    for line in difflib.unified_diff(split_lines(d.source), split_lines(d.fix.source), n=0,
                                     lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        out.append((line[0], line[1:] if line[0] in "+-" else line))
    return out


def tensor_rows(d: Diagnosis) -> List[Tuple[str, ...]]:
    def flag(value: object) -> str:
        return "" if value is None else str(value)

    return [(t.name, t.shape, t.dtype, t.device, flag(t.requires_grad), flag(t.version))
            for t in d.tensors]


def notebook_cell(source: str) -> str:
    """A cell's text as the notebook holds it: IPython hands a cell magic its body with a newline
    appended, which would put an extra blank line at the end of an inserted cell."""
    return source[:-1] if source.endswith("\n") else source
