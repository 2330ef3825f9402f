"""Write the README's tables from where their figures live, so the two cannot drift.

    .venv/bin/python scripts/readme_tables.py          # rewrite the tables in README.md
    .venv/bin/python scripts/readme_tables.py --check  # exit 1 when README.md is out of date

The table of kinds, from the rule registry, lies between the `<!-- kinds:start -->` and `<!-- kinds:end -->`
markers; the blind ledger's figures, from docs/LEDGER.md (tests/ledger.py), between `<!-- ledger:start -->` and
`<!-- ledger:end -->`. tests/test_readme.py fails when either differs from its source.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
START, END = "<!-- kinds:start -->", "<!-- kinds:end -->"
LEDGER_START, LEDGER_END = "<!-- ledger:start -->", "<!-- ledger:end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def kinds_table() -> str:
    from grad_magic.rules.registry import RULES

    rows = ["| kind | | what it keys on | fix it proposes |", "|---|---|---|---|"]
    for r in RULES.values():
        keys = "<br>".join(f"`{_cell(m)}`" if not m.startswith("silent") else _cell(m) for m in r.matches)
        rows.append(f"| `{r.slug}` | {r.severity} | {keys or _cell(r.summary)} | {_cell(r.fix) or '—'} |")
    return "\n".join(rows)


LEDGER_ROWS = 6  # the newest; docs/LEDGER.md keeps them all


def ledger_table() -> str:
    """docs/LEDGER.md's newest rows, newest first, in short: the batch's name, the false cards without notes."""
    if str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))
    import ledger

    rows = ["| scored | batch | cases | right kind | culprit named | fix proposed | fixes clean | false cards |",
            "|---|---|---|---|---|---|---|---|"]
    for line in list(reversed(ledger.rows()))[:LEDGER_ROWS]:
        day, at, batch, cases, kind, culprit, fix, clean, false_cards = [c.strip() for c in line.strip("|").split("|")]
        rows.append(f"| {day} at {at.split(' ')[0]} | {_short(batch)} | {cases} | {kind} | {culprit} | {fix} "
                    f"| {clean} | {_short(false_cards)} |")
    return "\n".join(rows)


def _short(text: str) -> str:
    """`b4 (15 cases, ...)` -> `b4`; `healthy-h0: the 13 patterns ...` -> `healthy-h0`."""
    return text.split(":")[0].split(" (")[0].strip()


def _between(text: str, start: str, end: str, table: str) -> str:
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{table}\n{end}{tail}"


def with_table(readme: str) -> str:
    return _between(_between(readme, START, END, kinds_table()), LEDGER_START, LEDGER_END, ledger_table())


def main(argv: list) -> int:
    text = README.read_text(encoding="utf-8")
    wanted = with_table(text)
    if "--check" in argv:
        if wanted != text:
            print("README.md: its tables are out of date; run scripts/readme_tables.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
