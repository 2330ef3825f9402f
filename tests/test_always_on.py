"""`%gradcheck on` (issue 17): every following cell is watched, each exactly as the same cell without it.

Cells are run side by side in a fresh shell with the watch off and on (`in_a_fresh_shell`): what they print,
show, return and raise must be the same, tracebacks included; then what the watch adds (cards, `%gradfix`),
what steps aside (`%%gradcheck` cells, grad_magic's own magics, cells run from a cell), and what `off` leaves.
"""
from __future__ import annotations

import json
import re

import pytest
import torch

from gm_shell import displayed, run
from package_paths import shows_package_frames
from reliability.test_as_a_plain_cell import in_a_fresh_shell

FAILING = """import torch
a = torch.randn(2, 3, requires_grad=True)
x = torch.tanh(a)
x *= 2
x.sum().backward()
"""

NOT_ZEROED = """import torch
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
    opt.step()
"""

SAME_CELLS = [
    "a = 1\na + 1\n", "x = 2\nx;\n", "print('hi')\n", "import asyncio\nawait asyncio.sleep(0, result=5)\n",
    "%%time\ny = 3\ny\n", "%%capture cap\nprint('hidden')\n", "cap.stdout\n", "def f():\n    return 1 / 0\nf()\n",
    "import torch\ntorch.ones(2).add_(torch.ones(3))\n",  # NB: an in-place op that raises: the tracker's frames go
    "import sys, traceback\n[f.name for f in traceback.extract_tb(sys.last_traceback)]\n",  # NB: what %debug reads
    "import torch\ntorch.cat([torch.ones(2), torch.ones(2, device='meta')])\n",
    FAILING, NOT_ZEROED, "raise KeyboardInterrupt\n", "import warnings\nwarnings.warn('mine')\n",
    "1 +\n", "%xmode Plain\n", "Out.get(2)\n", "import sys\ntype(sys.last_value)\n",
]


def _cards(shell) -> list:
    return [d["text/plain"] for d in displayed(shell) if "grad_magic" in d.get("text/plain", "")]


def test_cells_show_print_return_and_raise_as_without_the_watch():
    """Each cell in a fresh shell without the watch, then in another with `%gradcheck on`: the same printed
    text, value and error (grad_magic's cards go through the display publisher, not into what is compared)."""
    out = in_a_fresh_shell(f"""
        import IPython.core.displaypub as dp
        sh.display_pub = dp.CapturingDisplayPublisher()  # NB: cards are displays: kept apart from stdout
        rows = [cell(body) for body in {SAME_CELLS!r}]
        sh.run_line_magic("xmode", "Context")  # NB: as it was at the start (a cell sets it)
        sh.run_line_magic("gradcheck", "on")
        rows += [cell(body) for body in {SAME_CELLS!r}]
        cards = [o["data"]["text/plain"][:60] + " " + o["data"]["text/plain"].splitlines()[-1]
                 for o in sh.display_pub.outputs]
        print(json.dumps([rows, cards]))
    """)
    rows, cards = json.loads(out.splitlines()[-1])
    plain, watched = rows[:len(SAME_CELLS)], rows[len(SAME_CELLS):]
    for body, a, b in zip(SAME_CELLS, plain, watched):
        timing = re.compile(r"(CPU times|Wall time):[^\n]*")
        assert timing.sub("", b["shown"]) == timing.sub("", a["shown"]), body
        assert (b["value"], b["error"]) == (a["value"], a["error"]), body
    assert not shows_package_frames("".join(r["shown"] for r in watched))
    assert any("saved-tensor-modified-in-place" in c for c in cards), cards
    assert any("grads-not-zeroed" in c for c in cards), cards


def test_a_failing_cell_shows_its_card_and_gradfix_keeps_it(shell):
    run(shell, "%gradcheck on")
    result = run(shell, FAILING)
    assert isinstance(result.error_in_exec, RuntimeError)
    assert len(_cards(shell)) == 1 and "saved-tensor-modified-in-place" in _cards(shell)[0]
    run(shell, "z = 1")  # NB: a healthy cell in between does not take the fix away
    given = []
    shell.set_next_input = lambda text, replace=False: given.append(text)  # NB: what %gradfix hands over
    try:
        run(shell, "%gradfix")
    finally:
        del shell.set_next_input
    assert len(given) == 1 and "x = x * 2" in given[0] and "x *= 2" not in given[0]


def test_quiet_shows_errors_only(shell):
    run(shell, "%gradcheck on --quiet")
    run(shell, NOT_ZEROED)
    assert _cards(shell) == []
    run(shell, FAILING)
    assert len(_cards(shell)) == 1


def test_a_gradcheck_cell_runs_in_full_mode_once(shell):
    run(shell, "%gradcheck on")
    run(shell, "%%gradcheck\nimport torch\nfull = torch.is_anomaly_enabled()\n" + FAILING)
    assert shell.user_ns["full"] is True
    assert len(_cards(shell)) == 1
    run(shell, "plain = torch.is_anomaly_enabled()")
    assert shell.user_ns["plain"] is False  # NB: the watch never turns anomaly mode on


def test_a_cell_run_from_a_cell_is_watched_as_part_of_it(shell):
    run(shell, "%gradcheck on")
    result = run(shell, f"r = get_ipython().run_cell({NOT_ZEROED!r})\nfailed = r.error_in_exec is not None")
    assert result.error_in_exec is None and shell.user_ns["failed"] is False
    cards = _cards(shell)
    assert len(cards) == 1 and "grads-not-zeroed" in cards[0], cards  # NB: once, when the outer cell ends
    run(shell, "done = 1")
    assert len(_cards(shell)) == 1 and torch._C._len_torch_function_stack() == 0


def test_off_leaves_nothing_and_status_says_so(shell, capsys):
    import torch.optim.optimizer as optimizer_module

    hooks = (dict(optimizer_module._global_optimizer_pre_hooks),
             dict(optimizer_module._global_optimizer_post_hooks))
    tensor_dict = dict(vars(torch.Tensor))
    events = {k: list(v) for k, v in shell.events.callbacks.items()}
    run(shell, "%gradcheck")
    assert "not watching" in capsys.readouterr().out
    run(shell, "%gradcheck on")
    assert "showtraceback" in vars(shell)
    run(shell, "%gradcheck")
    assert "is watching" in capsys.readouterr().out
    run(shell, FAILING)
    run(shell, "%gradcheck off")
    assert "stopped watching cells (cells watched: 1; cards shown: 1)" in capsys.readouterr().out
    assert "showtraceback" not in vars(shell)
    assert {k: list(v) for k, v in shell.events.callbacks.items()} == events
    assert (dict(optimizer_module._global_optimizer_pre_hooks),
            dict(optimizer_module._global_optimizer_post_hooks)) == hooks
    assert dict(vars(torch.Tensor)) == tensor_dict
    assert torch._C._len_torch_function_stack() == 0
    run(shell, FAILING)
    assert len(_cards(shell)) == 1  # NB: off: no new card


def _patched_classes() -> list:
    return [dict(vars(owner)) for owner in (torch.Tensor, torch.optim.Optimizer, torch.nn.Module)]


def test_the_patches_stay_on_from_on_to_off_and_cells_still_record(shell):
    """Fast mode's patches of torch.Tensor and the zero_grad wrappers of Optimizer and Module go on once at `on`
    and come off at `off`: a watched cell changes none of these classes (each change starts their attribute
    caches over, and Python 3.13 stops caching a class after ~1,000 changes), and what they record still comes:
    the in-place line of a card, the clearing of `zero_grad(set_to_none=False)`."""
    from grad_magic import lighttrack

    plain = _patched_classes()
    run(shell, "%gradcheck on")
    held = _patched_classes()
    assert lighttrack.leftovers() and all(h != p for h, p in zip(held, plain))
    for _ in range(3):
        run(shell, "import torch\ny = torch.ones(2)\ny.add_(1)\n")
        assert _patched_classes() == held
    # NB: cleared each step without setting the gradients to None: only zero_grad's wrapper can tell
    assert run(shell, NOT_ZEROED.replace("    loss = ", "    opt.zero_grad(set_to_none=False)\n    loss = ")).success
    assert _cards(shell) == [] and _patched_classes() == held
    run(shell, NOT_ZEROED)
    run(shell, FAILING)
    cards = _cards(shell)
    assert len(cards) == 2 and "grads" in cards[0].lower() and "x *= 2" in json.dumps(cards[1]), cards
    run(shell, "%gradcheck off")
    assert lighttrack.leftovers() == [] and _patched_classes() == plain


def test_unloading_the_extension_turns_the_watch_off(shell):
    events = {k: list(v) for k, v in shell.events.callbacks.items()}
    run(shell, "%gradcheck on")
    run(shell, "%unload_ext grad_magic")
    assert {k: list(v) for k, v in shell.events.callbacks.items()} == events
    assert "showtraceback" not in vars(shell)
    run(shell, "%load_ext grad_magic")


def test_a_line_magic_with_cell_options_says_how_to_use_it(shell):
    result = run(shell, "%gradcheck --fast")
    assert "%%gradcheck" in str(result.error_in_exec) and "on" in str(result.error_in_exec)


def test_the_config_option_turns_it_on(shell):
    run(shell, "%config GradMagic.always_on = True")
    run(shell, FAILING)
    assert len(_cards(shell)) == 1
    run(shell, "%config GradMagic.always_on = False")
    run(shell, FAILING)
    assert len(_cards(shell)) == 1


def test_the_config_file_turns_it_on_at_load():
    """`c.GradMagic.always_on = True` read at start-up: the first cell after `%load_ext` is watched."""
    out = in_a_fresh_shell("""
        from traitlets.config import Config
        import IPython.core.displaypub as dp
        sh.run_line_magic("unload_ext", "grad_magic")
        config = Config()
        config.GradMagic.always_on = True
        sh.update_config(config)
        sh.run_line_magic("load_ext", "grad_magic")
        sh.display_pub = dp.CapturingDisplayPublisher()
        cell("import torch\\na = torch.ones(2, requires_grad=True)\\na.add_(1)\\n")
        print(json.dumps([o["data"]["text/plain"].splitlines()[-1] for o in sh.display_pub.outputs]))
    """)
    cards = json.loads(out.splitlines()[-1])
    assert len(cards) == 1 and "leaf-modified-in-place" in cards[0], cards


def test_a_silent_bug_shows_live_while_the_watched_cell_runs(shell):
    """The live card (issue 20) in a watched cell: shown at an early step of a 200-step loop, not again at the
    end, where a note says how long the cell ran after it."""
    run(shell, "%gradcheck on")
    run(shell, NOT_ZEROED.replace("range(3)", "range(200)"))
    mime = "application/vnd.grad-magic.diagnosis+json"
    cards = [o["data"][mime] for o in shell.display_pub.outputs if mime in o["data"]]
    assert [c["kind"] for c in cards] == ["grads-not-zeroed"] and cards[0]["live"]["step"] <= 10, cards
    notes = [o["data"]["text/plain"] for o in shell.display_pub.outputs if mime not in o["data"]]
    assert len(notes) == 1 and "shown live at step" in notes[0], notes
    assert shell.run_line_magic("gradcheck", "") is None and shell_says(shell, "off") == "cards shown: 1"


def shell_says(shell, line: str) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        shell.run_line_magic("gradcheck", line)
    return re.search(r"cards shown: \d+", out.getvalue()).group(0)



@pytest.mark.parametrize("at", [1, 50, 300])
def test_an_interrupt_while_turning_it_on_leaves_nothing_on(shell, monkeypatch, at):
    """Ctrl-C on the n-th patch the watch puts on: `on` fails, and nothing of it stays (events, traceback
    wrapper, patches)."""
    from grad_magic import lighttrack
    from grad_magic.magics import watch_of

    plain = dict(vars(torch.Tensor))
    events = {k: list(v) for k, v in shell.events.callbacks.items()}
    calls = {"n": 0}
    real = setattr

    def interrupting(owner, name, value):
        calls["n"] += 1
        if calls["n"] == at:
            raise KeyboardInterrupt
        real(owner, name, value)

    monkeypatch.setattr(lighttrack, "setattr", interrupting, raising=False)
    with pytest.raises(KeyboardInterrupt):
        watch_of(shell).start()
    monkeypatch.undo()
    assert not watch_of(shell).status().on and "showtraceback" not in vars(shell)
    assert {k: list(v) for k, v in shell.events.callbacks.items()} == events
    assert lighttrack.leftovers() == [] and dict(vars(torch.Tensor)) == plain


LEAF_IN_PLACE = "import torch\na = torch.ones(2, requires_grad=True)\na.add_(1)\n"


@pytest.mark.parametrize("how", ["capture", "run_cell"])
def test_a_cell_run_from_a_watched_cell_gets_its_card_where_its_output_goes(shell, how):
    """`%%capture` and `get_ipython().run_cell(...)` run a cell inside the watched one; IPython shows that
    cell's traceback there, and the card goes with it (issue 31): into what `%%capture` captures, or below
    the inner cell's traceback. The outer cell did not fail: no card of its own."""
    shell.run_line_magic("gradcheck", "on")
    shown = len(displayed(shell))
    try:
        if how == "capture":
            assert run(shell, "%%capture cap\n" + LEAF_IN_PLACE).success
        else:
            assert run(shell, f"get_ipython().run_cell({LEAF_IN_PLACE!r})\nafter = 1\n").success
    finally:
        shell.run_line_magic("gradcheck", "off")
    cards = [d for d in displayed(shell)[shown:] if "application/vnd.grad-magic.diagnosis+json" in d]
    if how == "capture":
        assert cards == []  # NB: captured, not shown
        captured = [o.data for o in shell.user_ns["cap"].outputs]
        cards = [d for d in captured if "application/vnd.grad-magic.diagnosis+json" in d]
    assert [c["application/vnd.grad-magic.diagnosis+json"]["kind"] for c in cards] == ["leaf-modified-in-place"]
    d = cards[0]["application/vnd.grad-magic.diagnosis+json"]
    assert any(line["text"] == "a.add_(1)" for line in d["lines"]), d["lines"]
