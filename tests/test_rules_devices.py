"""The device_mismatch family: device-mismatch (message variants, which side is meant, fixes, wording)."""
from __future__ import annotations

import warnings
import weakref

import pytest
import torch
import torch.nn as nn

from cards import card, diagnosis, failed, record_of
from grad_magic.engine import diagnose
from grad_magic.record import TensorSnapshot
from grad_magic.render import Card
from grad_magic.rules.device_mismatch.culprit import same_device
from grad_magic.rules.device_mismatch.message import parse_device_error

SAME = "Expected all tensors to be on the same device"

# Every wording of torch 2.1 ... 2.13 (reproduced with each release where a CPU can raise it, the rest
# checked in the .so files and ATen's sources), and the older ones still quoted in forums.
# (message, devices in the message's order, the argument's device when torch singles one out, arg, kernel)
VARIANTS = [
    # torch >= 2.8, the dispatcher's check (aten/src/ATen/core/adaption.cpp)
    (f"{SAME}, but got mat1 is on cpu, different from other tensors on cuda:0 (when checking argument in "
     "method wrapper_CUDA_addmm)", ("cuda:0", "cpu"), "cpu", "mat1", "addmm"),
    (f"{SAME}, but got index is on cuda:1, different from other tensors on cuda:0 (when checking argument in "
     "method wrapper_CUDA__index_select)", ("cuda:0", "cuda:1"), "cuda:1", "index", "index_select"),
    (f"{SAME}, but got mat2 is on cpu, different from other tensors on meta (when checking argument in method "
     "wrapper_Meta_mm)", ("meta", "cpu"), "cpu", "mat2", "mm"),
    # torch 1.10 ... 2.7, the same check
    (f"{SAME}, but found at least two devices, cuda:0 and cpu! (when checking argument for argument mat1 in "
     "method wrapper_CUDA_addmm)", ("cuda:0", "cpu"), "cpu", "mat1", "addmm"),
    (f"{SAME}, but found at least two devices, cuda:0 and cpu! (when checking argument for argument hx in "
     "method wrapper_CUDA___cudnn_rnn)", ("cuda:0", "cpu"), "cpu", "hx", "_cudnn_rnn"),
    (f"{SAME}, but found at least two devices, cpu and cuda:0! (when checking argument for argument condition "
     "in method wrapper_CUDA_self_where)", ("cpu", "cuda:0"), "cuda:0", "condition", "where"),
    # torch 1.9 ("arugment") and 1.8 ("same common device")
    (f"{SAME}, but found at least two devices, cuda:0 and cpu! (when checking arugment for argument mat1 in "
     "method wrapper_addmm)", ("cuda:0", "cpu"), "cpu", "mat1", "addmm"),
    ("Expected all tensors to be on the same common device, but found at least two devices, cuda:0 and cpu! "
     "(when checking arugment for argument target in method wrapper_nll_loss_forward)", ("cuda:0", "cpu"), "cpu",
     "target", "nll_loss_forward"),
    # TensorIterator (element-wise ops) and fake tensors: every version, no argument named
    (f"{SAME}, but found at least two devices, cuda:0 and cpu!", ("cuda:0", "cpu"), None, None, None),
    ("Unhandled FakeTensor Device Propagation for aten.sub.Tensor, found two different devices cuda:0, cpu",
     ("cuda:0", "cpu"), None, None, "aten.sub.Tensor"),
    # decompositions and meta kernels (torch._prims_common.check_same_device): what a CPU raises with meta
    ("Tensor on device meta is not on the expected device cpu!", ("cpu", "meta"), None, None, None),
    ("Tensor on device cpu is not on the expected device cuda:0!", ("cuda:0", "cpu"), None, None, None),
    # RNN, LSTM, GRU
    ("Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at "
     "cpu", ("cuda:0", "cpu"), None, "hidden", None),
    ("Input and parameter tensors are not at the same device, found input tensor at cpu and parameter tensor "
     "at cuda:0", ("cpu", "cuda:0"), None, "parameter", None),
    # CPU kernels that check by hand
    (f"{SAME}. addmm: expected 'mat2' to be a CPU tensor, but got tensor on cuda:0", ("cpu", "cuda:0"),
     "cuda:0", "mat2", "addmm"),
    (f"{SAME}. addmm expected 't' to be CPU tensor, but got tensor on cuda:0", ("cpu", "cuda:0"), "cuda:0", "t",
     "addmm"),
    (f"{SAME}. addmm: expected 'mat1' to be CUDA, but got CPU", ("cuda", "cpu"), "cpu", "mat1", "addmm"),
    ("add: expected 'other' to be a CPU tensor, but got a CUDA tensor", ("cpu", "cuda"), "cuda", "other", "add"),
    ("add: expected 'other' to be a CPU tensor, but got tensor on device: cuda:0", ("cpu", "cuda:0"), "cuda:0",
     "other", "add"),
    # torch 1.x
    ("Expected object of device type cuda but got device type cpu for argument #1 'self' in call to _th_addmm",
     ("cuda", "cpu"), "cpu", "self", "_th_addmm"),
    # cudnn (checkSameGPU): indices, -1 is the CPU
    ("Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'; but "
     "device 0 does not equal 1 (while checking arguments for cudnn_convolution)", ("cuda:0", "cuda:1"), "cuda:1",
     "weight", "cudnn_convolution"),
    ("Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'; but "
     "device 0 does not equal -1 (while checking arguments for cudnn_convolution)", ("cuda:0", "cpu"), "cpu",
     "weight", "cudnn_convolution"),
    ("Expected divisor (b) to be on the same device (cpu) as dividend (a), but it is found on meta!",
     ("cpu", "meta"), "meta", None, None),
    ("indices should be either on cpu or on the same device as the indexed tensor (cuda:0)", ("cuda:0",), None,
     None, None),
    # PyTorch Geometric's torch_scatter / torch_sparse
    ("All input tensors must be on the same device. Received cuda:0 and cpu", ("cuda:0", "cpu"), None, None, None),
]


@pytest.mark.parametrize("message,devices,odd,arg,method", VARIANTS, ids=range(len(VARIANTS)))
def test_every_known_wording_is_recognised(message, devices, odd, arg, method):
    err = parse_device_error(message)
    assert err is not None
    assert (err.devices, err.odd, err.arg, err.method) == (devices, odd, arg, method)
    assert not err.grad


@pytest.mark.parametrize("message,devices", [
    ("attempting to assign a gradient with device type 'meta' to a tensor with device type 'cpu'. Please ensure "
     "that the gradient and the tensor are on the same device", ("cpu", "meta")),
    ("attempting to assign a gradient located on device with index '1' to a tensor located on device with index "
     "'0'. Please ensure that the gradient and the tensor are on the same device", ("cuda:0", "cuda:1")),
])
def test_a_gradient_on_another_device_is_recognised(message, devices):
    err = parse_device_error(message)
    assert err.grad and err.devices == devices


@pytest.mark.parametrize("message", [
    "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
    "mat1 and mat2 must have the same dtype, but got Long and Float",
    "Input type (float) and bias type (c10::Half) should be the same",
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.",
    "one of the variables needed for gradient computation has been modified by an inplace operation",
])
def test_other_errors_are_not_this_kind(message):
    assert parse_device_error(message) is None


@pytest.mark.parametrize("make", [
    lambda: torch.cat([torch.ones(2, device="meta"), torch.ones(2)]),
    lambda: nn.Linear(2, 3, device="meta")(torch.ones(4, 2)),
    lambda: nn.LSTM(2, 3)(torch.ones(4, 1, 2), (torch.zeros(1, 1, 3, device="meta"),) * 2),
    lambda: nn.LSTM(2, 3, device="meta")(torch.ones(4, 1, 2)),
], ids=["cat", "linear", "lstm-hidden", "lstm-parameters"])
def test_real_torch_messages_of_this_version_are_recognised(make):
    # NB: a first meta op may import sympy, which adds a warning filter
    with warnings.catch_warnings(), pytest.raises(RuntimeError) as info:
        make()
    err = parse_device_error(str(info.value))
    assert err is not None and set(err.devices) == {"cpu", "meta"}


def test_cuda_means_the_current_cuda_device():
    assert same_device("cuda", "cuda:0") and same_device("cuda:1", "cuda")
    assert not same_device("cuda:0", "cuda:1") and not same_device("cpu", "meta")


# -- the rule on hand-made records (a GPU's messages on a CPU) --

def _snap(t: torch.Tensor, device: str) -> TensorSnapshot:
    return TensorSnapshot(ident=id(t), shape=tuple(t.shape), dtype="float32", device=device, version=0,
                          requires_grad=t.requires_grad, is_leaf=True, ref=weakref.ref(t))


def _diagnose(source, message, lineno, targets=(), namespace=None, op="linear"):
    return diagnosis(source, message, lineno, kind="device-mismatch", namespace=namespace, error_locals=namespace,
                     failed_ops=[failed(op, lineno, targets)] if targets else [])


def test_the_new_wording_with_a_model_on_another_device_moves_the_input():
    model = nn.Linear(3, 2, device="meta")
    inputs = torch.randn(10, 3)
    source = ("%%gradcheck\nimport torch\nmodel = torch.nn.Linear(3, 2).to('meta')\ninputs = torch.randn(10, 3)\n"
              "outputs = model(inputs)\n")
    message = (f"{SAME}, but got input is on cpu, different from other tensors on meta (when checking argument "
               "in method wrapper_Meta_addmm)")
    ns = {"torch": torch, "model": model, "inputs": inputs}
    d = _diagnose(source, message, 5, [_snap(inputs, "cpu"), _snap(model.weight, "meta"),
                                       _snap(model.bias, "meta")], ns)
    assert d.title == "`linear` got tensors on two devices: `inputs` on cpu, `model`'s parameters on meta"
    assert "points at its `input` argument, on cpu" in d.what
    assert d.fix.source.splitlines()[3] == "inputs = torch.randn(10, 3, device=model.weight.device)"


def test_two_gpus_and_no_device_variable_get_no_fix():
    a, b = torch.ones(2), torch.ones(2)
    message = f"{SAME}, but found at least two devices, cuda:0 and cuda:1!"
    d = _diagnose("%%gradcheck\nc = a + b\n", message, 2, [_snap(a, "cuda:0"), _snap(b, "cuda:1")],
                  {"a": a, "b": b}, op="add")
    assert d.fix is None
    assert "not clear" in d.why and "cuda:0 and cuda:1" in d.why
    assert "not clear" in d.summary


def test_a_module_split_over_two_devices_gets_no_fix():
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    x = torch.ones(1, 2)
    message = f"{SAME}, but found at least two devices, cuda:0 and cpu!"
    d = _diagnose("%%gradcheck\ny = model(x)\n", message, 2,
                  [_snap(x, "cuda:0"), _snap(model[1].weight, "cpu"), _snap(model[0].weight, "cuda:0")],
                  {"model": model, "x": x})
    assert d.fix is None


def test_nothing_recorded_still_names_the_tensors_on_the_line():
    a, b = torch.ones(2, device="meta"), torch.ones(2)
    d = _diagnose("%%gradcheck\nc = a + b\n", "Tensor on device cpu is not on the expected device meta!", 2,
                  namespace={"a": a, "b": b})
    assert {t.name for t in d.tensors} == {"a", "b"}
    assert "`b` on cpu" in d.title and d.fix is not None and "b.to(a.device)" in d.fix.source


def test_a_gradient_on_another_device_gets_no_fix():
    p, g = nn.Parameter(torch.ones(2)), torch.ones(2, device="meta")
    message = ("attempting to assign a gradient with device type 'meta' to a tensor with device type 'cpu'. "
               "Please ensure that the gradient and the tensor are on the same device")
    d = _diagnose("%%gradcheck\np.grad = g\n", message, 2, namespace={"p": p, "g": g})
    assert d.fix is None and ".grad" in d.why


def test_a_crashing_lookup_never_raises_from_the_rule():
    message = f"{SAME}, but found at least two devices, cuda:0 and cpu!"
    found = diagnose(record_of("%%gradcheck\nthis is not python(\n", message, 2), {}, "en")
    assert found[0].kind == "device-mismatch" and not found[0].notes


# -- through the shell --

def _card(shell, cell: str):
    return card(shell, cell, "device-mismatch", raises=RuntimeError)


def test_an_intermediate_result_on_the_odd_device_gets_no_fix(shell):
    d = _card(shell, "%%gradcheck\nimport torch\nmodel = torch.nn.Linear(2, 2)\n"
                     "y = torch.cat([model.weight, torch.zeros(1, 2, device='meta')])\n")
    assert d.fix is None and "intermediate result" in d.why


def test_the_device_variable_wins_over_the_model(shell):
    d = _card(shell, "%%gradcheck\nimport torch\ndevice = 'meta'\nmodel = torch.nn.Linear(2, 2)\n"
                     "x = torch.ones(3, 2, device=device)\ny = model(x)\n")
    assert d.fix.source.splitlines()[3] == "model = torch.nn.Linear(2, 2).to(device)"


def test_a_model_put_on_its_device_explicitly_gets_no_fix(shell):
    d = _card(shell, "%%gradcheck\nimport torch\ndevice = 'meta'\nmodel = torch.nn.Linear(2, 2).to('cpu')\n"
                     "y = model(torch.ones(3, 2, device=device))\n")
    assert d.fix is None


def test_an_expression_is_wrapped_before_moving_a_model(shell):
    d = _card(shell, "%%gradcheck\nimport torch\nimport torch.nn as nn\ndevice = 'meta'\n"
                     "model = nn.Linear(2, 2) if True else None\ny = model(torch.ones(3, 2, device=device))\n")
    assert d.fix.source.splitlines()[4] == "model = (nn.Linear(2, 2) if True else None).to(device)"


def test_a_loop_header_on_one_line_gets_no_fix(shell):
    d = _card(shell, "%%gradcheck\nimport torch\nw = torch.ones(2, device='meta')\n"
                     "for x in [torch.ones(2)]: y = x * w\n")
    assert d.fix is None


def test_a_factory_call_without_arguments_gets_device_alone(shell):
    d = _card(shell, "%%gradcheck\nimport torch\nw = torch.ones(2, device='meta')\n"
                     "x = torch.tensor(2.0).expand(2).clone()\ny = x * w\n")
    assert d.fix is not None
    assert d.fix.source.splitlines()[3] == "x = torch.tensor(2.0, device=w.device).expand(2).clone()"


def test_a_device_that_would_be_named_before_it_exists_is_not_used(shell):
    d = _card(shell, "%%gradcheck\nimport torch\nx = torch.ones(2)\nw = torch.ones(2, device='meta')\n"
                     "y = x * w\n")
    assert d.fix.source.splitlines()[4] == "y = x.to(w.device) * w"


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    d = _card(shell, "%%gradcheck\nimport torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 2).to('meta')\n"
                     "inputs = torch.randn(10, 3)\noutputs = model(inputs)\n")
    assert d.language == "zh"
    assert "`inputs` 在 cpu 上" in d.title and "`model` 的参数在 meta 上" in d.title
    assert "第 5 行" in d.why and "默认设备" in d.why
    assert "device=model.weight.device" in d.fix.description and "第 5 行" in d.fix.description
    assert "发生了什么" in str(Card(d))

