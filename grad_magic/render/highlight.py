"""Cell source as lines of Pygments tokens, for the HTML card's template to print (and escape).

A card shows a few lines of the user's cell around the culprit, then the fixed cell, which is the
user's cell again with a line or two changed. Lexing costs ~0.1 ms a line, so the cell is cut into
its top-level statements and each is lexed on its own: the excerpt lexes only the statements it
shows, and the fixed cell takes the statements the excerpt lexed from a memo the card passes along
(a memo per card: nothing is kept between cards).

Cutting there changes no token: at the start of a top-level statement Pygments' Python lexer is in
its root state (no string is open; after `import x` it waits for `,` or `as`, which cannot start a
statement) and the token before it is the previous line's newline, so lexing the pieces one by one gives the tokens of lexing the whole
(tests/test_highlight.py checks this on every case cell and on generated ones).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Dict, Iterable, List, Optional, Tuple

Token = Tuple[str, str]  # (css class, text)
_PLAIN_MAGIC = re.compile(r"%%[\w .=-]*")  # `%%gradcheck --fast`: no quote, bracket or comment
Line = Tuple[Token, ...]


def highlight_lines(code: str, wanted: Optional[Iterable[int]] = None,
                    memo: Optional[Dict[str, Tuple[Line, ...]]] = None) -> List[Line]:
    """The cell's lines (as Pygments numbers them: at LF, with CRLF and CR made LF) as tokens.

    With `wanted` (1-based line numbers), only the statements holding those lines are lexed; the
    other lines come back empty. `memo` (piece -> lines) is read and filled, to share work between
    calls on similar cells.
    """
    text = code.replace("\r\n", "\n").replace("\r", "\n")  # NB: what Pygments does before it lexes
    lines = text.split("\n")
    starts = _statement_starts(text, len(lines))
    wanted_set = None if wanted is None else set(wanted)
    memo = {} if memo is None else memo
    out: List[Line] = []
    for first, end in zip(starts, [*starts[1:], len(lines) + 1]):  # 1-based, end exclusive
        last_piece = end > len(lines)
        if wanted_set is not None and not any(first <= n < end for n in wanted_set):
            out.extend(() for _ in range(first, end))
            continue
        piece = "\n".join(lines[first - 1:end - 1]) + ("" if last_piece else "\n")
        if piece not in memo:
            memo[piece] = lex(piece)
        lexed = memo[piece]
        out.extend(lexed if last_piece else lexed[:-1])  # NB: the piece's final "\n" opens no line of it
    return out


def lex(piece: str) -> Tuple[Line, ...]:
    """Lines of tokens of one piece of Python source, lexed whole."""
    from pygments.token import STANDARD_TYPES

    lines: List[List[Token]] = [[]]
    for ttype, value in _lexer().get_tokens(piece):
        css = STANDARD_TYPES.get(ttype) or STANDARD_TYPES.get(ttype.parent, "")
        for i, part in enumerate(value.split("\n")):
            if i:
                lines.append([])
            if part:
                line = lines[-1]
                if line and line[-1][0] == css:  # NB: one span for a run of one colour ('x' is 3 tokens)
                    line[-1] = (css, line[-1][1] + part)
                else:
                    line.append((css, part))
    return tuple(tuple(line) for line in lines)


@lru_cache(maxsize=1)
def _lexer():
    from pygments.lexers import PythonLexer

    return PythonLexer(stripnl=False, ensurenl=False)


def _statement_starts(text: str, line_count: int) -> List[int]:
    """1-based lines where a top-level statement of the cell begins, always with line 1: where the
    cell can be cut. Just [1] (lex it whole) when the cell is no Python or has IPython syntax in it
    (Pygments lexes `!echo '''` as an open string where IPython runs a command)."""
    from ..cell import plain_python, cell_tree, python_of_cell

    shift = 1 if text.startswith("%%") else 0  # NB: python_of_cell drops a cell magic's line
    magic, _, rest = text.partition("\n")
    if shift and not _PLAIN_MAGIC.fullmatch(magic) or plain_python(rest if shift else text) is None:
        return [1]  # NB: a quote on the magic line (`%%x '''`) would open a string for Pygments
    try:
        python = python_of_cell(text)
        if python.count("\n") + shift not in (line_count, line_count - 1):
            return [1]
        tree = cell_tree(text)  # NB: the rules' parse of the same cell, numbered as the cell (warnings unshown)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return [1]
    if tree is None:
        return [1]
    starts = {1}
    for stmt in tree.body[1:] if shift else tree.body:  # NB: the magic line and the first statement: one piece
        if stmt.col_offset == 0:  # NB: not a statement after `;` on a line that continues another
            decorators = getattr(stmt, "decorator_list", ())
            starts.add(min([stmt.lineno, *(d.lineno for d in decorators)]))
    lines = text.split("\n")
    return sorted(n for n in starts if n <= line_count and not _after_blank_with_spaces(lines, n))


def _after_blank_with_spaces(lines: List[str], n: int) -> bool:
    """Blank lines before line `n` with a space, tab or form feed on them: Pygments' docstring rule
    (`^\\s*'''...'''`) may start there and run on into line `n`."""
    for line in reversed(lines[:n - 1]):
        if line.strip():
            return False
        if line:
            return True
    return False
