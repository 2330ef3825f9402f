"""Live cards (issue 20, grad_magic/live.py): a silent bug's card is displayed while its cell still runs, at the
first optimizer step whose evidence is enough, once per kind; the end of the cell does not repeat it and says how
long the cell ran after it. Each loop runs 200 steps and appends its step to `seen`: the length of `seen` when
the display publisher gets the card is the step the user was at."""
from __future__ import annotations

import io
import os
import re
import sys
from pathlib import Path

import pytest

from gm_shell import run

MIME = "application/vnd.grad-magic.diagnosis+json"
SETUP = """import torch, torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(8, 4)
seen = []
"""
STEP = """    seen.append(step)
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
"""
# kind -> (what runs before the loop, in the setup cell; the loop cell's body; the step whose check finds it)
CASES = {
    "grads-not-zeroed": ("", "for step in range(200):\n" + STEP.replace("    opt.zero_grad()\n", ""), 2),
    "train-eval-mode": ("model.eval();\n", "for step in range(200):\n" + STEP, 1),
    "graph-kept-alive": ("", "total = 0\nfor step in range(200):\n" + STEP + "    total += loss\n", 4),
    "optimizer-not-on-model": ("model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))\n",
                               "for step in range(200):\n" + STEP, 2),
    "frozen-by-no-grad": ("", "for step in range(200):\n" + STEP.replace(
        "    loss.backward()\n", "").replace("model(x)", "model(x).detach()"), 4),
}
# NB: the loop in a helper of an earlier cell: the step watch reads its frame (a list of losses grown two steps
# in a row is seen at step 3, checked at step 4)
HELPER = """def train(model, opt, steps, seen):
    losses = []
    for step in range(steps):
        seen.append(step)
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss)
    return losses
"""


def run_watched(sh, setup: str, loop: str):
    """Run the setup cell, then the loop cell; (step the user was at, kind or None, bundle) of each display."""
    assert run(sh, SETUP + setup).success
    shown = []
    publish = sh.display_pub.publish

    def watched(data, *args, **kwargs):
        shown.append((len(sh.user_ns["seen"]), data.get(MIME, {}).get("kind"), data))
        return publish(data, *args, **kwargs)

    sh.display_pub.publish = watched
    try:
        result = run(sh, loop)
    finally:
        del sh.display_pub.publish
    assert result.success, result.error_in_exec
    assert len(sh.user_ns["seen"]) == 200
    return shown


def assert_live_once(shown, kind: str, step: int) -> None:
    cards = [(at, data) for at, k, data in shown if k == kind]
    assert len(cards) == 1, [(at, k) for at, k, _ in shown]  # NB: shown once: the end of the cell leaves it out
    at, data = cards[0]
    assert at < 10 and at == step, (at, step)
    live = data[MIME]["live"]
    assert live["step"] == step and live["found"].startswith(f"Step {step}: ") and "Left running" in live["cost"]
    assert "Found while the cell runs: " in data["text/plain"] and "Ctrl-C in a terminal" in data["text/plain"]
    assert f'data-live-step="{step}"' in data["text/html"] and "I, I (or the stop button)" in data["text/html"]
    notes = [data["text/plain"] for at, k, data in shown if k is None]
    assert len(notes) == 1 and re.fullmatch(
        rf"{kind} was shown live at step {step}; the cell ran \d+\.\d s more after it\.", notes[0]), notes
    assert shown[-1][0] == 200 and shown[-1][2]["text/plain"] == notes[0]  # NB: the note comes at the end


@pytest.mark.parametrize("flags", ["", " --fast"], ids=["full", "fast"])
@pytest.mark.parametrize("kind", list(CASES))
def test_a_silent_kind_is_shown_while_the_cell_runs(shell, kind, flags):
    setup, loop, step = CASES[kind]
    shown = run_watched(shell, setup, f"%%gradcheck{flags}\n" + loop)
    assert_live_once(shown, kind, step)
    assert {k for _, k, _ in shown} == {kind, None}


def test_a_loop_in_a_helper_of_an_earlier_cell_is_watched_live(shell):
    assert run(shell, SETUP + HELPER).success
    shown = run_watched(shell, "", "%%gradcheck\nout = train(model, opt, 200, seen)\n")
    assert_live_once(shown, "graph-kept-alive", 4)
    assert shown[0][2][MIME]["names"][0] == "losses"


def test_a_healthy_loop_with_an_evaluation_shows_nothing_live(shell):
    loop = ("%%gradcheck\nfor step in range(200):\n    model.train()\n" + STEP +
            "    if step % 50 == 0:\n        model.eval()\n        with torch.no_grad():\n"
            "            val = model(x).mean().item()\n")
    assert run_watched(shell, "", loop) == []


def test_a_plain_capture_is_not_live():
    import torch

    import grad_magic

    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    with grad_magic.capture() as watched:
        for _ in range(4):
            model(torch.ones(1, 2)).sum().backward()
            opt.step()
    assert watched.live is None
    assert [d.kind for d in watched.diagnoses] == ["grads-not-zeroed"] and watched.diagnoses[0].live is None


def test_a_live_card_in_chinese(shell):
    import grad_magic

    grad_magic.state.set_language("zh")  # NB: put back by conftest's state_is_restored
    setup, loop, step = CASES["grads-not-zeroed"]
    shown = run_watched(shell, setup, "%%gradcheck\n" + loop)
    card = next(data for _, k, data in shown if k == "grads-not-zeroed")
    assert card[MIME]["language"] == "zh" and card[MIME]["live"]["found"].startswith("第 2 步：")
    assert card[MIME]["labels"]["stop"] == "停止单元格" and "Ctrl-C" in card["text/plain"]
    assert shown[-1][2]["text/plain"].startswith("grads-not-zeroed 已在第 2 步实时显示")


# -- terminal IPython: the card is printed above the running output, as the loop prints --

@pytest.mark.slow
def test_in_a_terminal_the_card_is_printed_while_the_loop_prints(tmp_path: Path):
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, "TERM": "dumb", "IPYTHONDIR": str(tmp_path / "ipython"), "GRAD_MAGIC_LANG": "en"}
    child = pexpect.spawn(sys.executable, ["-m", "IPython", "--no-banner", "--no-confirm-exit", "--simple-prompt",
                                           "--HistoryManager.hist_file=:memory:"],
                          env=env, encoding="utf-8", timeout=90, dimensions=(50, 160))
    child.logfile_read = seen = io.StringIO()
    lines = ["%load_ext grad_magic",
             "import torch; model = torch.nn.Linear(4, 1); opt = torch.optim.SGD(model.parameters(), lr=1e-4)",
             "%%gradcheck\nfor step in range(200): model(torch.ones(2, 4)).sum().backward(); opt.step(); "
             "print('STEP', step)\n\n",
             "print('DONE')", "exit"]
    try:
        for n, line in enumerate(lines, 1):
            child.expect(rf"In \[{n}\]: ")
            child.send(line.replace("\n", "\r") + "\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    out = seen.getvalue().replace("\r", "")
    card = out.index("grad_magic · warning · grads-not-zeroed")  # NB: the text card's footer
    assert out.count("grad_magic · warning · grads-not-zeroed") == 1, out[-3000:]
    assert out.index("STEP 0\n") < card < out.index("STEP 1\n") < out.index("STEP 199\n"), out[-3000:]
    assert "Found while the cell runs: Step 2: `opt` stepped" in out and "Ctrl-C in a terminal" in out
    note = out.index("grads-not-zeroed was shown live at step 2; the cell ran")
    assert out.index("STEP 199\n") < note < out.index("DONE")


@pytest.mark.parametrize("anomaly", [True, False], ids=["full", "fast"])
def test_a_card_that_fails_to_show_leaves_the_loop_and_the_tracker_as_they_were(anomaly):
    import torch

    from grad_magic.capture import Capture, CaptureOptions
    from grad_magic.engine import diagnose
    from grad_magic.live import LiveWatch, after_live

    def broken(d):
        raise RuntimeError("the display failed")

    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    watch = LiveWatch({"model": model, "opt": opt}, show=broken)
    with Capture(CaptureOptions(anomaly=anomaly), filename=__file__, source="", namespace={}, live=watch) as run_:
        for step in range(4):
            model(torch.ones(1, 2)).sum().backward()
            opt.step()
        with torch.no_grad():
            model.weight.mul_(1.0)  # NB: after the failed display: still recorded, so the tracker is back on
    assert run_.record.exception is None and watch.shown == {}
    assert [e.name for e in run_.record.inplace_ops][-1:] == ["mul_"]
    # NB: a card that could not be shown live is shown when the cell ends
    cards, notes = after_live(diagnose(run_.record, {"model": model, "opt": opt}), watch)
    assert "grads-not-zeroed" in [d.kind for d in cards] and notes == []


def test_a_check_reads_only_the_steps_since_the_last_one_and_agrees_with_the_whole_record():
    """The kinds' preconditions, read step by step (each record once: a loop's repeated record skipped), say
    what the same preconditions read from the whole record say, at every check."""
    import random
    import weakref

    from grad_magic.live import FIRST_STEP, _Evidence, may_find
    from grad_magic.record import GrowingLocal, HeldModel, RunRecord, StepEvent

    import torch

    dropout = torch.nn.Dropout()
    layer = weakref.ref(dropout)
    held = [HeldModel(None, "model", ("c", 1), True), HeldModel(None, "model", ("c", 1), False),
            HeldModel(None, "model", ("c", 1), True, (layer,))]
    grown = GrowingLocal(("c", 2), "<module>", "total", "tensor", 0, "tensor", 1)
    rng = random.Random(0)
    for _ in range(200):
        steps, evidence = [], _Evidence()
        evidence.text = False
        record = RunRecord("c", "for step in range(9):\n    opt.step()\n", steps=steps)
        for n in range(1, 65):
            if steps and rng.random() < 0.6:
                steps.append(steps[-1])  # NB: a step between two looks: the last look's record again
            else:
                steps.append(StepEvent(None, "SGD", 2, rng.choice([0, 0, 2]), rng.choice([0, 0, 0, 2]),
                                       models=(rng.choice(held),), growing=(grown,) if rng.random() < .05 else ()))
            if n & (n - 1) == 0:
                evidence.update(steps)
                assert {k for k in FIRST_STEP if evidence.may(k)} == {k for k in FIRST_STEP if may_find(k, record)}


def test_the_cells_text_alone_is_checked_at_its_first_check_then_as_its_time_allows(monkeypatch):
    """`running_loss += loss.item()` makes graph-kept-alive's precondition true from the text alone: its rule runs
    at the first check (step 4) as before; later checks run it only while those runs stay within TEXT_BUDGET of
    the time the cell has run."""
    import time

    from grad_magic import engine, live
    from grad_magic.record import HeldModel, RunRecord, StepEvent

    ran = []

    def slow_rules(record, namespace, kinds, language=""):
        assert kinds == {"graph-kept-alive"}  # NB: a healthy loop's steps give no other kind evidence
        ran.append(len(record.steps))
        time.sleep(0.02)
        return []

    held = (HeldModel(None, "model", ("c", 1), True),)

    monkeypatch.setattr(engine, "diagnose_silent", slow_rules)
    watch = live.LiveWatch({})
    steps = []
    record = RunRecord("c", "running = 0\nfor i in range(9):\n    running += 1\n", steps=steps)
    for n in range(1, 17):
        steps.append(StepEvent(None, "SGD", 2, 2, 0, models=held))
        if watch.wants(n):
            watch.at_step(n, lambda: record, steps)
    assert ran[:1] == [4] and len(ran) == 1  # NB: 20 ms a run, a cell of microseconds: not again by step 16
    watch._started -= 10.0  # NB: the cell has run 10 s: a 20 ms run is within 1 %
    steps.append(StepEvent(None, "SGD", 2, 2, 0, models=held))
    watch.at_step(32, lambda: record, steps)
    assert ran == [4, 17]
