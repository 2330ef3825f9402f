"""Real cuda:0 / cpu mismatches and a checkpoint from a GPU this machine lacks: what a GPU user sees.

Each cell fails on a CUDA machine; the card must have the right kind, name the user's tensors and their
devices, and its fixed cell must run in a fresh namespace. Skipped without CUDA (the golden cases cover
the same rules on a CPU with the "meta" device standing in for CUDA).
"""
from __future__ import annotations

import os
import tempfile

import pytest
import torch

import grad_magic
from gm_shell import run

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

SEED = """%%gradcheck
import torch
import torch.nn as nn

model = nn.Linear(3, 2)
model = model.cuda()  # 模型在GPU
inputs = torch.randn(10, 3)  # 数据在CPU
outputs = model(inputs)  # 报错！
"""
MATMUL = """%%gradcheck
import torch

w = torch.randn(3, 2, device="cuda", requires_grad=True)
x = torch.randn(4, 3)
y = (x @ w).sum()
y.backward()
"""
CAT = """%%gradcheck
import torch

features = torch.randn(3, 4, device="cuda")
padding = torch.zeros(2, 4)
batch = torch.cat([features, padding])
"""
ADD = """%%gradcheck
import torch

a = torch.ones(3, device="cuda")
b = torch.ones(3)
c = a + b
"""
LSTM_HIDDEN = """%%gradcheck
import torch
import torch.nn as nn

lstm = nn.LSTM(4, 8).cuda()
seq = torch.randn(5, 2, 4, device="cuda")
h0 = torch.zeros(1, 2, 8)
c0 = torch.zeros(1, 2, 8)
out, (h, c) = lstm(seq, (h0, c0))
"""
TRAINING_LOOP = """%%gradcheck
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(32, 4), torch.randint(0, 3, (32,))), batch_size=8)
for xb, yb in loader:
    loss = nn.functional.cross_entropy(model(xb), yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"last loss {loss.item():.3f}")
"""

# (cell, the names and devices the title must show, what the fixed cell must contain)
MISMATCHES = {
    "seed_article": (SEED, ["`inputs` on cpu", "`model`'s parameters on cuda:0"],
                     "inputs = torch.randn(10, 3, device=model.weight.device)  # 数据在CPU"),
    "matmul": (MATMUL, ["`x` on cpu", "`w` on cuda:0"], "x = torch.randn(4, 3, device=w.device)"),
    "cat": (CAT, ["`padding` on cpu", "`features` on cuda:0"], "padding = torch.zeros(2, 4, device=features.device)"),
    "elementwise": (ADD, ["`b` on cpu", "`a` on cuda:0"], "b = torch.ones(3, device=a.device)"),
    "lstm_hidden": (LSTM_HIDDEN, ["`h0` and `c0` on cpu", "on cuda:0"], "h0 = torch.zeros(1, 2, 8, device=seq.device)"),
    "training_loop": (TRAINING_LOOP, ["`xb` on cpu", "on cuda:0"], "    xb, yb = xb.to(device), yb.to(device)"),
}


def _diagnosis(shell, cell: str, kind: str):
    result = run(shell, cell)
    assert result.error_in_exec is not None, "the cell was expected to fail"
    found = [d for d in grad_magic.last_diagnoses() if d.kind == kind]
    assert found, f"diagnosed {[d.kind for d in grad_magic.last_diagnoses()]} for {result.error_in_exec!r}"
    return found[0]


def _fixed_cell_runs(shell, d, kind: str, setup: str = "") -> None:
    shell.reset(new_session=True)
    if setup:
        assert run(shell, setup).success
    fixed = run(shell, d.fix.source)
    assert fixed.success, f"the fixed cell failed: {fixed.error_in_exec!r}"
    assert kind not in [x.kind for x in grad_magic.last_diagnoses()]


@pytest.mark.parametrize("name", list(MISMATCHES))
def test_device_mismatch_on_a_gpu(shell, monkeypatch, name):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    cell, shown, fixed_line = MISMATCHES[name]
    d = _diagnosis(shell, cell, "device-mismatch")
    print(f"\n[{name}] {d.error_message}\n  title: {d.title}\n  fix: {d.fix and d.fix.description}")
    for text in shown:
        assert text in d.title
    assert d.fix is not None and fixed_line in d.fix.source.splitlines()
    _fixed_cell_runs(shell, d, "device-mismatch")


def _save_tagged(path: str, tag: str) -> None:
    """A checkpoint whose storages say `tag` (a GPU this machine may not have)."""
    location_tag = torch.serialization.location_tag
    torch.serialization.location_tag = lambda storage: tag
    try:
        torch.save(torch.nn.Linear(3, 2).state_dict(), path)
    finally:
        torch.serialization.location_tag = location_tag


def test_checkpoint_from_a_gpu_this_machine_lacks(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    count = torch.cuda.device_count()
    path = os.path.join(tempfile.mkdtemp(prefix="grad_magic_gpu_"), "model.pth")
    _save_tagged(path, f"cuda:{count}")
    setup = f"import torch\nmodel = torch.nn.Linear(3, 2).cuda()\nckpt = {path!r}\n"
    cell = "%%gradcheck\nstate_dict = torch.load(ckpt)\nmodel.load_state_dict(state_dict)\n"
    shell.reset(new_session=True)
    assert run(shell, setup).success
    d = _diagnosis(shell, cell, "load-needs-map-location")
    print(f"\n[load] {d.error_message}\n  title: {d.title}\n  fix: {d.fix and d.fix.description}")
    assert f"cuda:{count}" in d.title and f"device_count() is {count}" in d.what
    assert d.fix.source.splitlines()[1] == 'state_dict = torch.load(ckpt, map_location="cuda:0")'
    _fixed_cell_runs(shell, d, "load-needs-map-location", setup)
