"""On a real CUDA device: the allocator's own out-of-memory error, fast mode and always-on.

The CPU suite raises the allocator's message by hand (tests/cases/cuda-oom) and stands in for CUDA with `meta`;
here the allocator really fails, and `%gradcheck on` / `--fast` watch cells whose tensors are on the GPU (the NaN
check at the end of a cell: one reduction per device, tensors never copied to the host).
"""
from __future__ import annotations

import pytest
import torch

import grad_magic
from gm_shell import displayed, run

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

# tests/cases/cuda-oom/training_loop.py on the GPU, with a real allocation where that case raises by hand: more
# than any GPU has, asked for once the running total has kept four steps' graphs alive
REAL_OOM = """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(64, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.randn(512, 64, device="cuda")
total = 0
for step in range(8):
    batch = data[step * 64:(step + 1) * 64]
    loss = model(batch).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    total += loss
    if torch.is_tensor(total) and step == 3:
        activations = torch.empty(2 ** 42, dtype=torch.uint8, device="cuda")  # 4 TiB
"""
NOT_ZEROED = """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(32, 8, device="cuda"), torch.randn(32, 1, device="cuda")
for step in range(5):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
"""
NAN_GRADS = """import torch
import torch.nn as nn

torch.manual_seed(0)
emb = nn.Embedding(10, 4).cuda()
opt = torch.optim.SGD(emb.parameters(), lr=0.1)
idx = torch.arange(10, device="cuda")
opt.zero_grad()
vectors = emb(idx)
dist = torch.sqrt(((vectors - vectors.detach()) ** 2).sum(dim=1))  # sqrt at 0: NaN gradient
dist.mean().backward()
opt.step()
"""
MODES = {"full": "%%gradcheck\n", "fast": "%%gradcheck --fast\n", "always-on": ""}


def _run(shell, mode: str, body: str):
    """The cell in the mode; always-on runs the body with no magic line, its lines one less than the others'."""
    if mode == "always-on":
        run(shell, "%gradcheck on")
    try:
        return run(shell, MODES[mode] + body)
    finally:
        if mode == "always-on":
            run(shell, "%gradcheck off")


def _run_fixed(shell, mode: str, fixed: str):
    """The fixed cell in a fresh namespace, watched as the original was (always-on's has no magic line)."""
    shell.reset(new_session=True)
    return _run(shell, mode, fixed) if mode == "always-on" else run(shell, fixed)


def _cards(shell, kind: str) -> list:
    """The cards of that kind displayed so far (not the one-line notes after a card shown live)."""
    return [b for b in displayed(shell) if b.get("text/plain", "").startswith(f"⚠ grad_magic · warning · {kind}")]


def _one(kind: str) -> grad_magic.Diagnosis:
    found = [d for d in grad_magic.last_diagnoses() if d.kind == kind]
    assert len(found) == 1, [d.kind for d in grad_magic.last_diagnoses()]
    return found[0]


@pytest.mark.parametrize("mode", list(MODES))
def test_a_real_out_of_memory_error(shell, monkeypatch, mode):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    result = _run(shell, mode, REAL_OOM)
    assert isinstance(result.error_in_exec, torch.OutOfMemoryError), result.error_in_exec
    d = _one("cuda-oom")
    print(f"\n[{mode}] {d.error_message}\n  title: {d.title}\n  {d.summary}\n  fix: {d.fix and d.fix.description}")
    shift = 0 if mode == "always-on" else 1
    assert "cuda:0" in d.title
    assert [s.lineno for s in d.lines] == [15 + shift, 17 + shift]
    assert d.fix is not None and "    total += loss.item()" in d.fix.source.splitlines()
    fixed = _run_fixed(shell, mode, d.fix.source)
    assert fixed.success, f"the fixed cell failed: {fixed.error_in_exec!r}"
    assert torch.cuda.memory_allocated() < 2 ** 30


@pytest.mark.parametrize("mode", list(MODES))
def test_gradients_never_zeroed_on_the_gpu(shell, monkeypatch, mode):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    assert _run(shell, mode, NOT_ZEROED).success
    d = _one("grads-not-zeroed")
    assert d.fix is not None and "    opt.zero_grad()" in d.fix.source.splitlines()
    shown = len(_cards(shell, "grads-not-zeroed"))
    assert _run_fixed(shell, mode, d.fix.source).success
    assert len(_cards(shell, "grads-not-zeroed")) == shown  # NB: always-on keeps the last card's diagnoses


@pytest.mark.parametrize("mode", ["fast", "always-on"])
def test_nan_gradients_found_on_the_gpu_without_anomaly_mode(shell, monkeypatch, mode):
    """No anomaly mode, so backward() raises nothing; the end-of-cell check reads the GPU gradients."""
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    assert _run(shell, mode, NAN_GRADS).success
    d = _one("nan-gradients")
    assert d.names == ("emb.weight",), d.names
    assert torch.isnan(shell.user_ns["emb"].weight.grad).any()


def test_full_mode_stops_at_the_nan_on_the_gpu(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    result = _run(shell, "full", NAN_GRADS)
    assert isinstance(result.error_in_exec, RuntimeError)
    d = _one("nan-in-backward")
    assert 11 in [s.lineno for s in d.lines], [s.lineno for s in d.lines]  # the sqrt line


def test_the_always_on_watch_shows_each_card_once(shell):
    run(shell, "%gradcheck on")
    try:
        for _ in range(3):
            run(shell, NOT_ZEROED)
    finally:
        run(shell, "%gradcheck off")
    assert len(_cards(shell, "grads-not-zeroed")) == 3


# torch runs a CUDA backward on its device thread, where a custom Function's backward, a tensor hook and
# anomaly mode's warnings are called with no Python frame under them (tests/test_worker_threads.py)
BACKWARD_ON_THE_DEVICE_THREAD = """import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


w = torch.randn(8, device="cuda", requires_grad=True)
w.register_hook(lambda g: g.clamp(-1, 1))
h = torch.sigmoid(Square.apply(w))
h.mul_(2)
h.sum().backward()
"""


@pytest.mark.parametrize("mode", list(MODES))
def test_a_backward_on_the_device_thread_keeps_the_users_error(shell, monkeypatch, mode):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    result = _run(shell, mode, BACKWARD_ON_THE_DEVICE_THREAD)
    assert isinstance(result.error_in_exec, RuntimeError), result.error_in_exec
    assert "modified by an inplace operation" in str(result.error_in_exec)
    d = _one("saved-tensor-modified-in-place")
    shift = 0 if mode == "always-on" else 1
    assert [s.lineno for s in d.lines] == [n + shift for n in (18, 19, 20)], [s.lineno for s in d.lines]
    fixed = _run_fixed(shell, mode, d.fix.source)
    assert fixed.success, fixed.error_in_exec
