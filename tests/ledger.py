"""The ledger of first runs (docs/LEDGER.md): each new batch of cases, scored once before any rule changed for
it, with the date and the commit it was scored at. A figure measured on cases the rules were written from is a
development figure; these are the product's.

Written by scripts/corpus_report.py (`--ledger BATCH`, a batch of bug notebooks) and scripts/healthy_report.py
(the healthy corpus: false cards). Read by scripts/readme_tables.py: the README shows the newest rows.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, List

ROOT = Path(__file__).resolve().parent.parent
LEDGER = ROOT / "docs" / "LEDGER.md"
HEAD = ("| date | commit | batch | cases | right kind | culprit named | fix proposed (of fixable) "
        "| proposed fixes clean | false cards |")
START, END = "<!-- ledger rows -->", "<!-- /ledger rows -->"


def commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "grad_magic"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return out.stdout.strip() + (" (+ uncommitted grad_magic changes)" if dirty else "")
    except OSError:
        return "?"


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "–"


@dataclass(frozen=True)
class Row:
    day: str
    at: str
    batch: str
    cases: int
    kind: str
    culprit: str
    fix: str
    clean: str
    false_cards: str

    @staticmethod
    def of(batch: str, f: Any, outcomes: List[Any]) -> "Row":
        """A bug batch's row from its corpus.Figures; its false cards: cards of another kind than expected."""
        wrong = sum(1 for o in outcomes for c in o.original.cards if c["kind"] != o.case["kind"])
        return Row(date.today().isoformat(), commit(), batch, f.cases, share(f.kind_right, f.cases),
                   share(f.culprit_named, f.cases), share(f.fix_proposed, f.fixable), share(f.fixes_clean, f.fixes),
                   f"{wrong} (other kinds on the failing run)")

    def line(self) -> str:
        return "| " + " | ".join([self.day, self.at, self.batch, str(self.cases), self.kind, self.culprit, self.fix,
                                  self.clean, self.false_cards]) + " |"


def rows() -> List[str]:
    text = LEDGER.read_text(encoding="utf-8")
    inside = text[text.index(START) + len(START):text.index(END)]
    return [ln for ln in inside.strip().splitlines() if ln.startswith("| 2")]


def append_row(row: Row) -> None:
    text = LEDGER.read_text(encoding="utf-8")
    cut = text.index(END)
    LEDGER.write_text(text[:cut].rstrip("\n") + "\n" + row.line() + "\n" + text[cut:], encoding="utf-8")
