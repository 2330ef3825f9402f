"""The JupyterLab extension's own unit tests (jest, jsdom), run as part of the Python suite: `npm test`."""
from __future__ import annotations

import shutil
import subprocess

from browser_support import REPO, require

LABEXTENSION = REPO / "labextension"


def test_labextension_unit_tests_pass():
    require(shutil.which("node") is not None and shutil.which("npm") is not None,
            "node and npm are needed for the JupyterLab extension's unit tests")
    require((LABEXTENSION / "node_modules").is_dir(),
            "labextension/node_modules is missing: run `npm ci` in labextension/ (scripts/setup.sh does)")
    done = subprocess.run(["npm", "test", "--", "--ci", "--colors=false"], cwd=LABEXTENSION,
                          capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    report = (done.stdout + done.stderr)[-6000:]
    assert done.returncode == 0, f"npm test failed:\n{report}"
    assert "Tests:" in report and " failed" not in report.split("Tests:")[-1].splitlines()[0], report
