"""target-not-class-indices (rules/shapes/class_targets.py): torch's messages, what the target's values make
certain, and cards through a real shell whose fixes run again in a fresh session."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from grad_magic.rules.shapes.class_targets import Shape, TargetError, parse_target_shape, shape_of_target
from earlier_cells import card_of, fix_runs_clean


def _message(target: torch.Tensor, loss=F.cross_entropy) -> str:
    with pytest.raises(RuntimeError) as info:
        loss(torch.randn(4, 3), target)
    return str(info.value)


def test_the_messages_of_this_torch_are_the_ones_keyed_on():
    one_hot = F.one_hot(torch.tensor([0, 1, 2, 0]), 3)
    assert parse_target_shape(_message(one_hot)) == TargetError(True)  # int64, the input's shape
    assert parse_target_shape(_message(one_hot.to(torch.uint8))) == TargetError(True)
    assert parse_target_shape(_message(torch.zeros(4, 1, dtype=torch.long))) == TargetError(False)
    assert parse_target_shape(_message(one_hot[:, :2].float())) == TargetError(False)
    assert parse_target_shape(_message(one_hot, F.nll_loss)) == TargetError(False)
    assert parse_target_shape("Target 3 is out of bounds.") is None


@pytest.mark.parametrize("target,shape", [
    (F.one_hot(torch.tensor([0, 1, 2, 0]), 3), Shape.ONE_HOT),
    (F.one_hot(torch.tensor([0, 1, 2, 0]), 3).float(), Shape.ONE_HOT),
    (torch.tensor([[0], [2], [1], [1]]), Shape.COLUMN),
    (torch.tensor([[0.0], [2.0], [1.0], [1.0]]), Shape.OTHER),  # a float column: regression targets, not labels
    (F.one_hot(torch.tensor([0, 1, 1, 0]), 2), Shape.ONE_HOT_WIDTH),
    (torch.tensor([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1]]), Shape.OTHER),  # several labels a sample
    (torch.tensor([[0, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1]]), Shape.OTHER),  # a row with no 1
    (torch.tensor([[0, 2, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1]]), Shape.OTHER),  # a 2 among them
    (torch.zeros(4, 3, 2, dtype=torch.long), Shape.OTHER),
])
def test_what_the_target_holds(target, shape):
    assert shape_of_target(target, (4, 3)) is shape


def test_argmax_gives_the_same_loss_as_the_one_hot_probabilities():
    logits, labels = torch.randn(6, 4), torch.tensor([0, 3, 1, 2, 2, 0])
    one_hot = F.one_hot(labels, 4)
    assert torch.allclose(F.cross_entropy(logits, one_hot.argmax(dim=1)), F.cross_entropy(logits, one_hot.float()))


# -- through the shell --

def test_one_hot_labels_of_an_earlier_cell_are_turned_into_indices_on_the_loss_call(shell):
    cells = ["import torch\nimport torch.nn.functional as F\n"
             "y_train = F.one_hot(torch.randint(0, 5, (16,)), 5)\nx_train = torch.randn(16, 8)\n",
             "%%gradcheck\nnet = torch.nn.Linear(8, 5)\nloss = F.cross_entropy(net(x_train), y_train)\n"
             "loss.backward()\n"]
    d = card_of(shell, cells, "target-not-class-indices", raises=RuntimeError)
    assert "(16, 5)" in d.title and d.names == ("y_train",)
    assert (1, 3) in [(sl.cell, sl.lineno) for sl in d.lines]  # where the labels were made one-hot
    fixed = fix_runs_clean(shell, cells, d)
    assert "F.cross_entropy(net(x_train), y_train.argmax(dim=1))" in fixed[-1]


def test_one_hot_rows_narrower_than_the_classes_get_no_fix(shell):
    cells = ["%%gradcheck\nimport torch\nimport torch.nn.functional as F\n"
             "y = F.one_hot(torch.tensor([0, 1, 1, 0]), 2)\nloss = F.cross_entropy(torch.randn(4, 3), y)\n"]
    d = card_of(shell, cells, "target-not-class-indices", raises=RuntimeError)
    assert d.fix is None and "another number of classes" in d.why


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    cells = ["%%gradcheck\nimport torch\ny = torch.randint(0, 3, (6, 1))\n"
             "loss = torch.nn.functional.cross_entropy(torch.randn(6, 3), y)\n"]
    d = card_of(shell, cells, "target-not-class-indices", raises=RuntimeError)
    assert d.language == "zh" and "(N,)" in d.why and "y.squeeze(1)" in d.fix.source
