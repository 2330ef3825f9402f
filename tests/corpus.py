"""The real-notebook corpus (tests/notebooks): each notebook rebuilt from a public report, run through a real
kernel; what grad_magic said, held against what the case expects.

A case's `grad_magic_case` metadata names the report (`source`), the expected `kind`, whether it is `silent`,
the `culprit` (the cell In [k] -- code cells run once each, in order -- the line as the editor numbers it,
the function) and a reference `fix` (the full fixed text of each cell it changes; [] when no certain fix
exists). `evaluate` runs the notebook as it is, with grad_magic's proposed fix, and with the reference fix.

Used by tests/test_notebooks.py and scripts/corpus_report.py.
"""
from __future__ import annotations

import copy
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import nbformat
from nbclient import NotebookClient

MIME = "application/vnd.grad-magic.diagnosis+json"
NOTEBOOKS = Path(__file__).parent / "notebooks"
TIMEOUT = 120  # seconds per cell
WORKERS = 2  # kernels at once


@dataclass
class Run:
    """One execution of a notebook: the error outputs (cell index, ename) and the cards shown."""

    errors: List[Tuple[int, str]]
    cards: List[Dict[str, Any]]


@dataclass
class Outcome:
    path: Path
    case: Dict[str, Any]
    original: Run
    proposed: Optional[Run] = None  # the notebook with grad_magic's fix applied, when it proposed one
    reference: Optional[Run] = None  # the notebook with the case's own fix applied
    card: Optional[Dict[str, Any]] = field(default=None)  # the card of the expected kind (else the first)

    @property
    def kind_right(self) -> bool:
        return self.card is not None and self.card["kind"] == self.case["kind"]

    @property
    def culprit_named(self) -> bool:
        want = self.case["culprit"]
        return self.kind_right and any(ln.get("cell") == want["cell"] and ln["lineno"] == want["line"]
                                       for ln in self.card["lines"])

    @property
    def fixable(self) -> bool:
        return bool(self.case.get("fix"))

    @property
    def fix_proposed(self) -> bool:
        return self.kind_right and self.card.get("fix") is not None

    @property
    def earlier_cell(self) -> bool:
        return self.case["culprit"]["cell"] != self.last_cell

    @property
    def last_cell(self) -> int:
        return len(code_cells(nbformat.read(self.path, as_version=4)))


def cases() -> List[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def code_cells(nb: Any) -> List[Any]:
    return [c for c in nb.cells if c.cell_type == "code"]


def execute(nb: Any) -> Run:
    nb = copy.deepcopy(nb)
    for c in code_cells(nb):
        c.outputs, c.execution_count = [], None
    # NB: the kernel is this interpreter's (`python3` on its PATH); given to the kernel's launch, not swapped
    # in os.environ, which the other worker thread reads when it starts its kernel
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    # NB: WORKERS kernels at once, each on its share of the cores: torch's threads spin while they wait for each
    # other, and two kernels of two threads on two cores run small ops several times slower
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // WORKERS)))
    client = NotebookClient(nb, timeout=TIMEOUT, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute(env=env)
    errors, cards = [], []
    for i, c in enumerate(code_cells(nb)):
        for o in c.get("outputs", []):
            if o.get("output_type") == "error":
                errors.append((i + 1, o["ename"]))
            elif o.get("output_type") == "display_data" and MIME in o.get("data", {}):
                cards.append(o["data"][MIME])
    return Run(errors, cards)


def with_cells(nb: Any, changes: List[Tuple[Any, str]]) -> Any:
    """The notebook with some code cells' text replaced: (In [k] or "this" for the %%gradcheck cell, text)."""
    nb = copy.deepcopy(nb)
    cells = code_cells(nb)
    for target, source in changes:
        cells[(len(cells) if target == "this" else target) - 1].source = source
    return nb


def proposed_changes(card: Dict[str, Any]) -> List[Tuple[Any, str]]:
    found = []
    for c in card["fix"]["cells"]:
        target = c["target"]
        if target != "this" and "execution_count" not in target:
            raise AssertionError(f"a fix of a file, not a cell: {target}")
        found.append(("this" if target == "this" else target["execution_count"], c["source"]))
    return found


def evaluate(path: Path) -> Outcome:
    nb = nbformat.read(path, as_version=4)
    case = nb.metadata["grad_magic_case"]
    original = execute(nb)
    card = next((c for c in original.cards if c["kind"] == case["kind"]), None) or \
        (original.cards[0] if original.cards else None)
    outcome = Outcome(path, case, original, card=card)
    proposed = with_cells(nb, proposed_changes(card)) if card is not None and card.get("fix") is not None else None
    reference = with_cells(nb, [(f["cell"], f["source"]) for f in case["fix"]]) if case.get("fix") else None
    if proposed is not None:
        outcome.proposed = execute(proposed)
    if reference is not None:
        # NB: grad_magic's fix is often the reference fix to the byte: the same notebook runs once
        same = proposed is not None and _sources(proposed) == _sources(reference)
        outcome.reference = outcome.proposed if same else execute(reference)
    return outcome


def _sources(nb: Any) -> List[str]:
    return [c.source for c in code_cells(nb)]


def problems(o: Outcome) -> List[str]:
    """What is wrong with one case's outcome (tests/test_notebooks.py fails on each): the notebook does not
    fail as its report says (in its last cell; a silent case not at all), the case's own fix or grad_magic's
    proposed fix does not run clean."""
    found = []
    if o.case.get("silent", False):
        if o.original.errors:
            found.append(f"a silent case raised: {o.original.errors}")
    elif [cell for cell, _ in o.original.errors] != [o.last_cell]:
        found.append(f"the errors are not the last cell's alone: {o.original.errors}")
    if o.reference is not None and not runs_clean(o.reference, o.case["kind"]):
        found.append(f"the case's own fix does not run clean: errors {o.reference.errors}, "
                     f"cards {[c['kind'] for c in o.reference.cards]}")
    if o.proposed is not None and o.card is not None and not runs_clean(o.proposed, o.card["kind"]):
        found.append(f"grad_magic's fix ({o.card['fix']['description']}) does not run clean: errors "
                     f"{o.proposed.errors}, cards {[c['kind'] for c in o.proposed.cards]}")
    return found


def runs_clean(run: Optional[Run], kind: str) -> bool:
    """No error in any cell, no card of `kind`."""
    return run is not None and not run.errors and all(c["kind"] != kind for c in run.cards)


def evaluate_all(paths: List[Path]) -> Dict[Path, Outcome]:
    with ThreadPoolExecutor(WORKERS) as pool:
        return dict(zip(paths, pool.map(evaluate, paths)))


@dataclass(frozen=True)
class Figures:
    cases: int
    earlier: int
    silent: int
    kind_right: int
    culprit_named: int
    fixable: int
    fix_proposed: int  # among the fixable cases
    fixes_clean: int  # among all proposed fixes
    fixes: int

    @staticmethod
    def of(outcomes: List[Outcome]) -> "Figures":
        fixable = [o for o in outcomes if o.fixable]
        proposed = [o for o in outcomes if o.fix_proposed]
        return Figures(
            len(outcomes), sum(o.earlier_cell for o in outcomes), sum(bool(o.case.get("silent")) for o in outcomes),
            sum(o.kind_right for o in outcomes), sum(o.culprit_named for o in outcomes), len(fixable),
            sum(o.fix_proposed for o in fixable),
            sum(runs_clean(o.proposed, o.case["kind"]) for o in proposed), len(proposed))


def by_kind(outcomes: List[Outcome]) -> Dict[str, Figures]:
    """The figures of each expected kind's cases."""
    kinds: Dict[str, List[Outcome]] = {}
    for o in outcomes:
        kinds.setdefault(o.case["kind"], []).append(o)
    return {kind: Figures.of(group) for kind, group in sorted(kinds.items())}


KIND_TABLE_HEAD = "| kind | real cases | with a certain fix | fix proposed | runs clean |"


def kind_table(outcomes: List[Outcome]) -> str:
    """The per-kind table (docs/EVALUATION.md): how many of each kind's real cases get a fix, and how many of those run
    clean (the share of fixes proposed is over the cases with a certain fix)."""
    rows = [KIND_TABLE_HEAD, "|---|---|---|---|---|"]
    for kind, f in by_kind(outcomes).items():
        rows.append(f"| `{kind}` | {f.cases} | {f.fixable} | {f.fix_proposed} | {f.fixes_clean}/{f.fixes} |")
    return "\n".join(rows)


def kind_rows(page: str) -> Dict[str, Tuple[int, int, int]]:
    """kind -> (cases, with a certain fix, fix proposed) as the per-kind table of a page (docs/EVALUATION.md) says."""
    rows: Dict[str, Tuple[int, int, int]] = {}
    lines = page.splitlines()
    if KIND_TABLE_HEAD not in lines:
        return rows
    for line in lines[lines.index(KIND_TABLE_HEAD) + 2:]:
        if not line.startswith("| `"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = (int(cells[1]), int(cells[2]), int(cells[3]))
    return rows

