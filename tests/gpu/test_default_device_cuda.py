"""`torch.set_default_device("cuda")` changes no card: the golden cases' tensors really on the GPU (see
tests/test_default_device.py, which runs the same comparison with "cpu").

Cases whose tensors cannot follow the default device are left out, each with its reason: there the cell fails
otherwise on a GPU (earlier, with another error and another card), which is right, not a difference to explain.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import pytest
import torch

from test_default_device import CASES, compare

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

STAYS_ON_THE_CPU = re.compile(r"numpy|np\.|Generator\(|location_tag")


def _why_left_out(case: Path) -> Optional[str]:
    setup = case.with_name(case.stem + ".setup.py")
    text = case.read_text(encoding="utf-8") + (setup.read_text(encoding="utf-8") if setup.exists() else "")
    if '"meta"' in text:
        return "stands in for a GPU with the meta device: with cuda the default, the mixture is cuda:0 and meta"
    if STAYS_ON_THE_CPU.search(text):
        return ("makes tensors that stay on the CPU whatever the default device (from NumPy, a CPU Generator, a "
                "checkpoint tagged for a GPU this machine lacks): on a GPU the cell fails earlier, otherwise")
    if case.parent.name == "target-out-of-range":
        return ("on CUDA an out-of-range class index is a device-side assert, which leaves the process's CUDA "
                "context unusable for every later test (tests/gpu/test_cuda_device_assert.py runs one in a process "
                "of its own)")
    return None


def _param(case: Path):
    why = _why_left_out(case)
    return pytest.param(case, id=f"{case.parent.name}/{case.stem}",
                        marks=[pytest.mark.skip(reason=why)] if why else [])


@pytest.mark.parametrize("mode", ["full", "fast"])
@pytest.mark.parametrize("case", [_param(p) for p in CASES])
def test_cuda_as_the_default_device_changes_no_card(shell, case, mode, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    compare(shell, case, mode, "cuda")
