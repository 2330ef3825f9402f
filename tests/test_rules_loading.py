"""The loading family: load-needs-map-location (message variants, the torch.load call, fixes, wording)."""
from __future__ import annotations

import warnings

import pytest
import torch
import torch.serialization

from cards import card, diagnosis
from earlier_cells import card_of, fix_runs_clean, lines_of
from grad_magic.rules.loading import parse_load_error

CPU_HINT = ("If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.")
NOT_AVAILABLE = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
                 + CPU_HINT)
TOO_FEW = ("Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. Please use "
           "torch.load with map_location to map your storages to an existing device.")

# Every wording from torch 2.1 to 2.13 (reproduced with each release), plus older ones.
# (message, backend, saved index, device count, wrapped in "Weights only load failed")
VARIANTS = [
    (NOT_AVAILABLE, "cuda", None, None, False),  # every version, weights_only or not (>= 2.6)
    # torch 2.1 ... 2.5 with weights_only=True: wrapped in an UnpicklingError
    ("Weights only load failed. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
     "but it can result in arbitrary code execution.Do it only if you get the file from a trusted source. "
     "WeightsUnpickler error: " + NOT_AVAILABLE, "cuda", None, None, True),
    # torch 0.4: the hint said map_location='cpu'
    ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
     "running on a CPU-only machine, please use torch.load with map_location='cpu' to map your storages to the "
     "CPU.", "cuda", None, None, False),
    (TOO_FEW, "cuda", 1, 1, False),
    ("Attempting to deserialize object on a XPU device but torch.xpu.is_available() is False. " + CPU_HINT,
     "xpu", None, None, False),
    ("Attempting to deserialize object on HPU device 3 but torch.hpu.device_count() is 2. Please use "
     "torch.load with map_location to map your storages to an existing device.", "hpu", 3, 2, False),
    ("The NPU device module is not registered. " + CPU_HINT, "npu", None, None, False),
]


@pytest.mark.parametrize("message,backend,index,count,wrapped", VARIANTS, ids=range(len(VARIANTS)))
def test_every_known_wording_is_recognised(message, backend, index, count, wrapped):
    err = parse_load_error(message)
    assert err is not None
    assert (err.backend, err.index, err.count, err.wrapped) == (backend, index, count, wrapped)


@pytest.mark.parametrize("message", [
    "Weights only load failed. This file can still be loaded, to do so you have two options... WeightsUnpickler "
    "error: Unsupported global: GLOBAL torch.nn.modules.linear.Linear was not an allowed global by default.",
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
    "PytorchStreamReader failed reading zip archive: failed finding central directory",
    "Found no NVIDIA driver on your system.",
])
def test_other_errors_are_not_this_kind(message):
    assert parse_load_error(message) is None


def test_real_torch_message_of_this_version_is_recognised(tmp_path):
    path = tmp_path / "t.pt"
    tag = torch.serialization.location_tag
    torch.serialization.location_tag = lambda storage: "cuda:0"
    try:
        torch.save({"w": torch.ones(2)}, path)
    finally:
        torch.serialization.location_tag = tag
    for weights_only in (True, False):
        with pytest.raises(Exception) as info:
            torch.load(path, weights_only=weights_only)
        err = parse_load_error(str(info.value))
        assert err is not None and err.backend == "cuda"


# -- the rule on hand-made records --

def _diagnose(source, message=NOT_AVAILABLE, lineno=3, namespace=None):
    return diagnosis(source, message, lineno, kind="load-needs-map-location",
                     namespace={"torch": torch, **(namespace or {})})


def _fixed_line(d, lineno=3):
    return d.fix.source.splitlines()[lineno - 1]


def test_a_second_gpu_that_is_missing_maps_to_the_first():
    d = _diagnose("%%gradcheck\nimport torch\nsd = torch.load(path)\n", TOO_FEW)
    assert _fixed_line(d) == 'sd = torch.load(path, map_location="cuda:0")'
    assert "only 1 cuda device" in d.title and "device_count() is 1" in d.what


def test_a_positional_map_location_that_names_the_missing_device_is_replaced():
    d = _diagnose("%%gradcheck\nimport torch\nsd = torch.load(path, 'cuda:0')\n")
    assert _fixed_line(d) == "sd = torch.load(path, 'cpu')"


def test_torch_device_literal_is_replaced():
    d = _diagnose("%%gradcheck\nimport torch\nsd = torch.load(path, map_location=torch.device('cuda'))\n")
    assert _fixed_line(d) == "sd = torch.load(path, map_location='cpu')"


def test_a_call_spread_over_lines_gets_the_argument_after_its_last_one():
    d = _diagnose("%%gradcheck\nimport torch\nsd = torch.load(\n    path,\n    weights_only=True,\n)\n")
    assert d.fix.source.splitlines()[4] == '    weights_only=True, map_location="cpu",'


def test_keyword_arguments_passed_through_get_no_fix():
    d = _diagnose("%%gradcheck\nimport torch\nsd = torch.load(path, **opts)\n")
    assert d.fix is None and "**kwargs" in d.why


def test_a_device_variable_naming_the_missing_device_is_not_used():
    d = _diagnose("%%gradcheck\nimport torch\nsd = torch.load(path)\n", namespace={"device": "cuda"})
    assert _fixed_line(d) == 'sd = torch.load(path, map_location="cpu")'


def test_a_device_variable_from_an_earlier_cell_is_used():
    d = _diagnose("%%gradcheck\nimport torch\nsd = torch.load(path)\n", namespace={"dev": torch.device("cpu")})
    assert _fixed_line(d) == "sd = torch.load(path, map_location=dev)"


def test_a_device_variable_assigned_after_the_load_is_not_used():
    d = _diagnose("%%gradcheck\nimport torch\nsd = torch.load(path)\ndevice = 'cpu'\n",
                  namespace={"device": "cpu"})
    assert _fixed_line(d) == 'sd = torch.load(path, map_location="cpu")'


def test_two_loads_on_the_line_get_no_fix():
    d = _diagnose("%%gradcheck\nimport torch\na, b = torch.load(p), torch.load(q)\n")
    assert d.fix is None


def test_the_wrapped_message_says_weights_only_is_not_the_cause():
    message = "Weights only load failed. Re-running ... WeightsUnpickler error: " + NOT_AVAILABLE
    d = _diagnose("%%gradcheck\nimport torch\nsd = torch.load(path, weights_only=True)\n", message)
    assert "not weights_only" in d.why and d.fix is not None


def test_the_rule_never_raises_on_a_cell_that_does_not_parse():
    d = _diagnose("%%gradcheck\nthis is not python(\n", lineno=2)
    assert d.fix is None and not d.notes


# -- through the shell --

def test_chinese_card(shell, monkeypatch, tmp_path):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    path = tmp_path / "model.pth"
    tag = torch.serialization.location_tag
    torch.serialization.location_tag = lambda storage: "cuda:0"
    try:
        torch.save(torch.nn.Linear(3, 2).state_dict(), path)
    finally:
        torch.serialization.location_tag = tag
    shell.user_ns["path"] = str(path)
    with warnings.catch_warnings():
        d = card(shell, "%%gradcheck\nimport torch\nstate_dict = torch.load(path)\n", "load-needs-map-location",
                 raises=RuntimeError)
    assert d.language == "zh"
    assert "没有 cuda 设备" in d.title and "第 3 行" in d.what
    assert "map_location=\"cpu\"" in d.fix.description and "第 3 行" in d.fix.description



def test_a_load_in_a_helper_of_an_earlier_cell_gets_map_location_there(shell, tmp_path):
    path = tmp_path / "model.pth"
    tag = torch.serialization.location_tag
    torch.serialization.location_tag = lambda storage: "cuda:0"
    try:
        torch.save(torch.nn.Linear(3, 2).state_dict(), path)
    finally:
        torch.serialization.location_tag = tag
    cells = [f"import torch\nckpt_path = {str(path)!r}\n",
             "def load_weights(model, path):\n    state = torch.load(path)\n    model.load_state_dict(state)\n",
             "%%gradcheck\nmodel = torch.nn.Linear(3, 2)\nload_weights(model, ckpt_path)\n"]
    with warnings.catch_warnings():
        d = card_of(shell, cells, "load-needs-map-location", raises=RuntimeError)
        assert (2, 2) in lines_of(d) and (3, 3) in lines_of(d) and "line 2 of In [2]" in d.fix.description
        assert d.fix.elsewhere[0].source.splitlines()[1] == '    state = torch.load(path, map_location="cpu")'
        fix_runs_clean(shell, cells, d)
