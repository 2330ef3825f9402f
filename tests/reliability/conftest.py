"""Fixtures of the reliability tests (the `shell` fixture and the state check live in tests/conftest.py)."""
from __future__ import annotations

import pytest

from reliability_support import warm_up


@pytest.fixture(scope="session", autouse=True)
def torch_warmed_up():
    """NB: session-scoped, so it runs before the per-test state snapshot: torch's first-use setup
    (a lazy import adding a warning filter) is not a change made by a test."""
    warm_up()
