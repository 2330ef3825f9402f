"""The conversions family: numpy-on-grad-tensor, numpy-on-device-tensor, bool-ambiguous (message variants,
the spot on the line, fixes, wording)."""
from __future__ import annotations

import time

import numpy as np
import pytest
import torch

import grad_magic
from cards import diagnosis
from grad_magic.rules.conversions.message import AMBIGUOUS, NEEDS_CPU, NEEDS_DETACH
from gm_shell import run

GRAD = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
CUDA = ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
        "first.")
MORE = "Boolean value of Tensor with more than one value is ambiguous"

# (message, kind, what the message names: the device for numpy-on-device-tensor)
VARIANTS = [
    (GRAD, "numpy-on-grad-tensor", None),  # torch 2.13, reproduced below
    # older releases (reports with torch 1.1, 1.3.1)
    ("Can't call numpy() on Variable that requires grad. Use var.detach().numpy() instead.",
     "numpy-on-grad-tensor", None),
    (CUDA, "numpy-on-device-tensor", "cuda:0"),  # CUDA builds, reports since 2020 (verbatim)
    # older releases (reports from 2019)
    ("can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.",
     "numpy-on-device-tensor", "cuda"),
    ("can't convert mps:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
     "first.", "numpy-on-device-tensor", "mps:0"),
    ("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
     "first.", "numpy-on-device-tensor", "meta"),  # torch 2.13, reproduced below
    (MORE, "bool-ambiguous", None),  # torch 2.13, reproduced below
    ("Boolean value of Tensor with no values is ambiguous", "bool-ambiguous", None),
    ("bool value of Tensor with more than one value is ambiguous", "bool-ambiguous", None),  # older: 2018-2021 reports
]
ERROR_TYPES = {"numpy-on-grad-tensor": RuntimeError, "numpy-on-device-tensor": TypeError,
               "bool-ambiguous": RuntimeError}


def _diagnose(source, message, lineno=3, namespace=None, language="en", error=None):
    """The first diagnosis of `message`, raised as the type torch raises it with (or `error`)."""
    kind = next(k for m, k, _ in VARIANTS if m == message) if error is None else None
    return diagnosis(source, message, lineno, namespace={"torch": torch, "np": np, **(namespace or {})},
                     language=language, error_type=error or ERROR_TYPES[kind])


def _fixed_line(d, lineno=3):
    return d.fix.source.splitlines()[lineno - 1]


@pytest.mark.parametrize("message,kind,device", VARIANTS, ids=range(len(VARIANTS)))
def test_every_known_wording_is_recognised(message, kind, device):
    d = _diagnose("%%gradcheck\nimport torch\nprint(out.numpy())\n", message)
    assert d.kind == kind
    if device is not None:
        assert NEEDS_CPU.search(message)["device"].lower() == device.lower()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # numpy 2 on Tensor.__array__ without `copy`
def test_the_messages_of_this_torch_are_the_ones_keyed_on():
    w = torch.ones(3, requires_grad=True)
    for convert in (lambda: w.numpy(), lambda: np.array(w), lambda: np.asarray(w)):
        with pytest.raises(RuntimeError) as info:
            convert()
        assert NEEDS_DETACH.search(str(info.value))
    with pytest.raises(TypeError) as info:
        torch.ones(2, device="meta", requires_grad=True).numpy()  # NB: the device is checked first
    assert NEEDS_CPU.search(str(info.value))["device"] == "meta"
    for test in (lambda: bool(w > 0), lambda: (w > 0) and True, lambda: bool(torch.ones(0))):
        with pytest.raises(RuntimeError) as info:
            test()
        assert AMBIGUOUS.search(str(info.value))


@pytest.mark.parametrize("message", [
    "can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.",
    "Can't call numpy() on Tensor that has conjugate bit set. Use tensor.resolve_conj().numpy() instead.",
    "Got unsupported ScalarType BFloat16",
    "Tensor.item() cannot be called on meta tensors",
    "only one element tensors can be converted to Python scalars",
    "can't convert np.ndarray of type numpy.object_. The only supported types are: float64, float32, ...",
])
def test_other_conversion_errors_are_not_these_kinds(message):
    for pattern in (NEEDS_DETACH, NEEDS_CPU, AMBIGUOUS):
        assert pattern.search(message) is None


def test_the_patterns_are_linear_on_a_long_message():
    long = "can't convert " + "a" * 1_000_000 + " Boolean value of Tensor with " + "x" * 1_000_000
    started = time.perf_counter()
    for pattern in (NEEDS_DETACH, NEEDS_CPU, AMBIGUOUS):
        assert pattern.search(long) is None
    assert time.perf_counter() - started < 2.0


# -- numpy-on-grad-tensor --

def test_only_the_receivers_that_require_grad_are_detached():
    ns = {"a": torch.ones(2, requires_grad=True), "b": torch.ones(2)}
    d = _diagnose("%%gradcheck\nimport torch\npair = a.numpy(), b.numpy()\n", GRAD, namespace=ns)
    assert _fixed_line(d) == "pair = a.detach().numpy(), b.numpy()"
    assert d.names == ("a",) and d.tensors[0].requires_grad is True


def test_an_expression_given_to_np_array_is_parenthesised():
    d = _diagnose("%%gradcheck\nimport torch\narr = np.array(x @ w)\n", GRAD)
    assert _fixed_line(d) == "arr = np.array((x @ w).detach())"


def test_numpy_with_force_is_not_a_candidate():
    d = _diagnose("%%gradcheck\nimport torch\nv = y.numpy(force=True) + z.numpy()\n", GRAD)
    assert _fixed_line(d) == "v = y.numpy(force=True) + z.detach().numpy()"


def test_no_conversion_on_the_line_gives_no_fix():
    d = _diagnose("%%gradcheck\nimport torch\nreport(model)\n", GRAD)
    assert d.kind == "numpy-on-grad-tensor" and d.fix is None and "no fix" in d.why


def test_the_rule_never_raises_on_a_cell_that_does_not_parse():
    for message in (GRAD, CUDA, MORE):
        d = _diagnose("%%gradcheck\nthis is not python(\n", message, lineno=2)
        assert d.fix is None and not d.notes


def test_a_library_call_gets_detach_on_the_named_tensors_only(shell):
    run(shell, "import numpy as np\ndef summarise(*xs):\n    return [np.asarray(x).mean() for x in xs]\n")
    result = run(shell, "%%gradcheck\nimport torch\nw = torch.ones(3, requires_grad=True)\n"
                        "summarise(torch.zeros(2), w * 2, w)\n")
    assert isinstance(result.error_in_exec, RuntimeError)
    d = grad_magic.last_diagnosis()
    assert d.kind == "numpy-on-grad-tensor"
    assert _fixed_line(d, 4) == "summarise(torch.zeros(2), w * 2, w.detach())"  # NB: `w * 2` is not named
    assert "inside `summarise`" in d.why


# -- numpy-on-device-tensor --

def test_a_tensor_not_known_here_gets_detach_and_cpu():
    d = _diagnose("%%gradcheck\nimport torch\nprint(out.numpy())\n", CUDA)
    assert _fixed_line(d) == "print(out.detach().cpu().numpy())"
    assert "costs nothing" in d.why and "cuda:0" in d.title


def test_the_old_cuda_wording_gets_the_same_fix():
    old = "can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
    d = _diagnose("%%gradcheck\nimport torch\narr = np.asarray(model(x))\n", old)
    assert _fixed_line(d) == "arr = np.asarray(model(x).detach().cpu())"


def test_meta_tensors_get_no_fix(shell):
    result = run(shell, "%%gradcheck --no-nan-check\nimport torch\nm = torch.ones(3, device='meta')\n"
                        "a = m.numpy()\n")
    assert isinstance(result.error_in_exec, TypeError)
    d = grad_magic.last_diagnosis()
    assert d.kind == "numpy-on-device-tensor" and d.fix is None
    assert "no data" in d.why and d.tensors[0].device == "meta"


# -- bool-ambiguous --

@pytest.mark.parametrize("line,fixed", [
    ("if t > 0:", "if (t > 0).all():"),
    ("if t != 0:", "if (t != 0).any():"),
    ("while t > 0:", "while (t > 0).any():"),
    ("while t == u:", "while (t == u).all():"),
    ("assert t == u", "assert torch.equal(t, u)"),
    ("assert t <= u", "assert (t <= u).all()"),
    ("y = 1 if t > 0 else 2", "y = 1 if (t > 0).all() else 2"),
    ("if flag and t > 0:", "if flag and (t > 0).all():"),
    ("if t > 0 or u > 0:", "if (t > 0).all() or u > 0:"),
])
def test_a_single_comparison_gets_all_or_any(line, fixed):
    ns = {"t": torch.ones(3), "u": torch.ones(3), "flag": True}
    d = _diagnose(f"%%gradcheck\nimport torch\n{line}\n    pass\n" if line.endswith(":") else
                  f"%%gradcheck\nimport torch\n{line}\n", MORE, namespace=ns)
    assert d.kind == "bool-ambiguous" and _fixed_line(d) == fixed
    assert "(3,)" in d.what


def test_assert_equal_without_torch_in_the_cell_uses_all():
    ns = {"t": torch.ones(3), "u": torch.ones(3)}
    d = diagnosis("%%gradcheck\nx = 1\nassert t == u\n", MORE, 3, namespace=ns)
    assert _fixed_line(d) == "assert (t == u).all()"


@pytest.mark.parametrize("line", [
    "if mask:",  # all or any: not evident
    "if 0 < t < 1:",  # a chained comparison
    "if t.sum(1) > 0 and u > 0:",  # which operand holds several values is not known without running code
    "if max(t, u) is t:",  # the truth test is inside max()
])
def test_no_fix_when_the_intent_or_the_test_is_not_pinned_down(line):
    ns = {"t": torch.ones(3), "u": torch.ones(3), "mask": torch.ones(3, dtype=torch.bool)}
    d = _diagnose(f"%%gradcheck\nimport torch\n{line}\n    pass\n", MORE, namespace=ns)
    assert d.kind == "bool-ambiguous" and d.fix is None
    if "max" in line:
        assert "could not be told" in d.why and "`max(t, u) is t`" not in d.what


def test_a_known_scalar_operand_before_the_tensor_is_skipped():
    ns = {"s": torch.tensor(1.0), "t": torch.ones(2, 2)}
    d = _diagnose("%%gradcheck\nimport torch\nif s > 0 and t > 0:\n    pass\n", MORE, namespace=ns)
    assert _fixed_line(d) == "if s > 0 and (t > 0).all():" and "(2, 2)" in d.what


def test_a_test_inside_a_function_from_another_cell_gets_no_fix(shell):
    run(shell, "def clip(x, limit):\n    return limit if x > limit else x\n")
    result = run(shell, "%%gradcheck\nimport torch\ny = clip(torch.randn(4), 1.0)\n")
    assert isinstance(result.error_in_exec, RuntimeError)
    d = grad_magic.last_diagnosis()
    assert d.kind == "bool-ambiguous" and d.fix is None and "inside a function" in d.why


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    result = run(shell, "%%gradcheck\nimport torch\nw = torch.ones(3, requires_grad=True)\narr = w.numpy()\n")
    assert isinstance(result.error_in_exec, RuntimeError)
    d = grad_magic.last_diagnosis()
    assert d.kind == "numpy-on-grad-tensor" and d.language == "zh"
    assert "需要梯度" in d.title and "第 4 行" in d.what and "第 4 行" in d.fix.description
    result = run(shell, "%%gradcheck\nimport torch\nt = torch.ones(3)\nif t > 0:\n    pass\n")
    d = grad_magic.last_diagnosis()
    assert d.kind == "bool-ambiguous" and "第 4 行" in d.what and "形状为 (3,)" in d.what



# -- a list of tracked tensors handed to NumPy (issue 15: aggregates and plots of losses) --

from earlier_cells import card_of, fix_runs_clean, lines_of  # noqa: E402

_LIST_HELPERS = ("import numpy as np\nimport torch\n",
                 "def train(w, xs, epochs):\n    losses = []\n    for i in range(epochs):\n"
                 "        loss = (xs @ w).pow(2).mean()\n        losses.append(loss)\n        loss.backward()\n"
                 "    return losses\n\n\ndef plot_losses(losses):\n    values = np.asarray(losses)\n"
                 "    return values.min()\n\n\ndef evaluate(w, sets):\n    test_losses, sizes = [], []\n"
                 "    for x in sets:\n        test_losses.append((x @ w).mean())\n        sizes.append(len(x))\n"
                 "    return np.sum([n * l for n, l in zip(sizes, test_losses)]) / np.sum(sizes)\n",
                 "w = torch.randn(3, requires_grad=True)\nxs = torch.randn(4, 3)\n")


def test_a_comprehension_over_a_list_of_losses_in_a_helper_gets_detach_on_its_item(shell):
    cells = [*_LIST_HELPERS, "%%gradcheck\nprint(evaluate(w, [xs, xs * 2]))\n"]
    d = card_of(shell, cells, "numpy-on-grad-tensor", raises=RuntimeError)
    assert (2, 20) in lines_of(d) and d.lines[0].function == "evaluate"
    assert "np.sum([(n * l).detach() for n, l in zip(sizes, test_losses)])" in fix_runs_clean(shell, cells, d)[1]


def test_a_list_a_helper_filled_and_another_converts_gets_item_at_the_append(shell):
    cells = [*_LIST_HELPERS, "%%gradcheck\nlosses = train(w, xs, 3)\nprint(plot_losses(losses))\n"]
    d = card_of(shell, cells, "numpy-on-grad-tensor", raises=RuntimeError)
    assert lines_of(d) == [(2, 5), (4, 3)] and d.lines[0].function == "train"
    assert "        losses.append(loss.item())\n" in fix_runs_clean(shell, cells, d)[1]


def test_a_list_filled_in_the_cell_gets_item_at_each_append(shell):
    cells = [*_LIST_HELPERS, "%%gradcheck\nhist, extra = [], []\nfor i in range(2):\n"
             "    loss = (xs @ w).sum()\n    hist.append(loss)\n    loss.backward()\nnp.mean(hist)\n"]
    d = card_of(shell, cells, "numpy-on-grad-tensor", raises=RuntimeError)
    assert (4, 5) in lines_of(d) and (4, 7) in lines_of(d)
    assert "    hist.append(loss.item())\n" in fix_runs_clean(shell, cells, d)[-1]


def test_a_list_whose_tensors_are_needed_elsewhere_gets_no_fix(shell):
    cells = [*_LIST_HELPERS, "%%gradcheck\nhist = []\nfor i in range(2):\n    hist.append((xs @ w).sum())\n"
             "torch.stack(hist).sum().backward()\nnp.mean(hist)\n"]
    d = card_of(shell, cells, "numpy-on-grad-tensor", raises=RuntimeError)
    assert d.fix is None


def test_a_helper_converting_its_parameter_is_shown_beside_the_callers_fix(shell):
    cells = ["import torch\n", "def score(y_pred):\n    scores = y_pred.cpu().numpy().ravel()\n    return scores.mean()\n",
             "w = torch.randn(3, requires_grad=True)\n",
             "%%gradcheck\nlogits = torch.randn(4, 3) @ w\nprint(score(torch.sigmoid(logits)))\n"]
    d = card_of(shell, cells, "numpy-on-grad-tensor", raises=RuntimeError)
    assert lines_of(d) == [(4, 3), (2, 2)] and d.lines[1].function == "score"
    assert "score(torch.sigmoid(logits.detach()))" in fix_runs_clean(shell, cells, d)[-1]


def test_a_helpers_list_the_caller_also_stacks_gets_no_fix(shell):
    cells = [*_LIST_HELPERS, "%%gradcheck\nlosses = train(w, xs, 3)\nprint(plot_losses(losses))\n"
             "print(torch.stack(losses).mean())\n"]
    d = card_of(shell, cells, "numpy-on-grad-tensor", raises=RuntimeError)
    assert d.fix is None or "append(loss.item())" not in "".join(c.source for c in d.fix.elsewhere)


def test_a_mangled_private_name_and_its_siblings_are_detached_together(shell):
    """EdgeML's Bonsai trainer: in a method, `np.copy(__w)` of a tensor that requires grad (`__w` is the local
    `_Trainer__w`: Python mangles private names in a class), then the same for `__v`. The card names the tensor
    and detaches both: one `.detach()` alone would fail again on the next line."""
    cells = ["import numpy as np\nimport torch\n",
             "class Trainer:\n    def __init__(self):\n        self.w = torch.randn(3, requires_grad=True)\n"
             "        self.v = torch.randn(3, requires_grad=True)\n\n    def snapshot(self):\n"
             "        __w = self.w * 2\n        __v = self.v * 2\n"
             "        self.__w = torch.from_numpy(np.copy(__w))\n        self.__v = torch.from_numpy(np.copy(__v))\n",
             "%%gradcheck\nTrainer().snapshot()\n"]
    d = card_of(shell, cells, "numpy-on-grad-tensor", raises=RuntimeError)
    assert "`__w`" in d.title
    fixed = fix_runs_clean(shell, cells, d)[1]
    assert "np.copy(__w.detach())" in fixed and "np.copy(__v.detach())" in fixed
