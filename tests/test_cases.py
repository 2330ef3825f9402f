"""Golden cases: every file `cases/<kind>/<name>.py` is a cell that must be diagnosed as `<kind>`.

For each case: the text card and the fixed cell are compared with `golden/<kind>/<name>.card.txt` and
`golden/<kind>/<name>.fixed.py` (or `<name>.nofix` when no fix must be proposed), and the Chinese card, made
from the same run record, with `golden/<kind>/<name>.card.zh.txt`; the fixed cell is run
in a fresh namespace under %%gradcheck and must neither fail nor be diagnosed as `<kind>` again; and
it may differ from the original only on the lines its edits touch.
An optional `<name>.setup.py` beside a case runs first (plain, unchecked, as In [1]) before the case and its
fix; a fix that changes that earlier cell is compared with `golden/<kind>/<name>.fixed.setup.py`, and the fixed
setup runs before the case.
Before any golden file, both diagnoses' words must pass the style checks of docs/CARD_STYLE.md (card_style.py).
Regenerate the golden files with GRAD_MAGIC_REGEN=1.
"""
from __future__ import annotations

import difflib
import os
import re
import unicodedata
from pathlib import Path

import pytest

import grad_magic
import grad_magic.cellrun
from grad_magic.cell import line_offsets
from grad_magic.engine import diagnose
from grad_magic.render import Card, text
from card_style import style_problems
from gm_shell import run

HERE = Path(__file__).parent
CASES = sorted(p for p in (HERE / "cases").glob("*/*.py") if not p.name.endswith(".setup.py"))
REGEN = os.environ.get("GRAD_MAGIC_REGEN") == "1"


def normalise(card: str) -> str:
    card = re.sub(r"(?m)^(Versions|版本): .*$", r"\1: <versions>", card)
    card = re.sub(r"<ipython-input-\d+-[0-9a-f]+>", "<cell>", card)
    return re.sub(r"0x[0-9a-f]{6,}", "0x…", card)


def run_case(shell, case: Path, source: str, setup_source: str = ""):
    setup = case.with_name(case.stem + ".setup.py")
    shell.reset(new_session=True)
    if setup_source or setup.exists():
        assert run(shell, setup_source or setup.read_text()).success, "the case's setup failed"
    return run(shell, source)


def check_golden(path: Path, actual: str) -> None:
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing golden file {path.relative_to(HERE)} (GRAD_MAGIC_REGEN=1 writes it)"
    assert actual == path.read_text(encoding="utf-8")


def changed_lines(original: str, fixed: str) -> set:
    """Line numbers (in the original) that the fixed cell changes or inserts next to."""
    changed = set()
    matcher = difflib.SequenceMatcher(a=original.splitlines(), b=fixed.splitlines(), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag != "equal":
            changed.update(range(i1 + 1, max(i2, i1 + 1) + 1))
    return changed


def edited_lines(original: str, edits) -> set:
    offsets = line_offsets(original)
    lines = set()
    for e in edits:
        first = max(n for n in range(1, len(offsets) + 1) if offsets[n - 1] <= e.start)
        last = max(n for n in range(1, len(offsets) + 1) if offsets[n - 1] <= max(e.start, e.end))
        lines.update(range(first, last + 2))  # an insertion at a line start shows as the line before
    return lines


def also_in_chinese(monkeypatch) -> list:
    """The Chinese diagnoses of every run from now on, made from the same run record as the cards shown
    (diagnosing it again costs far less than running the cell again)."""
    chinese: list = []
    shown = grad_magic.cellrun.diagnose_and_remember

    def both(record, namespace):
        chinese[:] = diagnose(record, namespace, "zh")
        return shown(record, namespace)

    monkeypatch.setattr(grad_magic.cellrun, "diagnose_and_remember", both)
    return chinese


def columns(line: str) -> int:
    """How many terminal columns `line` takes: a wide (CJK) character two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def fixed_setup(case: Path, d):
    """The fixed copy of the case's setup cell (In [1]), when the fix changes it; no other cell may change."""
    assert all(c.cell == 1 for c in d.fix.elsewhere), [c.cell for c in d.fix.elsewhere]
    assert not d.fix.elsewhere or case.with_name(case.stem + ".setup.py").exists()
    return d.fix.elsewhere[0] if d.fix.elsewhere else None


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_case(shell, case, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    kind = case.parent.name
    source = case.read_text(encoding="utf-8")
    chinese = also_in_chinese(monkeypatch)
    run_case(shell, case, source)
    found = grad_magic.last_diagnoses()
    assert kind in [d.kind for d in found], f"diagnosed {[d.kind for d in found]}, expected {kind}"
    d = next(d for d in found if d.kind == kind)
    zh = next(x for x in chinese if x.kind == kind)
    # NB: before the golden files: a card whose words break docs/CARD_STYLE.md fails on that first
    assert style_problems(d) + style_problems(zh) == []
    for card in (d, zh):  # NB: a terminal's card (issue 32): its first block in view in a 120x40 terminal
        short = text.render(card, width=120, compact=True).splitlines()
        assert len(short) <= text.FIRST_LINES + 2 and all(columns(line) <= 120 for line in short), "\n".join(short)
    golden = HERE / "golden" / kind
    check_golden(golden / f"{case.stem}.card.txt", normalise(str(Card(d))) + "\n")
    check_golden(golden / f"{case.stem}.card.zh.txt", normalise(str(Card(zh))) + "\n")
    if d.fix is None:
        assert not (golden / f"{case.stem}.fixed.py").exists(), "a fix was expected"
        check_golden(golden / f"{case.stem}.nofix", "no fix proposed\n")
        return
    assert not (golden / f"{case.stem}.nofix").exists(), "no fix was expected"
    setup_fix = fixed_setup(case, d)
    if setup_fix is not None:
        check_golden(golden / f"{case.stem}.fixed.setup.py", setup_fix.source)
        assert changed_lines(setup_fix.original, setup_fix.source) <= edited_lines(setup_fix.original, setup_fix.edits)
    if d.fix.source or setup_fix is None:
        check_golden(golden / f"{case.stem}.fixed.py", d.fix.source)
        assert d.fix.source.startswith("%%gradcheck")
        assert changed_lines(source, d.fix.source) <= edited_lines(source, d.fix.edits)
    fixed_run = run_case(shell, case, d.fix.source or source, setup_fix.source if setup_fix else "")
    assert fixed_run.success, f"the fixed cell failed: {fixed_run.error_in_exec!r}"
    assert kind not in [x.kind for x in grad_magic.last_diagnoses()]
