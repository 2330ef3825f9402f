"""The optimizer family: grads-not-zeroed (silent cases, --quiet, no fix when unsure, wording)."""
from __future__ import annotations

import weakref

import pytest
import torch

import grad_magic
from grad_magic.record import StepEvent
from grad_magic.render import Card
from cards import diagnosis
from earlier_cells import card_of, fix_runs_clean, lines_of
from gm_shell import displayed, run

KIND = "grads-not-zeroed"
# NB: the first optimizer made in a process imports sympy, which adds a warning filter for good; make it
# here, at collection, so that a plain setup cell making one does not count as a test changing the filters.
torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
SETUP = ("import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\nmodel = nn.Linear(3, 1)\n"
         "opt = torch.optim.SGD(model.parameters(), lr=0.01)\nx, y = torch.randn(8, 3), torch.randn(8, 1)\n")


def kinds() -> list:
    return [d.kind for d in grad_magic.last_diagnoses()]


def run_loop(shell, body: str, header: str = "%%gradcheck", setup: str = SETUP):
    """Run `body` (indented lines of a 4-step loop) under %%gradcheck after a plain setup cell."""
    assert run(shell, setup).success
    result = run(shell, f"{header}\nfor i in range(4):\n{body}")
    assert result.success, result.error_in_exec
    return grad_magic.last_diagnoses()


LOSS = "    loss = nn.functional.mse_loss(model(x), y)\n    loss.backward()\n"

# Every way of clearing gradients between steps: none of these may be diagnosed.
SILENT = {
    "zero_grad": "    opt.zero_grad()\n" + LOSS + "    opt.step()\n",
    "zero_grad_after_step": LOSS + "    opt.step()\n    opt.zero_grad()\n",
    "zero_grad_keep_tensors": LOSS + "    opt.step()\n    opt.zero_grad(set_to_none=False)\n",
    "module_zero_grad": "    model.zero_grad()\n" + LOSS + "    opt.step()\n",
    "grad_set_to_none": LOSS + "    opt.step()\n    for p in model.parameters():\n        p.grad = None\n",
    "grad_zeroed_in_place": LOSS + "    opt.step()\n    for p in model.parameters():\n"
                            "        p.grad.zero_()\n",
    "grad_detached_and_zeroed": LOSS + "    opt.step()\n    for p in model.parameters():\n"
                                "        p.grad.detach_()\n        p.grad.zero_()\n",
    "grad_scaled_in_place": LOSS + "    opt.step()\n    for p in model.parameters():\n"
                            "        p.grad.mul_(0)\n",
    "accumulate_then_zero_every_2": LOSS + "    if (i + 1) % 2 == 0:\n        opt.step()\n"
                                    "        opt.zero_grad()\n",
    "autograd_grad_not_backward": "    grads = torch.autograd.grad(nn.functional.mse_loss(model(x), y), "
                                  "list(model.parameters()))\n"
                                  "    for p, g in zip(model.parameters(), grads):\n"
                                  "        p.grad = g\n    opt.step()\n",
}


@pytest.mark.parametrize("body", SILENT.values(), ids=SILENT.keys())
def test_gradients_cleared_between_steps_are_not_diagnosed(shell, body):
    found = run_loop(shell, body)
    assert KIND not in [d.kind for d in found]


def test_one_step_per_cell_is_not_diagnosed(shell):
    assert run(shell, SETUP).success
    for _ in range(3):  # NB: every cell is its own run: steps in earlier cells are not compared
        assert run(shell, "%%gradcheck\nloss = nn.functional.mse_loss(model(x), y)\nloss.backward()\n"
                          "opt.step()\n").success
        assert KIND not in kinds()


def test_a_closure_that_zeroes_is_not_diagnosed(shell):
    setup = SETUP.replace("torch.optim.SGD(model.parameters(), lr=0.01)",
                          "torch.optim.LBFGS(model.parameters(), max_iter=2)")
    body = ("    def closure():\n        opt.zero_grad()\n"
            "        loss = nn.functional.mse_loss(model(x), y)\n        loss.backward()\n"
            "        return loss\n    opt.step(closure)\n")
    assert KIND not in [d.kind for d in run_loop(shell, body, setup=setup)]


def test_the_plain_loop_is_diagnosed(shell):
    found = run_loop(shell, LOSS + "    opt.step()\n")
    d = next(d for d in found if d.kind == KIND)
    assert d.severity == "warning" and not d.is_error
    assert d.names == ("opt",)
    assert "3 of 4" in d.summary and "line 5" in d.summary
    assert d.fix.source.splitlines()[3:5] == ["    opt.zero_grad()", "    loss.backward()"]


def test_warning_card_is_shown_and_the_cell_is_not_failed(shell):
    found = run_loop(shell, LOSS + "    opt.step()\n")
    assert [d.kind for d in found] == [KIND]
    shown = [b["text/plain"] for b in displayed(shell)]
    assert any("grads-not-zeroed" in text for text in shown)


def test_quiet_hides_the_card_but_keeps_the_diagnosis(shell):
    found = run_loop(shell, LOSS + "    opt.step()\n", header="%%gradcheck --quiet")
    assert [d.kind for d in found] == [KIND]
    assert not any("grads-not-zeroed" in b.get("text/plain", "") for b in displayed(shell))


def test_quiet_still_shows_errors(shell):
    assert run(shell, SETUP).success
    result = run(shell, "%%gradcheck --quiet\nimport torch\na = torch.ones(2, requires_grad=True)\n"
                        "x = a.exp()\nx += 1\nx.sum().backward()\n")
    assert isinstance(result.error_in_exec, RuntimeError)
    assert any("saved-tensor-modified-in-place" in b.get("text/plain", "") for b in displayed(shell))


# -- no fix when unsure --

def test_steps_on_several_lines_get_no_fix(shell):
    assert run(shell, SETUP).success
    step = "loss = nn.functional.mse_loss(model(x), y)\nloss.backward()\nopt.step()\n"
    assert run(shell, "%%gradcheck\n" + step * 3).success
    d = next(d for d in grad_magic.last_diagnoses() if d.kind == KIND)
    assert d.fix is None and "No automatic fix" in d.why


def test_a_step_in_a_one_line_if_gets_no_fix(shell):
    d = next(d for d in run_loop(shell, LOSS + "    if i % 2: opt.step()\n") if d.kind == KIND)
    assert d.fix is None


def test_an_optimizer_no_longer_alive_is_named_by_its_class():
    source = "%%gradcheck\nfor i in range(3):\n    loss.backward()\n    make_optimizer().step()\n"
    steps = [StepEvent(weakref.ref(torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1)), "SGD", 4,
                       1, stale) for stale in (0, 1, 1)]
    d = diagnosis(source, error_type=None, kind=KIND, steps=steps)
    assert d.title.startswith("`SGD`") and d.fix is None  # NB: `make_optimizer()` is no name to call


def test_a_failed_cell_still_gets_the_warning(shell):
    assert run(shell, SETUP).success
    result = run(shell, "%%gradcheck\nfor i in range(3):\n" + LOSS +
                 "    opt.step()\nraise ValueError('late')\n")
    assert isinstance(result.error_in_exec, ValueError)
    assert KIND in kinds()


# -- wording --

def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    d = next(d for d in run_loop(shell, LOSS + "    opt.step()\n") if d.kind == KIND)
    assert d.language == "zh"
    assert "从未清零" in d.title and "第 5 行" in d.summary and "zero_grad()" in d.fix.description
    assert "警告" in str(Card(d))


def test_a_healthy_training_cell_does_not_index_the_namespace(shell, monkeypatch):
    """Naming objects reads every name of the namespace (~0.3-1 ms per 1,000); a healthy training cell,
    which shows no card, must not pay it in a large notebook."""
    from grad_magic.names import NameIndex

    indexed = []
    index, scan = NameIndex._index, NameIndex._scan
    monkeypatch.setattr(NameIndex, "_index", lambda self: indexed.append("index") or index(self))
    monkeypatch.setattr(NameIndex, "_scan", lambda self, obj: indexed.append("scan") or scan(self, obj))
    shell.user_ns.update({f"obj_{i}": torch.zeros(1) for i in range(2_000)})
    run_loop(shell, "    opt.zero_grad()\n    ((model(x) - y) ** 2).mean().backward()\n    opt.step()\n")
    assert kinds() == [] and indexed == []
    run_loop(shell, "    ((model(x) - y) ** 2).mean().backward()\n    opt.step()\n")  # NB: the control: stale
    assert kinds() == [KIND] and indexed


def test_a_step_and_its_backward_in_one_if_block_are_no_accumulation(shell):
    """`if phase == 'train': loss.backward(); opt.step()` (blind batch b6): the step is conditional, but its
    backward is in the same block: zero_grad goes before that backward, not after the step."""
    cells = ["import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\nmodel = nn.Linear(4, 1)\n"
             "optimizer = torch.optim.SGD(model.parameters(), lr=0.01)\n",
             "%%gradcheck\nfor phase in ['train', 'val'] * 3:\n    loss = model(torch.randn(8, 4)).pow(2).mean()\n"
             "    if phase == 'train':\n        loss.backward()\n        optimizer.step()\n"]
    d = card_of(shell, cells, "grads-not-zeroed")
    assert 5 in [lineno for _, lineno in lines_of(d)]  # NB: the backward that made the stale gradients
    assert fix_runs_clean(shell, cells, d)[1].splitlines()[4] == "        optimizer.zero_grad()"
