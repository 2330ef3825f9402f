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


def test_a_sum_rebuilt_and_backpropagated_at_each_step_is_not_diagnosed_however_it_is_written(shell):
    """The evidence is the graph reaching into an earlier step's, not the `+=` in the text: a penalty summed
    over the parameters, a sum made in one statement and backpropagated through another name, renamed."""
    cell = ("for i in range(4):\n    opt.zero_grad()\n    reg = 0\n    for w in model.parameters():\n"
            "        reg += w.pow(2).sum()\n    objective = criterion(model(x), y) + 1e-4 * reg\n"
            "    objective.backward()\n    opt.step()\n")
    assert mine(found_after(shell, cell)) == []


def test_a_validation_loop_after_the_training_loop_is_still_diagnosed(shell):
    """A loop that steps no optimizer has no step evidence: the value after the run keeps its graph and the
    cell never backpropagates it."""
    cell = "for i in range(3):\n" + STEP + "val_loss = 0\nfor i in range(3):\n    val_loss += criterion(model(x), y)\n"
    d = next(d for d in found_after(shell, cell) if d.kind == "graph-kept-alive")
    assert d.names == ("val_loss",)


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


# -- through helpers: the loop, the step or the accumulation in a function or method of an earlier cell --

HELPER_SETUP = SETUP + "batches = [(torch.randn(8, 3), torch.randn(8, 1)) for _ in range(4)]\n"


def helper_run(shell, helper: str, cell: str) -> list:
    """`helper` as a plain cell (In [2]) after the setup (In [1]), then `cell` under %%gradcheck (In [3])."""
    assert run(shell, HELPER_SETUP).success and run(shell, helper).success
    result = run(shell, "%%gradcheck\n" + cell)
    assert result.success, result.error_in_exec
    return [d for d in grad_magic.last_diagnoses() if d.kind in MINE]


def fixed_and_run_again(shell, d, cell: str) -> list:
    """Each fixed earlier cell of `d` run, then `cell` again under %%gradcheck: my kinds diagnosed then."""
    assert d.fix is not None and d.fix.elsewhere
    for fixed in d.fix.elsewhere:
        assert run(shell, fixed.source).success
    assert run(shell, d.fix.source or "%%gradcheck\n" + cell).success
    return mine(grad_magic.last_diagnoses())


EVALUATE = ("def evaluate(m):\n    m.eval()\n    with torch.no_grad():\n        return criterion(m(x), y).item()\n\n\n"
            "def fit(m, o, epochs):\n    m.train()\n    for epoch in range(epochs):\n        for xb, yb in batches:\n"
            "            o.zero_grad()\n            loss = criterion(m(xb), yb)\n            loss.backward()\n"
            "            o.step()\n        evaluate(m)\n")


def test_an_evaluate_helper_inside_a_train_helper_is_found_and_fixed_there(shell):
    d = next(d for d in helper_run(shell, EVALUATE, "fit(model, opt, 3)\n") if d.kind == "train-eval-mode")
    assert d.names == ("model",) and "8 of 12 times" in d.summary
    where = {(sl.cell, sl.lineno, sl.function) for sl in d.lines}
    assert {(2, 2, "evaluate"), (2, 8, "fit"), (2, 12, "fit"), (2, 14, "fit")} <= where
    assert "`m.train()` on line 8 of In [2] runs once" in d.why
    (fixed,) = d.fix.elsewhere
    assert fixed.cell == 2 and fixed.source.splitlines()[11:13] == ["            m.train()",
                                                                  "            loss = criterion(m(xb), yb)"]
    assert fixed_and_run_again(shell, d, "fit(model, opt, 3)\n") == []


SET_MODE = ("def set_mode(mode, models):\n    for m in models:\n        if mode == 'eval':\n            m.eval()\n"
            "        else:\n            m.train()\n\n\n"
            "def check(m):\n    set_mode('eval', [m])\n    with torch.no_grad():\n        return criterion(m(x), y).item()\n")


def test_an_eval_switch_two_calls_deep_is_named_from_the_runs_record(shell):
    """The model is put in eval() mode by a generic helper that an evaluation function calls (clevr-iep's
    `set_mode('eval', [...])` in `check_accuracy`): no line spells `model.eval()`. The mode watch saw the switch:
    the card marks the `m.eval()` that ran and the call that led to it, and its fix trains in train() mode."""
    cell = ("set_mode('train', [model])\nfor i, (xb, yb) in enumerate(batches):\n    opt.zero_grad()\n"
            "    criterion(model(xb), yb).backward()\n    opt.step()\n    if i == 0:\n        check(model)\n")
    d = next(d for d in helper_run(shell, SET_MODE, cell) if d.kind == "train-eval-mode")
    where = {(sl.cell, sl.lineno, sl.function) for sl in d.lines}
    assert {(2, 4, "set_mode"), (2, 10, "check")} <= where
    assert "`model` was put in eval() mode on line 4" in d.why
    assert d.fix is not None and not d.fix.elsewhere
    assert run(shell, d.fix.source).success and mine(grad_magic.last_diagnoses()) == []


def test_an_eval_switch_put_back_before_the_next_step_is_not_named(shell):
    """`check()` puts the model in eval() mode and the loop puts it back before its next step: that switch is
    no culprit (the steps in eval() mode come from the `model.eval()` before the loop)."""
    cell = ("model.eval()\nfor i, (xb, yb) in enumerate(batches):\n    opt.zero_grad()\n"
            "    criterion(model(xb), yb).backward()\n    opt.step()\n    check(model)\n    model.train()\n")
    d = next(d for d in helper_run(shell, SET_MODE, cell) if d.kind == "train-eval-mode")
    assert not any(sl.cell == 2 for sl in d.lines)
    assert (3, 2) in {(sl.cell, sl.lineno) for sl in d.lines}  # NB: the `model.eval()` before the loop


TRAINER = ("class Trainer:\n    def __init__(self, model, optim):\n        self.model, self.optim = model, optim\n\n"
           "    def validate(self):\n        self.model.eval()\n        with torch.no_grad():\n"
           "            return criterion(self.model(x), y).item()\n\n"
           "    def epoch(self):\n        self.model.train()\n        for i, (xb, yb) in enumerate(batches):\n"
           "            if i % 2 == 0:\n                self.validate()\n            self.optim.zero_grad()\n"
           "            criterion(self.model(xb), yb).backward()\n            self.optim.step()\n")


def test_a_trainer_whose_validate_leaves_eval_mode_is_fixed_before_its_forward(shell):
    cell = "trainer = Trainer(model, opt)\nfor e in range(2):\n    trainer.epoch()\n"
    d = next(d for d in helper_run(shell, TRAINER, cell) if d.kind == "train-eval-mode")
    assert (2, 6, "Trainer.validate") in {(sl.cell, sl.lineno, sl.function) for sl in d.lines}
    (fixed,) = d.fix.elsewhere
    assert fixed.source.splitlines()[15:17] == ["            self.model.train()",
                                                "            criterion(self.model(xb), yb).backward()"]
    assert fixed_and_run_again(shell, d, cell) == []


HEALTHY_HELPERS = {
    "train_each_epoch": EVALUATE.replace("    m.train()\n    for epoch in range(epochs):\n",
                                         "    for epoch in range(epochs):\n        m.train()\n"),
    "frozen_batchnorm_on_purpose": ("def fit(m, o, epochs):\n    m.train()\n    m[1].eval()\n"
                                    "    m[1].requires_grad_(False)\n    for epoch in range(epochs):\n"
                                    "        for xb, yb in batches:\n            o.zero_grad()\n"
                                    "            loss = criterion(m(xb), yb)\n            loss.backward()\n"
                                    "            o.step()\n"),
    "running_total_of_items": ("def fit(m, o, epochs):\n    for epoch in range(epochs):\n        total = 0.0\n"
                               "        for xb, yb in batches:\n            o.zero_grad()\n"
                               "            loss = criterion(m(xb), yb)\n            loss.backward()\n"
                               "            o.step()\n            total += loss.item()\n    return total\n"),
    "list_of_detached_losses": ("def fit(m, o, epochs):\n    losses = []\n    for epoch in range(epochs):\n"
                                "        for xb, yb in batches:\n            o.zero_grad()\n"
                                "            loss = criterion(m(xb), yb)\n            loss.backward()\n"
                                "            o.step()\n            losses.append(loss.detach())\n    return losses\n"),
    "micro_batches_summed_then_backward": ("def fit(m, o, epochs):\n    for epoch in range(epochs):\n"
                                           "        for xb, yb in batches:\n            o.zero_grad()\n"
                                           "            parts = []\n            for k in range(2):\n"
                                           "                parts.append(criterion(m(xb[k::2]), yb[k::2]))\n"
                                           "            torch.stack(parts).mean().backward()\n            o.step()\n"),
}


@pytest.mark.parametrize("helper", HEALTHY_HELPERS.values(), ids=HEALTHY_HELPERS.keys())
def test_healthy_helper_loops_are_not_diagnosed(shell, helper):
    assert mine(helper_run(shell, helper, "fit(model, opt, 3)\n")) == []


def test_a_running_total_with_its_graph_in_a_helper_is_cut_there(shell):
    helper = ("def run_epoch(m, o):\n    total = 0.0\n    for xb, yb in batches:\n        o.zero_grad()\n"
              "        loss = criterion(m(xb), yb)\n        loss.backward()\n        o.step()\n"
              "        total += loss / len(batches)\n    return total\n")
    cell = "for epoch in range(2):\n    print(f'{run_epoch(model, opt):.3f}')\n"
    d = next(d for d in helper_run(shell, helper, cell) if d.kind == "graph-kept-alive")
    assert [(sl.cell, sl.lineno, sl.function) for sl in d.lines] == [(2, 8, "run_epoch")]
    (fixed,) = d.fix.elsewhere
    assert fixed.source.splitlines()[7] == "        total += (loss / len(batches)).detach()"
    assert fixed_and_run_again(shell, d, cell) == []


def test_loss_terms_summed_into_a_tracker_objects_dict_are_cut_in_its_method(shell):
    """`metrics.track.totals[key] += losses[key]` in a method of the user's tracker class (blind batch b6): the
    step watch sees the object's tensors grow from step to step, and the method's statement gets the fix."""
    helper = ("class Track:\n    def __init__(self, keys):\n        self.totals = {k: 0 for k in keys}\n\n"
              "    def update(self, losses):\n        for key in losses:\n            self.totals[key] += losses[key]\n\n\n"
              "class Metrics:\n    def __init__(self, keys):\n        self.track = Track(keys)\n\n\n"
              "metrics = Metrics(['total', 'l1'])\n")
    cell = ("for xb, yb in batches:\n    out = model(xb)\n    losses = {'total': criterion(out, yb), 'l1': out.abs().mean()}\n"
            "    opt.zero_grad()\n    losses['total'].backward()\n    opt.step()\n    metrics.track.update(losses)\n")
    d = next(d for d in helper_run(shell, helper, cell) if d.kind == "graph-kept-alive")
    assert [(sl.cell, sl.lineno) for sl in d.lines] == [(2, 7)]
    (fixed,) = d.fix.elsewhere
    assert fixed.source.splitlines()[6] == "            self.totals[key] += losses[key].detach()"
    assert fixed_and_run_again(shell, d, cell) == []


def test_a_tracker_object_that_sums_plain_numbers_is_left_alone(shell):
    helper = ("class Track:\n    def __init__(self):\n        self.totals = {'total': 0.0}\n\n"
              "    def update(self, loss):\n        for key in self.totals:\n            self.totals[key] += loss.item()\n\n\n"
              "metrics = Track()\n")
    cell = ("for xb, yb in batches:\n    loss = criterion(model(xb), yb)\n    opt.zero_grad()\n    loss.backward()\n"
            "    opt.step()\n    metrics.update(loss)\n")
    assert helper_run(shell, helper, cell) == []


def test_a_list_of_output_dicts_in_a_helper_is_detached_value_by_value(shell):
    helper = ("def train_epoch(m, o):\n    outputs = []\n    for xb, yb in batches:\n        out = m(xb)\n"
              "        loss = criterion(out, yb)\n        o.zero_grad()\n        loss.backward()\n        o.step()\n"
              "        outputs.append({'loss': loss, 'pred': out})\n"
              "    return torch.stack([o['loss'] for o in outputs]).mean()\n")
    cell = "for epoch in range(2):\n    train_epoch(model, opt)\n"
    d = next(d for d in helper_run(shell, helper, cell) if d.kind == "graph-kept-alive")
    (fixed,) = d.fix.elsewhere
    assert d.names == ("outputs",) and [(sl.cell, sl.lineno) for sl in d.lines] == [(2, 9)]
    assert fixed.source.splitlines()[8] == "        outputs.append({'loss': loss.detach(), 'pred': out.detach()})"
    assert fixed_and_run_again(shell, d, cell) == []


def test_a_decorated_helper_that_fine_tunes_under_inference_mode_loses_its_decorator(shell):
    helper = ("class Tuner:\n    def __init__(self, m):\n        self.m = m\n"
              "        self.optimizer = torch.optim.SGD(m.parameters(), lr=0.1)\n\n"
              "    @torch.inference_mode()\n    def tune(self, steps=3):\n        for _ in range(steps):\n"
              "            self.optimizer.zero_grad()\n            loss = criterion(self.m(x), y)\n"
              "            loss.requires_grad_(True)\n            loss.backward()\n            self.optimizer.step()\n")
    cell = "tuner = Tuner(model)\ntuner.tune()\n"
    d = next(d for d in helper_run(shell, helper, cell) if d.kind == "frozen-by-no-grad")
    assert d.names == ("tuner.optimizer",) and (2, 6) in {(sl.cell, sl.lineno) for sl in d.lines}
    (fixed,) = d.fix.elsewhere
    assert "    @torch.inference_mode()" not in fixed.source.splitlines()
    assert fixed_and_run_again(shell, d, cell) == []


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad=True to a scalar")
def test_a_loss_rebuilt_from_values_in_a_helper_is_stacked_there(shell):
    helper = ("def compute_loss(outs, target):\n"
              "    return torch.tensor([criterion(o, target) for o in outs], requires_grad=True).sum()\n")
    cell = ("for i in range(3):\n    opt.zero_grad()\n    loss = compute_loss([model(x), model(2 * x)], y)\n"
            "    loss.backward()\n    opt.step()\n")
    d = next(d for d in helper_run(shell, helper, cell) if d.kind == "frozen-by-no-grad")
    assert (2, 2) in {(sl.cell, sl.lineno) for sl in d.lines}
    (fixed,) = d.fix.elsewhere
    assert fixed.source.splitlines()[1] == "    return torch.stack([criterion(o, target) for o in outs]).sum()"
    assert fixed_and_run_again(shell, d, cell) == []


def test_a_helper_whose_forward_runs_under_no_grad_is_moved_out(shell):
    helper = ("def step(m, o):\n    o.zero_grad()\n    with torch.no_grad():\n        out = m(x)\n"
              "    loss = criterion(out, y)\n    loss.requires_grad = True\n    loss.backward()\n    o.step()\n")
    cell = "for i in range(3):\n    step(model, opt)\n"
    d = next(d for d in helper_run(shell, helper, cell) if d.kind == "frozen-by-no-grad")
    assert (2, 3) in {(sl.cell, sl.lineno) for sl in d.lines}
    assert fixed_and_run_again(shell, d, cell) == []


CALLEES = {
    "decorated": ("@torch.no_grad()\ndef predict(m, inputs):\n    return m(inputs)\n", (2, 1)),
    "with_block": ("def predict(m, inputs):\n    with torch.no_grad():\n        out = m(inputs)\n    return out\n",
                   (2, 2)),
}


@pytest.mark.parametrize("helper, culprit", CALLEES.values(), ids=CALLEES.keys())
def test_a_forward_helper_without_a_graph_is_fixed_in_its_cell(shell, helper, culprit):
    cell = ("for i in range(3):\n    opt.zero_grad()\n    out = predict(model, x)\n"
            "    loss = criterion(out, y).requires_grad_()\n    loss.backward()\n    opt.step()\n")
    d = next(d for d in helper_run(shell, helper, cell) if d.kind == "frozen-by-no-grad")
    assert culprit in {(sl.cell, sl.lineno) for sl in d.lines}
    assert fixed_and_run_again(shell, d, cell) == []


def test_a_hack_torch_refuses_once_fixed_leaves_words_only(shell):
    """`loss.requires_grad = True` on a loss with its graph back raises: a fix of the helper alone would fail."""
    cell = ("for i in range(3):\n    opt.zero_grad()\n    loss = criterion(predict(model, x), y)\n"
            "    loss.requires_grad = True\n    loss.backward()\n    opt.step()\n")
    d = next(d for d in helper_run(shell, CALLEES["decorated"][0], cell) if d.kind == "frozen-by-no-grad")
    assert (2, 1) in {(sl.cell, sl.lineno) for sl in d.lines} and d.fix is None


@pytest.mark.parametrize("where", ["helper", "cell"])
def test_zero_grad_between_backward_and_step_is_moved_before_backward(shell, where):
    body = ("    for i in range(3):\n        loss = criterion(model(x), y)\n        loss.backward()\n"
            "        opt.zero_grad()\n        opt.step()\n")
    if where == "helper":
        d = next(d for d in helper_run(shell, "def fit():\n" + body, "fit()\n") if d.kind == "frozen-by-no-grad")
        assert {(2, 4), (2, 5), (2, 6)} <= {(sl.cell, sl.lineno) for sl in d.lines}
        assert fixed_and_run_again(shell, d, "fit()\n") == []
    else:
        cell = body.replace("\n    ", "\n")[4:]
        d = next(d for d in found_after(shell, cell) if d.kind == "frozen-by-no-grad")
        assert d.fix.source.splitlines()[3:6] == ["    opt.zero_grad()", "    loss.backward()", "    opt.step()"]
        assert run(shell, d.fix.source).success and mine(grad_magic.last_diagnoses()) == []
