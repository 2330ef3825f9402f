"""What the text and HTML cards share: the excerpt around the culprit lines and the fix's diff."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import List, Tuple

from ..model import Diagnosis

CONTEXT = 2  # lines shown around each culprit line


@dataclass(frozen=True)
class ExcerptLine:
    lineno: int
    text: str
    culprit: bool
    gap_before: bool  # lines were skipped before this one


def excerpt(d: Diagnosis) -> List[ExcerptLine]:
    lines = d.source.splitlines()
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
    for line in difflib.unified_diff(d.source.splitlines(), d.fix.source.splitlines(), n=0,
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
