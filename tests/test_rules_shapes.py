"""The shapes family: shape-mismatch, batch-size-mismatch, target-out-of-range (message variants, names,
fixes, wording)."""
from __future__ import annotations

import pytest
import torch

import grad_magic
from grad_magic.rules.shapes.message import BadTarget, Product, parse_matmul_error, parse_target_error
from earlier_cells import card_of, fix_runs_clean, lines_of
from gm_shell import run

# -- the messages, as each torch says them --

# (message, rows, inner, weight's in_features, out_features)
MATMUL = [
    # torch >= 1.9, CPU and CUDA (reproduced with 2.13: nn.Linear(10, 5)(torch.randn(4, 12)))
    ("mat1 and mat2 shapes cannot be multiplied (4x12 and 10x5)", 4, 12, 10, 5),
    # MPS (aten/src/ATen/native/mps/operations/Linear.mm): rows are the input's second-last dimension
    ("linear(): input and weight.T shapes cannot be multiplied (3x12 and 10x5)", 3, 12, 10, 5),
    # meta / fake tensors (torch/_meta_registrations.py; reproduced with 2.13 on device="meta")
    ("a and b must have same reduction dim, but got [4, 12] X [10, 5].", 4, 12, 10, 5),
    # torch <= 1.6 (TH)
    ("size mismatch, m1: [4 x 12], m2: [10 x 5] at /pytorch/aten/src/TH/generic/THTensorMath.cpp:41",
     4, 12, 10, 5),
]


@pytest.mark.parametrize("message,a,b,c,d", MATMUL, ids=range(len(MATMUL)))
def test_every_matmul_wording_is_recognised(message, a, b, c, d):
    assert parse_matmul_error(message) == Product(a, b, c, d)


CUDA_ASSERT = ("CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at "
               "some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing "
               "CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")


@pytest.mark.parametrize("message,expected", [
    ("Target 10 is out of bounds.", BadTarget(10, False, False)),  # torch >= 1.8, CPU (IndexError)
    ("Target -1 is out of bounds.", BadTarget(-1, False, False)),
    # torch <= 1.5, THNN on the CPU
    ("Assertion `cur_target >= 0 && cur_target < n_classes' failed.  at "
     "/pytorch/aten/src/THNN/generic/ClassNLLCriterion.c:97", BadTarget(None, False, True)),
    # CUDA: the message as c10_cuda_check_implementation builds it (c10/cuda/CUDAException.cpp); the kernel's
    # own line, "Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [5,0,0]
    # Assertion `t >= 0 && t < n_classes` failed.", goes to stderr, not into the exception
    (CUDA_ASSERT, BadTarget(None, True, False)),
    (CUDA_ASSERT + "Assertion `t >= 0 && t < n_classes` failed.", BadTarget(None, True, True)),
    ("index 7 is out of bounds for dimension 0 with size 5", None),
])
def test_target_wordings(message, expected):
    assert parse_target_error(message) == expected


def test_the_messages_of_this_torch_are_the_ones_keyed_on():
    with pytest.raises(RuntimeError) as info:
        torch.nn.Linear(10, 5)(torch.randn(4, 12))
    assert parse_matmul_error(str(info.value)) == Product(4, 12, 10, 5)
    with pytest.raises(RuntimeError) as info:
        torch.nn.Linear(10, 5, device="meta")(torch.randn(4, 12, device="meta"))
    assert parse_matmul_error(str(info.value)) == Product(4, 12, 10, 5)
    with pytest.raises(ValueError, match=r"^Expected input batch_size \(4\) to match target batch_size \(3\)\.$"):
        torch.nn.functional.cross_entropy(torch.randn(4, 3), torch.zeros(3, dtype=torch.long))
    with pytest.raises(IndexError, match=r"^Target 3 is out of bounds\.$"):
        torch.nn.functional.cross_entropy(torch.randn(4, 3), torch.tensor([0, 1, 2, 3]))


# -- through the shell --

def _diagnosis(shell, cell):
    result = run(shell, cell)
    assert result.error_in_exec is not None
    return grad_magic.last_diagnosis()


def test_mps_wording_names_the_layer_and_fixes_in_features(shell):
    d = _diagnosis(shell, "%%gradcheck\nimport torch.nn as nn\nfc = nn.Linear(10, 5)\n"
                          "raise RuntimeError('linear(): input and weight.T shapes cannot be multiplied "
                          "(3x12 and 10x5)')\n")
    assert d.kind == "shape-mismatch" and "`fc` expects 10 input features" in d.title
    assert d.fix is not None and "fc = nn.Linear(12, 5)" in d.fix.source


def test_meta_device_linear(shell):
    d = _diagnosis(shell, "%%gradcheck --no-nan-check\nimport torch\nimport torch.nn as nn\n"
                          "enc = nn.Linear(10, 5, device='meta')\nh = torch.randn(4, 12, device='meta')\nz = enc(h)\n")
    assert d.kind == "shape-mismatch" and d.names == ("h", "enc")
    assert d.fix is not None and "enc = nn.Linear(12, 5, device='meta')" in d.fix.source


def test_two_equal_linear_layers_get_no_fix(shell):
    d = _diagnosis(shell, "%%gradcheck\nimport torch\nimport torch.nn as nn\n"
                          "heads = nn.ModuleList([nn.Linear(10, 5), nn.Linear(10, 5)])\n"
                          "out = heads[0](torch.randn(2, 12))\n")
    assert d.kind == "shape-mismatch" and d.fix is None and "several" in d.why.lower()


def test_the_layer_assigned_to_the_failing_name_is_the_one_fixed(shell):
    d = _diagnosis(shell, "%%gradcheck\nimport torch\nimport torch.nn as nn\na = nn.Linear(10, 5)\n"
                          "b = nn.Linear(10, 5)\nout = a(torch.randn(2, 12))\n")
    assert d.fix is not None and "a = nn.Linear(12, 5)\nb = nn.Linear(10, 5)\n" in d.fix.source


def test_a_3d_input_that_flattens_to_neither_gets_no_fix(shell):
    d = _diagnosis(shell, "%%gradcheck\nimport torch\nimport torch.nn as nn\nfc = nn.Linear(10, 5)\n"
                          "x = torch.randn(2, 3, 4)\nout = fc(x)\n")
    assert d.kind == "shape-mismatch" and d.fix is None
    assert "12 values per sample" in d.why


def test_a_flatten_inside_a_call_argument(shell):
    d = _diagnosis(shell, "%%gradcheck\nimport torch\nimport torch.nn as nn\nfc = nn.Linear(12, 5)\n"
                          "x = torch.randn(2, 3, 4)\nout = torch.relu(fc(x * 2))\n")
    assert d.fix is not None and "fc((x * 2).flatten(1))" in d.fix.source


def test_cuda_device_assert_at_the_loss_is_a_target_out_of_range(shell, monkeypatch):
    import torch.nn.functional as F

    def on_gpu(*args, **kwargs):
        raise torch.AcceleratorError(CUDA_ASSERT)  # RuntimeError before torch 2.8

    monkeypatch.setattr(F, "cross_entropy", on_gpu)
    d = _diagnosis(shell, "%%gradcheck\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
                          "num_classes = 10\nmodel = nn.Linear(4, 5)\nlogits = model(torch.randn(8, 4))\n"
                          "y = torch.randint(0, num_classes, (8,))\nloss = F.cross_entropy(logits, y)\n")
    assert d.kind == "target-out-of-range" and "most likely" in d.title and "5 classes" in d.title
    assert "CUDA_LAUNCH_BLOCKING=1" in d.why
    assert d.fix is not None and "model = nn.Linear(4, 10)" in d.fix.source


def test_a_device_assert_elsewhere_is_not_a_target_out_of_range(shell):
    d = _diagnosis(shell, "%%gradcheck\nimport torch\nx = torch.zeros(3)\n"
                          f"raise RuntimeError({CUDA_ASSERT!r})\n")
    assert d.kind != "target-out-of-range"


def test_segmentation_labels_count_classes_in_dimension_1(shell):
    d = _diagnosis(shell, "%%gradcheck\nimport torch\nimport torch.nn.functional as F\n"
                          "masks = torch.full((2, 5, 5), 4)\nscores = torch.randn(2, 3, 5, 5)\n"
                          "loss = F.cross_entropy(scores, masks)\n")
    assert d.kind == "target-out-of-range" and "for 3 classes" in d.title and d.fix is None


def test_labels_beyond_a_known_class_count_get_no_fix(shell):
    d = _diagnosis(shell, "%%gradcheck\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
                          "n_classes = 3\nhead = nn.Linear(4, 2)\ny = torch.tensor([0, 1, 5])\n"
                          "loss = F.cross_entropy(head(torch.randn(3, 4)), y)\n")
    assert d.kind == "target-out-of-range" and d.fix is None


def test_batch_size_with_no_cause_in_sight_names_both_sides(shell):
    d = _diagnosis(shell, "%%gradcheck\nimport torch\nimport torch.nn.functional as F\n"
                          "out = torch.randn(8, 3)\nlabels = torch.zeros(6, dtype=torch.long)\n"
                          "loss = F.cross_entropy(out, labels)\n")
    assert d.kind == "batch-size-mismatch" and d.names == ("out", "labels") and d.fix is None
    assert "8 predictions" in d.title and "6 labels" in d.title


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    d = _diagnosis(shell, "%%gradcheck\nimport torch\nimport torch.nn as nn\nfc = nn.Linear(10, 5)\n"
                          "out = fc(torch.randn(4, 12))\n")
    assert d.kind == "shape-mismatch" and d.language == "zh"
    assert "需要 10 个输入特征" in d.title and "第 5 行" in d.what and "第 4 行" in d.fix.description


# -- earlier cells: a model class of an earlier cell --

TINY_VGG = ("import torch\nfrom torch import nn\n\n\nclass Tiny(nn.Module):\n"
            "    def __init__(self, hidden: int, classes: int):\n        super().__init__()\n"
            "        self.features = nn.Sequential(nn.Conv2d(1, hidden, 3, padding=1), nn.MaxPool2d(2))\n"
            "        self.classifier = nn.Sequential(\n            nn.Flatten(),\n"
            "            nn.Linear(in_features=hidden, out_features=classes),\n        )\n\n"
            "    def forward(self, x):\n        return self.classifier(self.features(x))\n")


def test_a_linear_built_in_an_earlier_cells_init_is_named_by_its_path_and_fixed_there(shell):
    cells = [TINY_VGG, "model = Tiny(hidden=4, classes=3)\n",
             "def step(model, x):\n    return model(x).sum()\n",
             "%%gradcheck\nloss = step(model, torch.randn(2, 1, 8, 8))\n"]
    d = card_of(shell, cells, "shape-mismatch", raises=RuntimeError)
    assert (1, 11) in lines_of(d) and "`model.classifier[1]`" in d.title
    assert "made on line 11 of In [1]" in d.why
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert "nn.Linear(in_features=hidden * 16, out_features=classes)" in fixed_cells[0]


def test_a_literal_in_features_of_an_earlier_cell_gets_the_real_count(shell):
    cells = [TINY_VGG.replace("in_features=hidden,", "in_features=5,"), "model = Tiny(hidden=4, classes=3)\n",
             "%%gradcheck\nout = model(torch.randn(2, 1, 8, 8))\n"]
    d = card_of(shell, cells, "shape-mismatch", raises=RuntimeError)
    assert (1, 11) in lines_of(d)
    assert "nn.Linear(in_features=64, out_features=classes)" in fix_runs_clean(shell, cells, d)[0]


WIDE = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Wide(nn.Module):\n"
        "    def __init__(self, fc_in):\n        super().__init__()\n        self.n = 4\n"
        "        self.conv = nn.Conv2d(3, self.n, 3, padding=1)\n        self.fc = nn.Linear(fc_in, 10)\n\n"
        "    def forward(self, x):\n        out = F.avg_pool2d(self.conv(x), 4)\n"
        "        out = out.view(-1, self.n)\n        return self.fc(out)\n")


def test_a_view_in_an_earlier_cells_forward_that_folds_the_batch_is_named(shell):
    cells = [WIDE.replace("nn.Linear(fc_in, 10)", "nn.Linear(self.n, 10)"), "net = Wide(4)\n",
             "%%gradcheck\nimages, labels = torch.randn(2, 3, 8, 8), torch.zeros(2, dtype=torch.long)\n"
             "pred = net(images)\nloss = F.cross_entropy(pred, labels)\n"]
    d = card_of(shell, cells, "batch-size-mismatch", raises=ValueError)
    assert (1, 15) in lines_of(d) and (3, 4) in lines_of(d) and d.fix is None
    assert "line 15 of In [1]" in d.why and "no single Linear taking 4" in d.why


def test_a_view_in_an_earlier_cells_forward_is_fixed_with_its_literal_linear(shell):
    cells = [WIDE.replace("nn.Linear(fc_in, 10)", "nn.Linear(4, 10)"), "net = Wide(4)\n",
             "%%gradcheck\nlabels = torch.zeros(2, dtype=torch.long)\n"
             "loss = F.cross_entropy(net(torch.randn(2, 3, 8, 8)), labels)\n"]
    d = card_of(shell, cells, "batch-size-mismatch", raises=ValueError)
    assert (1, 15) in lines_of(d) and (1, 11) in lines_of(d)
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert "out = out.view(out.size(0), -1)" in fixed_cells[0] and "nn.Linear(16, 10)" in fixed_cells[0]


def test_a_classifier_of_an_earlier_cells_model_gets_the_labels_count_there(shell):
    cells = ["import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Clf(nn.Module):\n"
             "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 3)\n\n"
             "    def forward(self, x):\n        return self.fc(x)\n",
             "model = Clf()\n",
             "%%gradcheck\ntorch.manual_seed(0)\nlabels = torch.randint(0, 5, (8,))\nloss = F.cross_entropy(model(torch.randn(8, 4)), labels)\n"]
    d = card_of(shell, cells, "target-out-of-range", raises=IndexError)
    assert (1, 9) in lines_of(d) and (3, 4) in lines_of(d)
    assert "self.fc = nn.Linear(4, 5)" in fix_runs_clean(shell, cells, d)[0]


def test_labels_a_dataset_makes_one_based_are_marked_where_its_getitem_makes_them(shell):
    """The labels come out of a DataLoader: the card names the statement of the Dataset's `__getitem__` that made
    them (an annotation file's class ids 1 and 2 for a 2-way head), where their values are chosen."""
    cells = ["import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader, Dataset\n",
             "class Pairs(Dataset):\n    def __init__(self, xs, ids):\n        self.xs, self.ids = xs, ids\n\n"
             "    def __len__(self):\n        return len(self.xs)\n\n    def __getitem__(self, i):\n"
             "        label = int(self.ids[i])\n        return self.xs[i], label\n",
             "loader = DataLoader(Pairs(torch.randn(8, 3), [1, 2] * 4), batch_size=4)\nmodel = nn.Linear(3, 2)\n",
             "%%gradcheck\nfor x, y in loader:\n    loss = nn.functional.cross_entropy(model(x), y)\n"]
    d = card_of(shell, cells, "target-out-of-range", raises=IndexError)
    assert (2, 9) in lines_of(d)
    assert "The labels are what `Pairs.__getitem__` returns, made on line 9 of In [2]: that is where" in d.why


def test_a_head_replaced_after_the_model_was_made_gets_one_output_per_class_name(shell):
    cells = ["import torch\nimport torch.nn as nn\n",
             'class_names = ["a", "b", "c", "d", "e"]\nx = torch.randn(10, 3)\ny = torch.arange(10) % len(class_names)\n',
             "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.fc = nn.Linear(3, 1000)\n\n    def forward(self, x):\n        return self.fc(x)\n\n\n"
             "model_ft = Net()\nmodel_ft.fc = nn.Linear(3, 4)\n",
             "def train(model):\n    return nn.functional.cross_entropy(model(x), y)\n",
             "%%gradcheck\nloss = train(model_ft)\n"]
    d = card_of(shell, cells, "target-out-of-range", raises=IndexError)
    assert (3, 11) in lines_of(d)
    (fixed,) = d.fix.elsewhere
    assert fixed.cell == 3 and "model_ft.fc = nn.Linear(3, len(class_names))" in fixed.source
    assert "self.fc = nn.Linear(3, 1000)" in fixed.source  # NB: the __init__'s head is not the one that ran
    fix_runs_clean(shell, cells, d)


def test_a_class_list_that_is_not_all_names_says_nothing_about_the_labels(shell):
    cells = ["import torch\nimport torch.nn as nn\n",
             "classes = [0, 1, 2, 3, 4]\nx = torch.randn(10, 3)\ny = torch.arange(10) % 5\nhead = nn.Linear(3, 4)\n",
             "%%gradcheck\nloss = nn.functional.cross_entropy(head(x), y)\n"]
    d = card_of(shell, cells, "target-out-of-range", raises=IndexError)
    assert d.fix is None


# -- target-size-mismatch --

def test_a_target_of_index_lists_is_marked_where_the_dataset_makes_it(shell):
    """Multi-label targets given as lists of class indices (two per sample) against three scores: the shapes
    differ in their last dimension, no squeeze fixes it, and the card names where the run gave the target that
    dimension -- `torch.tensor(self.topics[i])` in the Dataset's `__getitem__`, collated by the DataLoader."""
    cells = ["import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader, Dataset\n",
             "class Topics(Dataset):\n    def __init__(self, xs, topics):\n        self.xs, self.topics = xs, topics\n\n"
             "    def __len__(self):\n        return len(self.xs)\n\n    def __getitem__(self, i):\n"
             "        return self.xs[i], torch.tensor(self.topics[i])\n",
             "loader = DataLoader(Topics(torch.randn(8, 5), [[0, 2], [1, 2]] * 4), batch_size=4)\n"
             "model = nn.Linear(5, 3)\ncriterion = nn.BCEWithLogitsLoss()\n",
             "%%gradcheck\nfor x, y in loader:\n    loss = criterion(model(x), y.float())\n"]
    d = card_of(shell, cells, "target-size-mismatch", raises=ValueError)
    assert (2, 9) in lines_of(d)
    assert "The target's 2 values per sample are made on line 9 of In [2]: `return self.xs[i], torch.tensor(self.topics[i])`" in d.why


def test_target_size_wordings_of_this_torch_are_the_ones_keyed_on():
    from grad_magic.rules.shapes.target_size import Sizes, parse_sizes
    logits, probs, labels = torch.randn(4, 1), torch.rand(4, 1), torch.rand(4)
    for loss, args in ((torch.nn.functional.binary_cross_entropy_with_logits, (logits, labels)),
                       (torch.nn.functional.binary_cross_entropy, (probs, labels))):
        with pytest.raises(ValueError) as raised:
            loss(*args)
        assert parse_sizes(str(raised.value)) == Sizes((4, 1), (4,)), str(raised.value)


@pytest.mark.parametrize("longer,shorter,dim", [((16, 1), (16,), 1), ((1, 16), (16,), 0), ((8, 1, 3), (8, 3), 1),
                                                ((16, 2), (16,), None), ((16, 1), (8,), None)])
def test_the_extra_unit_dimension(longer, shorter, dim):
    from grad_magic.rules.shapes.target_size import extra_unit_dim
    assert extra_unit_dim(longer, shorter) == dim


def test_a_target_with_the_extra_column_is_squeezed_on_the_loss_call(shell):
    cells = ["import torch\nhead = torch.nn.Linear(4, 1)\ncriterion = torch.nn.BCELoss()\n",
             "%%gradcheck\nx, y = torch.randn(6, 4), torch.randint(0, 2, (6, 1)).float()\n"
             "loss = criterion(torch.sigmoid(head(x)).view(-1), y)\nloss.backward()\n"]
    d = card_of(shell, cells, "target-size-mismatch", raises=ValueError)
    assert (2, 3) in lines_of(d) and "(6, 1)" in d.title
    fixed = fix_runs_clean(shell, cells, d)
    assert "criterion(torch.sigmoid(head(x)).view(-1), y.squeeze(1))" in fixed[-1]


def test_the_validation_loops_call_of_the_same_loss_is_squeezed_too(shell):
    """A (N, 1) output against (N,) labels fails in the training loop; the validation loop below calls the same
    loss on the same expression and would fail the same way: both are squeezed, the labels' loop line untouched."""
    cells = ["import torch\nmodel = torch.nn.Linear(4, 1)\ncriterion = torch.nn.BCEWithLogitsLoss()\n"
             "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
             "batches = [(torch.randn(6, 4), torch.randint(0, 2, (6,)).float()) for _ in range(2)]\n",
             "%%gradcheck\nfor data, target in batches:\n    output = model(data)\n"
             "    loss = criterion(output, target)\n    loss.backward()\n    opt.step()\n"
             "with torch.no_grad():\n    for data, target in batches:\n        output = model(data)\n"
             "        valid = criterion(output, target)\n"]
    d = card_of(shell, cells, "target-size-mismatch", raises=ValueError)
    assert "and in the same loss call on line 10" in d.fix.description, d.fix.description
    fixed = fix_runs_clean(shell, cells, d)
    assert fixed[-1].count("criterion(output.squeeze(1), target)") == 2, fixed[-1]


def test_a_target_squeezed_out_of_its_batch_of_one_is_marked_where_it_was_squeezed(shell):
    """A batch of one: a helper of an earlier cell `.squeeze()`s the mask and drops the batch dimension with the
    channel one (blind batch b6); the run's record says which op changed the target's first dimension."""
    cells = ["import torch\nimport torch.nn as nn\n\ndef to_classes(mask):\n"
             "    return (mask * 3).round().long().squeeze()\n\nnet = nn.Conv2d(1, 4, 3, padding=1)\n",
             "%%gradcheck\nmask = torch.rand(1, 1, 6, 5)\ntarget = to_classes(mask)\n"
             "loss = nn.functional.cross_entropy(net(torch.randn(1, 1, 6, 5)), target)\n"]
    d = card_of(shell, cells, "batch-size-mismatch", ValueError)
    assert (1, 5) in lines_of(d), lines_of(d)


@pytest.mark.slow  # NB: importing transformers takes seconds
def test_float_class_labels_into_a_transformers_classifier_are_made_int64_where_the_dataset_makes_them(shell):
    """0/1 labels a Dataset makes with `dtype=torch.float`: BertForSequenceClassification (num_labels=2) takes
    float labels as multi-label targets and its BCE raises on (8,) against (8, 2) (blind batch b7). The labels,
    followed back through the run's record, are made int64 where the Dataset makes them."""
    pytest.importorskip("transformers", reason="needs transformers (requirements-dev.txt)")
    cells = ["import torch\nfrom torch.utils.data import DataLoader, Dataset\n"
             "from transformers import BertConfig, BertForSequenceClassification\ntorch.manual_seed(0)\n",
             "class Pairs(Dataset):\n    def __init__(self, ids, labels):\n        self.ids, self.labels = ids, labels\n\n"
             "    def __len__(self):\n        return len(self.labels)\n\n    def __getitem__(self, i):\n"
             "        return {\"input_ids\": self.ids[i],\n"
             "                \"labels\": torch.tensor(self.labels[i], dtype=torch.float)}\n\n"
             "loader = DataLoader(Pairs(torch.randint(1, 50, (8, 6)), [0, 1] * 4), batch_size=4)\n",
             "model = BertForSequenceClassification(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,\n"
             "    num_attention_heads=2, intermediate_size=32, num_labels=2))\n",
             "%%gradcheck\nfor batch in loader:\n    loss = model(**batch).loss\n    loss.backward()\n"]
    d = card_of(shell, cells, "target-size-mismatch", ValueError)
    assert (2, 10) in lines_of(d) and "int64" in d.why, lines_of(d)
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert "torch.tensor(self.labels[i], dtype=torch.long)" in fixed_cells[1]


def test_one_image_without_its_batch_dimension_gets_a_batch_of_one_not_a_smaller_layer(shell):
    # NB: a Conv2d accepts (C, H, W); the Flatten after it then folds the channels into the rows, and the
    # Linear's in_features "fix" would silence the error and break the model for every batch
    cells = ["import torch\nimport torch.nn as nn\n\n"
             "class Net(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.features = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 16, 3))\n"
             "        self.fc = nn.Linear(16 * 4 * 4, 2)\n\n"
             "    def forward(self, x):\n"
             "        x = self.features(x)\n"
             "        x = x.view(x.size(0), -1)\n"
             "        return self.fc(x)\n",
             "%%gradcheck\nnet = Net()\nimg = torch.rand(3, 8, 8) * 2 - 1\nprediction = net(img).softmax(1)\n"]
    d = card_of(shell, cells, "shape-mismatch", raises=RuntimeError)
    assert (None, 3) in lines_of(d) or (2, 3) in lines_of(d)
    assert "nn.Linear(16 * 4 * 4, 2)" in fix_runs_clean(shell, cells, d)[0]
    assert "prediction = net(img.unsqueeze(0)).softmax(1)" in fixed_cell(shell, cells, d)


def fixed_cell(shell, cells, d):
    from earlier_cells import fixed
    return fixed(cells, d)[-1]


def test_a_batch_through_the_convolutions_is_not_called_one_sample(shell):
    cells = ["import torch\nimport torch.nn as nn\n"
             "net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten(), nn.Linear(100, 2))\n",
             "%%gradcheck\nout = net(torch.rand(4, 3, 8, 8))\n"]
    d = card_of(shell, cells, "shape-mismatch", raises=RuntimeError)
    assert "batch of one" not in d.why and "was built for 100" in d.why


def test_a_view_with_the_batch_size_as_a_number_fails_on_the_last_batch_and_gets_minus_one(shell):
    from grad_magic.rules.shapes.view_size import ViewSize, parse_view_size
    with pytest.raises(RuntimeError) as info:
        torch.zeros(2, 10).view(4, 10)
    assert parse_view_size(str(info.value)) == ViewSize((4, 10), 20)
    cells = ["import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
             "BATCH = 4\nloader = DataLoader(TensorDataset(torch.randn(10, 3, 2, 5)), batch_size=BATCH)\n"
             "net = torch.nn.Linear(5, 5)\n",
             "%%gradcheck\nfor (x,) in loader:\n    scores = net(x).view(BATCH, 30)  # flatten per sample\n"
             "    scores.sum().backward()\n"]
    d = card_of(shell, cells, "shape-mismatch", raises=RuntimeError)
    assert lines_of(d)[0][1] == 3 and "this batch has 2" in d.title
    assert "    scores = net(x).view(-1, 30)  # flatten per sample\n" in fix_runs_clean(shell, cells, d)[-1]


def test_a_view_whose_other_sizes_are_wrong_is_not_called_a_fixed_batch(shell):
    cells = ["%%gradcheck\nimport torch\nx = torch.randn(4, 10)\ny = x.view(4, 7)\n"]
    result = run_cells_plain(shell, cells)
    assert isinstance(result.error_in_exec, RuntimeError)
    assert all("batch size written" not in d.title for d in grad_magic.last_diagnoses())


def run_cells_plain(shell, cells):
    from earlier_cells import run_cells
    return run_cells(shell, cells)


def test_a_target_several_losses_read_gets_its_unit_dimension_where_it_is_made(shell):
    """(N, 1) scores against (N,) labels, the labels read by two calls of the loss and a third target made on its
    own line: a squeeze at the failing call would leave the others failing the same way, so the labels get
    `.unsqueeze(1)` where the run made them, and the third target on its line."""
    cells = ["import torch\nimport torch.nn as nn\nd = nn.Sequential(nn.Linear(3, 1), nn.Sigmoid())\n",
             "%%gradcheck\ndef step(n=4):\n    loss = nn.BCELoss()\n    x = torch.rand(n, 3)\n"
             "    labels = torch.tensor([1, 0, 1, 1][:n]).float()  # real or fake\n"
             "    g = loss(d(x), labels)\n    r = loss(d(x * 2), labels)\n    f = loss(d(x / 2), torch.zeros(n))\n"
             "    return g + r + f\n\n\nstep()\n"]
    d = card_of(shell, cells, "target-size-mismatch", raises=ValueError)
    assert (d.cell, 6) in lines_of(d) and (d.cell, 5) in lines_of(d)
    fixed = fix_runs_clean(shell, cells, d)
    assert "    labels = torch.tensor([1, 0, 1, 1][:n]).float().unsqueeze(1)  # real or fake\n" in fixed[1]
    assert "    f = loss(d(x / 2), torch.zeros(n).unsqueeze(1))\n" in fixed[1]


def test_a_library_unpacking_the_shape_of_one_sample_gets_its_batch_dimension(shell):
    """transformers' `batch_size, seq_length = input_shape` on 1-D ids: the shape read in the library's frame, the
    argument that has it in the user's, where the run made it marked, `.unsqueeze(0)` where the line passes it."""
    pytest.importorskip("transformers", reason="transformers (a test dependency) is not installed")
    cells = ["import torch\nfrom transformers import BertConfig, BertModel\n"
             "model = BertModel(BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,"
             " intermediate_size=8))\n",
             "ids = torch.tensor([2, 5, 7, 3])  # [CLS] ... [SEP]\n",
             "%%gradcheck\nout = model(ids)\n"]
    d = card_of(shell, cells, "shape-mismatch", raises=ValueError)
    assert (d.cell, 2) in lines_of(d) and (d.cell - 1, 1) in lines_of(d) and "(4,)" in d.title
    fixed = fix_runs_clean(shell, cells, d)
    assert fixed[2] == "%%gradcheck\nout = model(ids.unsqueeze(0))\n" or fixed[2].rstrip() == \
        "%%gradcheck\nout = model(ids.unsqueeze(0))"


def test_a_class_count_that_agrees_with_the_layer_is_not_said_to_disagree(shell):
    """`num_classes = 2` and a 2-way head: the count explains nothing, and label 2 equals the number of outputs
    (labels numbered from 1). The card once said "`num_classes` says there are 2 classes, but ... only 2"."""
    cells = ["import torch\nimport torch.nn as nn\nnum_classes = 2\nmodel = nn.Linear(3, num_classes)\n",
             "%%gradcheck\nlabels = torch.tensor([1, 2, 1, 2])\n"
             "loss = nn.functional.cross_entropy(model(torch.randn(4, 3)), labels)\n"]
    d = card_of(shell, cells, "target-out-of-range", raises=IndexError)
    assert "says there are" not in d.why and "Label 2 equals the number of outputs" in d.why, d.why
