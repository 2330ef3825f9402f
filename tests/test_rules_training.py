"""The training family: graph-kept-alive, frozen-by-no-grad, train-eval-mode (silent on healthy loops)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

import grad_magic
from grad_magic.render import Card
from grad_magic.rules.training.culprit import grad_off_withs
from grad_magic.rules.training.message import is_needs_grad_error
from gm_shell import displayed, run

MINE = ("graph-kept-alive", "frozen-by-no-grad", "train-eval-mode")
HERE = Path(__file__).parent
# NB: the first optimizer made in a process imports sympy, which adds a warning filter for good (see
# tests/test_rules_optimizer.py): made here, at collection.
torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)

SETUP = ("import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\n"
         "model = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 1))\n"
         "opt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
         "x, y = torch.randn(8, 3), torch.randn(8, 1)\ncriterion = nn.MSELoss()\n")
STEP = ("    opt.zero_grad()\n    loss = criterion(model(x), y)\n    loss.backward()\n    opt.step()\n")


def found_after(shell, cell: str, setup: str = SETUP) -> list:
    assert run(shell, setup).success
    result = run(shell, "%%gradcheck\n" + cell)
    assert result.success, result.error_in_exec
    return grad_magic.last_diagnoses()


def mine(found) -> list:
    return [d.kind for d in found if d.kind in MINE]


# -- healthy cells: none of the three may fire --

HEALTHY = {
    "plain_training_loop": "for i in range(3):\n" + STEP,
    "total_of_items": "total = 0.0\nfor i in range(3):\n" + STEP + "    total += loss.item()\n",
    "list_of_detached": "losses = []\nfor i in range(3):\n" + STEP + "    losses.append(loss.detach())\n",
    "sum_then_backward_rnn": "opt.zero_grad()\nloss = 0\nfor t in range(4):\n"
                             "    loss += criterion(model(x), y)\nloss.backward()\nopt.step()\n",
    "stack_then_backward": "opt.zero_grad()\nparts = []\nfor t in range(3):\n"
                           "    parts.append(criterion(model(x), y))\ntorch.stack(parts).mean().backward()\n"
                           "opt.step()\n",
    "validation_under_no_grad": "model.eval()\nval_loss = 0\nwith torch.no_grad():\n    for i in range(3):\n"
                                "        val_loss += criterion(model(x), y)\n",
    "train_then_evaluate": "for epoch in range(2):\n    model.train()\n" + STEP.replace("    ", "    ", 4) +
                           "    model.eval()\n    with torch.no_grad():\n"
                           "        accuracy = (model(x) - y).abs().mean()\n",
    "eval_after_the_loop": "model.train()\nfor i in range(3):\n" + STEP +
                           "model.eval()\nwith torch.no_grad():\n    test_loss = criterion(model(x), y)\n",
    "no_grad_parameter_update": "for i in range(3):\n    loss = criterion(model(x), y)\n    loss.backward()\n"
                                "    with torch.no_grad():\n        for p in model.parameters():\n"
                                "            p -= 0.01 * p.grad\n            p.grad = None\n",
    "no_grad_without_evaluation_words": "with torch.no_grad():\n    features = model(x)\n",
    "mc_dropout_on_purpose": "model.train()\nwith torch.no_grad():\n"
                             "    predictions = torch.stack([model(x) for _ in range(5)])\n",
    "evaluate_helper_after_training": "def evaluate(m):\n    m.eval()\n    with torch.no_grad():\n"
                                      "        return criterion(m(x), y).item()\nfor i in range(2):\n" + STEP +
                                      "score = evaluate(model)\n",
}


@pytest.mark.parametrize("cell", HEALTHY.values(), ids=HEALTHY.keys())
def test_healthy_cells_are_not_diagnosed(shell, cell):
    assert mine(found_after(shell, cell)) == []


def test_linear_probe_on_a_frozen_backbone_in_eval_mode_is_not_diagnosed(shell):
    setup = SETUP + ("for p in model[:4].parameters():\n    p.requires_grad_(False)\n"
                     "model.eval()\nopt = torch.optim.SGD(model[4].parameters(), lr=0.1)\n"
                     "model[3].p = 0.0\n")
    assert mine(found_after(shell, "for i in range(3):\n" + STEP, setup)) == []


def test_eval_mode_without_dropout_or_batchnorm_is_not_diagnosed(shell):
    setup = SETUP.replace("nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.5), ", "") + "model.eval()\n"
    assert mine(found_after(shell, "for i in range(3):\n" + STEP, setup)) == []


def test_an_unknown_helper_after_the_loop_is_not_diagnosed(shell):
    setup = SETUP + "def report(m):\n    m.eval()\n"
    assert mine(found_after(shell, "model.train()\nfor i in range(2):\n" + STEP + "report(model)\n",
                            setup)) == []


@pytest.mark.slow  # NB: runs every golden fixed cell (~100 s)
def test_other_kinds_fixed_cells_are_not_diagnosed(shell):
    """Every other kind's fixed cell (typical loops, manual SGD, modules) stays silent."""
    cells = [p for p in sorted((HERE / "golden").glob("*/*.fixed.py")) if p.parent.name not in MINE]
    assert len(cells) >= 40
    for fixed in cells:
        stem = fixed.name[:-len(".fixed.py")] if fixed.name.endswith(".fixed.py") else fixed.stem
        setup = HERE / "cases" / fixed.parent.name / f"{stem}.setup.py"
        shell.reset(new_session=True)
        if setup.exists():
            assert run(shell, setup.read_text()).success
        run(shell, fixed.read_text())
        assert mine(grad_magic.last_diagnoses()) == [], fixed


# -- graph-kept-alive --

def test_running_total_is_diagnosed_with_item(shell):
    found = found_after(shell, "total = 0.0\nfor i in range(3):\n" + STEP + "    total += loss\n")
    d = next(d for d in found if d.kind == "graph-kept-alive")
    assert d.severity == "warning" and d.names == ("total",)
    assert "    total += loss.item()" in d.fix.source.splitlines()
    assert [ln.lineno for ln in d.lines] == [8]


def test_a_list_used_with_torch_later_keeps_tensors_with_detach(shell):
    cell = "losses = []\nfor i in range(3):\n" + STEP + "    losses.append(loss)\nhist = torch.stack(losses)\n"
    d = next(d for d in found_after(shell, cell) if d.kind == "graph-kept-alive")
    assert "    losses.append(loss.detach())" in d.fix.source.splitlines()
    assert "3 tensors" in d.summary


# -- frozen-by-no-grad --

def test_forgotten_backward_gets_it_back(shell):
    cell = "for i in range(3):\n" + STEP.replace("    loss.backward()\n", "")
    d = next(d for d in found_after(shell, cell) if d.kind == "frozen-by-no-grad")
    assert d.names == ("opt",) and "3 times" in d.summary
    assert d.fix.source.splitlines()[4:6] == ["    loss.backward()", "    opt.step()"]


def test_a_step_with_gradients_among_empty_ones_is_not_diagnosed(shell):
    cell = "opt.zero_grad()\nopt.step()\nloss = criterion(model(x), y)\nloss.backward()\nopt.step()\n"
    assert "frozen-by-no-grad" not in mine(found_after(shell, cell))


def test_the_backward_error_is_left_to_the_error_card(shell):
    assert run(shell, SETUP).success
    result = run(shell, "%%gradcheck\nopt.zero_grad(); opt.step()\nwith torch.no_grad():\n"
                        "    loss = criterion(model(x), y)\nloss.backward()\n")
    assert isinstance(result.error_in_exec, RuntimeError)
    kinds = [d.kind for d in grad_magic.last_diagnoses()]
    assert kinds[0] == "missing-requires-grad" and "frozen-by-no-grad" not in kinds


def test_a_model_re_created_after_its_optimizer_is_left_to_optimizer_not_on_model(shell):
    cell = ("model = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.5), "
            "nn.Linear(8, 1))  # too late\n"
            "for i in range(2):\n" + STEP)
    assert "frozen-by-no-grad" not in mine(found_after(shell, cell))


def test_a_failed_cell_still_gets_the_warning(shell):
    assert run(shell, SETUP).success
    result = run(shell, "%%gradcheck\nfor i in range(2):\n    opt.zero_grad()\n    opt.step()\n"
                        "raise ValueError('late')\n")
    assert isinstance(result.error_in_exec, ValueError)
    d = next(d for d in grad_magic.last_diagnoses() if d.kind == "frozen-by-no-grad")
    assert d.fix is None  # NB: no loss in sight to call backward() on


def test_a_forward_under_set_grad_enabled_false_is_moved_out(shell):
    """set_grad_enabled(False) turns autograd off as no_grad() does: the kit's one list of grad-off calls."""
    cell = ("for i in range(3):\n    opt.zero_grad()\n    with torch.set_grad_enabled(False):\n"
            "        loss = criterion(model(x), y)\n    loss.requires_grad = True\n    loss.backward()\n"
            "    opt.step()\n")
    d = next(d for d in found_after(shell, cell) if d.kind == "frozen-by-no-grad")
    assert d.fix.source.splitlines()[3:6] == ["    loss = criterion(model(x), y)", "    loss.backward()",
                                              "    opt.step()"]


def test_grad_off_blocks_are_those_that_turn_autograd_off():
    tree = ast.parse("with torch.no_grad():\n    a = 1\nwith torch.inference_mode(False):\n    b = 1\n"
                     "with torch.set_grad_enabled(False):\n    c = 1\nwith torch.set_grad_enabled(True):\n"
                     "    d = 1\nwith inference_mode():\n    e = 1\n")
    assert [block.lineno for block in grad_off_withs(tree)] == [1, 5, 9]


def test_the_backward_error_is_recognised():
    assert is_needs_grad_error("element 0 of tensors does not require grad and does not have a grad_fn")
    assert not is_needs_grad_error("Trying to backward through the graph a second time")


# -- train-eval-mode --

def test_training_after_an_earlier_eval_is_diagnosed(shell):
    d = next(d for d in found_after(shell, "for i in range(3):\n" + STEP, SETUP + "model.eval()\n")
             if d.kind == "train-eval-mode")
    assert d.names == ("model",) and "eval() mode" in d.title
    assert "`model.1` (BatchNorm1d)" in d.what and "`model.3` (Dropout)" in d.what
    assert d.fix.source.splitlines()[1:3] == ["model.train()", "for i in range(3):"]


def test_the_warning_card_is_shown(shell):
    found_after(shell, "for i in range(3):\n" + STEP, SETUP + "model.eval()\n")
    assert any("train-eval-mode" in b.get("text/plain", "") for b in displayed(shell))


def test_evaluation_in_train_mode_is_diagnosed(shell):
    cell = "with torch.no_grad():\n    accuracy = ((model(x) > 0) == (y > 0)).float().mean()\n"
    d = next(d for d in found_after(shell, cell) if d.kind == "train-eval-mode")
    assert "train() mode" in d.title
    assert d.fix.source.splitlines()[1:3] == ["model.eval()", "with torch.no_grad():"]


# -- wording --

def test_chinese_cards(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    found = found_after(shell, "total = 0.0\nfor i in range(3):\n" + STEP + "    total += loss\n",
                        SETUP + "model.eval()\n")
    by_kind = {d.kind: d for d in found}
    assert "计算图" in by_kind["graph-kept-alive"].title
    assert "eval() 模式下被训练" in by_kind["train-eval-mode"].title
    assert "警告" in str(Card(by_kind["graph-kept-alive"]))
