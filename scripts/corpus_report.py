"""Run the real-notebook corpus (tests/notebooks) and print its figures and a line per case, as markdown.

    .venv/bin/python scripts/corpus_report.py [--readme] [notebook ...]
    .venv/bin/python scripts/corpus_report.py --ledger BATCH notebook-or-folder ...

`--readme` also writes the totals into README.md between its corpus markers, and the rest (the cases without a fix
or a culprit, the per-kind table) into docs/EVALUATION.md between its corpus-details markers. `--ledger BATCH` scores a batch of
new cases (a folder of notebooks: tests/notebooks_blind/<batch>) and appends its figures, with the date and the
commit, to docs/LEDGER.md: run it once, on the batch's first run, before any rule changes for it.
"""
from __future__ import annotations

import re
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import ledger  # noqa: E402
from corpus import Figures, cases, evaluate_all, kind_table, problems, runs_clean  # noqa: E402

START, END = "<!-- corpus figures -->", "<!-- /corpus figures -->"  # README.md: the totals
DETAILS_START, DETAILS_END = "<!-- corpus details -->", "<!-- /corpus details -->"  # docs/EVALUATION.md


def percent(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "0/0"


def write_block(path: Path, start: str, end: str, block: str) -> bool:
    """Replace what lies between the markers `start` and `end` of `path` by `block`."""
    text = path.read_text(encoding="utf-8")
    text, n = re.subn(re.escape(start) + ".*?" + re.escape(end), lambda m: f"{start}\n{block}\n{end}", text,
                      flags=re.S)
    if n != 1:
        print(f"{path.relative_to(ROOT)} has no {start} … {end} block", file=sys.stderr)
        return False
    path.write_text(text, encoding="utf-8")
    return True


def main(argv: list) -> int:
    batch = argv[argv.index("--ledger") + 1] if "--ledger" in argv else None
    named = [Path(a).resolve() for a in argv if not a.startswith("--") and a != batch]
    paths = [p for n in named for p in (sorted(n.glob("*.ipynb")) if n.is_dir() else [n])] or cases()
    outcomes = evaluate_all(paths)
    f = Figures.of(list(outcomes.values()))
    figures = "\n".join([
        f"- {f.cases} notebooks ({f.earlier} with the culprit in an earlier cell, {f.silent} silent bugs)",
        f"- right kind: {percent(f.kind_right, f.cases)}",
        f"- culprit named with its cell and line: {percent(f.culprit_named, f.cases)}",
        f"- a fix proposed where the case has one: {percent(f.fix_proposed, f.fixable)}",
        f"- proposed fixes that run clean: {percent(f.fixes_clean, f.fixes)}",
    ])
    done = list(outcomes.values())
    unfixed = [o.path.stem for o in done if o.fixable and not o.fix_proposed]
    unnamed = [o.path.stem for o in done if not o.culprit_named]
    none = [o for o in done if not o.fixable]
    figures += (f"\n\nMeasured {date.today().isoformat()} by `scripts/corpus_report.py`; CI measures again on every "
                "run (`tests/test_notebooks.py`; floors: kind 95 %, culprit 90 %, fix 85 %, every proposed fix clean).")
    details = "".join([
        f"- no certain fix ({len(none)}; each case says why in `no_fix_because`): "
        + (", ".join(f"`{o.path.stem}`" for o in none) or "none"),
        "\n- a certain fix exists but none was proposed: " + (", ".join(f"`{n}`" for n in unfixed) or "none"),
        "\n- culprit not named at its cell and line: " + (", ".join(f"`{n}`" for n in unnamed) or "none"),
        "\n\n" + kind_table(done)])
    print(figures + "\n\n" + details + "\n")
    print("| notebook | kind | card | culprit | fix |\n|---|---|---|---|---|")
    for o in outcomes.values():
        card = o.card["kind"] if o.card else "—"
        fix = "—" if o.proposed is None else ("runs clean" if runs_clean(o.proposed, o.card["kind"]) else "FAILS")
        want = o.case["culprit"]
        print(f"| {o.path.stem} | {o.case['kind']} | {card} | In [{want['cell']}] line {want['line']}: "
              f"{'named' if o.culprit_named else 'not named'} | {fix} |")
    failing = {o.path.stem: problems(o) for o in outcomes.values() if problems(o)}
    for stem, found in failing.items():
        print(f"PROBLEM {stem}: " + "; ".join(found), file=sys.stderr)
    if batch is not None:
        ledger.append_row(ledger.Row.of(batch, f, done))
    if "--readme" in argv:
        for path, (start, end), block in ((ROOT / "README.md", (START, END), figures),
                                          (ROOT / "docs" / "EVALUATION.md", (DETAILS_START, DETAILS_END), details)):
            if not write_block(path, start, end, block):
                return 1
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
