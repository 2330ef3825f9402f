"""shape-mismatch at an op of the user's own code (rules/shapes/at_op.py): the op that raised named where it is
(a method in an earlier cell), its operands' shapes as the frame held them, the layer's construction line where
the run built it, `.view(` made `.reshape(` for non-contiguous memory (executed again in a fresh session), and
nothing claimed that a worker raised (its frames are text)."""
from __future__ import annotations

import torch

from earlier_cells import card_of, fix_runs_clean, lines_of

ENCODER = ("import torch\nimport torch.nn as nn\n\n\nclass Encoder(nn.Module):\n"
           "    def __init__(self, features):\n        super().__init__()\n"
           "        self.pe = torch.zeros(24, 1, features)\n        self.rnn = nn.GRU(features + 1, 8, batch_first=True)\n\n"
           "    def forward(self, x):\n        x = x + self.pe[:x.size(1)]\n        return self.rnn(x)\n")


def test_sizes_that_do_not_broadcast_in_a_method_of_an_earlier_cell(shell):
    cells = [ENCODER, "%%gradcheck\nenc = Encoder(16)\nbatch = torch.zeros(8, 24, 16)\nout = enc(batch)\n"]
    d = card_of(shell, cells, "shape-mismatch", raises=RuntimeError)
    k = d.elsewhere[0].cell
    assert lines_of(d) == [(k, 12), (k + 1, 4)] and d.lines[0].function == "Encoder.forward"
    assert "Sizes 8 and 24" in d.title and "`x` (8, 24, 16)" in d.why and d.fix is None


def test_an_rnn_given_another_feature_count_names_the_line_that_built_it(shell):
    cells = [ENCODER, "%%gradcheck\nenc = Encoder(16)\nenc.pe = torch.zeros(1)\n"
                      "out = enc(torch.zeros(8, 5, 16))\n"]
    d = card_of(shell, cells, "shape-mismatch", raises=RuntimeError)
    k = d.elsewhere[0].cell
    assert lines_of(d) == [(k, 13), (k + 1, 4), (k, 9)]
    assert "built for 17 input features, given 16" in d.title and "GRU(17, 8, batch_first=True)" in d.why


def test_view_of_non_contiguous_memory_is_made_a_reshape_that_computes_the_same(shell):
    cells = ["import torch\n\n\ndef heads(h):\n    t = h.transpose(0, 1)  # (seq, batch, dim)\n"
             "    return t.view(-1, 4)\n",
             "%%gradcheck\nh = torch.arange(24.).reshape(2, 3, 4)\nflat = heads(h)\n"]
    d = card_of(shell, cells, "shape-mismatch", raises=RuntimeError)
    assert (d.elsewhere[0].cell, 6) in lines_of(d)
    fixed = fix_runs_clean(shell, cells, d)
    assert "    return t.reshape(-1, 4)" in fixed[0] and "# (seq, batch, dim)" in fixed[0]
    assert torch.equal(shell.user_ns["flat"], torch.arange(24.).reshape(2, 3, 4).transpose(0, 1).reshape(-1, 4))


def test_a_reshape_sized_for_other_inputs_is_named_without_a_fix(shell):
    cells = ["%%gradcheck\nimport torch\nx = torch.zeros(4, 16, 2, 3)\nflat = x.view(-1, 16 * 5 * 5)\n"]
    d = card_of(shell, cells, "shape-mismatch", raises=RuntimeError)
    assert lines_of(d) == [(d.cell, 4)] and d.fix is None and "[-1, 400]" in d.title


def test_a_shape_error_a_worker_raised_is_left_to_the_generic_card(shell):
    cells = ["import torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\nclass Mix(Dataset):\n"
             "    def __len__(self):\n        return 2\n\n    def __getitem__(self, i):\n"
             "        return torch.zeros(5) + torch.zeros(4 + i)\n",
             "%%gradcheck\nfor b in DataLoader(Mix(), num_workers=1):\n    pass\n"]
    card_of(shell, cells, "generic", raises=RuntimeError)
