"""The healthy corpus (tests/healthy.py): every case runs without an error and without a card, in full
`%%gradcheck` and with `%gradcheck on`. A card here is a false card: it costs the user's trust more than a
missed bug."""
from __future__ import annotations

import pytest

from healthy import MODES, cases, read, run_case

CASES = cases()


def test_the_corpus_is_there_and_cited():
    assert len(CASES) >= 10
    for path in CASES:
        case = read(path)
        assert case.source.startswith("http") or " et al." in case.source, f"{path.name}: no `source:` line"
        assert case.cells, f"{path.name}: no `# %%` cell"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_healthy_code_gets_no_card(shell, path, mode):
    outcome = run_case(shell, read(path), mode)
    assert outcome.error == "", f"the healthy case itself failed: {outcome.error}"
    assert outcome.cards == [], f"false card(s) in {mode} mode: {outcome.cards}"
