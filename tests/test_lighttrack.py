"""The light tracker of fast mode (lighttrack.py): what it records, what it leaves alone, and that every patch
comes off."""
from __future__ import annotations

import threading

import pytest
import torch

from grad_magic import lighttrack
from grad_magic.capture import Capture, CaptureOptions, capture

FAST = CaptureOptions(anomaly=False)


def _originals():
    return {(id(owner), name): vars(owner).get(name) for owner, name, _ in lighttrack.entry_points()}


def test_in_place_calls_of_the_users_code_are_recorded_as_the_mode_recorded_them():
    with capture(FAST) as run:
        x = torch.zeros(3)
        x.add_(1)
        x[0] = 5
        x += 1
        torch.relu_(x)
        block = torch.nn.Sequential(torch.nn.ReLU(inplace=True))
        block(x)
    ops = run.record.inplace_ops
    assert [(op.name, op.how) for op in ops] == [("add_", "method"), ("__setitem__", "setitem"),
                                                 ("add_", "method"), ("relu_", "method"), ("relu", "inplace=True")]
    assert [op.targets[0].version for op in ops] == [1, 2, 3, 4, 5]
    assert [op.lineno - ops[0].lineno for op in ops] == [0, 1, 2, 3, 5]
    assert [m() for m in ops[-1].modules] == [block[0], block]


def test_torchs_own_in_place_calls_are_not_recorded():
    """nn.init at construction, a BatchNorm's counter, an optimizer's step, zero_grad: not the user's ops."""
    with capture(FAST) as run:
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _ in range(2):
            opt.zero_grad(set_to_none=False)
            model(torch.ones(2, 3)).sum().backward()
            opt.step()
            model[0].weight.data.mul_(1.0)  # NB: the user's own in-place op, right after a step
    assert [op.name for op in run.record.inplace_ops] == ["mul_", "mul_"]
    assert len(run.record.steps) == 2


def test_while_an_optimizer_steps_no_tracker_records_and_its_closure_is_the_users_again():
    """The wrappers' fast path: while every capture's log is paused (an optimizer steps), none records, and
    the optimizer's own in-place updates pass on a global read; the closure of step(closure) records again."""
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = []
    opt.register_step_pre_hook(lambda *_: seen.append(("step", list(lighttrack._RECORDING))))
    x = torch.zeros(2)

    def closure():
        seen.append(("closure", list(lighttrack._RECORDING)))
        x.add_(1)  # NB: the user's own in-place op, inside the step
        loss = model(torch.ones(2, 3)).sum()
        loss.backward()
        return loss

    with capture(FAST) as run:
        recording = list(lighttrack._RECORDING)
        opt.step(closure)
        after = list(lighttrack._RECORDING)
    assert len(recording) == 1 and after == recording
    assert seen == [("step", []), ("closure", recording)]
    assert lighttrack._RECORDING == []
    assert [op.name for op in run.record.inplace_ops] == ["add_"]


def test_another_threads_in_place_calls_are_not_recorded():
    with capture(FAST) as run:
        worker = threading.Thread(target=lambda: torch.zeros(2).add_(1))
        worker.start()
        worker.join()
    assert run.record.inplace_ops == []


def test_a_failing_in_place_call_is_recorded_and_raised_unchanged():
    a, b = torch.zeros(3), torch.zeros(2)
    with pytest.raises(RuntimeError, match="must match the size") as raised:
        with capture(FAST) as run:
            a.add_(b)
    assert run.record.exception is raised.value
    [op] = run.record.failed_ops
    assert (op.name, op.how, [t.shape for t in op.targets]) == ("add_", "raised", [(3,), (2,)])


def test_every_patch_comes_off_and_a_users_own_patch_stays():
    before = _originals()
    mine = lambda self, *a, **k: "mine"  # noqa: E731
    with capture(FAST):
        assert torch.Tensor.add_ is not torch._C.TensorBase.add_ and lighttrack.leftovers()
        torch.Tensor.sub_ = mine  # NB: the user's patch, made during the run
    try:
        assert torch.Tensor.sub_ is mine
        assert lighttrack.leftovers() == []
        del torch.Tensor.sub_
        assert _originals() == before and "add_" not in vars(torch.Tensor)
    finally:
        vars(torch.Tensor).get("sub_") is mine and delattr(torch.Tensor, "sub_")


def test_a_step_that_raises_leaves_nothing_patched_after_the_run():
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    before = _originals()
    with pytest.raises(RuntimeError):
        with capture(FAST):
            for i in range(3):
                model(torch.ones(2, 3)).sum().backward()
                if i == 2:
                    opt.param_groups[0]["params"][0].grad = torch.zeros(5)  # NB: the step raises
                opt.step()
    assert lighttrack.leftovers() == [] and _originals() == before


class _Interrupt(KeyboardInterrupt):
    pass


@pytest.mark.parametrize("at", [0, 1, 100, 257])
def test_an_interrupt_during_install_leaves_nothing_patched(monkeypatch, at):
    """Ctrl-C on the n-th patch (the sweep of tests/reliability reaches only the lines, not each patch)."""
    before = _originals()
    calls = {"n": 0}
    real = setattr

    def interrupting(owner, name, value):
        calls["n"] += 1
        if calls["n"] == at + 1:  # NB: once: the undo's own setattr calls go through
            raise _Interrupt()
        real(owner, name, value)

    monkeypatch.setattr(lighttrack, "setattr", interrupting, raising=False)
    with pytest.raises(_Interrupt):
        with Capture(FAST, filename="<test>", source=""):
            pass
    monkeypatch.undo()
    assert lighttrack.leftovers() == [] and _originals() == before


# -- the op that raised, rebuilt from the traceback after the failure --

def _failed_in_both(fn):
    """(name, line, target shapes) of the last failed op that full mode's mode recorded, and fast mode's rebuild."""
    found = []
    for options in (CaptureOptions(), FAST):
        with pytest.raises(Exception):
            with capture(options) as run:
                fn()
        op = run.record.failed_ops[-1]
        found.append((op.name, op.lineno, [t.shape for t in op.targets]))
    return found


def test_a_torch_function_written_in_python_is_rebuilt_with_what_it_was_given():
    import torch.nn.functional as F

    logits, labels = torch.randn(4, 3), torch.zeros(0, dtype=torch.long)
    full, fast = _failed_in_both(lambda: F.nll_loss(F.log_softmax(logits, dim=1), labels))
    assert fast == full and fast[0] == "nll_loss" and fast[2] == [(4, 3), (0,)]


def test_a_modules_c_call_is_rebuilt_from_its_forward_line_with_the_modules_parameters():
    conv = torch.nn.Conv2d(3, 4, 3)
    full, fast = _failed_in_both(lambda: conv(torch.randn(1, 2, 8, 8)))
    assert fast == full and fast[0] == "conv2d" and fast[2] == [(1, 2, 8, 8), (4, 3, 3, 3), (4,)]


def test_a_c_call_on_the_users_line_is_found_by_the_instructions_position():
    a, b = torch.randn(2, 3), torch.randn(4, 5)
    full, fast = _failed_in_both(lambda: torch.ones(1) + a @ b)
    assert fast == full and fast[0] == "matmul"
    meta = torch.zeros(2, device="meta")
    full, fast = _failed_in_both(lambda: torch.cat([a, meta]))
    assert fast == full and fast[0] == "cat" and fast[2] == [(2, 3), (2,)]


def test_a_warning_from_a_patched_call_is_located_at_the_users_line():
    """Python places a warning torch raises at the innermost Python frame, the wrapper's; a plain cell shows
    the user's line (warnwatch moves it there, as for the mode)."""
    import inspect
    import warnings

    x, y = torch.ones(3), torch.ones(3)
    with warnings.catch_warnings(record=True):  # NB: recorded, not shown in the test run's summary
        warnings.simplefilter("always")
        with capture(FAST) as run:
            x.add_(1, y)  # NB: a deprecated overload: torch warns
            line = inspect.currentframe().f_lineno - 1
    [warned] = [w for w in run.record.warnings if "deprecated" in w.message]
    assert (warned.filename, warned.lineno) == (__file__, line)
