"""The generic card (rules/generic.py, rules/plain.py): for an error no rule explains, what torch's message means
in plain words (each message raised here by real torch), the user's line nearest the failure (in an earlier
cell, or the `__getitem__` a DataLoader worker ran), the library call in between, and the tensors there."""
from __future__ import annotations

import pytest

from grad_magic import catalog
from grad_magic.rules.plain import PLAIN, inner_message, library_call, module_of, plain_words
from grad_magic.rules.shapes.at_op import AT_OP
from earlier_cells import card_of, lines_of

HEAD = "%%gradcheck\nimport torch\nimport numpy as np\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

# (the plain entry, the code that makes torch raise it, words the card's title must hold)
RAISED = [
    ("broadcast", "a = torch.zeros(3, 4)\nb = torch.zeros(3, 5)\nc = a + b\n", "Sizes 4 and 5"),
    ("expand", "a = torch.zeros(3, 2)\nb = a.expand(4, 3)\n", "size 2 into 3"),
    ("cat", "a = torch.zeros(2, 3)\nb = torch.zeros(2, 4)\nc = torch.cat([a, b])\n", "(3 and 4)"),
    ("dim_range", "a = torch.zeros(2, 3)\ns = F.softmax(a, dim=2)\n", "Dimension 2 asked of a tensor with 2"),
    ("index_bounds", "a = torch.zeros(3)\nv = a[5]\n", "Index 5 is past the end of dimension 0 (size 3)"),
    ("too_many_indices", "a = torch.zeros(3)\nv = a[0, 1]\n", "tensor's 1 dimension"),
    ("index_range", "emb = nn.Embedding(5, 2)\nids = torch.tensor([7])\nout = emb(ids)\n", "outside the table"),
    ("index_dtype", "emb = nn.Embedding(5, 2)\nids = torch.tensor([1.0])\nout = emb(ids)\n", "integers"),
    ("index_dtype", "a = torch.zeros(3)\ni = torch.tensor([1.0])\nv = a[i]\n", "integers"),
    ("scalar", "a = torch.zeros(3)\nv = a.item()\n", "several values"),
    ("scalar", "a = torch.zeros(3)\nv = float(a)\n", "several values"),
    ("object_array", "arr = np.array([np.zeros(2), np.zeros(3)], dtype=object)\nt = torch.tensor(arr)\n", "NumPy"),
    ("ragged", "t = torch.tensor([[1, 2], [3]])\n", "(2 and 1)"),
    ("layer_norm", "ln = nn.LayerNorm(4)\nx = torch.zeros(2, 5)\ny = ln(x)\n", "[4], given an input of size [2, 5]"),
    ("batch_norm", "bn = nn.BatchNorm1d(4)\nx = torch.zeros(2, 5)\ny = bn(x)\n", "4 features, given 5"),
    ("batch_of_one", "bn = nn.BatchNorm1d(4)\nx = torch.zeros(1, 4)\ny = bn(x)\n", "batch of one"),
    ("rnn_input", "lstm = nn.LSTM(4, 3)\nx = torch.zeros(2, 5, 6)\nout = lstm(x)\n", "4 input features, given 6"),
    ("rnn_state", "gru = nn.GRU(4, 3, batch_first=True)\nx = torch.zeros(2, 5, 4)\nout = gru(x, torch.zeros(2, 3))\n",
     "2-D"),
    ("rnn_hidden", "lstm = nn.LSTM(4, 3, num_layers=2, batch_first=True)\nh = torch.zeros(2, 8, 3)\n"
                   "out = lstm(torch.zeros(5, 6, 4), (h, h))\n", "shaped (2, 8, 3) where its input needs (2, 5, 3)"),
    ("rnn_hidden", "gru = nn.GRU(4, 3)\nout = gru(torch.zeros(6, 5, 4), torch.zeros(1, 8, 3))\n",
     "shaped (1, 8, 3) where its input needs (1, 5, 3)"),
    ("too_small", "x = torch.zeros(1, 1, 2, 2)\ny = F.max_pool2d(x, 3)\n", "smaller than the kernel"),
    ("too_small", "conv = nn.Conv2d(1, 1, 5)\nx = torch.zeros(1, 1, 3, 3)\ny = conv(x)\n", "smaller than the kernel"),
    ("pooled_size", "x = torch.zeros(1, 2, 3)\ny = F.max_pool1d(x, kernel_size=5)\n", "size 0"),
    ("conv_dims", "conv = nn.Conv2d(3, 4, 3)\nx = torch.zeros(2, 2, 3, 5, 5)\ny = conv(x)\n", "[2, 2, 3, 5, 5]"),
    ("view_stride", "a = torch.zeros(2, 3)\nv = a.t().view(6)\n", "view()"),
    ("float_only", "a = torch.tensor([1, 2])\nm = a.mean()\n", "mean() needs a floating-point tensor, got Long"),
    ("cast", "a = torch.zeros(2, dtype=torch.long)\na.div_(2)\n", "Float result cannot be stored in a Long"),
    ("where_mask", "a = torch.zeros(2)\nw = torch.where(a, 1, 0)\n", "got Float"),
    ("bmm", "a = torch.zeros(2, 3, 4)\nb = torch.zeros(2, 5, 6)\nc = torch.bmm(a, b)\n", "[2, 5, …], not [2, 4, …]"),
    ("dot", "a = torch.zeros(3)\nb = torch.zeros(4)\nc = torch.matmul(a, b)\n", "lengths 3 and 4"),
    ("worker_died", "import os\nfrom torch.utils.data import DataLoader, Dataset\nclass Dies(Dataset):\n"
                    "    def __len__(self):\n        return 2\n    def __getitem__(self, i):\n        os._exit(1)\n"
                    "batch = next(iter(DataLoader(Dies(), num_workers=1)))\n", "worker process died"),
    ("none_attribute", "x = None\ns = x.shape\n", "`.shape`"),
    ("not_callable", "a = torch.zeros(2)\nb = a(3)\n", "A Tensor called like a function"),
    ("unpack", "batch = (torch.zeros(2), torch.zeros(2))\nx, y, z = batch\n", "3 names"),
    ("unpack", "batch = (torch.zeros(2), torch.zeros(2), torch.zeros(2))\nx, y = batch\n", "2 names"),
]


@pytest.mark.parametrize("name,code,title", RAISED, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(RAISED)])
def test_torchs_own_message_in_plain_words(shell, name, code, title):
    """The generic card says it; so does shape-mismatch's card for a shape error at the user's op (at_op.py)."""
    d = card_of(shell, [HEAD + code], "shape-mismatch" if name in AT_OP else "generic", raises=Exception)
    assert plain_words(d.error_message)[0] == name
    assert title in d.title, d.title
    assert d.summary == catalog.message(f"plain.{name}.means", "en", **_params(d.error_message))
    assert d.lines[0].lineno == len((HEAD + code).rstrip("\n").split("\n"))  # NB: then a layer's own line


def _params(message):
    from grad_magic.rules.plain import fill
    return fill(plain_words(message)[1])


# raised by Lightning, not torch (tests/test_libraries.py raises them); before Lightning 1.1 the first said "No
# `loss` value in the dictionary returned from `model.training_step()`." (read in the test below)
LIGHTNING = {"step_no_loss", "step_output"}


def test_every_entry_is_raised_by_real_torch_above_and_said_in_both_languages():
    assert {name for name, _ in PLAIN} == {name for name, _, _ in RAISED} | LIGHTNING
    for name, _ in PLAIN:
        for part in ("title", "means"):
            assert set(catalog.MESSAGES[f"plain.{name}.{part}"]) == {"en", "zh"}


def test_a_message_no_entry_knows_keeps_the_plain_generic_card(shell):
    d = card_of(shell, [HEAD + "raise RuntimeError('something torch never says')\n"], "generic", raises=RuntimeError)
    assert d.title == "RuntimeError in your cell" and plain_words(d.error_message) is None


def test_the_library_call_between_the_line_and_the_error_is_named(shell):
    d = card_of(shell, [HEAD + "emb = nn.Embedding(5, 2)\nids = torch.tensor([7])\nout = emb(ids)\n"], "generic",
                raises=IndexError)
    assert "`torch.nn.modules.sparse.Embedding.forward`" in d.why
    assert [t.name for t in d.tensors] == ["emb", "ids"]


def test_an_error_in_a_method_of_an_earlier_cell_marks_that_line_and_the_calling_one(shell):
    cells = ["import torch\n\n\nclass Head(torch.nn.Module):\n    def forward(self, x, w):\n"
             "        return (x * w).softmax(dim=2)\n",
             "%%gradcheck\nhead = Head()\nfeats = torch.zeros(2, 3)\nout = head(feats, torch.ones(2, 3))\n"]
    d = card_of(shell, cells, "generic", raises=IndexError)
    k = d.elsewhere[0].cell
    assert lines_of(d) == [(k, 6), (k + 1, 4)] and d.lines[0].function == "Head.forward"
    assert {t.name for t in d.tensors} == {"x", "w"} and "Dimension 2 asked of a tensor with 2" in d.title


WORKER_CELLS = [
    "import torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\nclass Mix(Dataset):\n"
    "    def __init__(self, clips):\n        self.clips = clips\n\n    def __len__(self):\n        return len(self.clips)\n\n"
    "    def __getitem__(self, i):\n        a, b = self.clips[i], self.clips[(i + 1) % len(self.clips)]\n"
    "        return 0.7 * a + 0.3 * b\n",
    "%%gradcheck\nclips = [torch.zeros(5), torch.zeros(8)]\nloader = DataLoader(Mix(clips), batch_size=2, num_workers=1)\n"
    "for batch in loader:\n    print(batch.shape)\n",
]


def test_an_error_a_dataloader_worker_raised_is_unwrapped_and_its_line_named(shell):
    d = card_of(shell, WORKER_CELLS, "generic", raises=RuntimeError)
    k = d.elsewhere[0].cell
    assert lines_of(d) == [(k, 14), (k + 1, 4)] and d.lines[0].text.strip() == "return 0.7 * a + 0.3 * b"
    assert "Sizes 5 and 8" in d.title and "num_workers=0" in d.why
    assert not d.tensors  # NB: the worker's variables died with it; the namespace's `a`/`b` are not its


def test_the_inner_message_of_a_worker_error():
    text = ("Caught RuntimeError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):\n"
            '  File "/x/worker.py", line 3, in _worker_loop\n    data = fetcher.fetch(index)\n'
            "RuntimeError: The size of tensor a (5) must match the size of tensor b (8) at non-singleton dimension 0\n")
    assert inner_message(text).startswith("The size of tensor a (5)")
    assert inner_message("plain message") == "plain message"


def test_library_call_and_module_names():
    assert module_of("/v/lib/python3.11/site-packages/torch/nn/functional.py") == "torch.nn.functional"
    assert module_of("/v/lib/python3/dist-packages/torch/utils/data/__init__.py") == "torch.utils.data"
    assert module_of("/home/me/train.py") == ""
    assert library_call(None, lambda f: True) == ""


def test_lightnings_older_words_for_a_dict_without_loss_are_read():
    assert plain_words("No `loss` value in the dictionary returned from `model.training_step()`.")[0] == \
        "step_no_loss"


def test_a_hidden_state_made_for_a_full_batch_is_marked_where_it_was_made(shell):
    """The last, shorter batch meets a state made for `batch_size` rows (udacity's sentiment RNN, blind batch c4):
    the card marks the line that gave the state its batch size, in the model's `init_hidden` of an earlier cell."""
    cells = [HEAD + "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                    "        self.lstm = nn.LSTM(4, 3, batch_first=True)\n\n    def init_hidden(self, n):\n"
                    "        return (torch.zeros(1, n, 3), torch.zeros(1, n, 3))\n\n"
                    "    def forward(self, x, h):\n        return self.lstm(x, h)\n\nnet = Net()\n",
             "%%gradcheck\nbatch_size = 4\nh = net.init_hidden(batch_size)\n"
             "for x in torch.zeros(10, 5, 4).split(batch_size):\n    out, _ = net(x, h)\n"]
    made = cells[0].split("\n").index("        return (torch.zeros(1, n, 3), torch.zeros(1, n, 3))") + 1
    d = card_of(shell, cells, "shape-mismatch", raises=RuntimeError)
    assert (1, made) in lines_of(d), lines_of(d)
    assert f"Line {made} of In [1] made the hidden state for a batch of 4" in d.why, d.why
