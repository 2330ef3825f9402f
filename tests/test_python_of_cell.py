"""`python_of_cell`: the Python IPython runs for a cell, numbered as the editor numbers the cell.

Most cells have no IPython syntax and skip IPython's transformer (a fast path); these tests hold the
fast path to what IPython's own `TransformerManager` makes of the same cells.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.core.inputtransformer2 import TransformerManager

from grad_magic import cell as gm_cell

TESTS = Path(__file__).parent
CELLS = sorted(TESTS.glob("cases/*/*.py"))


def ipython_of(cell: str) -> str:
    first, _, body = cell.partition("\n")
    if not first.startswith("%%"):
        body = cell
    python = TransformerManager().transform_cell(body)
    return "\n" * max(0, gm_cell.leading_newlines(body) - gm_cell.leading_newlines(python)) + python


def fresh(cell: str) -> str:
    gm_cell.python_of_cell.cache_clear()
    return gm_cell.python_of_cell(cell)


@pytest.mark.parametrize("path", CELLS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case_cells_transform_as_ipython_does(path: Path) -> None:
    cell = path.read_text(encoding="utf-8")
    assert fresh(cell) == ipython_of(cell)


def test_the_fast_path_is_taken() -> None:
    """Not vacuous: most case cells (torch code, no magics) skip IPython's transformer."""
    bodies = [p.read_text(encoding="utf-8").partition("\n")[2] for p in CELLS]
    assert sum(gm_cell.plain_python(b) is not None for b in bodies) > len(bodies) / 2


def test_leading_blank_lines_keep_their_line_numbers() -> None:
    """IPython drops blank lines at the top of a cell; the rules' line numbers must not move."""
    cell = "%%gradcheck\n\n\nx = 1\n%time y = 2\n"
    tree = gm_cell.cell_tree(cell)
    assert [node.lineno for node in tree.body] == [4, 5]
    assert [node.lineno for node in gm_cell.cell_tree(cell.replace("%time ", "")).body] == [4, 5]


_FRAGMENTS = ["x = 1", "", "   ", "%time x", "!ls", "y = !pwd", "z = %who_ls", "x?", "??x", "print(1)",
              "  indented = 1", "msg = ('a %s'", "       % x)", "a = b % c", "a != b", ">>> x = 1", "... y",
              "In [1]: x = 1", "/print 1", ",print a b", "def f():", "    return 1", "s = 'what?'",
              "# a comment?", "q = '''", "%%not a magic'''", "\tt = 2", "x %= 3"]


def outcome(fn, cell: str):
    """The Python text; or, for a cell that is no Python, just that: IPython's tokenizer raises on some
    broken indentation that the fast path leaves to `ast.parse` -- callers see a SyntaxError either way."""
    try:
        python = fn(cell)
        ast.parse(python)
    except SyntaxError:
        return "no python"
    return python


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=12), st.booleans(), st.booleans())
def test_generated_cells_transform_as_ipython_does(lines, magic, trailing) -> None:
    cell = ("%%gradcheck\n" if magic else "") + "\n".join(lines) + ("\n" if trailing else "")
    assert outcome(fresh, cell) == outcome(ipython_of, cell)


def test_magics_stacked_above_gradcheck_keep_their_lines() -> None:
    """`%%time` over `%%gradcheck`: both lines are magic lines, the Python starts on line 3."""
    assert gm_cell.magic_lines("%%time\n%%gradcheck --fast\nx = 1\n") == 2
    assert [n.lineno for n in gm_cell.cell_tree("%%time\n%%capture out\n%%gradcheck\n\nx = 1\ny = 2\n").body] == [5, 6]
    assert gm_cell.magic_lines("%%gradcheck\n%%time\nx = 1\n") == 1  # NB: below it: the body's own magic
    assert gm_cell.magic_lines("%%capture\nx = 1\n") == 1 and gm_cell.magic_lines("x = 1\n%%gradcheck\n") == 0
    assert gm_cell.magic_lines("%%time\n%%gradcheckx\nx = 1\n") == 1  # NB: not our magic's name
    assert fresh("%%time\n%%gradcheck\nx = 1\n") == "\nx = 1\n"
