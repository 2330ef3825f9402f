"""The healthy corpus (tests/healthy): training code from public sources that works as its authors meant it,
adapted to tiny synthetic data and 20-40 optimizer steps. grad_magic must stay silent on every case, in full
`%%gradcheck` and in `%gradcheck on`: a card here is a false card.

A case is a `.py` file: a docstring that says what the code is and cites its `source:`, then cells, each
opened by a `# %%` line. Every cell but the last runs as a plain cell; the last is the one `%%gradcheck`
watches (full mode). With `%gradcheck on` every cell is watched.

Used by tests/test_healthy.py and scripts/corpus_report.py.
"""
from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List

CASES = Path(__file__).parent / "healthy"
MIME = "application/vnd.grad-magic.diagnosis+json"
MODES = ("full", "always-on")
_CELL = re.compile(r"^# %%[^\n]*\n", re.M)


@dataclass(frozen=True)
class Case:
    path: Path
    source: str  # the cited source, from the docstring
    cells: List[str]

    @property
    def name(self) -> str:
        return self.path.stem


def cases() -> List[Path]:
    return sorted(CASES.glob("*.py"))


def read(path: Path) -> Case:
    text = path.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(text)) or ""
    found = re.search(r"^source:\s*(\S.*)$", doc, re.M)
    cells = [c for c in _CELL.split(text)[1:] if c.strip()]
    return Case(path, found.group(1) if found else "", cells)


@dataclass(frozen=True)
class Outcome:
    """What one run of a case showed: the kinds of the cards, and the error a cell raised (None when none)."""

    cards: List[str]
    error: str


def run_case(shell, case: Case, mode: str) -> Outcome:
    """Runs the case's cells in `shell` (grad_magic loaded, display output captured) in `mode`."""
    _fresh_library_state()
    before = len(shell.display_pub.outputs)
    error = ""
    cells = list(case.cells)
    if mode == "full":
        cells[-1] = "%%gradcheck\n" + cells[-1]
    else:
        shell.run_cell("%gradcheck on", store_history=True)
    try:
        for cell in cells:
            result = shell.run_cell(cell, store_history=True)
            if not result.success:
                err = result.error_in_exec or result.error_before_exec
                error = f"{type(err).__name__}: {err}"
                break
    finally:
        if mode != "full":
            shell.run_cell("%gradcheck off", store_history=True)
    shown = [o["data"] for o in shell.display_pub.outputs[before:]]
    return Outcome([d[MIME]["kind"] for d in shown if MIME in d], error)


def _fresh_library_state() -> None:
    """What a fresh kernel starts without: accelerate keeps one process-wide state (`Accelerator(mixed_precision=
    ...)` refuses to change it), and each case is a notebook of its own."""
    state = sys.modules.get("accelerate.state")
    if state is not None:
        state.AcceleratorState._reset_state(True)
