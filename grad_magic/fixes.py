"""Minimal fixes: small text edits on the user's own cell text, checked to still parse.

Find the spot with `ast` positions, replace only those characters, leave every other character alone.
Never regenerate source with `ast.unparse`. A fix that does not parse is no fix (None).
"""
from __future__ import annotations

import ast
from typing import Iterable, List, Optional, Sequence

from .model import Fix, TextEdit


def line_offsets(source: str) -> List[int]:
    """Offset of the first character of each line; index 0 is line 1."""
    offsets, total = [], 0
    for line in source.splitlines(keepends=True):
        offsets.append(total)
        total += len(line)
    offsets.append(total)
    return offsets


def offset(source: str, lineno: int, col: int, offsets: Optional[Sequence[int]] = None) -> int:
    """Character offset of (lineno, col) where col counts characters (use `utf8_col` for ast columns)."""
    offs = offsets if offsets is not None else line_offsets(source)
    return offs[lineno - 1] + col


def utf8_col(line: str, col_bytes: int) -> int:
    """ast gives column offsets in UTF-8 bytes; edits work in characters."""
    return len(line.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))


def apply_edits(source: str, edits: Iterable[TextEdit]) -> str:
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for a, b in zip(ordered, ordered[1:]):
        assert a.end <= b.start, f"overlapping edits {a} and {b}"
    out, at = [], 0
    for e in ordered:
        out.append(source[at:e.start])
        out.append(e.text)
        at = e.end
    out.append(source[at:])
    return "".join(out)


def python_of_cell(cell: str) -> str:
    """The Python a cell runs: the `%%` magic line dropped, IPython syntax (%magic, !cmd) transformed."""
    first, _, body = cell.partition("\n")
    if not first.startswith("%%"):
        body = cell
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython is a dependency; kept for capture() without it
        return body
    return TransformerManager().transform_cell(body)


def parses(cell: str) -> bool:
    try:
        ast.parse(python_of_cell(cell))
    except (SyntaxError, ValueError):
        return False
    return True


def make_fix(source: str, edits: Sequence[TextEdit], description: str) -> Optional[Fix]:
    """The fixed cell, or None when the edits do nothing or the result would not parse."""
    if not edits:
        return None
    fixed = apply_edits(source, edits)
    if fixed == source or not parses(fixed):
        return None
    return Fix(description=description, source=fixed, edits=tuple(edits))
