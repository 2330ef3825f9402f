"""The dtypes family: target-dtype and dtype-mismatch (message variants, which argument is odd, fixes, wording)."""
from __future__ import annotations

import time

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import grad_magic
from grad_magic.engine import diagnose
from grad_magic.rules.dtypes.message import (MISMATCH, DtypeMismatchError, TargetDtypeError, parse_dtype_mismatch,
                                             parse_target_dtype, torch_dtype)
from cards import diagnosis, record_of
from earlier_cells import card_of, fix_runs_clean, lines_of
from gm_shell import run


def _raised(fn) -> str:
    with pytest.raises(Exception) as info:
        fn()
    return str(info.value)


# -- the messages: torch 2.13's own, reproduced here, and older wordings written out --

def test_torch_2_13_target_messages_are_recognised():
    logits = torch.randn(4, 3)
    assert parse_target_dtype(_raised(lambda: F.cross_entropy(logits, torch.tensor([0., 1., 2., 0.])))) == \
        TargetDtypeError("int64", "float32", True)
    assert parse_target_dtype(_raised(lambda: F.nll_loss(logits, torch.zeros(4, dtype=torch.float64)))) == \
        TargetDtypeError("int64", "float64", True)
    # 1-D scores with a 0-d float target: not taken as probabilities, refused as a class number
    assert parse_target_dtype(_raised(lambda: F.cross_entropy(torch.randn(3), torch.tensor(1.)))) == \
        TargetDtypeError("int64", "float32", True)
    assert parse_target_dtype(_raised(lambda: F.binary_cross_entropy(torch.rand(4), torch.tensor([0, 1, 1, 0])))) \
        == TargetDtypeError("float32", "int64", False)
    assert parse_target_dtype(_raised(lambda: F.binary_cross_entropy_with_logits(
        torch.randn(4), torch.tensor([0, 1, 1, 0])))) == TargetDtypeError("float32", "int64", False)


@pytest.mark.parametrize("message,expected", [
    ("expected target dtype to be Long or Byte, but got Int", ("int64", "int32", True)),  # 2.12+
    ("expected scalar type Long but found Float", ("int64", "float32", False)),  # nll_loss, torch 1.7 ... 2.11
    ("Expected object of scalar type Long but got scalar type Float for argument #2 'target' in call to "
     "_thnn_nll_loss_forward", ("int64", "float32", True)),  # torch 1.0 ... 1.6
    ("\"nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for 'Float'",
     ("int64", "float32", True)),  # CUDA, torch 1.10 ... 2.11
    ("Found dtype Int but expected Float", ("float32", "int32", False)),
    ("Found dtype Bool but expected Float", ("float32", "bool", False)),
])
def test_older_target_messages(message, expected):
    assert parse_target_dtype(message) == TargetDtypeError(*expected)


@pytest.mark.parametrize("message", [
    "Found dtype Double but expected Float",  # a float64 target: dtype-mismatch's
    "Found dtype Float but expected Long",  # integer scores into BCE: dtype-mismatch's
    "expected scalar type Float but found Double",
    "Expected object of scalar type Float but got scalar type Double for argument #2 'mat2' in call to _th_mm",
    "Target 5 is out of bounds.",
])
def test_not_target_messages(message):
    assert parse_target_dtype(message) is None


def test_torch_2_13_mismatch_messages_are_recognised():
    xd = torch.randn(4, 3, dtype=torch.float64)
    cases = [
        (lambda: nn.Linear(3, 2)(xd), ("float64", "float32")),
        (lambda: xd @ torch.randn(3, 2), ("float64", "float32")),
        (lambda: nn.Conv2d(3, 4, 3)(torch.randn(1, 3, 8, 8, dtype=torch.float64)), ("float64", "float32")),
        (lambda: nn.Conv2d(3, 4, 3, bias=False)(torch.randn(1, 3, 8, 8, dtype=torch.float64)),
         ("float64", "float32")),  # "expected scalar type Double but found Float"
        (lambda: torch.dot(torch.randn(3, dtype=torch.float64), torch.randn(3)), ("float64", "float32")),
        (lambda: F.binary_cross_entropy(torch.rand(4), torch.rand(4, dtype=torch.float64)), ("float64", "float32")),
        (lambda: nn.LayerNorm(3)(xd), (None, None)),
        (lambda: nn.GRU(3, 4)(torch.randn(2, 1, 3, dtype=torch.float64)), ("float64", "float32")),
        (lambda: F.cross_entropy(torch.randint(0, 3, (4, 3)), torch.tensor([0, 1, 2, 0])), ("int64", "float32")),
    ]
    for fn, (a, b) in cases:
        said = parse_dtype_mismatch(_raised(fn))
        assert said is not None and {said.a, said.b} == {a, b}


@pytest.mark.parametrize("message,expected", [
    ("Input type (torch.DoubleTensor) and weight type (torch.FloatTensor) should be the same",
     ("float64", "float32", False)),  # torch 1.x
    ("Input type (c10::Half) and bias type (float) should be the same", ("float16", "float32", False)),
    ("expected scalar type Float but found Double", ("float64", "float32", False)),  # torch 1.x, most ops
    ("mat1 and mat2 must have the same dtype", (None, None, False)),  # torch 1.13 ... 2.0
    ("RuntimeError: \"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'", ("int64", "float32", True)),
    ("\"host_softmax\" not implemented for 'Long'", ("int64", "float32", True)),  # CUDA / torch 1.x
])
def test_older_mismatch_messages(message, expected):
    assert parse_dtype_mismatch(message) == DtypeMismatchError(*expected)


@pytest.mark.parametrize("message", [
    "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same",  # devices
    "Input type (torch.FloatTensor) and weight type (torch.FloatTensor) should be the same",
    "\"addmm_impl_cpu_\" not implemented for 'Half'",
    "result type Float can't be cast to the desired output type Long",
])
def test_not_mismatch_messages(message):
    assert parse_dtype_mismatch(message) is None


def test_dtype_names():
    assert [torch_dtype(t) for t in ("Double", "double", "c10::Half", "torch.cuda.DoubleTensor", "torch.float64",
                                     "Long", "weird")] == \
        ["float64", "float64", "float16", "float64", "float64", "int64", None]


def test_regexes_are_linear_on_a_huge_message():
    message = "Found dtype " + "a" * 1_000_000 + " \"" + "log_softmax" * 50_000 + "x" * 100_000
    start = time.perf_counter()
    parse_target_dtype(message)
    parse_dtype_mismatch(message)
    for pattern in MISMATCH:
        pattern.search("(" * 500_000 + "Input type (" * 50_000)
    assert time.perf_counter() - start < 5


# -- the rules on hand-made records: an older torch's message on a line of this cell --

MODULES = {"torch": torch, "F": F, "nn": nn}


def test_old_nll_message_with_a_float_target_is_target_dtype():
    src = "%%gradcheck\nimport torch\nloss = F.cross_entropy(scores, y)\n"
    ns = {"scores": torch.randn(2, 3), "y": torch.zeros(2)}
    d = diagnosis(src, "expected scalar type Long but found Float", 3, kind="target-dtype",
                  namespace={**MODULES, **ns}, error_locals=ns)
    assert d.names == ("y",) and d.fix.source.splitlines()[2] == "loss = F.cross_entropy(scores, y.long())"


def test_old_expected_long_message_without_a_loss_is_dtype_mismatch():
    src = "%%gradcheck\nimport torch\nout = counts @ w\n"
    ns = {"counts": torch.zeros(2, 3, dtype=torch.long), "w": torch.randn(3, 1)}
    d = diagnosis(src, "expected scalar type Long but found Float", 3, kind="dtype-mismatch",
                  namespace={**MODULES, **ns}, error_locals=ns)
    assert d.names == ("counts",) and d.fix.source.splitlines()[2] == "out = counts.float() @ w"


def test_found_long_on_bce_is_the_target_when_the_target_is_long():
    src = "%%gradcheck\nimport torch\nloss = F.binary_cross_entropy(probs, labels)\n"
    ns = {"probs": torch.rand(4), "labels": torch.ones(4, dtype=torch.long)}
    d = diagnosis(src, "Found dtype Long but expected Float", 3, kind="target-dtype",
                  namespace={**MODULES, **ns}, error_locals=ns)
    assert d.names == ("labels",) and "labels.float()" in d.fix.source


def test_found_long_on_bce_is_not_the_target_when_the_input_is_long():
    src = "%%gradcheck\nimport torch\nloss = F.binary_cross_entropy(hits, probs)\n"
    ns = {"hits": torch.ones(4, dtype=torch.long), "probs": torch.rand(4)}
    d = diagnosis(src, "Found dtype Float but expected Long", 3, kind="dtype-mismatch",
                  namespace={**MODULES, **ns}, error_locals=ns)
    assert d.names == ("hits",) and "hits.float()" in d.fix.source


def test_a_float64_target_is_a_dtype_mismatch_naming_the_target():
    src = "%%gradcheck\nimport torch\ny = torch.from_numpy(arr)\nloss = F.binary_cross_entropy(p, y)\n"
    ns = {"p": torch.rand(4), "y": torch.ones(4, dtype=torch.float64), "arr": np.ones(4)}
    d = diagnosis(src, "Found dtype Double but expected Float", 4, kind="dtype-mismatch",
                  namespace={**MODULES, **ns}, error_locals=ns)
    assert d.names == ("y",) and d.fix.source.splitlines()[2] == "y = torch.from_numpy(arr).float()"


def test_a_cast_error_without_a_loss_call_is_not_target_dtype():
    src = "%%gradcheck\nimport torch\ncounts += 0.5\n"
    record = record_of(src, "result type Float can't be cast to the desired output type Long", 3,
                       error_locals={"counts": torch.zeros(3, dtype=torch.long)})
    found = diagnose(record, {"torch": torch}, "en")
    assert all(d.kind not in ("target-dtype", "dtype-mismatch") for d in found)


def test_half_against_double_names_no_culprit_and_proposes_no_fix():
    src = "%%gradcheck\nimport torch\nout = a @ b\n"
    ns = {"a": torch.zeros(2, 2, dtype=torch.half), "b": torch.zeros(2, 2, dtype=torch.float64)}
    d = diagnosis(src, "expected m1 and m2 to have the same dtype, but got: c10::Half != double", 3,
                  kind="dtype-mismatch",
                  namespace={**MODULES, **ns}, error_locals=ns)
    assert d.fix is None and "float16 / float64" in d.title


def test_a_mismatch_raised_by_backward_blames_no_tensor_on_the_line():
    # torch 1.x: mse_loss's backward said "Found dtype Double but expected Float" on the backward() line
    src = "%%gradcheck\nimport torch\nloss = F.mse_loss(out, y)\nloss.backward()\n"
    ns = {"loss": torch.tensor(1.0, dtype=torch.float64)}
    d = diagnosis(src, "Found dtype Double but expected Float", 4, kind="dtype-mismatch",
                  namespace={**MODULES, **ns}, error_locals=ns)
    assert d.fix is None and d.names == () and "backward pass" in d.why


def test_a_reshape_of_the_numpy_tensor_is_followed_back_to_where_it_was_made():
    src = ("%%gradcheck\nimport torch\nx = torch.from_numpy(arr)\nx = x.view(-1, 3)\nlayer.to('cpu')\n"
           "out = layer(x)\n")
    ns = {"x": torch.zeros(2, 3, dtype=torch.float64), "arr": np.zeros(6), "layer": nn.Linear(3, 1)}
    d = diagnosis(src, "mat1 and mat2 must have the same dtype, but got Double and Float", 6, kind="dtype-mismatch",
                  namespace={**MODULES, **ns}, error_locals=ns)
    assert d.fix.source.splitlines()[2] == "x = torch.from_numpy(arr).float()"


def test_a_model_made_double_then_moved_is_fixed_where_it_was_made_double():
    src = "%%gradcheck\nimport torch\nnet = nn.Linear(3, 1).double()\nnet.to('cpu')\nout = net(x)\n"
    ns = {"x": torch.zeros(2, 3), "net": nn.Linear(3, 1).double()}
    d = diagnosis(src, "mat1 and mat2 must have the same dtype, but got Float and Double", 5, kind="dtype-mismatch",
                  namespace={**MODULES, **ns}, error_locals=ns)
    assert d.names == ("net",) and d.fix.source.splitlines()[2] == "net = nn.Linear(3, 1).float()"


def test_dtype_keyword_float64_is_replaced():
    src = "%%gradcheck\nimport torch\nx = torch.randn(4, 3, dtype=torch.float64)\nout = layer(x)\n"
    ns = {"x": torch.randn(4, 3, dtype=torch.float64), "layer": nn.Linear(3, 2)}
    d = diagnosis(src, "mat1 and mat2 must have the same dtype, but got Double and Float", 4, kind="dtype-mismatch",
                  namespace={**MODULES, **ns}, error_locals=ns)
    assert d.fix.source.splitlines()[2] == "x = torch.randn(4, 3, dtype=torch.float32)"


def test_the_rules_never_raise_on_a_cell_that_does_not_parse():
    src = "%%gradcheck\nthis is not python(\n"
    for message in ("mat1 and mat2 must have the same dtype, but got Double and Float",
                    "expected target dtype to be Long or Byte, but got Float"):
        d = diagnose(record_of(src, message, 2), {}, "en")[0]
        assert d.kind in ("dtype-mismatch", "target-dtype") and d.fix is None and not d.notes


# -- through the shell --

def test_an_older_torch_message_raised_in_a_cell(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    # NB: defined in an earlier cell, so the failing line of the %%gradcheck cell is the call
    assert run(shell, "def cross_entropy(input, target):\n"
                      "    raise RuntimeError('expected scalar type Long but found Float')\n").success
    result = run(shell, "%%gradcheck\nimport torch\nlogits = torch.randn(2, 3)\n"
                        "labels = torch.tensor([1.0, 2.0])\nloss = cross_entropy(logits, labels)\n")
    assert isinstance(result.error_in_exec, RuntimeError)
    d = grad_magic.last_diagnosis()
    assert d.kind == "target-dtype" and d.names == ("labels",)
    assert d.fix.source.splitlines()[3] == "labels = torch.tensor([1.0, 2.0], dtype=torch.long)"


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    result = run(shell, "%%gradcheck\nimport numpy as np\nimport torch\n"
                        "x = torch.from_numpy(np.ones((2, 3)))\nout = torch.nn.Linear(3, 1)(x)\n")
    assert isinstance(result.error_in_exec, RuntimeError)
    d = grad_magic.last_diagnosis()
    assert d.kind == "dtype-mismatch" and d.language == "zh"
    assert "第 5 行" in d.what and "numpy" in d.why and "第 4 行" in d.fix.description


# -- earlier cells: a Dataset's __getitem__, a global of an earlier cell --

DATASET = ("import numpy as np\nimport torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\n"
           "class Patches(Dataset):\n    def __init__(self, n):\n"
           "        self.images = np.random.default_rng(0).integers(0, 256, size=(n, 4), dtype=np.uint8)\n"
           "        self.labels = np.array([i % 3 for i in range(n)], dtype=np.float64)\n\n"
           "    def __len__(self):\n        return len(self.images)\n\n"
           "    def __getitem__(self, i):\n        img = torch.from_numpy(self.images[i] / 255.)\n"
           "        return img.flatten(), self.labels[i]\n")
SETUP = "loader = DataLoader(Patches(8), batch_size=4)\nhead = torch.nn.Linear(4, 3)\n"


def test_a_float64_batch_is_made_float32_in_the_datasets_getitem(shell):
    cells = [DATASET, SETUP, "%%gradcheck\nfor x, y in loader:\n    out = head(x)\n"]
    d = card_of(shell, cells, "dtype-mismatch", raises=RuntimeError)
    assert (1, 15) in lines_of(d) and (3, 3) in lines_of(d) and d.lines[0].function == "Patches.__getitem__"
    assert "line 15 of In [1]" in d.why and "`Patches.__getitem__`" in d.why
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert "img = torch.from_numpy(self.images[i] / 255.).float()" in fixed_cells[0]


def test_float64_labels_are_made_int64_where_the_dataset_makes_them(shell):
    cells = [DATASET.replace("/ 255.)", "/ 255.).float()"), SETUP,
             "def train(loader):\n    for i, (x, y) in enumerate(loader):\n"
             "        loss = torch.nn.functional.cross_entropy(head(x), y)\n",
             "%%gradcheck\ntrain(loader)\n"]
    d = card_of(shell, cells, "target-dtype", raises=RuntimeError)
    assert (1, 9) in lines_of(d) and (3, 3) in lines_of(d) and (4, 2) in lines_of(d)
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert "dtype=np.int64)" in fixed_cells[0].splitlines()[8]


def test_a_label_filled_with_an_int_of_an_earlier_cell_names_it(shell):
    cells = ["import torch\nreal_label = 1\n",
             "%%gradcheck\nout = torch.sigmoid(torch.randn(4, requires_grad=True))\n"
             "label = torch.full((4,), real_label)\nloss = torch.nn.BCELoss()(out, label)\n"]
    d = card_of(shell, cells, "target-dtype", raises=RuntimeError)
    assert (1, 2) in lines_of(d) and (2, 3) in lines_of(d) and "`real_label` is the int 1 (line 2 of In [1])" in d.why
    fix_runs_clean(shell, cells, d)


def test_the_fake_label_made_beside_the_real_one_is_fixed_with_it(shell):
    """HiDDeN's discriminator step: real and fake targets made by the same `torch.full(size, int_label)` on
    consecutive lines; the loss fails on the first. The fix gives each of them the float dtype -- one alone would
    fail again on the next loss (a fix that does not run clean)."""
    cells = ["import torch\nimport torch.nn as nn\nD = nn.Linear(3, 1)\nbce = nn.BCEWithLogitsLoss()\n"
             "cover_label, encoded_label = 1, 0\n",
             "def d_step(images, fakes):\n    n = images.shape[0]\n"
             "    real_target = torch.full((n, 1), cover_label)\n    fake_target = torch.full((n, 1), encoded_label)\n"
             "    loss = bce(D(images), real_target)\n    loss = loss + bce(D(fakes), fake_target)\n    loss.backward()\n",
             "%%gradcheck\nd_step(torch.randn(4, 3), torch.randn(4, 3))\n"]
    d = card_of(shell, cells, "target-dtype", raises=RuntimeError)
    fixed = fix_runs_clean(shell, cells, d)[1]
    assert "    real_target = torch.full((n, 1), cover_label).float()\n" in fixed
    assert "    fake_target = torch.full((n, 1), encoded_label).float()\n" in fixed
    assert "the same for `fake_target`, made the same way on line 4" in d.fix.description


def test_integer_labels_a_dataset_returns_get_a_float_dtype_where_it_makes_them(shell):
    cells = ["import torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\nclass Pairs(Dataset):\n"
             "    def __len__(self):\n        return 8\n\n    def __getitem__(self, i):\n"
             "        return torch.randn(3), torch.tensor(i % 2)\n",
             "loader = DataLoader(Pairs(), batch_size=4)\nhead = torch.nn.Linear(3, 1)\n",
             "%%gradcheck\nfor x, y in loader:\n"
             "    loss = torch.nn.functional.binary_cross_entropy_with_logits(head(x).squeeze(1), y)\n"]
    d = card_of(shell, cells, "target-dtype", raises=RuntimeError)
    assert (1, 10) in lines_of(d)
    assert "torch.tensor(i % 2, dtype=torch.float32)" in fix_runs_clean(shell, cells, d)[0]


def test_a_tensor_made_from_numpy_in_an_earlier_cell_is_made_float32_there(shell):
    cells = ["import numpy as np\nimport torch\nfeatures = torch.from_numpy(np.ones((4, 3)))\n",
             "%%gradcheck\nhead = torch.nn.Linear(3, 1)\nout = head(features)\n"]
    d = card_of(shell, cells, "dtype-mismatch", raises=RuntimeError)
    assert (1, 3) in lines_of(d) and (2, 3) in lines_of(d)
    assert "features = torch.from_numpy(np.ones((4, 3))).float()" in fix_runs_clean(shell, cells, d)[0]


def test_uint8_images_a_tensordataset_was_handed_from_numpy_are_made_float_where_it_was_built(shell):
    """MNIST arrays wrapped by `TensorDataset(torch.from_numpy(x), ...)` (blind batch c4): no name holds the uint8
    tensor, the Dataset does; the call that made it is the one whose array is its memory, not the labels' one."""
    cells = ["import numpy as np\nimport torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
             "x_train = np.zeros((8, 1, 6, 6), dtype=np.uint8)\ny_train = np.zeros(8, dtype=np.uint8)\n"
             "train_data = TensorDataset(torch.from_numpy(y_train).long(), torch.from_numpy(x_train))\n"
             "loader = DataLoader(train_data, batch_size=4)\nconv = torch.nn.Conv2d(1, 2, 3)\n",
             "def train():\n    for target, data in loader:\n        out = conv(data)\n",
             "%%gradcheck\ntrain()\n"]
    d = card_of(shell, cells, "dtype-mismatch", raises=RuntimeError)
    assert (1, 6) in lines_of(d), lines_of(d)
    assert "from a numpy array of uint8: torch keeps the array's dtype" in d.why, d.why
    fixed = fix_runs_clean(shell, cells, d)
    assert "TensorDataset(torch.from_numpy(y_train).long(), torch.from_numpy(x_train).float())" in fixed[0], fixed[0]


def test_a_model_made_double_in_an_earlier_cell_is_made_float_there(shell):
    cells = ["import torch\nmodel = torch.nn.Linear(3, 1).double()\n",
             "%%gradcheck\nout = model(torch.randn(4, 3))\n"]
    d = card_of(shell, cells, "dtype-mismatch", raises=RuntimeError)
    assert (1, 2) in lines_of(d)
    assert "model = torch.nn.Linear(3, 1).float()" in fix_runs_clean(shell, cells, d)[0]


def test_a_global_rebound_in_the_failing_cell_is_not_followed_to_an_earlier_cell(shell):
    cells = ["import numpy as np\nimport torch\nx = torch.from_numpy(np.ones((4, 3)))\n",
             "%%gradcheck\nx = torch.ones(4, 3, dtype=torch.float64)\nout = torch.nn.Linear(3, 1)(x)\n"]
    d = card_of(shell, cells, "dtype-mismatch", raises=RuntimeError)
    assert all(cell == 2 for cell, _ in lines_of(d))


# -- issue 15: integer scores cast on the loss line, a collate_fn's float64 batch through a model's forward --

def test_scores_cast_to_long_on_the_loss_line_lose_the_cast_not_the_target_its_type(shell):
    cells = ["import torch\nimport torch.nn as nn\nhead = nn.Linear(4, 3)\nloss_fn = nn.CrossEntropyLoss()\n",
             "def train(x, y):\n    pred = head(x)\n    loss = loss_fn(pred.long(), y)\n    loss.backward()\n",
             "%%gradcheck\ntrain(torch.randn(6, 4), torch.randint(0, 3, (6,)))\n"]
    d = card_of(shell, cells, "dtype-mismatch", raises=NotImplementedError)
    assert (2, 3) in lines_of(d) and "`pred.long()`" in d.title
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert "    loss = loss_fn(pred, y)\n" in fixed_cells[1]


def test_integer_scores_never_blame_the_integer_target(shell):
    cells = ["import torch\nimport torch.nn.functional as F\n",
             "%%gradcheck\nscores = torch.tensor([[2, 0, 1], [0, 3, 1]])\ny = torch.tensor([0, 1])\n"
             "loss = F.cross_entropy(scores, y)\n"]
    d = card_of(shell, cells, "dtype-mismatch", raises=NotImplementedError)
    assert list(d.names) == ["scores"]
    assert "dtype=torch.float32" in fix_runs_clean(shell, cells, d)[1].splitlines()[1]


COLLATE = ("import numpy as np\nimport torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader\n\n\n"
           "def collate_rows(batch):\n    rows, targets = zip(*batch)\n"
           "    x = torch.from_numpy(np.stack(rows))\n    y = torch.tensor(targets, dtype=torch.float32)\n"
           "    return x, y\n")
MODEL = ("class Regressor(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.net = nn.Linear(3, 1)\n\n    def forward(self, x):\n        return self.net(x)\n\n\n"
         "rows = [(np.random.default_rng(i).normal(size=3), float(i)) for i in range(8)]\n"
         "loader = DataLoader(rows, batch_size=4, collate_fn=collate_rows)\nmodel = Regressor()\n")


def test_a_float64_batch_from_a_collate_fn_is_made_float32_there_not_in_forward(shell):
    cells = [COLLATE, MODEL, "%%gradcheck\nfor x, y in loader:\n    out = model(x)\n"]
    d = card_of(shell, cells, "dtype-mismatch", raises=RuntimeError)
    assert (1, 9) in lines_of(d) and d.lines[0].function == "collate_rows" and "`collate_rows`" in d.why
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert "    x = torch.from_numpy(np.stack(rows)).float()\n" in fixed_cells[0]


def test_float_labels_given_to_a_loss_modules_forward_are_made_int64_in_the_datasets_getitem(shell):
    cells = ["import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader, Dataset\n\n\n"
             "class Labels(Dataset):\n    def __len__(self):\n        return 8\n\n    def __getitem__(self, i):\n"
             "        return torch.randn(3), torch.tensor(i % 3).float()\n\n\n"
             "class Focal(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.nll = nn.NLLLoss()\n\n    def forward(self, logits, labels):\n"
             "        return self.nll(logits.log_softmax(1), labels)\n",
             "loader = DataLoader(Labels(), batch_size=4)\nhead = nn.Linear(3, 3)\nloss_fn = Focal()\n",
             "%%gradcheck\nfor x, y in loader:\n    loss = loss_fn(head(x), y)\n"]
    d = card_of(shell, cells, "target-dtype", raises=RuntimeError)
    assert (1, 11) in lines_of(d) and (1, 20) in lines_of(d) and (3, 3) in lines_of(d)
    assert "torch.tensor(i % 3).long()" in fix_runs_clean(shell, cells, d)[0]


# -- a cast is proposed only where it keeps what the values mean (blind batches b6, b7) --

def test_labels_unpacked_from_a_batch_are_cast_where_the_loss_reads_them(shell):
    """`images, labels = next(it)`: a suffix on that line would cast the batch tuple; the loss call gets it."""
    cells = ["import numpy as np, torch, torch.nn as nn\n"
             "data = [(torch.randn(4, 3), torch.from_numpy(np.array([0, 1, 2, 1], dtype=np.int32)))] * 3\n"
             "model, criterion = nn.Linear(3, 3), nn.CrossEntropyLoss()\n",
             "%%gradcheck\nbatches = iter(data)\nfor step in range(2):\n    images, labels = next(batches)\n"
             "    loss = criterion(model(images), labels)\n    loss.backward()\n"]
    d = card_of(shell, cells, "target-dtype", RuntimeError)
    assert fix_runs_clean(shell, cells, d)[1].splitlines()[4] == "    loss = criterion(model(images), labels.long())"


def test_pixel_targets_of_a_binary_loss_get_no_cast_that_leaves_them_above_one(shell):
    """uint8 frames (0-255) as BCELoss targets: `.float()` would run into "all elements of target should be
    between 0 and 1" next; the card says why it proposes no cast."""
    cells = ["import torch, torch.nn as nn\nframes = torch.randint(0, 256, (4, 8), dtype=torch.uint8)\n"
             "model, criterion = nn.Sequential(nn.Linear(8, 8), nn.Sigmoid()), nn.BCELoss()\n",
             "%%gradcheck\ny = frames\nloss = criterion(model(torch.rand(4, 8)), y)\n"]
    result = run(shell, "".join(cells[:1]))
    assert result.success
    result = run(shell, cells[1])
    assert isinstance(result.error_in_exec, RuntimeError)
    d = next(x for x in grad_magic.last_diagnoses() if x.kind == "target-dtype")
    assert d.fix is None and "between 0 and 1" in d.why and "255" in d.why


def test_whole_number_float_targets_still_get_their_cast(shell):
    cells = ["import torch, torch.nn as nn\nmodel, criterion = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid()), nn.BCELoss()\n",
             "%%gradcheck\ny = torch.tensor([[0], [1], [1], [0]])\nloss = criterion(model(torch.rand(4, 8)), y)\n"]
    d = card_of(shell, cells, "target-dtype", RuntimeError)
    fix_runs_clean(shell, cells, d)


def test_uint8_frames_are_named_as_unsigned_char_by_the_convolution():
    conv = nn.Conv2d(4, 2, 3)
    with pytest.raises(RuntimeError) as info:
        conv(torch.zeros(1, 4, 8, 8, dtype=torch.uint8))
    assert parse_dtype_mismatch(str(info.value)) == DtypeMismatchError("uint8", "float32", False)


def test_a_frame_made_in_a_helper_and_wrapped_by_an_unseen_op_is_cast_where_it_was_made(shell):
    # NB: Variable(x) makes a new tensor on the same memory in C: the tracker does not see it, the record of
    # where the memory was made does (provenance's alias births); `.unsqueeze(0)` keeps the dtype
    cells = ["import numpy as np\nimport torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\n"
             "Q = nn.Sequential(nn.Conv2d(4, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 2))\n",
             "def act(model, obs):\n"
             "    obs = torch.from_numpy(obs).unsqueeze(0)  # one frame stack\n"
             "    return model(Variable(obs)).max(1)[1]\n",
             "%%gradcheck\nframes = np.zeros((4, 8, 8), dtype=np.uint8)\naction = act(Q, frames)\n"]
    d = card_of(shell, cells, "dtype-mismatch", raises=RuntimeError)
    assert (2, 2) in lines_of(d)
    fixed = fix_runs_clean(shell, cells, d)
    assert "    obs = torch.from_numpy(obs).float().unsqueeze(0)  # one frame stack\n" in fixed[1]


def test_a_float64_row_appended_in_a_helper_gets_its_dtype_where_it_is_made(shell):
    # NB: torch.cat promotes: the float64 row makes the whole table float64; `.float()` at the model call would
    # leave the table float64 for the next use of it
    cells = ["import numpy as np\nimport torch\n\n"
             "def add_points(x, n):\n"
             "    for _ in range(n):\n"
             "        row = list(np.random.uniform(-1, 1, 2))\n"
             "        x = torch.cat((x, torch.tensor([row])), 0)  # grow the sample set\n"
             "    return x\n",
             "%%gradcheck\nnet = torch.nn.Linear(2, 1)\nx = add_points(torch.zeros(4, 2), 3)\n"
             "v = net(x)\nw = x @ net.weight.t()\n"]
    d = card_of(shell, cells, "dtype-mismatch", raises=RuntimeError)
    assert (1, 7) in lines_of(d)
    fixed = fix_runs_clean(shell, cells, d)
    assert "        x = torch.cat((x, torch.tensor([row], dtype=torch.float32)), 0)  # grow the sample set\n" in fixed[0]


def test_a_fix_keeps_the_lines_of_spaces_ipython_empties_before_the_magic_sees_them(shell):
    cell = ("%%gradcheck\nimport numpy as np, torch\nw = torch.zeros(3)\nfor i in range(1):\n"
            "    x = torch.from_numpy(np.zeros(3))\n    \n    y = x @ w  \n")
    result = run(shell, cell)
    assert isinstance(result.error_in_exec, RuntimeError)
    d = grad_magic.last_diagnosis()
    assert d.fix.source == cell.replace("np.zeros(3))", "np.zeros(3)).float()")


def test_float64_made_in_the_call_of_a_method_of_an_earlier_cell_is_named_there_without_a_cast_at_the_use(shell):
    """Traced back through the method's cat and adds to the `torch.tensor(<float64 array>)` of the calling
    line: that line is named; a `.float()` inside the method (which the dtype would flow around) is not proposed."""
    from earlier_cells import card_of, lines_of
    cells = ["import numpy as np\nimport torch\nimport torch.nn as nn\n\n\nclass Two(nn.Module):\n"
             "    def __init__(self):\n        super().__init__()\n        self.encoder = nn.Linear(6, 2)\n\n"
             "    def encode(self, x1, x2):\n        x = torch.cat([x1 + 0.1 * torch.randn_like(x1), x2], dim=-1)\n"
             "        return self.encoder(x), x1\n",
             "%%gradcheck\nmodel = Two()\na1, a2 = np.random.rand(4, 3), np.random.rand(4, 3)\n"
             "latent = model.encode(torch.tensor(a1), torch.tensor(a2))\n"]
    d = card_of(shell, cells, "dtype-mismatch", raises=RuntimeError)
    k = d.elsewhere[0].cell
    assert (k, 13) in lines_of(d) and (k + 1, 4) in lines_of(d) and d.fix is None
