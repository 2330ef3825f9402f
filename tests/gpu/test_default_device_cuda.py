"""`torch.set_default_device("cuda")` changes no card: the golden cases' tensors really on the GPU (see
tests/test_default_device.py, which runs the same comparison with "cpu")."""
from __future__ import annotations

import pytest
import torch

from test_default_device import CASES, compare

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


@pytest.mark.parametrize("mode", ["full", "fast"])
@pytest.mark.parametrize("case", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_cuda_as_the_default_device_changes_no_card(shell, case, mode, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    compare(shell, case, mode, "cuda")
