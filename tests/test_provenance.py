"""Provenance (grad_magic/provenance.py, rules/traced.py): where the run's tensors came from, and the culprits
found by following a failing op's operand back -- through temporaries long gone, into an earlier cell."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import torch

import grad_magic
from grad_magic.provenance import MAX_BIRTHS, Lineage
from earlier_cells import card_of, fix_runs_clean, lines_of


def _record(lineage: Lineage, fn, *args, **kwargs):
    out = fn(*args, **kwargs)
    lineage.record(fn.__name__, args, kwargs, out, (("cell", 1),))
    return out


def test_a_walk_goes_on_through_temporaries_that_are_gone():
    lineage = Lineage()
    before = torch.from_numpy(np.zeros((4, 2)))  # NB: made before the run: no birth
    picked = _record(lineage, torch.index_select, before, 0, torch.arange(2))
    doubled = _record(lineage, torch.mul, picked, 2)
    del picked
    gc.collect()
    found = lineage.origin(doubled, lambda m: m.dtype == torch.float64)
    assert found.birth is None and found.root is before
    assert [b.op for b in found.path] == ["mul", "index_select"]


def test_the_op_that_gave_the_property_is_the_birth():
    lineage = Lineage()
    x = torch.ones(3)
    wide = _record(lineage, torch.Tensor.double, x)
    out = _record(lineage, torch.add, wide, 1)
    found = lineage.origin(out, lambda m: m.dtype == torch.float64)
    assert found.birth is not None and found.birth.op == "double" and found.root is None


def test_an_op_returning_its_input_is_no_birth_and_nothing_is_kept_alive():
    lineage = Lineage()
    x = torch.ones(3)
    _record(lineage, torch.Tensor.add_, x, 1)
    assert lineage.birth_of(x) is None
    y = _record(lineage, torch.mul, x, 2)
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None


def test_an_alias_an_unseen_op_made_is_linked_after_the_tensor_the_run_saw_is_gone():
    """`x = Variable(x)` / `x = x.data` rebinds the name: the tensor the run saw dies, its memory lives on in the
    alias, whose layout still names the birth. A view the run made of the tensor itself is no birth of it."""
    from torch.autograd import Variable
    lineage = Lineage()
    x = _record(lineage, torch.mul, torch.ones(2, 3), 2)
    x = Variable(x)
    gc.collect()
    assert lineage.alias_birth(x) is not None and lineage.alias_birth(x).op == "mul"
    kept = torch.ones(2, 3)  # NB: made before the run
    view = _record(lineage, torch.Tensor.detach, kept)
    del view
    gc.collect()
    assert lineage.alias_birth(kept) is None


def test_births_are_bounded():
    lineage = Lineage()
    x = torch.ones(1)
    kept = [_record(lineage, torch.mul, x, 2) for _ in range(MAX_BIRTHS + 10)]
    assert lineage.birth_of(kept[0]) is None and lineage.birth_of(kept[-1]) is not None


def test_a_full_capture_records_births_and_a_fast_one_does_not():
    with grad_magic.capture() as run:
        y = torch.ones(2) * 3
    assert run.record.lineage.birth_of(y).op in ("mul", "__mul__")
    with grad_magic.capture(grad_magic.CaptureOptions(anomaly=False)) as fast:  # NB: fast mode
        torch.ones(2) * 3
    assert fast.record.lineage is None


# -- culprits from the record --

FLOAT64_FEATURES = ("import numpy as np\nimport torch\n"
                    "feats = torch.from_numpy(np.random.rand(40, 3))\n"
                    "targets = feats.sum(1, keepdim=True).float()\n")
HELPERS = ("def batches(size):\n    for i in range(0, 40, size):\n"
           "        yield feats[i:i + size], targets[i:i + size]\n\n\n"
           "w = torch.zeros(3, 1, requires_grad=True)\n")


def test_a_float64_tensor_an_earlier_cell_made_is_fixed_there_not_at_the_use(shell):
    cells = [FLOAT64_FEATURES, HELPERS,
             "%%gradcheck\nfor xb, yb in batches(8):\n    loss = ((xb @ w - yb) ** 2).mean()\n"
             "    loss.backward()\nfull = (feats @ w).sum()\n"]
    d = card_of(shell, cells, "dtype-mismatch", raises=RuntimeError)
    assert (1, 3) in lines_of(d)
    fixed = fix_runs_clean(shell, cells, d)
    assert "torch.from_numpy(np.random.rand(40, 3)).float()" in fixed[0]


def test_a_tensor_made_on_the_wrong_device_by_a_helper_is_marked_where_it_was_made(shell):
    cells = ["import torch\n\n\ndef targets_for(scores):\n    n = scores.shape[0]\n"
             "    ones = torch.ones(n)\n    return ones * 0.5\n",
             "%%gradcheck\nscores = torch.empty(4, device='meta')\n"
             "loss = torch.nn.functional.mse_loss(scores, targets_for(scores))\n"]
    d = card_of(shell, cells, "device-mismatch", raises=RuntimeError)
    assert (1, 6) in lines_of(d)


def test_a_loss_class_called_with_the_tensors_is_built_then_called(shell):
    cells = ["import torch\nimport torch.nn as nn\n\n\ndef step(pred, y):\n"
             "    loss = nn.BCEWithLogitsLoss(pred, y)\n    return loss\n",
             "%%gradcheck\nstep(torch.randn(4, 2), torch.rand(4, 2))\n"]
    d = card_of(shell, cells, "bool-ambiguous", raises=RuntimeError)
    assert (1, 6) in lines_of(d)
    fixed = fix_runs_clean(shell, cells, d)
    assert "nn.BCEWithLogitsLoss()(pred, y)" in fixed[0]


def test_an_unreduced_loss_read_after_backward_is_reduced_where_it_is_bound(shell):
    cells = ["import torch\nhead = torch.nn.Linear(3, 1)\n",
             "%%gradcheck\nfor _ in range(2):\n    loss = (head(torch.randn(5, 3)) - torch.randn(5, 1)) ** 2\n"
             "    loss.backward()\n    print(loss.item())\n"]
    d = card_of(shell, cells, "backward-non-scalar", raises=RuntimeError)
    fixed = fix_runs_clean(shell, cells, d)
    assert fixed[-1].splitlines()[2].endswith(" ** 2).mean()") and "loss.backward()" in fixed[-1]


def test_the_loss_call_told_not_to_reduce_is_marked_in_the_forward_of_an_earlier_cell(shell):
    cells = ["import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.fc = torch.nn.Linear(3, 4)\n        self.crit = torch.nn.CrossEntropyLoss(reduction='none')\n\n"
             "    def forward(self, x, y):\n        return self.crit(self.fc(x), y)\n\n\nnet = Net()\n",
             "%%gradcheck\nnet(torch.randn(5, 3), torch.randint(0, 4, (5,))).backward()\n"]
    d = card_of(shell, cells, "backward-non-scalar", raises=RuntimeError)
    assert (1, 11) in lines_of(d)


def test_the_view_that_folded_frames_into_the_batch_is_marked(shell):
    cells = ["import torch\n\n\nclass Clips(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.fc = torch.nn.Linear(6, 3)\n\n    def forward(self, x):\n"
             "        frames = x.view(-1, 6)\n        return self.fc(frames)\n\n\nnet = Clips()\n",
             "%%gradcheck\nclips = torch.randn(4, 2, 6)\nlabels = torch.randint(0, 3, (4,))\n"
             "loss = torch.nn.functional.cross_entropy(net(clips), labels)\n"]
    d = card_of(shell, cells, "batch-size-mismatch", raises=ValueError)
    assert (1, 10) in lines_of(d)


def test_the_no_grad_block_that_cut_the_graph_is_marked_in_the_caller_of_the_helper(shell):
    cells = ["import torch\nw = torch.randn(3, 1, requires_grad=True)\n\n\ndef net(x):\n    return x @ w\n\n\n"
             "def query_loss(x, y):\n    with torch.no_grad():\n        out = net(x)\n"
             "    return ((out - y) ** 2).mean()\n",
             "%%gradcheck\nloss = query_loss(torch.randn(4, 3), torch.randn(4, 1))\nloss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (1, 10) in lines_of(d)


def test_the_line_holding_the_out_of_range_label_is_marked_in_the_cell_that_made_the_labels(shell):
    cells = ["import torch\nhead = torch.nn.Linear(3, 4)\n",
             "labels = torch.tensor([\n    [0, 1, 2],\n    [3, -1, -1],\n])\n",
             "%%gradcheck\nfor row in labels:\n"
             "    torch.nn.functional.cross_entropy(head(torch.randn(3, 3)), row).backward()\n"]
    d = card_of(shell, cells, "target-out-of-range", raises=IndexError)
    assert (2, 3) in lines_of(d) and (2, 2) not in lines_of(d)


def test_the_array_a_dataset_converts_is_marked_when_its_values_are_out_of_range(shell):
    cells = ["import numpy as np\nimport torch\n\n\nclass Masks(torch.utils.data.Dataset):\n"
             "    def __len__(self):\n        return 4\n\n    def __getitem__(self, i):\n"
             "        mask = np.full((2, 2), 255, dtype=np.uint8)\n        return torch.as_tensor(mask).long()\n",
             "%%gradcheck\nconv = torch.nn.Conv2d(1, 2, 1)\nfor m in torch.utils.data.DataLoader(Masks(), batch_size=2):\n"
             "    torch.nn.functional.cross_entropy(conv(torch.randn(2, 1, 2, 2)), m).backward()\n"]
    d = card_of(shell, cells, "target-out-of-range", raises=IndexError)
    assert (1, 10) in lines_of(d)


def test_a_numpy_call_two_helpers_down_is_marked_where_it_raised_beside_the_callers_fix(shell):
    cells = ["import torch\n\n\ndef score(emb):\n    arr = emb.numpy()\n    return float(arr.sum())\n\n\n"
             "class Evaluator:\n    def __init__(self, layer):\n        self.layer = layer\n\n"
             "    def run(self):\n        emb = self.layer(torch.ones(2, 3))\n        return score(emb)\n",
             "%%gradcheck\nev = Evaluator(torch.nn.Linear(3, 3))\nev.run()\n"]
    d = card_of(shell, cells, "numpy-on-grad-tensor", raises=RuntimeError)
    assert (1, 5) in lines_of(d) and (1, 15) in lines_of(d)
    fix_runs_clean(shell, cells, d)


def test_a_second_backward_after_the_weights_changed_in_place_recomputes_the_forward(shell):
    # NB: retain_graph=True (the fix for two losses of one forward) would fail here with "modified by an
    # inplace operation": the run saw the graph's weights change between the two backward() calls
    cells = ["import torch\nnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))\n\n\n"
             "@torch.no_grad()\ndef climb(rho=0.05):\n    for p in net.parameters():\n        p.add_(rho * p.grad)\n"
             "        p.grad = None\n",
             "%%gradcheck\nfor x in torch.randn(3, 5, 3):\n    out = net(x)\n    out.pow(2).mean().backward()\n"
             "    climb()\n    out.abs().mean().backward()\n"]
    d = card_of(shell, cells, "backward-twice", raises=RuntimeError)
    fixed = fix_runs_clean(shell, cells, d)
    assert "    net(x).abs().mean().backward()" in fixed[-1] and "retain_graph" not in fixed[-1]


def test_a_loss_made_anew_from_item_numbers_marks_where_the_numbers_were_taken(shell):
    cells = ["import torch\nnet = torch.nn.Linear(3, 1)\n\n\ndef step_loss(x):\n    total = 0\n"
             "    total += net(x).pow(2).mean().item()\n    return torch.tensor(total)\n",
             "%%gradcheck\nstep_loss(torch.randn(4, 3)).backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (1, 7) in lines_of(d)


LABELS_DATASET = """import torch
from torch.utils.data import DataLoader, Dataset


class Pairs(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        x = torch.randn(4)
        label = torch.FloatTensor([i % 3])
        return x, label


loader = DataLoader(Pairs(), batch_size=4)
head = torch.nn.Linear(4, 3)
"""


def test_a_batch_is_followed_into_the_datasets_line_that_made_its_field(shell):
    """The labels' odd shape per sample ((1,): a list of one) came from the Dataset; the collate only stacked
    them. No op the run saw made them (a legacy constructor), so the line is the one that bound the field
    `__getitem__` returns -- found from which name of the `for` target holds the batch."""
    cells = [LABELS_DATASET,
             "%%gradcheck\nfor i, (xb, labels) in enumerate(loader):\n"
             "    loss = torch.nn.functional.binary_cross_entropy_with_logits(head(xb), labels)\n"]
    d = card_of(shell, cells, "target-size-mismatch", raises=ValueError)
    assert (1, 11) in lines_of(d), lines_of(d)


def test_a_batch_size_is_the_loaders_not_a_samples(shell):
    """A property only the batch's size decides is not followed into the samples: the stack gave it."""
    lineage = Lineage()
    samples = [torch.ones(3) for _ in range(4)]
    batch = _record(lineage, torch.stack, samples)
    found = lineage.origin(batch, lambda m: m.shape[0] == 4)
    assert found.birth is not None and found.birth.op == "stack" and not found.sampled
    found = lineage.origin(batch, lambda m: m.shape[-1:] == (3,))
    assert found.sampled


def test_a_dict_batch_is_followed_into_the_key_the_dataset_returns(shell):
    cells = [LABELS_DATASET.replace("        return x, label\n", "        return {'x': x, 'y': label}\n"),
             "%%gradcheck\nfor batch in loader:\n"
             "    loss = torch.nn.functional.binary_cross_entropy_with_logits(head(batch['x']), batch['y'])\n"]
    d = card_of(shell, cells, "target-size-mismatch", raises=ValueError)
    assert (1, 11) in lines_of(d), lines_of(d)


def test_a_batch_read_by_a_helpers_loop_in_another_cell_is_followed_with_other_names(shell):
    """The same bug, every name changed and the loop in a helper of another cell: the loop's names are read in
    the helper's frame (the traceback's), the loader is its parameter."""
    cells = [LABELS_DATASET.replace("loader = ", "batches = "),
             "def fit(data, net):\n    for step, (feats, ys) in enumerate(data):\n"
             "        loss = torch.nn.functional.binary_cross_entropy_with_logits(net(feats), ys)\n",
             "%%gradcheck\nfit(batches, head)\n"]
    d = card_of(shell, cells, "target-size-mismatch", raises=ValueError)
    assert (1, 11) in lines_of(d), lines_of(d)
