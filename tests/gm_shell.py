"""Helpers for tests that drive an IPython shell (the `shell` fixture lives in conftest.py).

NB: kept out of conftest.py: test folders with a conftest of their own shadow `import conftest`.
"""
from __future__ import annotations


def run(sh, source: str):
    """Run a cell as a notebook would (stored in history, numbered)."""
    return sh.run_cell(source, store_history=True)


def displayed(sh) -> list:
    """The bundles displayed so far (the shell fixture's CapturingDisplayPublisher keeps them)."""
    return [out["data"] for out in sh.display_pub.outputs]
