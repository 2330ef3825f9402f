"""Static checks CI runs: ruff's pyflakes rules (unused and undefined names, imports shadowed, ...) on the
package and on the Python of tests, scripts and bench, as configured in pyproject.toml ([tool.ruff])."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_finds_nothing():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
