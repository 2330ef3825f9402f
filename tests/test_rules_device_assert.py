"""The cuda-device-assert rule: the runtime's message variants, and the calls of the cell whose kernels check
values (the golden cases in tests/cases/cuda-device-assert; a real assert on a GPU in tests/gpu)."""
from __future__ import annotations

import pytest

import grad_magic
from grad_magic.rules.device_assert import parse_device_assert
from gm_shell import run

# torch 2.11 on an H200 (torch.AcceleratorError), verbatim
CUDA_2_11 = ("CUDA error: device-side assert triggered\nSearch for `cudaErrorAssert' in https://docs.nvidia.com/cuda/"
             "cuda-runtime-api/group__CUDART__TYPES.html for more information.\nCUDA kernel errors might be "
             "asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor "
             "debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable "
             "device-side assertions.\n")
CUDA_1_X = ("CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at some "
            "other API call,so the stacktrace below might be incorrect.\nFor debugging consider passing "
            "CUDA_LAUNCH_BLOCKING=1.")
HIP = "HIP error: device-side assert triggered\nHIP kernel errors might be asynchronously reported"
TORCH_1_0 = ("cuda runtime error (59) : device-side assert triggered at /opt/conda/conda-bld/pytorch_1549630534704/"
             "work/aten/src/THCUNN/generic/ClassNLLCriterion.cu:111")


@pytest.mark.parametrize("message, backend", [(CUDA_2_11, "CUDA"), (CUDA_1_X, "CUDA"), (HIP, "HIP"),
                                              (TORCH_1_0, "CUDA")])
def test_the_runtimes_words(message, backend):
    assert parse_device_assert(message).backend == backend


@pytest.mark.parametrize("message", ["CUDA error: out of memory", "CUDA error: an illegal memory access was "
                                     "encountered", "Target 3 is out of bounds.", "index out of range in self"])
def test_other_errors_are_not_it(message):
    assert parse_device_assert(message) is None


def test_the_embedding_inside_a_model_from_an_earlier_cell_is_named(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    shell.user_ns["ASSERT"] = CUDA_2_11
    assert run(shell, "import torch\nfrom torch import nn\n\nclass Tagger(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.words = nn.Embedding(50, 8)\n"
                      "        self.tags = nn.Linear(8, 5)\n\n    def forward(self, ids):\n"
                      "        return self.tags(self.words(ids))\n\ntagger = Tagger()\n").success
    run(shell, "%%gradcheck\nids = torch.randint(0, 50, (4, 7))\nscores = tagger(ids)\n"
               "raise torch.AcceleratorError(ASSERT)\n")
    (d,) = grad_magic.last_diagnoses()
    assert d.kind == "cuda-device-assert" and d.fix is None
    assert "`tagger(ids)` on line 3: `tagger.words` (nn.Embedding, 50 rows) needs every index in its input in 0..49" \
        in d.why, d.why
    assert [s.lineno for s in d.lines] == [3, 4]


def test_making_a_loss_module_is_not_a_call_that_checks(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    shell.user_ns["ASSERT"] = CUDA_1_X
    run(shell, "%%gradcheck\nimport torch\nfrom torch import nn\ncriterion = nn.CrossEntropyLoss()\n"
               "emb = nn.Embedding(10, 2)\nraise RuntimeError(ASSERT)\n")
    (d,) = grad_magic.last_diagnoses()
    assert d.kind == "cuda-device-assert" and "The usual causes" in d.why
    assert [s.lineno for s in d.lines] == [6]
