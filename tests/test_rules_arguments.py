"""argument-type (rules/arguments/): torch's messages for an argument of the wrong type, the value found where the
traceback holds it and the user's argument that held it, where it came from, and cards through a real shell
whose fixes run again in a fresh session."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from grad_magic.rules.arguments.message import BadArgument, parse_bad_argument
from earlier_cells import card_of, fix_runs_clean, lines_of


def _message(fn) -> str:
    with pytest.raises(TypeError) as info:
        fn()
    return str(info.value)


def test_the_messages_of_this_torch_are_the_ones_keyed_on():
    x = torch.randn(2, 4)
    lin, conv = torch.nn.Linear(4, 2), torch.nn.Conv2d(3, 4, 3)
    assert parse_bad_argument(_message(lambda: lin((x, x)))) == BadArgument("linear", "input", 0, "Tensor", "tuple")
    assert parse_bad_argument(_message(lambda: conv([x]))) == BadArgument("conv2d", "", 0, "Tensor", "list")
    assert parse_bad_argument(_message(lambda: torch.empty(x.size))) == \
        BadArgument("empty", "size", 0, "tuple of ints", "builtin_function_or_method")
    assert parse_bad_argument(_message(lambda: torch.zeros(2).ne(None))).got == "NoneType"
    assert parse_bad_argument(_message(lambda: lin(np.zeros((2, 4), np.float32)))).got_type == "ndarray"
    target = parse_bad_argument(_message(lambda: torch.nn.functional.cross_entropy(x, [0, 1])))
    assert (target.name, target.position, target.got) == ("target", 1, "list")
    assert parse_bad_argument("unsupported operand type(s) for +: 'Tensor' and 'NoneType'") is None


# -- through the shell --

LSTM = ("import torch\nimport torch.nn as nn\n\n"
        "class Tagger(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lstm = nn.LSTM(4, 8, batch_first=True)  # the encoder\n"
        "        self.fc = nn.Linear(8, 3)\n\n"
        "    def forward(self, x):\n"
        "        h = self.lstm(x)\n"
        "        return self.fc(h)\n")


def test_an_lstms_tuple_passed_on_takes_its_output_where_it_was_made(shell):
    cells = [LSTM, "%%gradcheck\nmodel = Tagger()\nout = model(torch.randn(2, 5, 4))\nout.sum().backward()\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert (1, 11) in lines_of(d) and (1, 12) in lines_of(d) and "nn.LSTM" in d.why
    fixed = fix_runs_clean(shell, cells, d)
    assert "        h = self.lstm(x)[0]\n" in fixed[0] and "# the encoder" in fixed[0]


def test_a_forward_without_return_gets_one(shell):
    cells = ["import torch\nimport torch.nn as nn\n\n"
             "class Block(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.lin = nn.Linear(4, 4)\n\n"
             "    def forward(self, x):\n"
             "        x = torch.relu(self.lin(x))\n\n"
             "class Net(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.block, self.head = Block(), nn.Linear(4, 2)\n\n"
             "    def forward(self, x):\n"
             "        x = self.block(x)\n"
             "        return self.head(x)\n",
             "%%gradcheck\nnet = Net()\nnet(torch.randn(3, 4)).sum().backward()\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert (1, 10) in lines_of(d) and "`Block.forward`" not in d.title
    fixed = fix_runs_clean(shell, cells, d)
    assert "        x = torch.relu(self.lin(x))\n        return x\n" in fixed[0]


def test_a_method_not_called_is_called(shell):
    cells = ["%%gradcheck\nimport torch\nx = torch.randn(2, 3)\nnoise = torch.randn(x.size)\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert lines_of(d) == [(None, 4)] or (d.lines[0].lineno == 4)
    assert "torch.randn(x.size())" in fix_runs_clean(shell, cells, d)[-1]


def test_a_model_called_with_the_device_is_moved_to_it(shell):
    cells = ["import torch\ndevice = torch.device('cpu')\nmodel = torch.nn.Linear(3, 1)\n",
             "%%gradcheck\nmodel(device)\nloss = model(torch.randn(4, 3)).sum()\nloss.backward()\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert "model.to(device)\n" in fix_runs_clean(shell, cells, d)[-1]


def test_a_float64_array_into_a_layer_becomes_a_float32_tensor(shell):
    cells = ["import numpy as np\nimport torch\nX = np.random.rand(8, 3)\nmodel = torch.nn.Linear(3, 1)\n",
             "%%gradcheck\npred = model(X)\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert "model(torch.as_tensor(X, dtype=torch.float32))" in fix_runs_clean(shell, cells, d)[-1]


def test_a_list_of_labels_into_a_loss_becomes_a_tensor(shell):
    cells = ["%%gradcheck\nimport torch\nimport torch.nn.functional as F\nlogits = torch.randn(3, 4, requires_grad=True)\n"
             "labels = [0, 2, 1]\nloss = F.cross_entropy(logits, labels)\nloss.backward()\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert "F.cross_entropy(logits, torch.as_tensor(labels))" in fix_runs_clean(shell, cells, d)[-1]


def test_a_list_a_block_returns_is_named_without_a_fix(shell):
    cells = ["import torch\nimport torch.nn as nn\n\n"
             "class Stem(nn.Module):\n"
             "    def forward(self, x):\n"
             "        return [x, x.flip(-1)]\n",
             "%%gradcheck\nstem, conv = Stem(), nn.Conv2d(3, 4, 3)\nfeats = stem(torch.randn(1, 3, 8, 8))\n"
             "out = conv(feats)\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert (1, 6) in lines_of(d) and d.fix is None


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    cells = ["%%gradcheck\nimport torch\nx = torch.randn(2, 3)\nnoise = torch.randn(x.size)\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert d.language == "zh" and "方法" in d.why


def test_an_array_passed_through_the_users_forward_is_converted_where_the_cell_passes_it(shell):
    cells = ["import numpy as np\nimport torch\nimport torch.nn as nn\n\n"
             "class Net(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.fc1 = nn.Linear(3, 1)\n\n"
             "    def forward(self, x):\n"
             "        return self.fc1(x)\n",
             "%%gradcheck\nX_train = np.random.rand(8, 3).astype(np.float32)\nnet = Net()\n"
             "loss = net(X_train).pow(2).mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert d.lines[0].lineno == 4 and d.lines[0].cell is None or d.lines[0].lineno == 4
    assert "net(torch.as_tensor(X_train))" in fix_runs_clean(shell, cells, d)[-1]


def test_a_float64_frame_through_the_users_model_is_cast_to_its_weights_dtype(shell):
    cells = ["import numpy as np\nimport torch\nimport torch.nn as nn\n"
             "net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))\n",
             "%%gradcheck\nX = np.random.rand(8, 3)\nloss = net(X).pow(2).mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert "net(torch.as_tensor(X, dtype=torch.float32))" in fix_runs_clean(shell, cells, d)[-1]


def test_a_trailing_comma_that_makes_a_tuple_is_removed_with_the_same_slip_after_it(shell):
    cells = ["import torch\nimport torch.nn as nn\n\n"
             "class CNN(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.conv1 = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU())\n"
             "        self.conv2 = nn.Sequential(nn.Conv2d(4, 8, 3), nn.ReLU())\n\n"
             "    def forward(self, x):\n"
             "        x = self.conv1(x),\n"
             "        x = self.conv2(x),  # second block\n"
             "        return x\n",
             "%%gradcheck\ncnn = CNN()\nout = cnn(torch.randn(2, 1, 8, 8))[0]\nout.sum().backward()\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert (1, 11) in lines_of(d) and "comma" in d.why
    fixed = fix_runs_clean(shell, cells, d)
    assert "        x = self.conv1(x)\n        x = self.conv2(x)  # second block\n" in fixed[0]


def test_a_tuple_a_users_module_returns_marks_its_return_and_the_line_that_took_it(shell):
    cells = ["import torch\nimport torch.nn as nn\n\n"
             "class Pool(nn.Module):\n"
             "    def forward(self, a, b):\n"
             "        return a * b, a - b\n",
             "%%gradcheck\npool, fc = Pool(), nn.Linear(4, 2)\nx = torch.randn(3, 4)\n"
             "feats = pool(x, x)\nout = fc(feats * 10)\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert (1, 6) in lines_of(d) and any(n == 4 for _, n in lines_of(d)) and d.fix is None


def test_a_size_made_with_true_division_is_divided_with_floor_division_in_each_such_call(shell):
    """`view(n / 4, 4)`: torch's sizes message has no "invalid types" line; the float is read from its `got`, and
    `/` -> `//` in the call that raised and in the function's other view calls that divide the same way."""
    with pytest.raises(TypeError) as info:
        torch.zeros(8).view(8 / 4, 4)
    err = parse_bad_argument(str(info.value))
    assert (err.function, err.position, err.got) == ("view", 0, "float")
    cells = ["import torch\n\n\ndef boxes(pred, gt):\n    p = pred.view(pred.numel() / 4, 4)  # corners\n"
             "    g = gt.view(gt.numel() / 4, 4)\n    return p, g\n",
             "%%gradcheck\np, g = boxes(torch.zeros(8), torch.zeros(12))\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    fixed = fix_runs_clean(shell, cells, d)
    assert "    p = pred.view(pred.numel() // 4, 4)  # corners\n    g = gt.view(gt.numel() // 4, 4)\n" in fixed[0]


DATASET = ("import torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\nclass Tiles(Dataset):\n"
           "    def __init__(self, n, labelled):\n        self.n, self.labelled = n, labelled\n\n"
           "    def __len__(self):\n        return self.n\n\n    def __getitem__(self, i):\n"
           "        image = torch.zeros(3, 4, 4)\n        if self.labelled:\n            labels = torch.tensor(i % 2)\n"
           "        else:\n            labels = None  # the test split has none\n        return i, image, labels\n")


def test_a_sample_item_default_collate_cannot_batch_is_traced_to_where_getitem_sets_it(shell):
    cells = [DATASET, "%%gradcheck\nloader = DataLoader(Tiles(4, labelled=False), batch_size=2)\n"
                      "for idx, image, labels in loader:\n    pass\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    k = d.elsewhere[0].cell
    assert (k + 1, 3) in lines_of(d) and (k, 18) in lines_of(d) and (k, 17) in lines_of(d)
    assert "Item [2]" in d.title and "None" in d.title and d.fix is None


def test_an_argument_error_a_worker_raised_is_named_at_its_line(shell):
    with pytest.raises(TypeError) as info:
        torch.normal(0, 2)
    err = parse_bad_argument(str(info.value))
    assert (err.function, err.position, err.got) == ("normal", None, "(int, int)")
    cells = [DATASET.replace("        image = torch.zeros(3, 4, 4)\n",
                             "        image = torch.zeros(3, 4, 4) * torch.normal(0, 2)\n"),
             "%%gradcheck\nloader = DataLoader(Tiles(4, labelled=True), batch_size=2, num_workers=1)\n"
             "for idx, image, labels in loader:\n    pass\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    k = d.elsewhere[0].cell
    assert lines_of(d) == [(k, 13), (k + 1, 3)] and "num_workers=0" in d.why and d.fix is None


# -- a value passed by position into another parameter (misbound.py) --

TAGGER = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
          "class Tagger(nn.Module):\n"
          "    def __init__(self):\n"
          "        super().__init__()\n"
          "        self.words = nn.Embedding(10, 4)\n"
          "        self.segments = nn.Embedding(2, 4)  # sentence A / B\n"
          "        self.out = nn.Linear(4, 5)\n\n"
          "    def forward(self, ids, segment_ids=None, labels=None):\n"
          "        h = self.words(ids)\n"
          "        if segment_ids is not None:\n"
          "            h = h + self.segments(segment_ids)\n"
          "        logits = self.out(h)\n"
          "        return logits if labels is None else F.cross_entropy(logits.view(-1, 5), labels.view(-1))\n")


def test_the_index_error_of_an_embedding_is_parsed_for_this_rule_alone():
    with pytest.raises(IndexError) as info:
        torch.nn.Embedding(2, 3)(torch.tensor([5]))
    assert parse_bad_argument(str(info.value)).got == "index out of range in self"


def test_labels_passed_by_position_into_another_parameter_are_passed_by_name(shell):
    cells = [TAGGER, "%%gradcheck\nmodel = Tagger()\nids = torch.randint(0, 10, (2, 6))\n"
                     "labels = torch.arange(12).view(2, 6) % 5\n"
                     "loss = model(ids, labels)  # the tags\nloss.backward()\n"]
    d = card_of(shell, cells, "argument-type", raises=IndexError)
    assert lines_of(d) == [(2, 5)] and "`segment_ids`" in d.title and "`labels`" in d.title
    fixed = fix_runs_clean(shell, cells, d)
    assert "loss = model(ids, labels=labels)  # the tags\n" in fixed[-1]


def test_the_positional_arguments_after_it_keep_their_parameters(shell):
    cells = [TAGGER.replace("def forward(self, ids, segment_ids=None, labels=None)",
                            "def forward(self, ids, segment_ids=None, scale=1.0, labels=None)")
             .replace("logits = self.out(h)", "logits = self.out(h) * scale"),
             "%%gradcheck\nmodel = Tagger()\nids = torch.randint(0, 10, (2, 6))\n"
             "labels = torch.arange(12).view(2, 6) % 5\nloss = model(ids, labels, 0.5)\nloss.backward()\n"]
    d = card_of(shell, cells, "argument-type", raises=IndexError)
    fixed = fix_runs_clean(shell, cells, d)
    assert "loss = model(ids, labels=labels, scale=0.5)\n" in fixed[-1]


def test_an_id_past_the_table_passed_where_it_belongs_is_left_to_the_generic_card(shell):
    cells = [TAGGER, "%%gradcheck\nmodel = Tagger()\nids = torch.randint(0, 10, (2, 6))\n"
                     "segment_ids = torch.full((2, 6), 3)\nloss = model(ids, segment_ids).sum()\n"]
    d = card_of(shell, cells, "generic", raises=IndexError)
    assert d.fix is None


# -- a torch layer built with a value of the wrong type (layer_value.py) --

def _net(layer: str, forward: str) -> str:
    return ("import torch\nimport torch.nn as nn\n\n"
            "class Net(nn.Module):\n"
            "    def __init__(self, flag=1, size=4):\n"
            "        super().__init__()\n"
            f"        self.layer = {layer}  # the layer\n\n"
            "    def forward(self, x):\n"
            f"        return {forward}\n")


def test_the_marks_of_torchs_message_are_all_read_with_what_each_position_takes():
    x = torch.randn(1, 3, 9, 9)
    err = parse_bad_argument(_message(lambda: torch.nn.Conv2d(3, 8, 3, stride=2.0)(x)))
    assert 3 in err.marked and err.wants[3] == "tuple of ints" and err.wants[2] == "Tensor"


@pytest.mark.parametrize("layer, forward, data, edited", [
    ("nn.LSTM(4, 3, bidirectional=flag)", "self.layer(x)[0]", "torch.randn(5, 2, 4)",
     "nn.LSTM(4, 3, bidirectional=bool(flag))"),
    ("nn.Conv2d(3, 8, 3, stride=size / 2)", "self.layer(x)", "torch.randn(1, 3, 9, 9)",
     "nn.Conv2d(3, 8, 3, stride=size // 2)"),
    ("nn.MaxPool2d(3, stride=size / 2)", "self.layer(x)", "torch.randn(1, 3, 9, 9)",
     "nn.MaxPool2d(3, stride=size // 2)"),
])
def test_a_layer_built_with_a_number_of_the_wrong_kind_is_fixed_where_it_was_built(shell, layer, forward, data,
                                                                                    edited):
    cells = [_net(layer, forward), f"%%gradcheck\nnet = Net()\nout = net({data})\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert (1, 7) in lines_of(d) and "was built with" in d.title
    fixed = fix_runs_clean(shell, cells, d)
    assert f"        self.layer = {edited}  # the layer\n" in fixed[0]


def test_a_position_only_one_of_torchs_forms_refuses_is_not_blamed_on_the_layer(shell):
    # NB: a hidden state stacked into one tensor: lstm()'s packed form reads num_layers=1 where it takes a bool
    # (has_biases), its other form takes that int; the layer was built right (c3's Manhattan LSTM)
    cells = [_net("nn.LSTM(4, 3, num_layers=1)", "self.layer(x, torch.zeros(2, 1, 2, 3))"),
             "%%gradcheck\nnet = Net()\nout = net(torch.randn(5, 2, 4))\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert "was built with" not in d.title and (d.fix is None or "bool(" not in d.fix.source)


def test_a_float_size_unpacked_from_view_is_parsed():
    x = torch.randn(2, 3, 4)
    err = parse_bad_argument(_message(lambda: x.view(2, 3, 4.0)))
    assert (err.function, err.position, err.got) == ("view", 2, "float")


def test_a_size_kept_on_self_made_by_true_division_is_divided_with_floor_division_where_it_is_made(shell):
    cells = ["import torch\nimport torch.nn as nn\n\n"
             "class Skip(nn.Module):\n"
             "    def __init__(self, window=12, skip=4):\n"
             "        super().__init__()\n"
             "        self.periods = window / skip  # periods per window\n"
             "        self.skip = skip\n\n"
             "    def forward(self, x):\n"
             "        return x.view(x.size(0), self.periods, self.skip).sum(1)\n",
             "%%gradcheck\nnet = Skip()\nout = net(torch.randn(2, 12))\n"]
    d = card_of(shell, cells, "argument-type", raises=TypeError)
    assert (1, 7) in lines_of(d)
    fixed = fix_runs_clean(shell, cells, d)
    assert "        self.periods = window // skip  # periods per window\n" in fixed[0]
