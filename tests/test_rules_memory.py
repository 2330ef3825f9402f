"""The memory family: cuda-oom (allocator message variants, largest tensors, the running-total fix, wording)."""
from __future__ import annotations

import re
import time

import pytest
import torch

import grad_magic
from grad_magic import catalog
from grad_magic.rules.memory import parse_oom
from gm_shell import run

# c10/cuda/CUDACachingAllocator.cpp, torch >= 2.1 (2.13 verbatim; the values are an example)
CUDA_NEW = ("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which "
            "1.23 GiB is free. Including non-PyTorch memory, this process has 77.91 GiB memory in use. Of the "
            "allocated memory 76.50 GiB is allocated by PyTorch, and 1.02 GiB is reserved by PyTorch but "
            "unallocated. If reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
            "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
# torch 1.x ... 2.0
CUDA_OLD = ("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 1; 15.78 GiB total capacity; 14.56 GiB already "
            "allocated; 3.12 MiB free; 14.73 GiB reserved in total by PyTorch) If reserved memory is >> allocated "
            "memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory "
            "Management and PYTORCH_CUDA_ALLOC_CONF")
MPS = ("MPS backend out of memory (MPS allocated: 17.89 GB, other allocations: 2.30 MB, max allowed: 18.13 GB). "
       "Tried to allocate 256.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper "
       "limit for memory allocations (may cause system failure).")
XPU = "XPU out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 15.11 GiB."
CPU_NEW = ("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried "
           "to allocate 4611686018427387904 bytes. Error code 12 (Cannot allocate memory)")  # 2.13
CPU_OLD = ("[enforce fail at CPUAllocator.cpp:68] . DefaultCPUAllocator: can't allocate memory: you tried to "
           "allocate 1073741824 bytes. Error code 12 (Cannot allocate memory)")  # torch 1.x

VARIANTS = [  # (message, device, index, size)
    (CUDA_NEW, "CUDA", 0, "2.00 GiB"),
    (CUDA_OLD, "CUDA", 1, "20.00 MiB"),
    (MPS, "MPS", None, "256.00 MB"),
    (XPU, "XPU", 0, "1.50 GiB"),
    ("CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported", "CUDA", None, ""),
    (CPU_NEW, "CPU", None, "4294967296.0 GiB"),
    (CPU_OLD, "CPU", None, "1.0 GiB"),
]


@pytest.mark.parametrize("message,device,index,size", VARIANTS, ids=range(len(VARIANTS)))
def test_every_known_wording_is_recognised(message, device, index, size):
    err = parse_oom(message)
    assert err is not None
    assert (err.device, err.index, err.size) == (device, index, size)


@pytest.mark.parametrize("message", [
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
    "CUDA error: device-side assert triggered",
    "out of memory",
])
def test_other_errors_are_not_this_kind(message):
    assert parse_oom(message) is None


def test_real_cpu_allocator_message_of_this_version_is_recognised():
    with pytest.raises(RuntimeError) as info:
        torch.empty(2 ** 62, dtype=torch.uint8)
    err = parse_oom(str(info.value))
    assert err is not None and err.device == "CPU"


def test_out_of_memory_error_is_a_runtime_error():
    assert issubclass(torch.OutOfMemoryError, RuntimeError)


def test_regexes_are_linear_on_a_megabyte():
    text = "CUDA out of memor" + "y" * 1_000_000 + "Tried to allocate " + "9" * 1_000_000
    started = time.perf_counter()
    parse_oom(text)
    parse_oom("a" * 1_000_000)
    assert time.perf_counter() - started < 1.0


# -- through the shell --

CELL = '''%%gradcheck
import torch
big = torch.zeros(256, 256)
small = torch.zeros(3)
raise torch.OutOfMemoryError(MESSAGE)
'''


@pytest.mark.parametrize("message,device,index,size", VARIANTS[:4], ids=range(4))
def test_card_names_the_device_size_and_largest_tensor(shell, monkeypatch, message, device, index, size):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    shell.user_ns["MESSAGE"] = message
    result = run(shell, CELL)
    assert isinstance(result.error_in_exec, RuntimeError)
    d = grad_magic.last_diagnosis()
    assert d.kind == "cuda-oom" and d.fix is None
    assert size in d.summary
    assert d.tensors[0].name == "big" and d.tensors[0].shape == "(256, 256)"
    assert "`big` (256, 256) 256.0 KiB" in d.why
    assert "torch.no_grad()" in d.why and ".item()" in d.why and "empty_cache" in d.why


def test_running_total_gets_item(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    shell.user_ns["MESSAGE"] = CUDA_NEW
    cell = ("%%gradcheck\nimport torch\nw = torch.ones(3, requires_grad=True)\ntotal = 0\n"
            "for i in range(3):\n    loss = (w * i).sum()\n    total += loss  # running\n"
            "raise torch.OutOfMemoryError(MESSAGE)\n")
    run(shell, cell)
    d = grad_magic.last_diagnosis()
    assert d.kind == "cuda-oom"
    assert "`total += loss` on line 7" in d.why and "AddBackward0" in d.why
    assert d.fix is not None
    assert "    total += loss.item()  # running\n" in d.fix.source
    assert d.fix.source.replace("loss.item()", "loss") == cell


def test_a_total_of_plain_numbers_gets_no_fix(shell):
    shell.user_ns["MESSAGE"] = CUDA_NEW
    run(shell, "%%gradcheck\nimport torch\ntotal = 0\nfor i in range(3):\n    total += i\n"
               "raise torch.OutOfMemoryError(MESSAGE)\n")
    d = grad_magic.last_diagnosis()
    assert d.kind == "cuda-oom" and d.fix is None and "running total" not in d.why


def test_a_sum_expression_added_gets_no_fix(shell):
    shell.user_ns["MESSAGE"] = CUDA_NEW
    run(shell, "%%gradcheck\nimport torch\nw = torch.ones(3, requires_grad=True)\ntotal = 0\n"
               "for i in range(3):\n    total += w.sum() * i\nraise torch.OutOfMemoryError(MESSAGE)\n")
    d = grad_magic.last_diagnosis()
    assert d.kind == "cuda-oom" and d.fix is None and "`total += w.sum() * i`" in d.why


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    shell.user_ns["MESSAGE"] = CUDA_NEW
    run(shell, "%%gradcheck\nimport torch\nraise torch.OutOfMemoryError(MESSAGE)\n")
    d = grad_magic.last_diagnosis()
    assert d.kind == "cuda-oom" and d.language == "zh"
    assert "内存不足" in d.title and "第 3 行" in d.what


def test_every_memory_message_has_chinese_text():
    keys = [k for k in catalog.MESSAGES if k.startswith("memory.")]
    assert len(keys) >= 10
    for key in keys:
        if key != "memory.oom.size":
            assert re.search(r"[\u4e00-\u9fff]", catalog.MESSAGES[key]["zh"]), key
