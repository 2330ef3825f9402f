"""Terminal IPython, driven through a pseudo-terminal: what a user typing in `ipython` gets.

A failing `%%gradcheck` cell shows the traceback, then the text card (in view at the prompt); `%gradfix` puts the fixed cell in the
next prompt, ready to run with Enter. The fix comes from a tiny test-only rule registered in the session,
so that this test does not depend on the other rules.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import List

import pytest

pexpect = pytest.importorskip("pexpect")

TIMEOUT = 90  # NB: the first `%load_ext grad_magic` imports torch
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-Za-z]|\r")
_ESC = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"


def prompt(n: int) -> str:
    """`In [n]: `, coloured or not (prompt_toolkit colours the number apart)."""
    return rf"In \[{_ESC}{n}{_ESC}\]: "

RULE = textwrap.dedent('''\
    """A test-only rule: a cell that raises TERMINAL-FAULT gets a card whose fix replaces the raise."""
    from grad_magic.edits import make_fix
    from grad_magic.model import TextEdit
    from grad_magic.rules.registry import rule


    @rule("test-terminal-fault")
    def terminal_fault(ctx):
        if "TERMINAL-FAULT" not in ctx.error_message:
            return None
        source = ctx.record.source
        start = source.index("raise ")
        end = source.index("\\n", start)
        fix = make_fix(source, [TextEdit(start, end, "print('FIXED' + '-RAN', x_before + 1)")],
                       "print instead of raising")
        return ctx.diagnosis("test-terminal-fault", "error", title="Terminal test title",
                             summary="the summary", what="the what", why="the why",
                             where=ctx.where(ctx.record.error_lineno), lines=[ctx.record.error_lineno],
                             fix=fix)
''')
CELL = ["%%gradcheck", "x_before = 41", "raise ValueError('TERMINAL' + '-FAULT')"]


def start_ipython(tmp_path: Path, *options: str):
    env = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm", "COLUMNS": "160", "LINES": "50",
           "IPYTHONDIR": str(tmp_path / "ipython"), "GRAD_MAGIC_LANG": "en"}
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(sys.executable, ["-m", "IPython", "--no-banner", "--no-confirm-exit",
                                           "--HistoryManager.hist_file=:memory:", *options],
                          env=env, encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 160))
    child.expect(prompt(1))
    return child


def send_cell(child, lines) -> None:
    """Type a multi-line cell and Enter. NB: IPython ends a cell magic's cell at an empty last line: the
    Enter after the last line starts one, a second Enter runs the cell."""
    for line in [*lines, "", ""]:
        child.send(line + "\r")


def run_session(tmp_path: Path, simple: bool) -> str:
    rule_file = tmp_path / "terminal_rule.py"
    rule_file.write_text(RULE)
    child = start_ipython(tmp_path, *(["--simple-prompt"] if simple else []))
    seen = []
    try:
        child.send("%load_ext grad_magic\r")
        child.expect(prompt(2))
        child.send(f"%run {rule_file}\r")
        child.expect(prompt(3))
        send_cell(child, CELL)
        child.expect(prompt(4))
        seen.append(child.before)
        child.send("%gradfix\r")
        if simple:  # NB: a plain-input prompt cannot be pre-filled: the fixed cell is printed to copy
            child.expect("cannot be pre-filled")
            child.expect_exact("print('FIXED' + '-RAN', x_before + 1)")
        else:
            child.expect("The fixed cell is in the next input")
        child.expect(prompt(5))
        if not simple:
            # NB: the prompt holds the fixed cell, the cursor at its end: Enter runs it
            child.send("\r")
            child.expect("FIXED-RAN 42")
            child.expect(prompt(6))
        seen.append(child.before)
        child.send("exit\r")
        child.expect(pexpect.EOF)
    except (pexpect.TIMEOUT, pexpect.EOF) as e:
        shown = ANSI.sub("", str(child.before))[-3000:]
        raise AssertionError(f"{type(e).__name__}; the terminal showed:\n{shown}") from None
    finally:
        child.close(force=True)
    return ANSI.sub("", "".join(seen))


@pytest.mark.parametrize("simple", [False, True], ids=["prompt_toolkit", "simple_prompt"])
def test_failing_cell_shows_the_text_card_and_gradfix_fills_the_prompt(tmp_path, simple):
    card = run_session(tmp_path, simple)
    assert "✖ Terminal test title" in card and "grad_magic · error · test-terminal-fault" in card
    assert "+ print('FIXED' + '-RAN', x_before + 1)" in card and "%gradcheck details" in card
    assert "Run %gradfix to put the fixed cell in the next input." in card
    assert "ValueError: TERMINAL-FAULT" in card
    # NB: the card comes after the traceback, so that a long traceback cannot push it off the screen
    assert card.index("Traceback (most recent call last)") < card.index("Terminal test title")


def test_always_on_prints_the_card_after_the_traceback(tmp_path):
    """`%gradcheck on` in terminal IPython (its own compiler names the cells): a failing cell without the
    magic shows IPython's traceback, then the text card naming the line."""
    child = start_ipython(tmp_path, "--simple-prompt")
    try:
        child.send("%load_ext grad_magic\r")
        child.expect(prompt(2))
        child.send("%gradcheck on\r")
        child.expect(prompt(3))
        child.send("import torch; a = torch.ones(2, requires_grad=True); a.add_(1)\r")
        child.expect(prompt(4))
        shown = ANSI.sub("", child.before)
        child.send("exit\r")
        child.expect(pexpect.EOF)
    except (pexpect.TIMEOUT, pexpect.EOF) as e:
        raise AssertionError(f"{type(e).__name__}; the terminal showed:\n{ANSI.sub('', str(child.before))[-3000:]}") \
            from None
    finally:
        child.close(force=True)
    assert "grad_magic · error · leaf-modified-in-place" in shown, shown
    assert shown.index("Traceback (most recent call last)") < shown.index("✖ ")
    assert "lighttrack" not in shown and "tracker.py" not in shown


# The seed's most common error: an in-place ReLU after a Sigmoid, trained with Adam
SEED_CELL = ["%%gradcheck", "import torch, torch.nn as nn", "torch.manual_seed(0)",
             "model = nn.Sequential(nn.Linear(4, 8), nn.Sigmoid(), nn.ReLU(inplace=True), nn.Linear(8, 1))",
             "opt = torch.optim.Adam(model.parameters())", "x = torch.randn(16, 4)",
             "loss = model(x).pow(2).mean()", "loss.backward()", "opt.step()"]
PANE = (120, 40)


def _pane(session: str) -> List[str]:
    shown = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True, check=True)
    return shown.stdout.splitlines()


def test_the_card_is_in_view_when_the_prompt_returns_in_a_120x40_pane(tmp_path):
    """terminal IPython in a real 120x40 tmux pane: once the failing cell's prompt returns, the card's title,
    its cause and the fix's diff are on the screen (the traceback above has scrolled away, not the card), each
    line of the card whole (wrapped at the pane's width by the card, never by the terminal mid-word)."""
    tmux = shutil.which("tmux")
    if tmux is None:
        if os.environ.get("CI"):
            pytest.fail("tmux is missing (scripts/setup.sh installs it)")
        pytest.skip("tmux is missing: apt-get install tmux")
    session = f"gm{os.getpid()}"
    env = {"PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm", "IPYTHONDIR": str(tmp_path / "ipython"),
           "GRAD_MAGIC_LANG": "en", "NO_COLOR": "1"}
    command = " ".join([*(f"{k}={shlex.quote(v)}" for k, v in env.items()), shlex.quote(sys.executable), "-m",
                        "IPython", "--no-banner", "--no-confirm-exit", "--simple-prompt",
                        "--HistoryManager.hist_file=:memory:"])
    subprocess.run([tmux, "-f", "/dev/null", "new-session", "-d", "-s", session, "-x", str(PANE[0]),
                    "-y", str(PANE[1]), "env " + command], check=True, env={**os.environ, "TMUX": ""})
    try:
        def until(text: str) -> List[str]:
            deadline = time.monotonic() + TIMEOUT
            while time.monotonic() < deadline:
                lines = _pane(session)
                if any(text in line for line in lines):
                    return lines
                time.sleep(0.3)
            raise AssertionError(f"{text!r} never showed; the pane:\n" + "\n".join(_pane(session)))

        def send(line: str) -> None:
            subprocess.run([tmux, "send-keys", "-t", session, "-l", line], check=True)
            subprocess.run([tmux, "send-keys", "-t", session, "Enter"], check=True)

        until("In [1]:")
        send("%load_ext grad_magic")
        until("In [2]:")
        for line in [*SEED_CELL, "", ""]:  # NB: as send_cell: an empty line ends the cell magic, Enter runs it
            send(line)
        screen = until("In [3]:")
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True)
    shown = "\n".join(screen)
    assert "RuntimeError: one of the variables needed for gradient computation" in shown or "Traceback" in shown
    title = "✖ `model[2]` changed a tensor in place after autograd saved it for backward"
    assert title in screen, shown
    assert any(line.startswith("  + model = nn.Sequential(") and "inplace=False" in line for line in screen), shown
    assert "Run %gradfix to put the fixed cell in the next input." in screen, shown
    assert "Error detected in" not in shown, "anomaly mode's report was printed"
    card = screen[screen.index(title):]
    assert all(len(line) <= PANE[0] for line in card)
    assert len([line for line in card if line.strip()]) <= 22, shown  # NB: the first block (<= 20) and 2 lines
