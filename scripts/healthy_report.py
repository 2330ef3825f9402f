"""Run the healthy corpus (tests/healthy) in full `%%gradcheck` and in `%gradcheck on`, and print each case that
got a card (a false card) or failed by itself, as markdown.

    .venv/bin/python scripts/healthy_report.py [--ledger BATCH] [case.py ...]

`--ledger BATCH` appends the figures, with the date and the commit, to docs/LEDGER.md: run it once on a new batch
of healthy cases, before any rule changes for them. Exit status 1 when a case got a card or failed.
"""
from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import ledger  # noqa: E402
from healthy import MODES, cases, read, run_case  # noqa: E402


def shell():
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    sh.display_pub = CapturingDisplayPublisher()
    sh.display_pub.shell = sh
    return sh


def main(argv: list) -> int:
    batch = argv[argv.index("--ledger") + 1] if "--ledger" in argv else None
    paths = [Path(a).resolve() for a in argv if not a.startswith("--") and a != batch] or cases()
    sh = shell()
    carded, failed = {}, {}
    for path in paths:
        case = read(path)
        for mode in MODES:
            sh.reset(new_session=True)
            sh.run_line_magic("load_ext", "grad_magic")
            outcome = run_case(sh, case, mode)
            sh.run_line_magic("unload_ext", "grad_magic")
            if outcome.cards:
                carded.setdefault(case.name, []).append(f"{mode}: {', '.join(outcome.cards)}")
            if outcome.error:
                failed.setdefault(case.name, []).append(f"{mode}: {outcome.error[:120]}")
    print(f"- {len(paths)} healthy cases, each in {len(MODES)} modes ({', '.join(MODES)})")
    print(f"- cases with a false card: {len(carded)}; cases that failed by themselves: {len(failed)}")
    print(f"\nMeasured {date.today().isoformat()} by `scripts/healthy_report.py`.\n")
    for name, found in sorted(carded.items()):
        print(f"- FALSE CARD `{name}`: " + "; ".join(found))
    for name, found in sorted(failed.items()):
        print(f"- FAILED `{name}`: " + "; ".join(found))
    if batch is not None:
        kinds = sorted({k for found in carded.values() for f in found for k in f.split(": ", 1)[1].split(", ")})
        ledger.append_row(ledger.Row(date.today().isoformat(), ledger.commit(), batch, len(paths), "–", "–", "–",
                                     "–", f"{len(carded)} of {len(paths)} cases" + (f" ({', '.join(kinds)})"
                                                                                   if kinds else "")))
    return 1 if carded or failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
