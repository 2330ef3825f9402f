"""Threads and nesting: `%%gradcheck` cells that run torch in threads, set anomaly mode or warning filters
themselves, or sit inside `%%capture` and `%%time`, behave as plain cells and leave no state behind."""
from __future__ import annotations

import sys
import textwrap
import threading
import warnings

import pytest
import torch

import grad_magic
from grad_magic import stephooks
from grad_magic.stepwatch import Clearings
from gm_shell import displayed, run
from reliability_support import attributes, changed_attributes, differences, snapshot

FAILING_BODY = ("import torch\nw = torch.tensor([1.0])\nassigned_before = 41\nloss = (w * 2).sum()\n"
                "loss.backward()\n")


def assert_restored(shell, before, attrs):
    assert not differences(before, snapshot(shell)), differences(before, snapshot(shell))
    assert not changed_attributes(attrs, attributes())


# -- threads --

THREADS = textwrap.dedent("""\
    %%gradcheck
    import threading, torch
    results, errors = {}, []

    def train(k):
        try:
            torch.manual_seed(k)
            model = torch.nn.Linear(16, 16)
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            for _ in range(20):
                opt.zero_grad()
                x = torch.randn(8, 16)
                (model(x) @ x.T).relu().sum().backward()
                opt.step()
            w = torch.ones(3, requires_grad=True)
            (w * k).sum().backward()
            results[k] = w.grad.tolist()
        except BaseException as e:
            errors.append(e)

    workers = [threading.Thread(target=train, args=(k,)) for k in range(4)]
    for t in workers:
        t.start()
    train(99)  # the cell's own thread trains meanwhile
    for t in workers:
        t.join()
    sorted(results)
    """)


def test_threads_training_inside_a_cell(shell):
    before, attrs = snapshot(shell), attributes()
    result = run(shell, THREADS)
    assert result.success, result.error_in_exec
    assert shell.user_ns["errors"] == []
    assert result.result == [0, 1, 2, 3, 99]
    assert shell.user_ns["results"][3] == [3.0, 3.0, 3.0]
    assert grad_magic.last_diagnoses() == [] and displayed(shell) == []  # healthy: no card
    assert_restored(shell, before, attrs)


def test_a_thread_that_outlives_its_cell(shell):
    """Hooks come off while a thread still steps an optimizer; the thread goes on unharmed."""
    before, attrs = snapshot(shell), attributes()
    result = run(shell, textwrap.dedent("""\
        %%gradcheck
        import threading, torch
        go, done, errors = threading.Event(), threading.Event(), []

        def train():
            try:
                model = torch.nn.Linear(4, 4)
                opt = torch.optim.SGD(model.parameters(), lr=0.01)
                steps = 0
                while not done.is_set() or steps < 50:
                    opt.zero_grad()
                    model(torch.ones(2, 4)).sum().backward()
                    opt.step()
                    steps += 1
                    go.set()
            except BaseException as e:
                errors.append(e)

        worker = threading.Thread(target=train)
        worker.start()
        go.wait(10)
        """))
    assert result.success, result.error_in_exec
    shell.user_ns["done"].set()
    shell.user_ns["worker"].join(30)
    assert not shell.user_ns["worker"].is_alive()
    assert shell.user_ns["errors"] == []
    assert_restored(shell, before, attrs)


def test_an_error_in_a_thread_is_not_the_cells(shell):
    before, attrs = snapshot(shell), attributes()
    hook = threading.excepthook
    seen = []
    threading.excepthook = lambda args: seen.append(args.exc_type)
    try:
        result = run(shell, "%%gradcheck\nimport threading, torch\n"
                            "t = threading.Thread(target=lambda: torch.ones(1).sum().backward())\n"
                            "t.start()\nt.join()\nafter = 1\n")
    finally:
        threading.excepthook = hook
    assert result.success and shell.user_ns["after"] == 1
    assert seen == [RuntimeError]
    assert displayed(shell) == []
    assert_restored(shell, before, attrs)


# -- settings the cell changes itself --

@pytest.mark.parametrize("options", ["", "--fast", "--no-nan-check"])
@pytest.mark.parametrize("setting", [True, False])
def test_cell_that_sets_anomaly_mode_itself(shell, options, setting):
    """The cell's own `set_detect_anomaly` rules the rest of the cell, and a failure after it still gets its
    card. After the cell the cell's own setting stays, as after a plain cell -- also a setting equal to the
    one %%gradcheck made (anomaly on, NaN check as the options say): the user's call is what counts."""
    before, attrs = snapshot(shell), attributes()
    try:
        result = run(shell, f"%%gradcheck {options}\nimport torch\n"
                            f"torch.autograd.set_detect_anomaly({setting})\n"
                            "seen = torch.is_anomaly_enabled()\n" + FAILING_BODY)
        assert isinstance(result.error_in_exec, RuntimeError) and sys.last_value is result.error_in_exec
        assert shell.user_ns["seen"] is setting
        assert grad_magic.last_diagnosis().error_type == "RuntimeError"
        assert torch.is_anomaly_enabled() is setting
    finally:
        torch.set_anomaly_enabled(before["anomaly"], before["check_nan"])
    assert_restored(shell, before, attrs)


def test_users_own_anomaly_mode_survives_the_cells(shell):
    before_user = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    torch.autograd.set_detect_anomaly(True, check_nan=False)
    try:
        run(shell, "%%gradcheck --fast\nimport torch\nseen = (torch.is_anomaly_enabled(), "
                   "torch.is_anomaly_check_nan_enabled())\n")
        assert shell.user_ns["seen"] == (True, False)  # --fast leaves the user's own setting on
        run(shell, "%%gradcheck\nwith torch.autograd.detect_anomaly(check_nan=False):\n    x = 1\n")
        assert (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()) == (True, False)
    finally:
        torch.set_anomaly_enabled(*before_user)


def test_warning_filters_a_cell_sets_stay_set_as_after_a_plain_cell(shell):
    """`warnings.filterwarnings(...)` in a cell lasts for the session after a plain cell; %%gradcheck must
    not undo it (it records warnings, it does not own the filters)."""
    filters = warnings.filters[:]
    try:
        run(shell, "import warnings\nwarnings.filterwarnings('ignore', message='plain cell filter')\n")
        run(shell, "%%gradcheck\nimport warnings\nwarnings.filterwarnings('ignore', message='gradcheck filter')\n")
        messages = [f[1].pattern if f[1] else "" for f in warnings.filters]
        assert "plain cell filter" in messages
        assert "gradcheck filter" in messages, "the filter the %%gradcheck cell set was undone"
    finally:
        warnings.filters[:] = filters


# -- nesting in other cell magics --

def test_gradcheck_inside_capture(shell):
    before, attrs = snapshot(shell), attributes()
    result = run(shell, "%%capture captured\n%%gradcheck\n" + FAILING_BODY)
    captured = shell.user_ns["captured"]
    assert result.success  # NB: %%capture shows (and keeps) the inner cell's error instead of raising it
    assert isinstance(sys.last_value, RuntimeError) and "does not require grad" in str(sys.last_value)
    assert shell.user_ns["assigned_before"] == 41
    cards = [o.data for o in captured.outputs if "text/html" in o.data]
    assert len(cards) == 1 and "gm-card" in cards[0]["text/html"]
    assert "RuntimeError" in captured.stdout and displayed(shell) == []
    assert_restored(shell, before, attrs)


def test_gradcheck_inside_time(shell, capsys):
    before, attrs = snapshot(shell), attributes()
    result = run(shell, "%%time\n%%gradcheck\n" + FAILING_BODY)
    out = capsys.readouterr().out
    assert "Wall time" in out
    assert isinstance(result.error_in_exec, RuntimeError) and sys.last_value is result.error_in_exec
    assert shell.user_ns["assigned_before"] == 41
    assert len(displayed(shell)) == 1
    assert_restored(shell, before, attrs)


def test_gradcheck_inside_gradcheck(shell):
    """Nested captures: the inner restores the outer's state, the outer restores the user's."""
    before, attrs = snapshot(shell), attributes()
    result = run(shell, "%%gradcheck --fast\n%%gradcheck --no-nan-check\nimport torch\n"
                        "seen = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled(), "
                        "torch._C._len_torch_function_stack())\n")
    assert result.success, result.error_in_exec
    # NB: one mode: the inner (full) capture's; the outer --fast one patches in-place entry points instead
    assert shell.user_ns["seen"] == (True, False, 1)
    assert_restored(shell, before, attrs)


def test_a_failure_inside_nested_gradcheck_cells_shows_one_card(shell):
    result = run(shell, "%%gradcheck\n%%gradcheck\n" + FAILING_BODY)
    assert isinstance(result.error_in_exec, RuntimeError) and sys.last_value is result.error_in_exec
    assert len(displayed(shell)) == 1


class _UserMode(torch.overrides.TorchFunctionMode):
    """A mode of the user's: counts the torch calls it sees."""

    calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        type(self).calls += 1
        return func(*args, **(kwargs or {}))


def test_a_users_mode_left_entered_stays_on_and_grad_magics_comes_off(shell):
    shell.user_ns["UserMode"] = _UserMode
    result = run(shell, "%%gradcheck\nimport torch\nmode = UserMode()\nmode.__enter__()\ny = torch.ones(2) + 1\n")
    assert result.success, result.error_in_exec
    stack = torch.overrides._get_current_function_mode_stack()
    try:
        assert stack == [shell.user_ns["mode"]], stack  # NB: the user's mode only: grad_magic's tracker is off
    finally:
        shell.user_ns["mode"].__exit__(None, None, None)


def test_a_users_mode_entered_before_and_exited_in_the_cell_is_the_one_popped(shell):
    shell.user_ns["UserMode"] = _UserMode
    assert run(shell, "mode = UserMode()\nmode.__enter__()\n").success
    try:
        result = run(shell, "%%gradcheck\nimport torch\ny = torch.ones(2) + 1\nmode.__exit__(None, None, None)\n"
                            "z = torch.ones(2) * 2\n")
        assert result.success, result.error_in_exec
        assert torch.overrides._get_current_function_mode_stack() == []
    finally:
        while torch._C._len_torch_function_stack():
            torch._C._pop_torch_function_stack()


def test_a_users_mode_sees_the_calls_first_and_the_tracker_still_records(shell):
    shell.user_ns["UserMode"] = _UserMode
    _UserMode.calls = 0
    run(shell, "%%gradcheck\nimport torch\nwith UserMode():\n    w = torch.ones(2, requires_grad=True)\n"
               "    w.add_(1)\n")
    assert _UserMode.calls >= 2
    assert [d.kind for d in grad_magic.last_diagnoses()][:1] == ["leaf-modified-in-place"]


def test_a_zero_grad_the_user_kept_past_the_cell_is_the_original(shell):
    """A cell that saves `Optimizer.zero_grad` (grad_magic's wrapper, while the cell runs) and puts it back
    later gets torch's own behaviour from then on: the wrapper, once its run is over, only passes the call on,
    keeps nothing, and puts torch's own back in its place."""
    original = torch.optim.Optimizer.zero_grad
    try:
        assert run(shell, "%%gradcheck\nimport torch\nsaved = torch.optim.Optimizer.zero_grad\n").success
        torch.optim.Optimizer.zero_grad = shell.user_ns["saved"]
        w = torch.ones(2, requires_grad=True)
        (w * 2).sum().backward()
        opt = torch.optim.SGD([w], lr=0.1)
        modes = torch._C._len_torch_function_stack()
        opt.zero_grad(set_to_none=False)
        assert not w.grad.any() and torch._C._len_torch_function_stack() == modes
        # NB: it is the wrapper that ran, and it keeps nothing of a run that is over
        held = [c.cell_contents for c in shell.user_ns["saved"].__closure__]
        watches = stephooks._ZERO_GRAD[torch.optim.Optimizer].watches
        assert any(h is watches for h in held) and watches == []
        assert not any(isinstance(h, (stephooks.StepWatch, Clearings)) for h in held)
        assert torch.optim.Optimizer.zero_grad is original
    finally:
        torch.optim.Optimizer.zero_grad = original


# -- always-on: a thread a watched cell started fails later --

THREAD_LOOP = textwrap.dedent("""\
    import threading, torch
    go = threading.Event()
    def train():
        model = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        go.wait(10)
        for step in range(20):
            opt.zero_grad()
            h = torch.tanh(model(torch.ones(3, 4)))
            h.add_(1)
            h.sum().backward()
            opt.step()
    worker = threading.Thread(target=train, name="trainer")
    worker.start()
    """)


def test_a_thread_a_watched_cell_started_gets_its_own_card_with_a_note(shell):
    """Under `%gradcheck on`, a training loop on a thread the first cell started fails while a second cell runs:
    the card is the thread's loop's (its line in the first cell), with a note naming the thread and the cell that
    started it; the running cell is not blamed (it succeeds, and no card says it raised)."""
    before, attrs = snapshot(shell), attributes()
    hook = threading.excepthook
    shell.run_line_magic("gradcheck", "on")
    try:
        assert run(shell, THREAD_LOOP).success
        starter = shell.execution_count - 1
        assert displayed(shell) == []
        assert threading.excepthook is not hook  # NB: always-on's, from `on` to `off`
        second = run(shell, "go.set()\nworker.join(30)\nafter = 1\n")
    finally:
        shell.run_line_magic("gradcheck", "off")
    assert threading.excepthook is hook
    assert second.success and shell.user_ns["after"] == 1
    cards = grad_magic.last_diagnoses()
    assert [d.kind for d in cards] == ["saved-tensor-modified-in-place"]
    card = cards[0]
    assert card.notes[0] == f"Raised in thread `trainer`, which In [{starter}] started: the cell running now did not raise it."
    assert any(line.text.strip() == "h.sum().backward()" for line in card.lines)
    assert card.cell == starter
    assert_restored(shell, before, attrs)
