"""The numerics family: nan-in-backward (the anomaly message, the forward line, the epsilon/clamp fixes)."""
from __future__ import annotations

import time

import pytest
import torch

import grad_magic
from grad_magic.rules.numerics import NAN_OUTPUT, parse_nan_error
from cards import card
from earlier_cells import card_of, fix_runs_clean, fixed, lines_of
from gm_shell import run


# torch/csrc/autograd/engine.cpp: the same wording from 1.x to 2.13; nodes lost the trailing digit before 1.10
@pytest.mark.parametrize("message,function,output,op", [
    ("Function 'SqrtBackward0' returned nan values in its 0th output.", "SqrtBackward0", 0, "sqrt"),
    ("Function 'DivBackward0' returned nan values in its 1th output.", "DivBackward0", 1, "div"),
    ("Function 'LogBackward' returned nan values in its 0th output.", "LogBackward", 0, "log"),  # torch < 1.10
    ("Function 'PowBackward1' returned nan values in its 0th output.", "PowBackward1", 0, "pow"),
    ("Function 'MmBackward0' returned nan values in its 1th output.", "MmBackward0", 1, ""),
])
def test_every_known_wording_is_recognised(message, function, output, op):
    err = parse_nan_error(message)
    assert err is not None and (err.function, err.output, err.op) == (function, output, op)


def test_other_errors_are_not_this_kind():
    assert parse_nan_error("Function 'SqrtBackward0' returned an invalid gradient at index 0") is None
    assert parse_nan_error("element 0 of tensors does not require grad and does not have a grad_fn") is None


def test_real_torch_message_of_this_version_is_recognised():
    x = torch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError) as info, pytest.warns(UserWarning):
        with torch.autograd.detect_anomaly(check_nan=True):
            (torch.sqrt(x) * 0).sum().backward()
    assert parse_nan_error(str(info.value)).function == "SqrtBackward0"


def test_regex_is_linear_on_a_megabyte():
    started = time.perf_counter()
    NAN_OUTPUT.search("Function '" + "a" * 1_000_000)
    NAN_OUTPUT.search("Function 'X' returned nan values in its " + "1" * 1_000_000)
    assert time.perf_counter() - started < 1.0


# -- through the shell --

def _fixed_line(shell, cell, lineno):
    d = card(shell, cell, "nan-in-backward", raises=RuntimeError)
    return d, d.fix.source.splitlines()[lineno - 1] if d.fix else None


def test_sqrt_gets_an_epsilon_and_the_fixed_cell_runs(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    cell = "%%gradcheck\nimport torch\nx = torch.zeros(3, requires_grad=True)\ny = torch.sqrt(x)  # root\n" \
           "(y * 0).sum().backward()\n"
    d, line = _fixed_line(shell, cell, 4)
    assert line == "y = torch.sqrt(x + 1e-8)  # root"
    assert [sl.lineno for sl in d.lines] == [4, 5] and "line 4" in d.what and "line 5" in d.what
    assert "square root" in d.why
    assert run(shell, d.fix.source).success
    assert not grad_magic.last_diagnoses()


def test_a_parenthesised_denominator_gets_the_epsilon_inside(shell):
    cell = "%%gradcheck\nimport torch\na = torch.zeros(3, requires_grad=True)\n" \
           "b = torch.zeros(3, requires_grad=True)\nr = a / (b - b)\nr.sum().backward()\n"
    _, line = _fixed_line(shell, cell, 5)
    assert line == "r = a / (b - b + 1e-8)"


def test_log_of_an_expression_is_clamped_as_a_whole(shell):
    cell = "%%gradcheck\nimport torch\np = torch.zeros(3, requires_grad=True)\n" \
           "l = torch.log(p * 1) * 0\nl.sum().backward()\n"
    _, line = _fixed_line(shell, cell, 4)
    assert line == "l = torch.log((p * 1).clamp_min(1e-8)) * 0"


def test_two_square_roots_on_the_line_get_no_fix(shell):
    cell = "%%gradcheck\nimport torch\nx = torch.zeros(3, requires_grad=True)\n" \
           "y = torch.sqrt(x) + torch.sqrt(x)\n(y * 0).sum().backward()\n"
    d, line = _fixed_line(shell, cell, 4)
    assert line is None and "line 4" in d.what


def test_forward_in_a_function_of_an_earlier_cell_is_fixed_there(shell):
    cells = ["import torch\ndef root(t):\n    return torch.sqrt(t)\n",
             "%%gradcheck\nx = torch.zeros(3, requires_grad=True)\ny = root(x)\n(y * 0).sum().backward()\n"]
    d = card_of(shell, cells, "nan-in-backward", raises=RuntimeError)
    assert (1, 3) in lines_of(d) and (2, 4) in lines_of(d) and d.lines[0].function == "root"
    assert "line 3 of In [1]" in d.what and "line 4" in d.what
    assert fixed(cells, d)[0] == "import torch\ndef root(t):\n    return torch.sqrt(t + 1e-8)"


def test_a_triplet_loss_helper_gets_its_epsilon_in_the_distance_helper(shell):
    cells = ["import torch\nimport torch.nn.functional as F\n",
             "def pairwise(e):\n    d = e.unsqueeze(1) - e.unsqueeze(0)\n    return torch.sqrt((d ** 2).sum(-1))\n\n\n"
             "def triplet(labels, e, margin=0.3):\n    dist = pairwise(e)\n"
             "    same = labels.unsqueeze(0) == labels.unsqueeze(1)\n"
             "    pos = (dist * same.float()).max(1).values\n    neg = (dist + 9 * same.float()).min(1).values\n"
             "    return F.relu(pos - neg + margin).mean()\n",
             "net = torch.nn.Linear(6, 3)\nlabels = torch.arange(2).repeat_interleave(3)\n",
             "%%gradcheck\nfor step in range(2):\n    loss = triplet(labels, net(torch.randn(6, 6)))\n"
             "    loss.backward()\n"]
    d = card_of(shell, cells, "nan-in-backward", raises=RuntimeError)
    assert (2, 3) in lines_of(d) and d.lines[0].function == "pairwise"
    assert "torch.sqrt((d ** 2).sum(-1) + 1e-8)" in fix_runs_clean(shell, cells, d)[1]


def test_a_pow_that_fed_a_square_root_on_a_later_line_gets_the_epsilon_at_the_root(shell):
    # energy distance: mean() sends a non-zero gradient to sqrt at 0 (inf), and the pow's 0 * inf is the NaN
    cells = ["import torch\n",
             "def pairwise_euclidean(x, y):\n    sq = (x.unsqueeze(1) - y.unsqueeze(0)).pow(2).sum(-1)\n"
             "    return torch.sqrt(torch.clamp(sq, min=0.0))\n\n\n"
             "def energy(s, t):\n    return 2 * pairwise_euclidean(s, t).mean() - pairwise_euclidean(s, s).mean()\n",
             "net = torch.nn.Linear(3, 4)\n",
             "%%gradcheck\nloss = energy(net(torch.randn(5, 3)), net(torch.randn(5, 3)))\nloss.backward()\n"]
    d = card_of(shell, cells, "nan-in-backward", raises=RuntimeError)
    assert "PowBackward0" in d.summary and (2, 3) in lines_of(d) and (2, 2) not in lines_of(d)
    assert "torch.sqrt(torch.clamp(sq, min=0.0) + 1e-8)" in fix_runs_clean(shell, cells, d)[1]


def test_a_pow_whose_result_feeds_two_roots_gets_no_fix(shell):
    cells = ["import torch\n",
             "def twice(x, y):\n    sq = (x.unsqueeze(1) - y.unsqueeze(0)).pow(2).sum(-1)\n"
             "    a = torch.sqrt(sq)\n    b = torch.sqrt(sq * 2)\n    return a + b\n",
             "net = torch.nn.Linear(3, 4)\n",
             "%%gradcheck\nx = net(torch.randn(5, 3))\ntwice(x, x).mean().backward()\n"]
    d = card_of(shell, cells, "nan-in-backward", raises=RuntimeError)
    assert d.fix is None or "sqrt" not in (d.fix.description or "")


def test_without_the_nan_check_nothing_is_diagnosed(shell):
    result = run(shell, "%%gradcheck --no-nan-check\nimport torch\nx = torch.zeros(3, requires_grad=True)\n"
                        "(torch.sqrt(x) * 0).sum().backward()\n")
    assert result.success
    assert "nan-in-backward" not in [d.kind for d in grad_magic.last_diagnoses()]


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    d, _ = _fixed_line(shell, "%%gradcheck\nimport torch\nx = torch.zeros(3, requires_grad=True)\n"
                              "(torch.sqrt(x) * 0).sum().backward()\n", 4)
    assert d.language == "zh" and "NaN" in d.title and "第 4 行" in d.what and "第 4 行" in d.fix.description
