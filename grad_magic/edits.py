"""Minimal fixes: small text edits on the user's own cell text, checked to still parse.

Find the spot with `ast` positions (cell.py), replace only those characters, leave every other character
alone. Never regenerate source with `ast.unparse`. A fix that does not parse is no fix (None).

Comments, one rule for every fix (applied here, in `make_fix`): a trailing comment on a line the fix
changes is dropped when it names a word the fix adds or removes on that line -- it described the old code
(`w = torch.tensor([1.0])  # no requires_grad` gains `requires_grad=True` and loses the comment). Every
other comment stays as it is: whole-line comments, comments on lines the fix does not change, comments
that name nothing the fix changes (`# shape (B, T)`), and `#` inside strings.
"""
from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from .cell import body_indent, indent_of, line_offsets, node_span, python_of_cell, split_lines
from .model import Fix, TextEdit


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


def parses(cell: str) -> bool:
    try:
        # NB: compiled, not only parsed: `f(device=a, device=b)` parses but does not compile
        compile(python_of_cell(cell), "<fix>", "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def make_fix(source: str, edits: Sequence[TextEdit], description: str) -> Optional[Fix]:
    """The fixed cell, or None when the edits do nothing or the result would not parse."""
    if not edits:
        return None
    edits = [*edits, *_stale_comments(source, edits)]
    fixed = apply_edits(source, edits)
    if fixed == source or not parses(fixed):
        return None
    return Fix(description=description, source=fixed, edits=tuple(edits))


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")  # NB: ASCII: `# 默认requires_grad=False` names requires_grad


def _words(text: str) -> Set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _stale_comments(source: str, edits: Sequence[TextEdit]) -> List[TextEdit]:
    """Edits that drop the trailing comments the module docstring's rule drops (none that overlap an edit)."""
    comments = _trailing_comments(source)
    if not comments:
        return []
    offs = line_offsets(source)
    changed: Dict[int, Set[str]] = {}  # line -> words the edits add or remove there
    for e in edits:
        if e.start == e.end and e.text.endswith("\n") and e.start in offs:
            continue  # NB: a whole new line: the line below it is not changed
        words = _words(e.text) ^ _words(source[e.start:e.end])
        for n in range(_line_of(offs, e.start), _line_of(offs, max(e.start, e.end - 1)) + 1):
            changed.setdefault(n, set()).update(words)
    dropped = []
    for lineno, (start, end, text) in comments.items():
        if not changed.get(lineno, set()) & _words(text):
            continue
        cut = TextEdit(start, end, "")
        if not any(max(e.start, cut.start) < min(e.end, cut.end) or cut.start < e.start < cut.end
                   for e in edits):
            dropped.append(cut)
    return dropped


def _line_of(offs: Sequence[int], at: int) -> int:
    return max(1, bisect.bisect_right(offs, at, hi=len(offs) - 1))


def _trailing_comments(source: str) -> Dict[int, Tuple[int, int, str]]:
    """line -> (start, end, text) of each comment that follows code on its line, `start` taken back over the
    blanks before the `#`. Empty when the cell does not tokenize (IPython syntax Python cannot read)."""
    offs = line_offsets(source)
    lines = split_lines(source, keepends=True)
    found: Dict[int, Tuple[int, int, str]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
            if tok.type != tokenize.COMMENT or tok.start[0] > len(lines):
                continue
            lineno, col = tok.start
            before = lines[lineno - 1][:col]
            if before.strip():
                start = offs[lineno - 1] + len(before.rstrip())
                found[lineno] = (start, offs[lineno - 1] + col + len(tok.string), tok.string)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return {}
    return found


def insert_line_before(cell: str, lineno: int, text: str) -> TextEdit:
    """Insert `text` (one line, no newline) before line `lineno`."""
    at = line_offsets(cell)[lineno - 1]
    return TextEdit(at, at, text + "\n")


def wrap_in_block(cell: str, first: int, last: int, header: str) -> List[TextEdit]:
    """Put lines first..last under `header:` (e.g. `with torch.no_grad()`), indenting them one level."""
    lines = split_lines(cell, keepends=True)
    offs = line_offsets(cell)
    indent = indent_of(lines[first - 1])
    step = body_indent(cell, first)[len(indent):] or "    "
    edits = [TextEdit(offs[first - 1], offs[first - 1], f"{indent}{header}:\n")]
    for n in range(first, last + 1):
        if lines[n - 1].strip():
            at = offs[n - 1] + len(indent)
            edits.append(TextEdit(at, at, step))
    # NB: with no indentation the header and the first step share an offset; apply_edits' stable sort
    # keeps the header first.
    return edits


def keyword_added(source: str, call: ast.Call, text: str) -> TextEdit:
    """`text` (`device=x`, `inplace_mode=False`) added as the call's last argument."""
    args = [*call.args, *call.keywords]
    if args:
        _, at = node_span(source, max(args, key=lambda a: (a.end_lineno, a.end_col_offset)))
        return TextEdit(at, at, f", {text}")
    _, end = node_span(source, call)
    return TextEdit(end - 1, end - 1, text)
