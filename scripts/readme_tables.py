"""Write the README's table of kinds from the rule registry, so the two cannot drift.

    .venv/bin/python scripts/readme_tables.py          # rewrite the table in README.md
    .venv/bin/python scripts/readme_tables.py --check  # exit 1 when README.md is out of date

The table lies between the `<!-- kinds:start -->` and `<!-- kinds:end -->` markers; tests/test_readme.py
fails when it differs from what the registry says.
"""
from __future__ import annotations

import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- kinds:start -->", "<!-- kinds:end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def kinds_table() -> str:
    from grad_magic.rules.registry import RULES

    rows = ["| kind | | what it keys on | fix it proposes |", "|---|---|---|---|"]
    for r in RULES.values():
        keys = "<br>".join(f"`{_cell(m)}`" if not m.startswith("silent") else _cell(m) for m in r.matches)
        rows.append(f"| `{r.slug}` | {r.severity} | {keys or _cell(r.summary)} | {_cell(r.fix) or '—'} |")
    return "\n".join(rows)


def with_table(readme: str) -> str:
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{kinds_table()}\n{END}{tail}"


def main(argv: list) -> int:
    text = README.read_text(encoding="utf-8")
    wanted = with_table(text)
    if "--check" in argv:
        if wanted != text:
            print("README.md: the table of kinds is out of date; run scripts/readme_tables.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
