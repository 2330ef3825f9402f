"""`python -m grad_magic script.py` (grad_magic/script.py) in real processes: the script's own output and exit
status as `python script.py` gives them, the card after on stderr, its JSON, and `--write`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # NB: each case starts Python and imports torch twice (~3-8 s on a busy machine)

ROOT = Path(__file__).resolve().parent.parent

HEALTHY = """
import sys
import torch

print("argv", sys.argv, "name", __name__, "path0", sys.path[0] == __import__("os").path.dirname(__file__))
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(8, 4)).pow(2).mean().backward()
    opt.step()
print("done", file=sys.stderr)
"""

IN_PLACE = """
import torch

w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
y.mul_(2)
print("forward done")
y.sum().backward()
"""

EXIT_3 = """
import sys
print("leaving")
sys.exit(3)
"""

NOT_TORCH = """
print("hello")
undefined_thing + 1
"""

HELPER = """
import torch


def step(w):
    y = w.sigmoid()
    y.mul_(2)
    return y.sum()
"""

USES_HELPER = """
import torch
from helper import step

step(torch.randn(3, requires_grad=True)).backward()
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def run(args, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "100"}
    env.pop("RANK", None)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def both(tmp_path: Path, script: Path, *args: str, options=("--fast",)):
    plain = run([script.name, *args], tmp_path)
    watched = run(["-m", "grad_magic", *options, script.name, *args], tmp_path)
    return plain, watched


@pytest.mark.parametrize("text, code", [(HEALTHY, 0), (EXIT_3, 3), (NOT_TORCH, 1)], ids=["healthy", "exit3", "name"])
def test_a_script_without_a_card_runs_as_python_runs_it(tmp_path, text, code):
    script = write(tmp_path, "job.py", text)
    plain, watched = both(tmp_path, script, "a", "--b", options=())
    assert plain.returncode == code
    assert (watched.returncode, watched.stdout, watched.stderr) == (plain.returncode, plain.stdout, plain.stderr)


def test_a_failing_script_gets_its_card_after_the_traceback_and_write_fixes_it(tmp_path):
    script = write(tmp_path, "job.py", IN_PLACE)
    plain, watched = both(tmp_path, script, options=("--fast", "--write"))
    assert plain.returncode == watched.returncode == 1
    assert watched.stdout == plain.stdout == "forward done\n"
    assert watched.stderr.startswith(plain.stderr), "the traceback first, as Python prints it"
    card = watched.stderr[len(plain.stderr):]
    assert "grad_magic · error · saved-tensor-modified-in-place" in card
    assert "line 5 of job.py" in card and "- y.mul_(2)" in card and "+ y = y.mul(2)" in card
    assert "Written: `job.py` changed as shown" in card and "%gradfix" not in card
    assert "y = y.mul(2)" in script.read_text(encoding="utf-8")
    again = run(["-m", "grad_magic", script.name], tmp_path)  # NB: the fixed script, in full mode
    assert (again.returncode, again.stderr) == (0, ""), again.stderr


def test_a_culprit_in_the_users_module_is_named_by_file_and_line(tmp_path):
    helper = write(tmp_path, "helper.py", HELPER)
    script = write(tmp_path, "job.py", USES_HELPER)
    watched = run(["-m", "grad_magic", "--json", "cards", script.name], tmp_path)
    assert watched.returncode == 1
    assert "helper.py, line 6, in step" in watched.stderr
    assert "Not written: run again with `--write` to change `helper.py`" in watched.stderr
    assert helper.read_text(encoding="utf-8") == textwrap.dedent(HELPER).lstrip(), "nothing written"
    [card] = [json.loads(p.read_text(encoding="utf-8")) for p in (tmp_path / "cards").glob("*.json")]
    assert card["kind"] == "saved-tensor-modified-in-place"
    assert {(ln["file"], ln["lineno"]) for ln in card["lines"]} >= {(str(helper), 6)}
    [fixed] = card["fix"]["cells"]
    assert fixed["target"] == {"file": str(helper)}
    assert card["script"] == str(script)


def test_a_silent_bug_gets_its_card_in_chinese(tmp_path):
    script = write(tmp_path, "job.py", HEALTHY.replace("    opt.zero_grad()\n", ""))
    watched = run(["-m", "grad_magic", "--fast", "--lang", "zh", script.name], tmp_path)
    assert watched.returncode == 0
    assert "grads-not-zeroed" in watched.stderr and "未写入" in watched.stderr
    assert "job.py" in watched.stderr
