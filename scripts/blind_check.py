"""Check a blind case as its author must, without grad_magic: does the notebook fail as its report says, and
does the case's own fix run clean? Never shows what grad_magic says (a batch is scored blind, once, later).

    .venv/bin/python scripts/blind_check.py tests/notebooks_blind/b8/some-case.ipynb [...]

Each notebook runs twice in a real kernel with `%load_ext grad_magic` and the `%%gradcheck` line taken out: as
it is (a failing case must raise in its last code cell only; a silent case must raise nowhere) and with the
`fix` of its `grad_magic_case` metadata applied (no cell may raise). Exit status 1 when a case is not right.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from corpus import code_cells, execute, with_cells  # noqa: E402

REQUIRED = ("source", "title", "kind", "silent", "culprit", "fix", "no_fix_because")


def plain(nb):
    """The notebook without grad_magic: its load line and the cell magic's line out, the rest as written."""
    nb = nbformat.from_dict(nb)
    for cell in code_cells(nb):
        lines = cell.source.split("\n")
        lines = ["pass  # (grad_magic left out)" if ln.strip() == "%load_ext grad_magic" else ln for ln in lines]
        if lines and lines[0].startswith("%%gradcheck"):
            lines = lines[1:]
        cell.source = "\n".join(lines)
    return nb


def check(path: Path) -> List[str]:
    nb = nbformat.read(path, as_version=4)
    case = nb.metadata.get("grad_magic_case")
    if case is None:
        return ["no grad_magic_case metadata"]
    found = [f"metadata lacks {key!r}" for key in REQUIRED if key not in case]
    cells = code_cells(nb)
    if not cells or not cells[-1].source.startswith("%%gradcheck"):
        found.append("the last code cell does not start with %%gradcheck")
    culprit = case.get("culprit", {})
    if not 1 <= culprit.get("cell", 0) <= len(cells):
        found.append(f"culprit cell {culprit.get('cell')} is not a code cell (1..{len(cells)})")
    else:
        lines = cells[culprit["cell"] - 1].source.split("\n")
        if not 1 <= culprit.get("line", 0) <= len(lines):
            found.append(f"culprit line {culprit.get('line')} is not a line of In [{culprit['cell']}]")
        else:
            print(f"  culprit In [{culprit['cell']}] line {culprit['line']}: {lines[culprit['line'] - 1].strip()}")
    run = execute(plain(nb))
    if case.get("silent"):
        if run.errors:
            found.append(f"a silent case raised: {run.errors}")
    elif [cell for cell, _ in run.errors] != [len(cells)]:
        found.append(f"the errors are not the last cell's alone: {run.errors}")
    else:
        print(f"  raises {run.errors[0][1]} in its last cell, as it should")
    if case.get("fix"):
        fixed = execute(plain(with_cells(nb, [(f["cell"], f["source"]) for f in case["fix"]])))
        if fixed.errors:
            found.append(f"the case's own fix raises: {fixed.errors}")
        else:
            print("  the case's own fix runs clean")
    elif not case.get("no_fix_because"):
        found.append("no fix and no no_fix_because")
    return found


def main(paths: List[str]) -> int:
    bad = 0
    for name in paths:
        print(name)
        problems = check(Path(name))
        for p in problems:
            print("  PROBLEM:", p)
        bad += bool(problems)
    print(f"{len(paths) - bad}/{len(paths)} right")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
