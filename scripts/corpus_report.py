"""Run the real-notebook corpus (tests/notebooks) and print its figures and a line per case, as markdown.

    .venv/bin/python scripts/corpus_report.py [--readme] [notebook ...]

`--readme` also writes the figures into README.md between its corpus markers.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from corpus import Figures, cases, evaluate_all, kind_table, runs_clean  # noqa: E402

START, END = "<!-- corpus figures -->", "<!-- /corpus figures -->"


def percent(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "0/0"


def main(argv: list) -> int:
    paths = [Path(a).resolve() for a in argv if not a.startswith("--")] or cases()
    outcomes = evaluate_all(paths)
    f = Figures.of(list(outcomes.values()))
    figures = "\n".join([
        f"- {f.cases} notebooks ({f.earlier} with the culprit in an earlier cell, {f.silent} silent bugs)",
        f"- right kind: {percent(f.kind_right, f.cases)}",
        f"- culprit named with its cell and line: {percent(f.culprit_named, f.cases)}",
        f"- a fix proposed where the case has one: {percent(f.fix_proposed, f.fixable)}",
        f"- proposed fixes that run clean: {percent(f.fixes_clean, f.fixes)}",
    ])
    figures += "\n\n" + kind_table(list(outcomes.values()))
    print(figures + "\n")
    print("| notebook | kind | card | culprit | fix |\n|---|---|---|---|---|")
    for o in outcomes.values():
        card = o.card["kind"] if o.card else "—"
        fix = "—" if o.proposed is None else ("runs clean" if runs_clean(o.proposed, o.card["kind"]) else "FAILS")
        want = o.case["culprit"]
        print(f"| {o.path.stem} | {o.case['kind']} | {card} | In [{want['cell']}] line {want['line']}: "
              f"{'named' if o.culprit_named else 'not named'} | {fix} |")
    if "--readme" in argv:
        readme = ROOT / "README.md"
        text = readme.read_text(encoding="utf-8")
        block = f"{START}\n{figures}\n{END}"
        text, n = re.subn(re.escape(START) + ".*?" + re.escape(END), lambda m: block, text, flags=re.S)
        if n != 1:
            print(f"README.md has no {START} … {END} block", file=sys.stderr)
            return 1
        readme.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
