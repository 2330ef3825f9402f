"""The capture session, without IPython: hooks on while inside, always off after, records kept."""
from __future__ import annotations

import sys
import warnings

import pytest
import torch

import grad_magic
from grad_magic import CaptureOptions, capture
from grad_magic.capture import Capture
from gm_shell import run
from package_paths import in_package


def test_anomaly_detection_is_on_inside_and_restored_after():
    with capture():
        assert torch.is_anomaly_enabled() and torch.is_anomaly_check_nan_enabled()
        assert torch._C._len_torch_function_stack() == 1
    assert not torch.is_anomaly_enabled()


def test_fast_mode_tracks_without_anomaly_detection():
    with capture(CaptureOptions(anomaly=False)) as run:
        assert not torch.is_anomaly_enabled()
        t = torch.zeros(2)
        t.add_(1)
    assert [op.name for op in run.record.inplace_ops] == ["add_"]


@pytest.mark.parametrize("exc_type", [RuntimeError, KeyboardInterrupt, SyntaxError])
def test_every_exit_path_removes_the_hooks(exc_type):
    with pytest.raises(exc_type):
        with capture() as run:
            kept = torch.ones(1)
            raise exc_type("boom")
    assert not torch.is_anomaly_enabled()
    assert torch._C._len_torch_function_stack() == 0
    assert run.record.exception is not None and kept is not None


def test_syntax_error_from_compiled_code_inside_the_block():
    with pytest.raises(SyntaxError):
        with capture():
            exec(compile("x = (", "<cell>", "exec"))
    assert not torch.is_anomaly_enabled()


def test_capture_inside_capture_restores_the_outer_state():
    with capture():
        with capture(CaptureOptions(check_nan=False)):
            assert not torch.is_anomaly_check_nan_enabled()
            assert torch._C._len_torch_function_stack() == 2
        assert torch.is_anomaly_enabled() and torch.is_anomaly_check_nan_enabled()
        assert torch._C._len_torch_function_stack() == 1
    assert not torch.is_anomaly_enabled()


def test_user_code_that_toggles_anomaly_mode_is_undone():
    with capture():
        torch.autograd.set_detect_anomaly(False)
        assert not torch.is_anomaly_enabled()
    assert not torch.is_anomaly_enabled()
    torch.autograd.set_detect_anomaly(True)
    try:
        with capture(CaptureOptions(anomaly=False)):
            pass
        assert torch.is_anomaly_enabled()  # the user's own setting survives
    finally:
        torch.autograd.set_detect_anomaly(False)


def test_inplace_ops_are_recorded_with_line_kind_and_version():
    with capture() as run:
        x = torch.zeros(3)
        x += 1
        x[0] = 5
        torch.nn.functional.relu(x, inplace=True)
        torch.nn.functional.relu(x, inplace=False)  # keyword calls that write nothing: not recorded
        torch.sum(x, dim=0, out=None)
        torch.add(x, 1, out=x)
    ops = run.record.inplace_ops
    assert [(op.name, op.how) for op in ops] == [
        ("add_", "method"), ("__setitem__", "setitem"), ("relu", "inplace=True"), ("add", "out=")]
    assert [op.targets[0].version for op in ops] == [1, 2, 3, 4]
    assert all(op.targets[0].ident == id(x) for op in ops)
    assert ops[0].lineno is not None and ops[1].lineno == ops[0].lineno + 1


def test_failed_op_records_devices_of_its_arguments():
    a, b = torch.zeros(2), torch.zeros(2, device="meta")
    with pytest.raises(RuntimeError):
        with capture() as run:
            torch.cat([a, b])
    op = run.record.failed_ops[-1]
    assert op.name == "cat"
    assert [t.device for t in op.targets] == ["cpu", "meta"]


def test_records_keep_no_strong_reference_to_tensors():
    import gc
    import weakref

    with capture() as run:
        x = torch.zeros(3)
        x.add_(1)
    ref = weakref.ref(x)
    del x
    gc.collect()
    assert ref() is None
    assert run.record.inplace_ops[0].targets[0].ref() is None


def test_warnings_are_recorded_and_still_shown(recwarn):
    with capture() as run:
        warnings.warn("watch out", UserWarning)
    assert [w.message for w in run.record.warnings] == ["watch out"]
    assert any("watch out" in str(w.message) for w in recwarn.list)


def _train(steps: int, clear) -> Capture:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with capture() as run:
        for i in range(steps):
            clear(opt, model, i)
            model(torch.ones(4, 3)).sum().backward()
            opt.step()
    return run


def _never(opt, model, i):
    pass


def _zero_grad(opt, model, i):
    opt.zero_grad()


def _zero_grad_keep_tensors(opt, model, i):
    opt.zero_grad(set_to_none=False)


def _grad_none(opt, model, i):
    for p in model.parameters():
        p.grad = None


def _model_zero_grad_keep_tensors(opt, model, i):
    model.zero_grad(set_to_none=False)


@pytest.mark.parametrize("clear, stale", [
    (_never, [0, 2, 2, 2]), (_zero_grad, [0, 0, 0, 0]), (_zero_grad_keep_tensors, [0, 0, 0, 0]),
    (_model_zero_grad_keep_tensors, [0, 0, 0, 0]), (_grad_none, [0, 0, 0, 0])])
def test_optimizer_steps_record_gradients_left_from_the_last_step(clear, stale):
    run = _train(4, clear)
    assert [s.stale_params for s in run.record.steps] == stale
    assert all(s.optimizer_class == "SGD" and s.params_with_grad == 2 for s in run.record.steps)


def test_deliberate_accumulation_is_not_stale():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.Adam(model.parameters())
    with capture() as run:
        opt.zero_grad()
        for i in range(8):
            model(torch.ones(4, 3)).sum().backward()
            if (i + 1) % 4 == 0:
                opt.step()
                opt.zero_grad()
    assert [s.stale_params for s in run.record.steps] == [0, 0]


def test_optimizer_updates_are_not_recorded_as_user_inplace_ops():
    run = _train(2, _zero_grad)
    assert all(op.name not in ("add_", "_foreach_add_") for op in run.record.inplace_ops)


def test_plain_capture_diagnoses_with_the_callers_names():
    w = torch.tensor([1.0])
    with pytest.raises(RuntimeError):
        with capture() as run:
            w.sum().backward()
    assert run.diagnoses and run.diagnoses[0].severity == "error"
    assert grad_magic.last_diagnosis() == run.diagnoses[0]
    grad_magic.state.remember([])


def test_inference_tensors_changed_in_place_run_as_without_the_magic(shell):
    """Inference tensors have no version counter: tracking their in-place ops must not raise."""
    result = run(shell, "%%gradcheck\nimport torch\nwith torch.inference_mode():\n    x = torch.zeros(3)\n"
                        "    x.add_(1)\n    x[0] = 5\ntotal = float(x.sum())\n")
    assert result.success, result.error_in_exec
    assert shell.user_ns["total"] == 7.0


# -- the tracker is off torch's mode stack while an optimizer steps, and back on after (full mode: fast mode has
# no mode; its wrappers hold off while `log.paused`, tests/test_lighttrack.py) --

def _probe(model, fail=False):
    """An SGD whose own step pre-hook (run after the global ones) notes how many function modes are on,
    and can make the step fail."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.modes = []

    def note(optimizer, args, kwargs):
        optimizer.modes.append(torch._C._len_torch_function_stack())
        if fail:
            raise RuntimeError("step failed")

    opt.register_step_pre_hook(note)
    return opt


def test_the_tracker_is_off_while_a_step_runs_and_back_after():
    model = torch.nn.Linear(3, 1)
    opt = _probe(model)
    with capture(CaptureOptions()) as run:
        for _ in range(2):
            opt.zero_grad()
            model(torch.ones(2, 3)).sum().backward()
            opt.step()
            after_step = torch._C._len_torch_function_stack()
            model.weight.data.mul_(1.0)  # NB: the user's own in-place op, right after a step
    assert opt.modes == [0, 0] and after_step == 1
    assert [op.name for op in run.record.inplace_ops] == ["mul_", "mul_"]
    assert len(run.record.steps) == 2


def test_a_subclass_step_calling_super_puts_the_tracker_back_once_at_the_end():
    class Outer(torch.optim.SGD):
        def step(self, closure=None):
            out = super().step(closure)  # NB: torch runs the global hooks around both steps
            self.after_inner = torch._C._len_torch_function_stack()
            return out

    model = torch.nn.Linear(3, 1)
    opt = Outer(model.parameters(), lr=0.1)
    with capture(CaptureOptions()):
        model(torch.ones(2, 3)).sum().backward()
        opt.step()
        assert opt.after_inner == 0 and torch._C._len_torch_function_stack() == 1


def test_a_step_that_raises_and_is_caught_leaves_nothing_on():
    model = torch.nn.Linear(3, 1)
    opt = _probe(model, fail=True)
    with capture(CaptureOptions()) as run:
        model(torch.ones(2, 3)).sum().backward()
        with pytest.raises(RuntimeError, match="step failed"):
            opt.step()
        kept_going = torch.ones(1) + 1  # NB: the cell goes on; tracking is off for the rest of it
    assert kept_going.item() == 2 and run.record.exception is None
    assert torch._C._len_torch_function_stack() == 0


def test_a_step_in_another_thread_puts_no_tracker_on_that_thread():
    import threading

    model = torch.nn.Linear(3, 1)
    opt = _probe(model)
    model(torch.ones(2, 3)).sum().backward()
    seen = {}

    def other():
        opt.step()
        seen["modes_after"] = torch._C._len_torch_function_stack()

    with capture(CaptureOptions()):
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
        assert torch._C._len_torch_function_stack() == 1
    assert opt.modes == [0] and seen["modes_after"] == 0



@pytest.mark.parametrize("options", [CaptureOptions(), CaptureOptions(anomaly=False)], ids=["full", "fast"])
def test_a_loop_in_another_thread_that_clears_with_zero_grad_is_not_stale(options):
    """The step hooks see the steps of every thread, so zero_grad's wrapper marks what it clears in every
    thread too (it takes trackers off the calling thread's mode stack only): a training loop run in a thread
    with `zero_grad(set_to_none=False)` gets no stale gradients, one that never clears does."""
    import threading

    def loop(clear):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            if clear:
                opt.zero_grad(set_to_none=False)
            model(torch.ones(4, 3)).sum().backward()
            opt.step()

    for clear, stale in ((True, [0, 0, 0]), (False, [0, 2, 2])):
        with capture(options) as run:
            worker = threading.Thread(target=loop, args=(clear,))
            worker.start()
            worker.join()
        assert [s.stale_params for s in run.record.steps] == stale
        assert torch._C._len_torch_function_stack() == 0


# -- anomaly mode's forward traces leave grad_magic's frames out --

_TRACE_CELL = """\
import torch
a = torch.ones(3, requires_grad=True)
y = a.sigmoid()
y.mul_(2)
y.sum().backward()
"""


def _forward_trace(sh, cell: str, folded: bool = False) -> list:
    """The frames (file, function) of the 'Traceback of forward call' torch warned with (`folded`: the one the
    card folded in, `Diagnosis.trace`); cell files as <cell>."""
    import re

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(sh, cell)
    reports = [str(w.message) for w in caught if "Traceback of forward call" in str(w.message)]
    if folded:
        assert reports == [], "the anomaly mode %%gradcheck turned on printed its report"
        reports = [d.trace for d in grad_magic.last_diagnoses() if d.trace]
    text = reports[0]
    frames = re.findall(r'File "([^"]+)", line \d+, in (\S+)', text)
    cell = ("<ipython-input", "ipykernel")  # NB: a cell's code is `<module>`, or `<cell line: N>` in IPython 7.34
    return [("<cell>", "<cell>") if f.startswith(cell) or cell[1] in f else (f, name) for f, name in frames]


# NB: F.relu is written in Python and reaches the tracker through torch's handle_torch_function
_TRACE_CELL_DISPATCHED = _TRACE_CELL.replace("a.sigmoid()", "torch.nn.functional.relu(a)")


@pytest.mark.parametrize("cell", [_TRACE_CELL, _TRACE_CELL_DISPATCHED])
def test_anomaly_traces_read_as_in_a_plain_cell(shell, cell):
    plain = _forward_trace(shell, "import torch\nwith torch.autograd.detect_anomaly():\n" + "".join(
        "    " + line + "\n" for line in cell.splitlines()))
    checked = _forward_trace(shell, "%%gradcheck\n" + cell, folded=True)
    assert checked and not [f for f, _ in checked if in_package(f) or f.endswith("overrides.py") or
                            f.endswith("interactiveshell.py") and _ == "run_cell_magic"], checked
    assert checked == plain
    assert torch.fx.traceback.format_stack is not None and \
        type(torch.fx.traceback.format_stack).__module__ != "grad_magic.stacks"


def _stack_via(format_stack, depth: int):
    """`format_stack()` called at the same line from `depth` nested calls of one function."""
    return format_stack() if depth == 0 else _stack_via(format_stack, depth - 1)


@pytest.mark.parametrize("depth", [0, 2, 8], ids=["flat", "repeated-twice", "recursion-folded"])
@pytest.mark.parametrize("limit", [None, 3])
def test_the_trace_filter_formats_as_torchs_format_stack(depth, limit, monkeypatch):
    """The filter formats each frame once per run (a cache) and gives what the stdlib gives: the same text on
    its first and later calls, recursion folded as "[Previous line repeated ...]", `sys.tracebacklimit` obeyed."""
    from grad_magic.stacks import TraceFilter

    if limit is not None:
        monkeypatch.setattr(sys, "tracebacklimit", limit, raising=False)
    plain = torch.fx.traceback.format_stack
    trace = TraceFilter(frozenset(), frozenset())
    expected, first, later = [_stack_via(f, depth) for f in (plain, trace, trace)]  # NB: one line: the same stack
    assert first == later == expected
    assert any("Previous line repeated" in entry for entry in expected) == (depth == 8 and limit is None)


def test_a_cell_that_turns_anomaly_mode_on_itself_still_prints_its_report(shell):
    """Only the anomaly mode grad_magic turned on is folded into the card: the user's own prints, as plain."""
    cell = "import torch\nwith torch.autograd.detect_anomaly():\n" + "".join(
        "    " + line + "\n" for line in _TRACE_CELL.splitlines())
    plain = _forward_trace(shell, cell)
    assert _forward_trace(shell, "%%gradcheck\n" + cell) == plain
    assert grad_magic.last_diagnoses() and grad_magic.last_diagnoses()[0].trace.startswith("Error detected in")


def test_a_warning_from_a_tracked_call_is_located_at_the_users_line():
    """Python places a warning torch raises at the innermost Python frame, the tracker's; the user reads
    (and the rules use) the line of their own code that made the call, as without the magic."""
    import inspect

    w = torch.ones(2, requires_grad=True) * 2
    with capture(namespace={}) as run_:
        w.grad  # noqa: B018 -- the non-leaf .grad read warns
        line = inspect.currentframe().f_lineno - 1
    [warned] = [x for x in run_.record.warnings if ".grad attribute" in x.message]
    assert (warned.filename, warned.lineno) == (__file__, line)


def test_the_tracker_is_off_while_zero_grad_runs_and_back_after():
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    real = torch.optim.Optimizer.zero_grad
    with capture(CaptureOptions()) as run:
        wrapped = torch.optim.Optimizer.zero_grad
        model(torch.ones(2, 3)).sum().backward()
        opt.zero_grad(set_to_none=False)  # NB: zero_() on each .grad: not recorded as the user's op
        after = torch._C._len_torch_function_stack()
        model.weight.data.mul_(1.0)
    assert wrapped is not real and torch.optim.Optimizer.zero_grad is real
    assert after == 1 and [op.name for op in run.record.inplace_ops] == ["mul_"]


def test_without_dispatch_drops_the_tracker_and_torchs_way_to_it_only():
    import warnings

    from grad_magic.stacks import without_dispatch

    dispatch_file = torch.overrides.handle_torch_function.__code__.co_filename

    def code(name: str, filename: str = "<user>"):
        return compile("pass", filename, "exec").replace(co_name=name)

    cell, relu, kernel, other = code("<module>"), code("relu"), code("kernel"), code("other")
    handle, tracker = code("handle_torch_function", dispatch_file), code("__torch_function__")
    ids = frozenset({id(tracker)})

    def kept(*codes):
        return [c.co_name for c in without_dispatch(codes, lambda c: c, ids)]

    assert kept(cell, relu, handle, tracker, relu, kernel) == ["<module>", "relu", "kernel"]
    assert kept(cell, tracker) == ["<module>"]  # a C function's error: the tracker was innermost
    assert kept(cell, handle, tracker, other) == ["<module>", "other"]  # the cell itself always stays
    assert kept(cell, relu, kernel) == ["<module>", "relu", "kernel"]  # nothing tracked: untouched
    assert kept(cell, relu, tracker, relu) == ["<module>", "relu", "relu"]  # no dispatch frames: only the tracker
    # a warning the user's filters raise, through `warnings` and the recorder: the cell alone, as in a plain cell
    assert kept(cell, code("_showwarnmsg", warnings.__file__), tracker) == ["<module>"]


@pytest.mark.parametrize("options", [CaptureOptions(), CaptureOptions(anomaly=False)], ids=["full", "fast"])
def test_a_loop_on_a_thread_started_before_the_capture_is_not_recorded(options):
    """A training loop an earlier cell started on a thread, still running while the cell is watched, is that
    cell's business: its steps (stale here) are not the watched cell's; a thread the cell starts is."""
    import threading

    started, go, done = threading.Event(), threading.Event(), threading.Event()

    def loop():
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        started.set()
        go.wait(10)
        for _ in range(3):
            model(torch.ones(4, 3)).sum().backward()  # NB: never cleared
            opt.step()
        done.set()

    worker = threading.Thread(target=loop)
    worker.start()
    started.wait(10)
    with capture(options) as run:
        go.set()
        done.wait(10)
    worker.join()
    assert run.record.steps == []
    assert torch._C._len_torch_function_stack() == 0
