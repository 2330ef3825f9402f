"""A real device-side assert on CUDA: the cuda-device-assert card, in full mode, --fast and always-on.

Each run is a process of its own: after a device-side assert the process's CUDA context refuses every call (the
golden cases in tests/cases/cuda-device-assert raise the runtime's message by hand instead)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

# labels numbered 1..3 for 3 classes (pytorch/pytorch#18014, smartyfh/DST-STAR#7): the loss kernel's check stops
# it; CUDA reports it at the next call that waits for the GPU (`loss.item()`, line 15)
CELL = """import torch
import torch.nn as nn

torch.manual_seed(0)
clf = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)).cuda()
criterion = nn.CrossEntropyLoss()
opt = torch.optim.SGD(clf.parameters(), lr=0.1)
x = torch.randn(32, 6, device="cuda")
labels = torch.randint(1, 4, (32,), device="cuda")
for epoch in range(3):
    loss = criterion(clf(x), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"epoch {epoch}: {loss.item():.3f}")
"""
SCRIPT = """
import json, sys
from IPython.core.interactiveshell import InteractiveShell
import grad_magic
sh = InteractiveShell.instance()
sh.run_line_magic("load_ext", "grad_magic")
mode, cell = sys.argv[1], sys.argv[2]
if mode == "always-on":
    sh.run_line_magic("gradcheck", "on")
head = {"full": "%%gradcheck\\n", "fast": "%%gradcheck --fast\\n", "always-on": ""}[mode]
result = sh.run_cell(head + cell, store_history=True)
print(json.dumps({"error": type(result.error_in_exec).__name__, "message": str(result.error_in_exec),
                  "cards": [[d.kind, [s.lineno for s in d.lines], list(d.names)]
                            for d in grad_magic.last_diagnoses()]}))
"""


@pytest.mark.parametrize("mode", ["full", "fast", "always-on"])
def test_a_real_device_side_assert(mode):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), mode, CELL], capture_output=True,
                         text=True, timeout=300, env={**os.environ, "GRAD_MAGIC_LANG": "en"})
    last = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    assert last.startswith("{"), (out.stdout[-2000:], out.stderr[-2000:])
    got = json.loads(last)
    print(f"\n[{mode}] {got}")
    assert "device-side assert triggered" in got["message"]
    (card,) = [c for c in got["cards"] if c[0] == "cuda-device-assert"]
    shift = 0 if mode == "always-on" else 1
    assert 11 + shift in card[1], card  # the loss line, whatever line CUDA reported it at
    assert "labels" in card[2]
