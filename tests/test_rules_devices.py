"""The device_mismatch family: device-mismatch (message variants, which side is meant, fixes, wording)."""
from __future__ import annotations

import warnings
import weakref

import pytest
import torch
import torch.nn as nn

from cards import card, diagnosis, failed, record_of
from earlier_cells import card_of, fix_runs_clean, lines_of
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
    # kernels that check two arguments by hand (ATen's masked_fill, linalg's solvers)
    ("expected self and mask to be on the same device, but got mask on cpu and self on cuda:0",
     ("cuda:0", "cpu"), "cpu", "mask", None),
    ("Expected b and A to be on the same device, but found b on cpu and A on cuda:0 instead.",
     ("cuda:0", "cpu"), "cpu", "b", None),
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



# -- across cells: the model in one cell, data and helpers in others, %%gradcheck on the last --

SETUP = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ndevice = torch.device('meta')\n"


def _cells_card(shell, cells):
    return card_of(shell, cells, "device-mismatch", raises=RuntimeError)


def test_init_hidden_states_are_made_on_the_models_device_both_of_them(shell):
    cells = [SETUP,
             "class Tagger(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.lstm = nn.LSTM(3, 4, batch_first=True)\n"
             "\n"
             "    def init_hidden(self, batch_size):\n"
             "        return (torch.zeros(1, batch_size, 4),\n"
             "                torch.zeros(1, batch_size, 4))\n"
             "\n"
             "    def forward(self, x, hidden):\n"
             "        return self.lstm(x, hidden)\n",
             "tagger = Tagger().to(device)\nhidden = torch.zeros(1, 2, 4)  # a stale global of the same name\n",
             "%%gradcheck\nstate = tagger.init_hidden(2)\nout, state = tagger(torch.randn(2, 5, 3, device=device), state)\n"]
    d = _cells_card(shell, cells)
    assert (2, 7) in lines_of(d) and (2, 8) in lines_of(d) and (2, 11) in lines_of(d)
    assert "`hidden[0]` and `hidden[1]` on cpu" in d.title and "`state` is what `tagger.init_hidden(2)` returns" in d.why
    (cell,) = d.fix.elsewhere
    assert cell.cell == 2 and cell.source.count("device=self.lstm.weight_ih_l0.device") == 2 and not d.fix.source
    fix_runs_clean(shell, cells, d)


def test_a_tensor_made_in_forward_takes_the_inputs_device_not_a_global(shell):
    cells = [SETUP,
             "class Noisy(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.fc = nn.Linear(4, 4)\n"
             "\n"
             "    def forward(self, x):\n"
             "        noise = torch.randn(x.shape)\n"
             "        return self.fc(x + noise)\n",
             "net = Noisy().to(device)\n",
             "%%gradcheck\ny = net(torch.ones(2, 4, device=device))\n"]
    d = _cells_card(shell, cells)
    assert (2, 7) in lines_of(d) and (2, 8) in lines_of(d)
    assert "noise = torch.randn(x.shape, device=x.device)" in d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


def test_a_positional_encoding_kept_as_a_plain_attribute_becomes_a_buffer(shell):
    cells = [SETUP,
             "class PositionalEncoding(nn.Module):\n"
             "    def __init__(self, d_model, max_len=16):\n"
             "        super().__init__()\n"
             "        pe = torch.zeros(max_len, d_model)\n"
             "        position = torch.arange(max_len).unsqueeze(1).float()\n"
             "        pe[:, 0::2] = torch.sin(position)\n"
             "        pe[:, 1::2] = torch.cos(position)\n"
             "        self.pe = pe.unsqueeze(0)\n"
             "\n"
             "    def forward(self, x):\n"
             "        return x + self.pe[:, :x.size(1)]\n",
             "class Encoder(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.embed = nn.Embedding(10, 4)\n"
             "        self.pos = PositionalEncoding(4)\n"
             "\n"
             "    def forward(self, tokens):\n"
             "        return self.pos(self.embed(tokens))\n",
             "encoder = Encoder().to(device)\n",
             "%%gradcheck\nh = encoder(torch.randint(0, 10, (2, 5), device=device))\n"]
    d = _cells_card(shell, cells)
    assert (2, 8) in lines_of(d) and (2, 11) in lines_of(d)
    assert "`self.pe` is a plain tensor attribute, set on line 8 of In [2]" in d.why
    assert '        self.register_buffer("pe", pe.unsqueeze(0))\n' in d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


def test_a_dict_batch_is_moved_in_its_comprehension(shell):
    cells = [SETUP,
             "class Classifier(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.embed = nn.Embedding(10, 4)\n"
             "\n"
             "    def forward(self, input_ids, attention_mask):\n"
             "        h = self.embed(input_ids)\n"
             "        return (h * attention_mask.unsqueeze(-1)).sum(1)\n",
             "model = Classifier().to(device)\n"
             "batches = [{'input_ids': torch.randint(0, 10, (2, 3)), 'attention_mask': torch.ones(2, 3)}]\n",
             "%%gradcheck\nfor raw in batches:\n    inputs = {k: v for k, v in raw.items()}\n    out = model(**inputs)\n"]
    d = _cells_card(shell, cells)
    assert (4, 3) in lines_of(d) and (2, 8) in lines_of(d)
    assert "`attention_mask` is `inputs[\"attention_mask\"]`, passed in on line 4." in d.why
    assert d.fix.source.splitlines()[2] == "    inputs = {k: v.to(device) for k, v in raw.items()}"
    fix_runs_clean(shell, cells, d)


def test_a_dict_batch_from_a_loader_is_moved_at_the_top_of_the_loop(shell):
    cells = [SETUP + "from torch.utils.data import DataLoader\n",
             "class Pairs(torch.utils.data.Dataset):\n"
             "    def __len__(self):\n"
             "        return 4\n"
             "\n"
             "    def __getitem__(self, i):\n"
             "        return {'x': torch.ones(3), 'y': torch.tensor(1)}\n",
             "model = nn.Linear(3, 2).to(device)\nloader = DataLoader(Pairs(), batch_size=2)\n",
             "%%gradcheck\nfor batch in loader:\n    loss = F.cross_entropy(model(batch['x']), batch['y'])\n"]
    d = _cells_card(shell, cells)
    assert d.fix.source.splitlines()[2] == "    batch = {k: v.to(device) for k, v in batch.items()}"
    fix_runs_clean(shell, cells, d)


def test_a_loss_weight_made_in_an_earlier_cell_moves_where_the_loss_is_made(shell):
    cells = [SETUP,
             "counts = torch.tensor([30.0, 10.0, 5.0])\nweights = counts.sum() / counts\n"
             "criterion = nn.CrossEntropyLoss(weight=weights)\n",
             "model = nn.Linear(4, 3).to(device)\n\n\ndef step(model, x, y, criterion):\n"
             "    return criterion(model(x), y)\n",
             "%%gradcheck\nloss = step(model, torch.randn(6, 4, device=device), torch.zeros(6, dtype=torch.long, "
             "device=device), criterion)\n"]
    d = _cells_card(shell, cells)
    assert (2, 3) in lines_of(d) and (3, 5) in lines_of(d) and "`criterion.weight` on cpu" in d.title
    assert "criterion = nn.CrossEntropyLoss(weight=weights.to(device))" in d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


def test_a_model_made_in_an_earlier_cell_and_never_moved_is_moved_there(shell):
    cells = [SETUP, "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n",
             "def predict(model, x):\n    return model(x).argmax(1)\n",
             "%%gradcheck\npred = predict(model, torch.randn(3, 4, device=device))\n"]
    d = _cells_card(shell, cells)
    assert (2, 1) in lines_of(d)
    assert d.fix.elsewhere[0].source == "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)"
    fix_runs_clean(shell, cells, d)


def test_a_mask_returned_by_a_helper_moves_where_the_helper_uses_it(shell):
    cells = [SETUP + "import numpy as np\n",
             "def causal(n):\n    return torch.from_numpy(np.tril(np.ones((n, n)))) == 1\n\n\n"
             "def masked(scores):\n    return scores.masked_fill(~causal(scores.size(-1)), 0.0)\n",
             "%%gradcheck\nout = masked(torch.randn(2, 3, 3, device=device))\n"]
    d = _cells_card(shell, cells)
    assert (2, 6) in lines_of(d)
    assert "masked_fill((~causal(scores.size(-1))).to(scores.device), 0.0)" in d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


def test_a_tensor_passed_as_an_expression_is_made_on_the_device_in_the_call(shell):
    cells = [SETUP, "def scale(x, w):\n    return x * w\n",
             "%%gradcheck\nw = torch.ones(3, device=device)\nout = scale(torch.ones(3) + 1, w)\n"]
    d = _cells_card(shell, cells)
    assert (2, 2) in lines_of(d) and (3, 3) in lines_of(d)
    assert d.fix.source.splitlines()[2] == "out = scale(torch.ones(3, device=device) + 1, w)" and not d.fix.elsewhere
    fix_runs_clean(shell, cells, d)


def test_a_dict_batch_holding_more_than_tensors_gets_no_fix(shell):
    cells = [SETUP,
             "def pooled(ids, mask, texts):\n    return (ids * mask).sum(1)\n",
             "%%gradcheck\nraw = {'ids': torch.ones(2, 3, device=device), 'mask': torch.ones(2, 3), 'texts': ['a', 'b']}\n"
             "inputs = {k: v for k, v in raw.items()}\nout = pooled(inputs['ids'], inputs['mask'], inputs['texts'])\n"]
    d = _cells_card(shell, cells)
    assert "`mask` on cpu" in d.title
    if d.fix is not None:  # NB: never a fix that fails
        fix_runs_clean(shell, cells, d)


def test_a_model_put_on_the_cpu_on_purpose_in_an_earlier_cell_gets_no_fix(shell):
    cells = [SETUP, "model = nn.Linear(4, 2).to('cpu')\n",
             "%%gradcheck\nout = model(torch.randn(3, 4, device=device))\n"]
    d = _cells_card(shell, cells)
    assert d.fix is None


def test_a_mask_handed_to_a_library_layer_is_made_on_the_inputs_device(shell):
    cells = [SETUP,
             "class Block(nn.Module):\n"
             "    def __init__(self, dim):\n"
             "        super().__init__()\n"
             "        self.layer = nn.TransformerEncoderLayer(dim, 2, 16, batch_first=True)\n"
             "\n"
             "    def forward(self, x):\n"
             "        n = x.size(1)\n"
             "        mask = torch.triu(torch.ones(n, n), diagonal=1).bool()\n"
             "        return self.layer(x, src_mask=mask)\n",
             "block = Block(8).to(device)\n",
             "%%gradcheck\ny = block(torch.randn(2, 5, 8, device=device))\n"]
    d = _cells_card(shell, cells)
    assert (2, 8) in lines_of(d) and (2, 9) in lines_of(d)
    assert "mask = torch.triu(torch.ones(n, n, device=x.device), diagonal=1).bool()" in d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


LOADER = ("model = nn.Linear(4, 2).to(device)\nloader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset("
          "torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4)\n")


def test_a_to_whose_copy_is_thrown_away_keeps_it_every_one(shell):
    cells = [SETUP, LOADER,
             "def train(model, loader):\n    for x, y in loader:\n        x.to(device)\n        y.to(device)\n"
             "        loss = F.cross_entropy(model(x), y)\n",
             "%%gradcheck\ntrain(model, loader)\n"]
    d = _cells_card(shell, cells)
    assert (3, 3) in lines_of(d) and (3, 4) in lines_of(d) and "throws it away" in d.why
    assert "        x = x.to(device)\n        y = y.to(device)\n" in d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


def test_a_batch_of_a_helpers_loop_moves_at_the_top_of_that_loop(shell):
    cells = [SETUP, LOADER,
             "def evaluate(model, loader):\n    hits = 0\n    with torch.no_grad():\n        for x, y in loader:\n"
             "            hits += (model(x).argmax(1) == y).sum()\n    return hits\n",
             "%%gradcheck\nhits = evaluate(model, loader)\n"]
    d = _cells_card(shell, cells)
    assert (3, 4) in lines_of(d) and (3, 5) in lines_of(d)
    assert "            x, y = x.to(device), y.to(device)\n" in d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


def test_a_hidden_state_made_by_an_earlier_cell_is_made_on_the_device_in_init_hidden(shell):
    cells = [SETUP,
             "class RNN(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.gru = nn.GRU(3, 5, batch_first=True)\n\n    def init_hidden(self, n):\n"
             "        h = torch.zeros(1, n, 5)\n        return h\n\n    def forward(self, x, h):\n"
             "        return self.gru(x, h)\n",
             "rnn = RNN().to(device)\nhidden = rnn.init_hidden(2)\n",
             "%%gradcheck\nfor step in range(2):\n    out, hidden = rnn(torch.randn(2, 4, 3, device=device), hidden)\n"]
    d = _cells_card(shell, cells)
    assert (2, 7) in lines_of(d) and "`hidden` is what `rnn.init_hidden(2)` returns, on line 2 of In [3]" in d.why
    assert "        h = torch.zeros(1, n, 5, device=self.gru.weight_ih_l0.device)\n" in d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


def test_layers_kept_in_a_plain_list_become_a_module_list(shell):
    cells = [SETUP,
             "class MLP(nn.Module):\n    def __init__(self, sizes):\n        super().__init__()\n"
             "        self.layers = [nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])]\n\n"
             "    def forward(self, x):\n        for layer in self.layers:\n            x = torch.relu(layer(x))\n"
             "        return x\n",
             "mlp = MLP([4, 8, 2]).to(device)\n",
             "%%gradcheck\ny = mlp(torch.randn(3, 4, device=device))\n"]
    d = _cells_card(shell, cells)
    assert (2, 4) in lines_of(d) and "plain Python list" in d.summary
    assert "        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])\n" in \
        d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


def test_heads_kept_in_a_plain_list_and_called_in_a_comprehension_become_a_module_list(shell):
    """The heads are called in a list comprehension (`[head(x) for head in self.heads]`, marl-offpolicy's MADDPG
    critic): on Python 3.11 the comprehension is a frame of its own, holding `head` but not `self`; the rule reads
    the line's names from both, as Python 3.12 runs it inline."""
    cells = [SETUP,
             "class Critic(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
             "        self.body = nn.Linear(4, 8)\n        self.heads = [nn.Linear(8, 1) for _ in range(n)]\n\n"
             "    def forward(self, x):\n        x = torch.relu(self.body(x))\n"
             "        return torch.cat([head(x) for head in self.heads], 1)\n",
             "critic = Critic(2).to(device)\n",
             "%%gradcheck\nq = critic(torch.randn(3, 4, device=device))\n"]
    d = _cells_card(shell, cells)
    assert (2, 5) in lines_of(d) and (2, 9) in lines_of(d)
    assert "        self.heads = nn.ModuleList([nn.Linear(8, 1) for _ in range(n)])\n" in d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


def test_every_tensor_of_a_dict_a_helper_returns_is_made_on_the_device(shell):
    cells = [SETUP,
             "def encode(rows):\n    ids = torch.tensor(rows)\n"
             "    return {'input_ids': ids, 'attention_mask': torch.ones(ids.shape)}\n",
             "class Pool(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.embed = nn.Embedding(5, 4)\n\n    def forward(self, input_ids, attention_mask):\n"
             "        return (self.embed(input_ids) * attention_mask.unsqueeze(-1)).sum(1)\n",
             "model = Pool().to(device)\n",
             "%%gradcheck\nbatch = encode([[1, 2], [3, 4]])\nout = model(**batch)\n"]
    d = _cells_card(shell, cells)
    assert (2, 2) in lines_of(d) and (2, 3) in lines_of(d)
    fixed = d.fix.elsewhere[0].source
    assert "ids = torch.tensor(rows, device=device)" in fixed and "torch.ones(ids.shape, device=device)" in fixed
    fix_runs_clean(shell, cells, d)


def test_a_pair_unpacked_from_the_state_is_made_on_the_device_where_init_hidden_returns_it(shell):
    cells = [SETUP,
             "class Cell(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.fc = nn.Linear(6, 3)\n"
             "\n"
             "    def forward(self, x, state):\n"
             "        h, c = state\n"
             "        z = torch.cat([x, h], dim=1)\n"
             "        return self.fc(z), c\n"
             "\n"
             "    def init_hidden(self, n):\n"
             "        return (torch.zeros(n, 3),\n"
             "                torch.zeros(n, 3))\n",
             "cell = Cell().to(device)\n",
             "%%gradcheck\nstate = cell.init_hidden(2)\nh, c = cell(torch.randn(2, 3, device=device), state)\n"
             "y = h + c\n"]
    d = _cells_card(shell, cells)
    assert (2, 12) in lines_of(d) and (2, 13) in lines_of(d)
    (fixed,) = d.fix.elsewhere
    assert fixed.source.count("torch.zeros(n, 3, device=self.fc.weight.device)") == 2 and not d.fix.source
    fix_runs_clean(shell, cells, d)


def test_a_table_a_submodule_returns_from_a_plain_attribute_becomes_a_buffer(shell):
    cells = [SETUP,
             "class Positions(nn.Module):\n"
             "    def __init__(self, dim):\n"
             "        super().__init__()\n"
             "        self.table = torch.randn(16, dim)\n"
             "\n"
             "    def forward(self, tokens):\n"
             "        return self.table[: tokens.size(1)].unsqueeze(0)\n"
             "\n"
             "\n"
             "class Encoder(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.embed = nn.Embedding(10, 4)\n"
             "        self.positions = Positions(4)\n"
             "\n"
             "    def forward(self, tokens):\n"
             "        return self.embed(tokens) * 2.0 + self.positions(tokens)\n",
             "encoder = Encoder().to(device)\ntokens = torch.randint(0, 10, (2, 5))\n",
             "%%gradcheck\nout = encoder(tokens.to(device))\n"]
    d = _cells_card(shell, cells)
    assert (2, 4) in lines_of(d)
    assert '        self.register_buffer("table", torch.randn(16, dim))\n' in d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


def test_a_loss_weight_made_in_a_helper_moves_where_the_helper_makes_the_loss(shell):
    cells = [SETUP,
             "def make_loss(labels, weighted):\n"
             "    if weighted:\n"
             "        w = 1.0 / torch.bincount(labels, minlength=3).float()\n"
             "        return nn.CrossEntropyLoss(weight=w)\n"
             "    return nn.CrossEntropyLoss()\n",
             "labels = torch.tensor([0, 1, 2, 2])\nloss_fn = make_loss(labels, True)\n"
             "net = nn.Linear(4, 3).to(device)\n",
             "%%gradcheck\nloss = loss_fn(net(torch.randn(4, 4, device=device)), labels.to(device))\n"]
    d = _cells_card(shell, cells)
    assert (2, 4) in lines_of(d)
    assert "        return nn.CrossEntropyLoss(weight=w.to(device))\n" in d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


def test_an_item_of_the_pair_already_on_the_device_is_left_as_it_is(shell):
    cells = [SETUP,
             "class Cell(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.fc = nn.Linear(6, 3)\n"
             "\n"
             "    def forward(self, x, state):\n"
             "        h, c = state\n"
             "        return self.fc(torch.cat([x, h], dim=1)) + c\n"
             "\n"
             "    def init_hidden(self, n):\n"
             "        return torch.zeros(n, 3), torch.zeros(n, 3, device=self.fc.weight.device)\n",
             "cell = Cell().to(device)\n",
             "%%gradcheck\nstate = cell.init_hidden(2)\nout = cell(torch.randn(2, 3, device=device), state)\n"]
    d = _cells_card(shell, cells)
    (fixed,) = d.fix.elsewhere
    assert fixed.source.count("device=self.fc.weight.device") == 2  # NB: the first item's, and the one it had
    assert "torch.zeros(n, 3, device=self.fc.weight.device), torch.zeros(n, 3, device=self.fc.weight.device)" \
        in fixed.source
    fix_runs_clean(shell, cells, d)


def test_a_mask_made_by_a_factory_and_negated_on_the_line_gets_device_where_it_is_made(shell):
    cells = [SETUP,
             "def biased_scores(q, k):\n"
             "    bias = torch.zeros(q.size(0), k.size(0), device=q.device)\n"
             "    keep = torch.ones(q.size(0), k.size(0), dtype=torch.bool).tril()\n"
             "    bias = bias.masked_fill(keep.logical_not(), float('-inf'))\n"
             "    return q @ k.t() + bias\n",
             "%%gradcheck\nscores = biased_scores(torch.randn(3, 4, device=device), torch.randn(3, 4, device=device))\n"]
    d = _cells_card(shell, cells)
    assert (2, 3) in lines_of(d)
    assert "torch.ones(q.size(0), k.size(0), dtype=torch.bool, device=q.device).tril()" in d.fix.elsewhere[0].source
    fix_runs_clean(shell, cells, d)


# -- layers kept in a plain list / dict (culprit_unregistered.py) --

BLOCKS = ("import torch\nimport torch.nn as nn\n\n\nclass Block(nn.Module):\n    def __init__(self, d):\n"
          "        super().__init__()\n        self.ln = nn.LayerNorm(d)\n\n    def forward(self, x):\n"
          "        return self.ln(x)\n\n\nclass Mixer(nn.Module):\n    def __init__(self, d, n):\n"
          "        super().__init__()\n        self.blocks = []  # the mixing blocks\n        for _ in range(n):\n"
          "            self.blocks.append(Block(d))\n        self.head = nn.Linear(d, 2)\n\n"
          "    def forward(self, x):\n        for b in self.blocks:\n            x = b(x)\n        return self.head(x)\n")


def test_layers_in_a_plain_list_are_named_where_init_assigns_the_list_and_held_in_a_module_list(shell):
    from earlier_cells import card_of, fix_runs_clean, lines_of
    cells = [BLOCKS, "%%gradcheck\nmodel = Mixer(4, 2).to('meta')\nout = model(torch.zeros(3, 4, device='meta'))\n"]
    d = card_of(shell, cells, "device-mismatch", raises=RuntimeError)
    k = d.elsewhere[0].cell
    assert (k, 17) in lines_of(d) and (k, 11) in lines_of(d) and "`Mixer.blocks` is a plain list" in d.title
    fixed = fix_runs_clean(shell, cells, d)
    assert "        self.blocks = nn.ModuleList()  # the mixing blocks\n" in fixed[0]
    assert len(list(shell.user_ns["model"].parameters())) == 6  # NB: the blocks' LayerNorms now registered


def test_layers_in_a_dict_comprehension_are_held_in_a_module_dict(shell):
    from earlier_cells import card_of, fix_runs_clean
    cells = [BLOCKS.replace("        self.blocks = []  # the mixing blocks\n        for _ in range(n):\n"
                            "            self.blocks.append(Block(d))\n",
                            "        self.blocks = {str(i): Block(d) for i in range(n)}\n")
             .replace("for b in self.blocks:", "for b in self.blocks.values():"),
             "%%gradcheck\nmodel = Mixer(4, 2).to('meta')\nout = model(torch.zeros(3, 4, device='meta'))\n"]
    d = card_of(shell, cells, "device-mismatch", raises=RuntimeError)
    fixed = fix_runs_clean(shell, cells, d)
    assert "        self.blocks = nn.ModuleDict({str(i): Block(d) for i in range(n)})\n" in fixed[0]
