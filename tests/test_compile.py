"""torch.compile inside a tracked run: the same results as without grad_magic, and no graph break or
recompilation caused by the tracker (dynamo's own counters).

NB: backend="eager": dynamo's tracing, guards and graph breaks are what the tracker can disturb, and they are
the same whatever the backend; inductor's C++ compile would cost ~10 s a test on this machine.
"""
from __future__ import annotations

import os
from types import SimpleNamespace

import pytest
import torch
import torch._dynamo
from torch._dynamo.utils import counters

from grad_magic.capture import CaptureOptions, capture
from grad_magic.tracker import compiled_region


def _compiled():
    """A tiny MLP with the in-place ops the light tracker patches: F.relu(inplace=True) through nn.ReLU, a
    Tensor method, a __setitem__, and `+=`."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(inplace=True), torch.nn.Linear(16, 4))

    def step(x):
        y = model(x)
        y.add_(1)
        y[0] = 0
        y += 1
        return (y * 2).relu_().sum()

    return model, torch.compile(step, backend="eager")


def _run(fn, x):
    out = fn(x)
    out.backward()
    return out.item()


@pytest.fixture
def fresh_dynamo():
    torch._dynamo.reset()
    counters.clear()
    yield
    torch._dynamo.reset()
    counters.clear()


def _graphs() -> int:
    return counters["stats"]["unique_graphs"]


@pytest.mark.parametrize("anomaly", [False, True], ids=["fast", "full"])
def test_a_compiled_function_gives_the_plain_result_without_graph_breaks(fresh_dynamo, anomaly):
    x = torch.randn(4, 8)
    model, plain_fn = _compiled()
    expected = _run(plain_fn, x)
    grads = [p.grad.clone() for p in model.parameters()]
    torch._dynamo.reset()
    counters.clear()
    model, fn = _compiled()
    with capture(CaptureOptions(anomaly=anomaly), namespace=None) as run:
        value = _run(fn, x)
    assert run.record.exception is None
    assert value == expected and all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), grads))
    assert dict(counters["graph_break"]) == {} and _graphs() == 1
    if not anomaly:
        # NB: fast mode patches only in-place entry points dynamo reads without a guard (Tensor methods, torch's
        # own F.relu -> torch.relu_): a plain call afterwards reuses the graph compiled while tracked
        _run(fn, x)
        assert _graphs() == 1
    # NB: the compiled region's ops run from generated code (FX's <eval_with_key>): the trackers step aside
    assert run.record.inplace_ops == []


def test_fast_mode_compiled_first_in_a_plain_run_is_not_recompiled_when_tracked(fresh_dynamo):
    x = torch.randn(4, 8)
    _, fn = _compiled()
    _run(fn, x)
    for _ in range(2):
        with capture(CaptureOptions(anomaly=False), namespace=None):
            _run(fn, x)
    assert _graphs() == 1 and dict(counters["graph_break"]) == {}


def _failing_model(compiled: bool):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    return torch.compile(model, backend="eager") if compiled else model


@pytest.mark.parametrize("anomaly", [False, True], ids=["fast", "full"])
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plain"])
def test_an_error_through_compiled_code_says_the_trackers_stepped_aside(fresh_dynamo, anomaly, compiled):
    """A failure raised inside a torch.compile'd call (dynamo's own TorchRuntimeError here), or a run whose
    compiled code wrote in place: the card says that what ran compiled is not tracked, in English and Chinese."""
    model = _failing_model(compiled)
    with pytest.raises(Exception):
        with capture(CaptureOptions(anomaly=anomaly)) as run:
            model(torch.randn(2, 8, device="meta"))
    (d,) = [d for d in run.diagnoses if d.severity == "error"]
    assert d.kind == "device-mismatch"
    said = any("torch.compile compiled" in note for note in d.notes)
    assert said is compiled and run.record.compiled is compiled


def test_in_place_writes_of_compiled_code_are_counted_as_stepped_aside(fresh_dynamo):
    def f(a):
        y = torch.tanh(a)
        y.mul_(2)
        return y.sum()

    fn = torch.compile(f, backend="eager")
    a = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        with capture(CaptureOptions(anomaly=False)) as run:
            fn(a).backward()
    assert run.record.compiled and run.record.inplace_ops == []
    (d,) = [d for d in run.diagnoses if d.severity == "error"]
    assert d.kind == "saved-tensor-modified-in-place"
    assert any("torch.compile compiled" in note for note in d.notes)


def _frames(*filenames: str):
    """A chain of stand-in frames, innermost first."""
    frame = None
    for filename in reversed(filenames):
        frame = SimpleNamespace(f_code=SimpleNamespace(co_filename=filename), f_back=frame)
    return frame


def test_dynamo_tracing_a_function_is_a_compiled_region():
    """torch 2.11's dynamo runs each op on fake tensors while it traces, from its own frames out to the user's
    function being traced (seen on an H200 machine): the in-place ops of that run are not the user's lines."""
    torch_dir = os.path.dirname(torch.__file__)
    functional = os.path.join(torch_dir, "nn", "functional.py")
    traced = _frames(functional, os.path.join(torch_dir, "_dynamo", "utils.py"), "/home/me/train.py")
    assert compiled_region(traced)
    assert not compiled_region(_frames(functional, "/home/me/train.py"))  # NB: the user's own F.relu call
    assert compiled_region(_frames(functional, "<eval_with_key>.3", "/home/me/train.py"))
