"""`torch.set_default_device(...)`, the first line of many GPU notebooks, changes no card.

It pushes a torch-function mode of torch's own (torch.utils._device.DeviceContext) under whatever grad_magic puts
on, and every torch call and `.grad` read then passes through that mode's `__torch_function__` first. Each golden
case is run as the golden suite runs it and again after `torch.set_default_device(device)` (taken off after the
cell): the two runs must give the same kinds, lines, names and fixed cells. Here with "cpu" (the mode is on,
the tensors are where they were); tests/gpu/test_default_device_cuda.py runs the same comparison with "cuda",
where the tensors really move.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
import torch

import grad_magic
from gm_shell import run

HERE = Path(__file__).parent
CASES = sorted(p for p in (HERE / "cases").glob("*/*.py") if not p.name.endswith(".setup.py"))


def fast(source: str) -> str:
    first, rest = source.split("\n", 1)
    return first.replace("%%gradcheck", "%%gradcheck --fast", 1) + "\n" + rest


def answers(shell, case: Path, source: str, default: Optional[str]) -> List[Tuple]:
    """What the run's cards say, as comparable data: each card's kind, lines, names and fixed cell."""
    shell.reset(new_session=True)
    if default is not None:
        torch.set_default_device(default)
    try:
        setup = case.with_name(case.stem + ".setup.py")
        if setup.exists():
            assert run(shell, setup.read_text(encoding="utf-8")).success, "the case's setup failed"
        run(shell, source)
    finally:
        torch.set_default_device(None)
    return [(d.kind, tuple(s.lineno for s in d.lines), d.names, d.fix.source if d.fix else None)
            for d in grad_magic.last_diagnoses()]


def compare(shell, case: Path, mode: str, device: str) -> None:
    source = case.read_text(encoding="utf-8")
    if mode == "fast":
        source = fast(source)
    plain = answers(shell, case, source, None)
    assert plain or mode == "fast", "the case gave no card"  # NB: fast mode: some NaN cases end with no NaN left
    assert answers(shell, case, source, device) == plain


# NB: here fast mode only, one case of each kind (all of them, twice each: ~3 min of CI): the mode is under fast
# mode's light tracker, which sees only what passes through it, while full mode's tracker is a mode itself,
# pushed above the user's. The cuda run in tests/gpu compares every case in both modes.
ONE_OF_EACH_KIND = sorted({p.parent.name: p for p in reversed(CASES)}.values())


@pytest.mark.slow
@pytest.mark.parametrize("case", ONE_OF_EACH_KIND, ids=[f"{p.parent.name}/{p.stem}" for p in ONE_OF_EACH_KIND])
def test_a_default_device_changes_no_card_in_fast_mode(shell, case, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    compare(shell, case, "fast", "cpu")


# NB: in a process of its own, full mode then fast mode, each without and with the default device: the bug this
# guards against (the warning placed at the mode's frame, so fast mode lost its non-leaf-grad card) showed so, and
# not under pytest's own warning capture
SCRIPT = """
import sys, torch
from IPython.core.interactiveshell import InteractiveShell
import grad_magic
sh = InteractiveShell.instance()
sh.run_line_magic("load_ext", "grad_magic")
for cell in (sys.argv[1].replace(" --fast", "", 1), sys.argv[1]):  # NB: full mode, then fast
    for default in (None, "cpu"):  # NB: as a session would: the same cell before and after set_default_device
        sh.reset(new_session=True)
        torch.set_default_device(default)
        sh.run_cell(cell, store_history=True)
        print("KINDS", [d.kind for d in grad_magic.last_diagnoses()])
"""


def test_a_warning_under_the_default_device_mode_keeps_its_card_in_a_plain_process():
    source = fast((HERE / "cases" / "non-leaf-grad" / "functional.py").read_text(encoding="utf-8"))
    out = subprocess.run([sys.executable, "-c", SCRIPT, source], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "GRAD_MAGIC_LANG": "en"})
    kinds = [line for line in out.stdout.splitlines() if line.startswith("KINDS ")]
    assert kinds == ["KINDS ['non-leaf-grad']"] * 4, (out.stdout[-1500:], out.stderr[-1500:])
