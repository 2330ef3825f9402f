"""Tests of cards whose culprit is in an earlier cell: run plain cells, then a %%gradcheck cell, in a real shell
(numbered In [1], In [2], ... as a notebook numbers them); apply a card's fix to the cells it changes and run
them all again in a fresh session.

NB: a module of its own, not conftest.py: test folders with a conftest of their own shadow `import conftest`.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Type

import grad_magic
from grad_magic.model import Diagnosis
from gm_shell import run


def run_cells(shell, cells: Sequence[str]):
    """Every cell in a fresh session (In [1] first); the result of the last."""
    shell.reset(new_session=True)
    result = None
    for cell in cells:
        result = run(shell, cell)
    return result


def card_of(shell, cells: Sequence[str], kind: str, raises: Optional[Type[BaseException]] = None) -> Diagnosis:
    """The diagnosis of `kind` the last cell got."""
    result = run_cells(shell, cells)
    if raises is not None:
        assert isinstance(result.error_in_exec, raises), repr(result.error_in_exec)
    found = [d for d in grad_magic.last_diagnoses() if d.kind == kind]
    assert found, [(d.kind, d.notes) for d in grad_magic.last_diagnoses()]
    assert not found[0].notes, found[0].notes
    return found[0]


def lines_of(d: Diagnosis) -> List[Tuple[Optional[int], int]]:
    """(In [k], line) of each line the card names."""
    return [(sl.cell, sl.lineno) for sl in d.lines]


def fixed(cells: Sequence[str], d: Diagnosis) -> List[str]:
    """The cells with the card's fix applied: each fixed copy where its In [k] was, the running cell's own."""
    assert d.fix is not None, "no fix proposed"
    out = list(cells)
    for cf in d.fix.elsewhere:
        assert cf.cell is not None and out[cf.cell - 1].rstrip("\n") == cf.original.rstrip("\n"), "a fix of a cell that did not run so"
        out[cf.cell - 1] = cf.source
    if d.fix.source:
        out[-1] = d.fix.source
    return out


def fix_runs_clean(shell, cells: Sequence[str], d: Diagnosis) -> List[str]:
    """Apply the fix, run everything again: no error, no card of the same kind. Returns the fixed cells."""
    again = fixed(cells, d)
    result = run_cells(shell, again)
    assert result.error_in_exec is None, repr(result.error_in_exec)
    assert all(x.kind != d.kind for x in grad_magic.last_diagnoses())
    return again
