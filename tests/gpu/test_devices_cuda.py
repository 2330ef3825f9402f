"""`grad_magic.inventory` on a real CUDA device: what the CPU-only tests can only stand in for with `meta`."""
from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from grad_magic.inventory.build import build_report
from grad_magic.inventory.report import DeviceOptions

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


class RecordingMode(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


def test_cuda_rows_totals_and_filter():
    x = torch.zeros(1024, device="cuda")
    ns = {"x": x, "view": x[512:], "host": torch.zeros(4)}
    rep = build_report(ns, DeviceOptions())
    assert rep.totals["cuda:0"].bytes == 4096 and rep.totals["cuda:0"].count == 2
    assert {r.path for r in build_report(ns, DeviceOptions(device="cuda")).rows} == {"x", "view"}
    assert {r.path for r in build_report(ns, DeviceOptions(device="cuda:0")).rows} == {"x", "view"}


def test_will_collide_with_a_cuda_model():
    model = torch.nn.Linear(3, 2).cuda()
    rep = build_report({"model": model, "x": torch.zeros(4, 3)}, DeviceOptions(), "en")
    assert [w.message for w in rep.warnings] == ["`x` is on cpu; it will collide with `model` on cuda:0"]


def test_adam_state_on_the_gpu_is_quiet_and_moved_state_is_not():
    model = torch.nn.Linear(3, 2).cuda()
    opt = torch.optim.Adam(model.parameters())
    model(torch.randn(4, 3, device="cuda")).sum().backward()
    opt.step()
    assert build_report({"model": model, "opt": opt}, DeviceOptions()).warnings == ()  # `step` on CPU: fine
    state = opt.state[model.weight]
    state["exp_avg"] = state["exp_avg"].cpu()
    kinds = [w.kind for w in build_report({"model": model, "opt": opt}, DeviceOptions()).warnings]
    assert kinds == ["optimizer-state-device"]


def test_gpu_memory_kept_only_by_output_history():
    kept = torch.zeros(256, device="cuda")
    ns = {"Out": {3: kept}, "_3": kept, "x": torch.zeros(1)}
    (warning,) = build_report(ns, DeviceOptions(), "en").warnings
    assert warning.kind == "kept-by-output-history" and "`_3`" in warning.message and "1.0 KiB" in warning.message
    ns["kept"] = kept
    assert build_report(ns, DeviceOptions()).warnings == ()


def test_reads_no_cuda_tensor_data():
    model = torch.nn.Linear(3, 2).cuda()
    ns = {"model": model, "x": torch.arange(6.0, device="cuda"), "y": model.weight * 2}
    with RecordingMode() as mode:
        build_report(ns, DeviceOptions())
    assert mode.ops == []
