"""The optimizer family's silent rules when the loop, the step or the update lives in a helper or a method
defined in an earlier cell: found from what ran (the steps' frames, the tracker's in-place updates, what the
frames held), fixed in the cell where the loop is -- and silent on healthy helper-based loops."""
from __future__ import annotations

import pytest
import torch

import grad_magic
from gm_shell import run

# NB: the first optimizer made in a process imports sympy, which adds a warning filter for good (see
# tests/test_rules_optimizer.py): made here, at collection.
torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)

SETUP = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ntorch.manual_seed(0)\n"
         "model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))\n"
         "opt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
         "batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(6)]\n")
MINE = ("grads-not-zeroed", "optimizer-not-on-model", "frozen-by-no-grad")


def cells(shell, *sources: str) -> list:
    """Run plain cells, then the last one under %%gradcheck; the diagnoses of my kinds."""
    for source in sources[:-1]:
        assert run(shell, source).success
    result = run(shell, "%%gradcheck\n" + sources[-1])
    assert result.success, result.error_in_exec
    return [d for d in grad_magic.last_diagnoses() if d.kind in MINE]


def applied(shell, d, *rerun: str) -> list:
    """Run each fixed cell of `d` (the earlier ones, then this one when it changes), then `rerun` under
    %%gradcheck: the kinds diagnosed then."""
    for cell in d.fix.elsewhere:
        assert run(shell, cell.source).success
    last = d.fix.source or "%%gradcheck\n" + rerun[-1]
    assert run(shell, last).success
    return [x.kind for x in grad_magic.last_diagnoses() if x.kind in MINE]


# -- grads-not-zeroed: a helper's loop --

EXECUTOR = ("class Executor:\n"
            "    def train(self, model, optimizer, batches):\n"
            "        for x, y in batches:\n"
            "            loss = F.mse_loss(model(x), y)\n"
            "            loss.backward()\n"
            "            nn.utils.clip_grad_norm_(model.parameters(), 5.0)\n"
            "            optimizer.step()\n")


def test_a_method_that_never_zeroes_is_fixed_in_its_cell(shell):
    found = cells(shell, SETUP, EXECUTOR, "executor = Executor()\nfor epoch in range(2):\n"
                                          "    executor.train(model, opt, batches)\n")
    d = next(d for d in found if d.kind == "grads-not-zeroed")
    assert d.names == ("opt",) and "line 7 of In [2]" in d.summary
    assert {(sl.cell, sl.lineno, sl.function) for sl in d.lines} >= {(2, 5, "Executor.train"), (2, 7, "Executor.train")}
    (fixed,) = d.fix.elsewhere
    assert fixed.cell == 2 and d.fix.source == ""
    assert fixed.source.splitlines()[4:6] == ["            optimizer.zero_grad()", "            loss.backward()"]
    assert applied(shell, d, "executor = Executor()\nfor epoch in range(2):\n"
                             "    executor.train(model, opt, batches)\n") == []


ONCE = ("def train(net, batches, optimizer):\n"
        "    optimizer.zero_grad()\n"
        "    for x, y in batches:\n"
        "        loss = F.mse_loss(net(x), y)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n")


def test_zero_grad_once_per_epoch_in_a_helper_is_named(shell):
    found = cells(shell, SETUP, ONCE, "for epoch in range(2):\n    train(model, batches, opt)\n")
    d = next(d for d in found if d.kind == "grads-not-zeroed")
    assert (2, 2) in {(sl.cell, sl.lineno) for sl in d.lines}
    assert "line 2 of In [2] runs once, before the loop" in d.why
    assert applied(shell, d, "for epoch in range(2):\n    train(model, batches, opt)\n") == []


MANUAL = ("def sgd_update(params, lr):\n"
          "    with torch.no_grad():\n"
          "        for p in params:\n"
          "            p -= lr * p.grad\n")
MANUAL_LOOP = ("for step in range(5):\n    loss = F.mse_loss(model(batches[0][0]), batches[0][1])\n"
               "    loss.backward()\n    sgd_update(list(model.parameters()), 0.01)\n")


def test_a_hand_written_update_in_a_helper_clears_the_gradients_it_used(shell):
    found = cells(shell, SETUP, MANUAL, MANUAL_LOOP)
    d = next(d for d in found if d.kind == "grads-not-zeroed")
    assert [(sl.cell, sl.lineno, sl.function) for sl in d.lines][0] == (2, 4, "sgd_update")
    assert "`model.0.weight`" in d.title and "5 times" in d.summary
    (fixed,) = d.fix.elsewhere
    assert fixed.source.splitlines()[3:5] == ["            p -= lr * p.grad", "            p.grad.zero_()"]
    assert applied(shell, d, MANUAL_LOOP) == []


MANUAL_DATA = ("def train_epoch(m, bs, lr):\n    for x, y in bs:\n        loss = F.mse_loss(m(x), y)\n"
               "        loss.backward()\n        torch.nn.utils.clip_grad_norm_(m.parameters(), 0.25)\n"
               "        for p in m.parameters():\n            p.data.add_(p.grad, alpha=-lr)\n")


def test_an_update_through_data_in_a_helper_clears_the_gradients_it_used(shell):
    # word_language_model by hand: `p.data.add_(p.grad, alpha=-lr)` -- a fresh `.data` tensor each time
    found = cells(shell, SETUP, MANUAL_DATA, "train_epoch(model, batches, 0.1)\n")
    d = next(d for d in found if d.kind == "grads-not-zeroed")
    assert [(sl.cell, sl.lineno, sl.function) for sl in d.lines] == [(2, 7, "train_epoch")]
    assert "`model.0.weight`" in d.title
    (fixed,) = d.fix.elsewhere
    assert fixed.source.splitlines()[6:8] == ["            p.data.add_(p.grad, alpha=-lr)", "            p.grad.zero_()"]
    assert applied(shell, d, "train_epoch(model, batches, 0.1)\n") == []


HEALTHY = {
    "set_to_none_in_the_helper": ("def train(m, o, bs):\n    for x, y in bs:\n        o.zero_grad(set_to_none=True)\n"
                                  "        F.mse_loss(m(x), y).backward()\n        o.step()\n"),
    "model_zero_grad_in_the_helper": ("def train(m, o, bs):\n    for x, y in bs:\n        m.zero_grad()\n"
                                      "        F.mse_loss(m(x), y).backward()\n        o.step()\n"),
    "accumulation_every_3_batches": ("def train(m, o, bs):\n    for i, (x, y) in enumerate(bs):\n"
                                     "        (F.mse_loss(m(x), y) / 3).backward()\n        if (i + 1) % 3 == 0:\n"
                                     "            o.step()\n            o.zero_grad()\n"),
    "zero_grad_then_clip": ("def train(m, o, bs):\n    for x, y in bs:\n        o.zero_grad()\n"
                            "        F.mse_loss(m(x), y).backward()\n"
                            "        nn.utils.clip_grad_norm_(m.parameters(), 1.0)\n        o.step()\n"),
    "grads_zeroed_through_data": ("def train(m, o, bs):\n    for x, y in bs:\n        F.mse_loss(m(x), y).backward()\n"
                                  "        o.step()\n        for p in m.parameters():\n"
                                  "            p.grad.data.zero_()\n"),
    "manual_update_then_none": ("def train(m, o, bs):\n    for x, y in bs:\n        F.mse_loss(m(x), y).backward()\n"
                                "        with torch.no_grad():\n            for p in m.parameters():\n"
                                "                p -= 0.01 * p.grad\n                p.grad = None\n"),
    "manual_update_then_zero": ("def train(m, o, bs):\n    for x, y in bs:\n        F.mse_loss(m(x), y).backward()\n"
                                "        with torch.no_grad():\n            for p in m.parameters():\n"
                                "                p -= 0.01 * p.grad\n                p.grad.zero_()\n"),
    "manual_update_through_data_then_zero": ("def train(m, o, bs):\n    for x, y in bs:\n"
                                             "        F.mse_loss(m(x), y).backward()\n        for p in m.parameters():\n"
                                             "            p.data.add_(p.grad, alpha=-0.01)\n            p.grad.zero_()\n"),
    "manual_update_through_data_then_none": ("def train(m, o, bs):\n    for x, y in bs:\n"
                                             "        F.mse_loss(m(x), y).backward()\n        for p in m.parameters():\n"
                                             "            p.data.sub_(0.01 * p.grad)\n            p.grad = None\n"),
    "closure_step": ("def train(m, o, bs):\n    for x, y in bs:\n        def closure():\n            o.zero_grad()\n"
                     "            loss = F.mse_loss(m(x), y)\n            loss.backward()\n            return loss\n"
                     "        o.step(closure)\n"),
}


@pytest.mark.parametrize("helper", HEALTHY.values(), ids=HEALTHY.keys())
def test_healthy_helper_loops_are_not_diagnosed(shell, helper):
    assert cells(shell, SETUP, helper, "for epoch in range(2):\n    train(model, opt, batches)\n") == []


# -- optimizer-not-on-model: the model made again in a later cell, the step in a helper --

TRAIN_GLOBAL = ("def train_step(x, y):\n    opt.zero_grad()\n    loss = F.mse_loss(model(x), y)\n"
                "    loss.backward()\n    opt.step()\n    return loss.item()\n")


def test_a_model_made_again_in_a_later_cell_is_named_there_and_the_optimizer_rebuilt(shell):
    again = "lr = 0.01\nmodel = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))\n"
    found = cells(shell, SETUP, TRAIN_GLOBAL, again, "for x, y in batches:\n    train_step(x, y)\n")
    assert [d.kind for d in found] == ["optimizer-not-on-model"]
    d = found[0]
    assert d.names == ("opt", "model")
    assert {(sl.cell, sl.lineno) for sl in d.lines} >= {(3, 2), (1, 6), (2, 5)}
    (fixed,) = d.fix.elsewhere
    assert fixed.cell == 3 and fixed.source.splitlines()[2] == "opt = torch.optim.SGD(model.parameters(), lr=0.01)"
    assert applied(shell, d, "for x, y in batches:\n    train_step(x, y)\n") == []


def test_layers_replaced_after_the_optimizer_was_built_are_found(shell):
    swap = "model[2] = nn.Linear(8, 2)\nmodel.append(nn.Linear(2, 1))\n"
    found = cells(shell, SETUP, TRAIN_GLOBAL, swap, "for x, y in batches:\n    train_step(x, y)\n")
    assert found == []  # NB: the old first layer is still stepped: part of the model trains


def test_a_healthy_helper_with_a_global_model_is_not_diagnosed(shell):
    assert cells(shell, SETUP, TRAIN_GLOBAL, "for x, y in batches:\n    train_step(x, y)\n") == []
