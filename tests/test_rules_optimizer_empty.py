"""The optimizer family's empty-parameter-list (layers in a plain list or dict, a used-up generator)."""
from __future__ import annotations

import pytest

import grad_magic
from cards import card
from grad_magic.rules.optimizer.message import parse_empty_parameter_list
from gm_shell import run

# torch/optim/optimizer.py, Optimizer.__init__: the same wording from 0.4 to 2.13
MESSAGE = "optimizer got an empty parameter list"
KIND = "empty-parameter-list"

PLAIN_LIST = '''%%gradcheck
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [nn.Linear(2, 2), nn.Linear(2, 2)]  # the layers

net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
'''


def test_layers_in_a_plain_list_get_a_module_list(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    d = card(shell, PLAIN_LIST, KIND, raises=ValueError)
    assert "`self.blocks`, a plain Python list" in d.why
    assert [sl.lineno for sl in d.lines] == [8, 11]
    assert d.names == ("net", "net.blocks")
    assert d.fix.source == PLAIN_LIST.replace("[nn.Linear(2, 2), nn.Linear(2, 2)]",
                                              "nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])")
    assert run(shell, d.fix.source).success
    assert len(list(shell.user_ns["net"].parameters())) == 4


def test_without_an_nn_alias_the_fix_spells_torch_nn(shell):
    cell = PLAIN_LIST.replace("import torch.nn as nn\n", "from torch.nn import Module, Linear\n") \
        .replace("nn.Module", "Module").replace("nn.Linear", "Linear")
    d = card(shell, cell, KIND, raises=ValueError)
    assert "self.blocks = torch.nn.ModuleList([Linear(2, 2), Linear(2, 2)])" in d.fix.source


def test_a_list_set_twice_gets_no_fix(shell):
    cell = PLAIN_LIST.replace("        self.blocks = [nn.Linear(2, 2), nn.Linear(2, 2)]  # the layers\n",
                              "        self.blocks = []\n        self.blocks = [nn.Linear(2, 2)]\n")
    d = card(shell, cell, KIND, raises=ValueError)
    assert d.fix is None and "`self.blocks`" in d.why


def test_a_used_up_generator_becomes_a_list(shell):
    cell = ("%%gradcheck\nimport torch\nmodel = torch.nn.Linear(2, 2)\nparams = model.parameters()\n"
            "for p in params:\n    pass\nopt = torch.optim.Adam(params)\n")
    d = card(shell, cell, KIND, raises=ValueError)
    assert "generator" in d.why and d.names == ("params",)
    assert d.fix.source.splitlines()[3] == "params = list(model.parameters())"
    assert run(shell, d.fix.source).success


def test_a_generator_from_an_earlier_cell_is_listed_there(shell):
    run(shell, "import torch\nmodel = torch.nn.Linear(2, 2)\nparams = model.parameters()\nlist(params)\n")
    d = card(shell, "%%gradcheck\nopt = torch.optim.SGD(params, lr=0.1)\n", KIND, raises=ValueError)
    (fixed,) = d.fix.elsewhere
    assert "generator" in d.why and fixed.source.splitlines()[2] == "params = list(model.parameters())"
    assert run(shell, fixed.source).success and run(shell, "%%gradcheck\nopt = torch.optim.SGD(params, lr=0.1)\n").success


def test_an_empty_list_literal_is_explained_without_a_fix(shell):
    d = card(shell, "%%gradcheck\nimport torch\nopt = torch.optim.SGD([], lr=0.1)\n", KIND, raises=ValueError)
    assert d.fix is None and "nn.ModuleList" in d.why and "`[]` on line 3" in d.what


@pytest.mark.parametrize("message", ["optimizer got an empty parameter list!", "some other ValueError"])
def test_only_the_optimizer_value_error_is_this_kind(shell, message):
    run(shell, f"%%gradcheck\nraise ValueError({message!r})\n")
    kinds = [d.kind for d in grad_magic.last_diagnoses()]
    assert ("empty-parameter-list" in kinds) == (MESSAGE in message)


def test_the_message_parser():
    assert parse_empty_parameter_list(MESSAGE) is not None
    assert parse_empty_parameter_list(MESSAGE.replace("empty", "")) is None

def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    d = card(shell, PLAIN_LIST, KIND, raises=ValueError)
    assert d.language == "zh" and "没有拿到任何参数" in d.title and "第 8 行" in d.fix.description


# -- optimizer-not-on-model (warning) --

SETUP = "import torch\nmodel = torch.nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
TRAIN = ("%%gradcheck\n{first}for _ in range(2):\n    opt.zero_grad()\n    model(torch.ones(2, 3)).sum().backward()\n"
         "    opt.step()\n")


def _kinds(shell):
    return [d.kind for d in grad_magic.last_diagnoses()]


def test_a_recreated_model_is_warned_about(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    run(shell, SETUP)
    result = run(shell, TRAIN.format(first="model = torch.nn.Linear(3, 1)\n"))
    assert result.success
    d = next(d for d in grad_magic.last_diagnoses() if d.kind == "optimizer-not-on-model")
    assert d.names == ("opt", "model") and "line 6" in d.summary
    # the line that made the model again, the optimizer's own line in In [1], the step
    assert [(sl.cell, sl.lineno) for sl in d.lines] == [(2, 2), (1, 3), (2, 6)]
    assert d.fix.source.splitlines()[1:4] == ["model = torch.nn.Linear(3, 1)",
                                              "opt = torch.optim.SGD(model.parameters(), lr=0.1)", "for _ in range(2):"]
    assert run(shell, d.fix.source).success and "optimizer-not-on-model" not in _kinds(shell)


def test_the_optimizer_of_the_called_model_is_not_warned_about(shell):
    run(shell, SETUP)
    assert run(shell, TRAIN.format(first="")).success
    assert "optimizer-not-on-model" not in _kinds(shell)


def test_parameters_another_name_still_holds_are_not_stray(shell):
    run(shell, SETUP + "old = model\n")
    assert run(shell, TRAIN.format(first="model = torch.nn.Linear(3, 1)\n")).success
    assert "optimizer-not-on-model" not in _kinds(shell)


def test_a_model_made_again_wider_is_matched_by_its_layers(shell):
    """Its parameters never got a gradient and no name holds them: the optimizer steps a lost model."""
    run(shell, SETUP)
    cell = TRAIN.format(first="model = torch.nn.Linear(3, 2)\n")
    assert run(shell, cell).success
    d = next(d for d in grad_magic.last_diagnoses() if d.kind == "optimizer-not-on-model")
    assert "same kinds" in d.summary and "frozen-by-no-grad" not in _kinds(shell)


def test_an_optimizer_of_another_kind_of_model_is_not_matched(shell):
    run(shell, SETUP)
    cell = TRAIN.format(first="model = torch.nn.Linear(3, 2, bias=False)\n")
    assert run(shell, cell).success
    assert "optimizer-not-on-model" not in _kinds(shell)


# -- the class in an earlier cell; the optimizer built in a method of it --

TOWER = ("import torch\nimport torch.nn as nn\n\nclass Tower(nn.Module):\n    def __init__(self):\n"
         "        super().__init__()\n        self.blocks = {'a': nn.Linear(2, 2), 'b': nn.Linear(2, 2)}\n\n"
         "    def configure_optimizers(self):\n        return torch.optim.Adam(self.parameters(), lr=1e-3)\n")


@pytest.mark.parametrize("cell", ["model = Tower()\nopt = model.configure_optimizers()\n",
                                  "model = Tower()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"])
def test_a_plain_dict_in_an_earlier_cell_is_wrapped_there(shell, cell):
    assert run(shell, TOWER).success
    result = run(shell, "%%gradcheck\n" + cell)
    assert isinstance(result.error_in_exec, ValueError)
    d = grad_magic.last_diagnosis()
    assert d.kind == KIND and (1, 7, "Tower.__init__") in [(sl.cell, sl.lineno, sl.function) for sl in d.lines]
    (fixed,) = d.fix.elsewhere
    assert fixed.cell == 1 and "        self.blocks = nn.ModuleDict({'a': nn.Linear(2, 2), 'b': nn.Linear(2, 2)})" \
        in fixed.source.splitlines()
    assert run(shell, fixed.source).success and run(shell, "%%gradcheck\n" + cell).success
    assert KIND not in _kinds(shell)


def test_a_generator_used_up_in_an_earlier_cell_and_passed_to_a_helper_is_listed_there(shell):
    made = ("import torch\nmodel = torch.nn.Linear(3, 1)\nparams = model.parameters()\n"
            "print(sum(p.numel() for p in params))\n")
    helper = "def make_optimizer(ps, lr=1e-3):\n    return torch.optim.Adam(ps, lr=lr)\n"
    assert run(shell, made).success and run(shell, helper).success
    result = run(shell, "%%gradcheck\nopt = make_optimizer(params)\n")
    assert isinstance(result.error_in_exec, ValueError)
    d = grad_magic.last_diagnosis()
    assert d.kind == KIND and [(sl.cell, sl.lineno) for sl in d.lines] == [(1, 3), (3, 2)]
    (fixed,) = d.fix.elsewhere
    assert fixed.cell == 1 and fixed.source.splitlines()[2] == "params = list(model.parameters())"
    assert run(shell, fixed.source).success and run(shell, "%%gradcheck\nopt = make_optimizer(params)\n").success
