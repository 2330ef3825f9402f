"""The HTML card's highlighting: lexing a cell statement by statement gives the tokens of lexing it whole.

The reference is the same Pygments lexer run once over the whole cell (`highlight.lex` of the text).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grad_magic.render import highlight

TESTS = Path(__file__).parent
CELLS = sorted([*TESTS.glob("cases/*/*.py"), *TESTS.glob("golden/*/*.fixed.py")])


def whole(code: str):
    return list(highlight.lex(code.replace("\r\n", "\n").replace("\r", "\n")))


@pytest.mark.parametrize("path", CELLS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_pieces_lex_as_the_whole_cell(path: Path) -> None:
    code = path.read_text(encoding="utf-8")
    assert highlight.highlight_lines(code) == whole(code)


def test_the_cells_are_cut() -> None:
    """Not a vacuous pass: most case cells are cut into several statements."""
    texts = [p.read_text(encoding="utf-8").replace("\r\n", "\n") for p in CELLS]
    cut = [t for t in texts if len(highlight._statement_starts(t, len(t.split("\n")))) > 1]
    assert len(cut) > len(CELLS) * 0.8


def test_only_wanted_statements_are_lexed() -> None:
    code = "import torch\nx = torch.ones(2)\n\n\ny = '''a\nb'''\nz = x * 2  # done\n"
    memo: dict = {}
    lines = highlight.highlight_lines(code, wanted=[6], memo=memo)
    assert list(memo) == ["y = '''a\nb'''\n"]  # one statement lexed
    assert lines[4:6] == whole(code)[4:6] and lines[5] != ()  # the statement of lines 5-6, whole
    assert lines[0] == () and lines[1] == () and lines[6] == ()


def test_unchanged_statements_come_from_the_memo() -> None:
    code = "".join(f"step_{i} = {{'lr': {i} * 0.001}}\n" for i in range(50)) + "loss.backward()\n"
    fixed = code.replace("loss.backward()", "loss.sum().backward()")
    memo: dict = {}
    highlight.highlight_lines(code, memo=memo)
    lexed = []
    real = highlight.lex
    highlight.lex = lambda piece: lexed.append(piece) or real(piece)
    try:
        lines = highlight.highlight_lines(fixed, memo=memo)
    finally:
        highlight.lex = real
    assert lines == whole(fixed)
    assert lexed == ["loss.sum().backward()\n"]


def test_no_python_is_lexed_whole() -> None:
    code = "x = (1,\n2; y = 3\n"
    assert highlight._statement_starts(code, 3) == [1]
    assert highlight.highlight_lines(code) == whole(code)


def test_a_statement_after_a_semicolon_is_no_cut() -> None:
    code = "x = (1,\n     2); y = '''\n'''\nz = 1\n"
    assert highlight._statement_starts(code, 5) == [1, 4]
    assert highlight.highlight_lines(code) == whole(code)


_FRAGMENTS = [
    "import torch", "x = torch.ones(3, requires_grad=True)", "y = x * 2  # comment", "",
    "# a comment line", "s = '''first", "second'''", 's = """doc"""', "def f(a):", "    return a + 1",
    "@torch.no_grad()", "class M(torch.nn.Module):", "    pass", "z = (1,", "     2)", "w = 1; v = 2",
    "%time q = 1", "!ls", "total = 1 + \\", "    2", "f'{x!r:>10}'", "b'\\x00' r'\\d'", "\tt = 1",
    "match x:", "    case 1:", "        pass", "if x:", "    y = 1", "else:", "    y = 2", "lambda: 0",
    "x += 1", "print('done')", "#!not a hashbang", "\x0c", "é = 'ü'", "  ", "'''doc'''", "r'''x'''",
    "from torch import nn", "import os, sys", "async def g(): await h()",
]
_MAGICS = ["", "%%gradcheck", "%%gradcheck --fast", "%%x '''"]  # NB: a quote on the magic line opens a string


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=25),
       st.sampled_from(["\n", "\r\n", "\r"]), st.sampled_from(_MAGICS), st.booleans())
def test_generated_cells_lex_as_a_whole(lines, newline, magic, trailing) -> None:
    code = (magic + newline if magic else "") + newline.join(lines) + (newline if trailing else "")
    assert highlight.highlight_lines(code) == whole(code)
