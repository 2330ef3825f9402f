"""The real-notebook corpus (tests/notebooks, see tests/corpus.py): every case through a real kernel.

Per case: the notebook fails as its report says (or, silent, runs), grad_magic's proposed fix runs clean
(no error in any cell, no card of the same kind) and so does the case's reference fix -- with no card of the
kind on the fixed notebook, which also checks that no rule fires on the healthy version. Over the corpus:
the figures of issue 14 (right kind, culprit named with its cell and line, fixes proposed), as floors.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest

from corpus import Figures, Outcome, by_kind, cases, evaluate_all, problems, kind_rows

pytestmark = pytest.mark.kernel

CASES = cases()
EVALUATION = Path(__file__).resolve().parent.parent / "docs" / "EVALUATION.md"
# The corpus's figures must not fall below these (issues 14 and 15: kind 95 %, culprit 90 %, a fix for 85 % of
# the cases with a certain fix, every proposed fix clean -- stricter than issue 15's 97 %). Measured figures
# are in the README and docs/EVALUATION.md (scripts/corpus_report.py --readme).
FLOOR = {"kind_right": 0.95, "culprit_named": 0.90, "fix_proposed": 0.85}


@pytest.fixture(scope="module")
def outcomes() -> Dict:
    return evaluate_all(CASES)


def test_the_corpus_is_what_issues_14_and_15_ask_for():
    figures = Figures.of([Outcome(p, _case(p), None) for p in CASES])  # NB: metadata only
    assert figures.cases >= 80 and figures.earlier >= 25 and figures.silent >= 8, figures
    sources = [_case(p)["source"] for p in CASES]
    assert len(set(sources)) == len(sources), "two cases cite the same report"


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path, outcomes):
    found = problems(outcomes[path])
    assert not found, "\n".join(found)


def test_figures(outcomes):
    figures = Figures.of(list(outcomes.values()))
    shares = {"kind_right": figures.kind_right / figures.cases,
              "culprit_named": figures.culprit_named / figures.cases,
              "fix_proposed": figures.fix_proposed / max(1, figures.fixable)}
    low = {k: round(v, 3) for k, v in shares.items() if v < FLOOR[k]}
    assert not low, f"below the floor {FLOOR}: {low} ({figures})"
    assert figures.fixes_clean == figures.fixes, figures


def _case(path):
    import nbformat

    return nbformat.read(path, as_version=4).metadata["grad_magic_case"]


def test_the_docs_claim_no_more_than_each_kind_gets(outcomes):
    """The per-kind table of docs/EVALUATION.md (scripts/corpus_report.py --readme): every kind's cases are
    there, and no kind is said to get more fixes than this run proposed."""
    claimed = kind_rows(EVALUATION.read_text(encoding="utf-8"))
    measured = {kind: (f.cases, f.fixable, f.fix_proposed) for kind, f in by_kind(list(outcomes.values())).items()}
    assert set(claimed) == set(measured), "run: .venv/bin/python scripts/corpus_report.py --readme"
    over = {k: (claimed[k], measured[k]) for k in claimed
            if claimed[k][:2] != measured[k][:2] or claimed[k][2] > measured[k][2]}
    assert not over, f"docs/EVALUATION.md (cases, fixable, proposed) vs measured: {over}"

