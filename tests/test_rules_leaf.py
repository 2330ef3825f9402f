"""The leaf family: leaf-modified-in-place and non-leaf-grad (wordings, the warning's behaviour, fixes)."""
from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
import torch

import grad_magic
from grad_magic.rules.leaf.message import LeafInPlace, match_non_leaf_grad, parse_leaf_inplace
from cards import card
from earlier_cells import card_of, fix_runs_clean, lines_of
from gm_shell import run

# -- message variants --

# torch 1.5+ (checked with 2.1, 2.10, 2.11, 2.12, 2.13), and the "has been used" wording of older torch
LEAF = [
    ("a leaf Variable that requires grad is being used in an in-place operation.", False),
    ("a view of a leaf Variable that requires grad is being used in an in-place operation.", True),
    ("a leaf Variable that requires grad has been used in an in-place operation.", False),
]
# torch 2.13 ("information", TensorBody.h:493) and torch 2.1 ("informations", TensorBody.h:489)
NON_LEAF = [
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information. "
    "(Triggered internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)",
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more informations. "
    "(Triggered internally at aten/src/ATen/core/TensorBody.h:489.)",
]


@pytest.mark.parametrize("message,view", LEAF)
def test_every_wording_of_the_leaf_error_is_recognised(message, view):
    assert parse_leaf_inplace(message) == LeafInPlace(view)


@pytest.mark.parametrize("message", [
    "one of the variables needed for gradient computation has been modified by an inplace operation",
    "element 0 of tensors does not require grad and does not have a grad_fn",
    "leaf variable has been moved into the graph interior",
])
def test_other_errors_are_not_the_leaf_error(message):
    assert parse_leaf_inplace(message) is None


@pytest.mark.parametrize("message", NON_LEAF)
def test_every_wording_of_the_non_leaf_warning_is_recognised(message):
    assert match_non_leaf_grad(message)


def test_other_warnings_are_not_the_non_leaf_warning():
    assert not match_non_leaf_grad("Anomaly Detection has been enabled. This mode will increase the runtime")


def test_this_torch_raises_the_recognised_wordings():
    def fails(change) -> str:
        w = torch.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            change(w)
        return str(info.value)

    assert parse_leaf_inplace(fails(lambda w: w.add_(1))) == LeafInPlace(view=False)
    assert parse_leaf_inplace(fails(lambda w: w.__isub__(1))) == LeafInPlace(view=False)
    assert parse_leaf_inplace(fails(lambda w: w.__setitem__(0, 1.0))) == LeafInPlace(view=True)
    assert parse_leaf_inplace(fails(lambda w: w[0].mul_(2))) == LeafInPlace(view=True)


def test_rebinding_a_leaf_raises_nothing_and_only_reading_grad_warns():
    # NB: the article says `w = w + 1` raises "leaf variable has been moved into the graph interior"
    w = torch.tensor([1.0], requires_grad=True)
    w = w + 1
    w.sum().backward()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert w.grad is None
        assert w.grad is None
    assert len(seen) == 2 and all(match_non_leaf_grad(str(x.message)) for x in seen)


def test_torch_warns_on_every_read_in_a_fresh_process():
    code = ("import torch, warnings\nwarnings.simplefilter('always')\n"
            "w = torch.ones(2, requires_grad=True) * 2\nw.grad\nw.grad\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stderr.count("is not a leaf Tensor") == 2, out.stderr


def test_every_capture_records_the_warning_again():
    w = torch.ones(2, requires_grad=True) * 2
    shown = []
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # NB: shown once per place: its mark in the module's registry
        warnings.showwarning = lambda message, *rest, **kw: shown.append(str(message))
        for _ in range(2):
            with grad_magic.capture(namespace={}) as run_:
                w.grad
                w.grad
            # NB: one record per line that read it, in every run (the registry's mark stops none of them)
            assert sum(match_non_leaf_grad(x.message) for x in run_.record.warnings) == 2, run_.record.warnings
            # NB: and shown as without grad_magic: once per line, in the first run only
            assert len(shown) == 2, shown
        w.grad  # NB: unwatched after the runs, a new line: shown once
        for _ in range(2):
            w.grad  # NB: shown once, then its mark stops it, as always
        assert len(shown) == 4, shown


# -- through the shell --

def test_an_update_on_the_line_of_a_for_gets_no_fix(shell):
    d = card(shell, "%%gradcheck\nimport torch\nps = [torch.ones(2, requires_grad=True)]\n"
                    "(ps[0] * 2).sum().backward()\nfor p in ps: p -= 0.1 * p.grad\n",
             "leaf-modified-in-place", no_notes=True)
    assert d.fix is None and "`p`" in d.title


def test_a_write_needed_by_a_later_backward_through_setitem_gets_no_fix(shell):
    d = card(shell, "%%gradcheck\nimport torch\na = torch.ones(2, requires_grad=True)\nc = a * 3\n"
                    "a[0] = 5.0\nc.sum().backward()\n", "leaf-modified-in-place", no_notes=True)
    assert d.fix is None and "line 4" in d.why


def test_updates_and_grad_clearing_beside_the_failing_line_are_wrapped_together(shell):
    d = card(shell, "%%gradcheck\nimport torch\nw = torch.ones(2, requires_grad=True)\n"
                    "b = torch.ones(1, requires_grad=True)\n(w.sum() + b).sum().backward()\nprint('step')\n"
                    "w -= 0.1 * w.grad\nb -= 0.1 * b.grad\nw.grad = None\nb.grad.zero_()\nprint('done')\n",
             "leaf-modified-in-place", no_notes=True)
    assert d.fix.source.splitlines()[5:12] == [
        "print('step')", "with torch.no_grad():", "    w -= 0.1 * w.grad", "    b -= 0.1 * b.grad",
        "    w.grad = None", "    b.grad.zero_()", "print('done')"]


def test_no_grad_imported_by_name_is_used_when_torch_has_no_name(shell):
    d = card(shell, "%%gradcheck\nfrom torch import ones, no_grad\nw = ones(2, requires_grad=True)\n"
                    "w.mul_(2)\n", "leaf-modified-in-place", no_notes=True)
    # NB: `torch` is not bound in this fresh namespace, `no_grad` is
    assert d.fix is not None and d.fix.source.splitlines()[3] == "with no_grad():"


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    d = card(shell, "%%gradcheck\nimport torch\nw = torch.ones(2, requires_grad=True)\nw += 1\n",
             "leaf-modified-in-place", no_notes=True)
    assert d.language == "zh"
    assert "原地修改" in d.title and "第 4 行" in d.summary and "torch.no_grad()" in d.fix.description


def test_non_leaf_read_in_a_helper_outside_the_cell_is_still_explained(shell):
    run(shell, "import torch\ndef peek(t):\n    return t.grad\n")
    d = card(shell, "%%gradcheck\nout = torch.ones(2, requires_grad=True) * 2\nout.sum().backward()\npeek(out)\n",
             "non-leaf-grad", no_notes=True)
    assert d.fix is None and "could not tell" in d.summary and not d.names


def test_non_leaf_update_without_backward_before_it_gets_no_fix(shell):
    d = card(shell, "%%gradcheck\nimport torch\nw = torch.ones(2, requires_grad=True)\nw = w - 1\n"
                    "w.sum().backward()\nw.grad\n", "non-leaf-grad", no_notes=True)
    assert d.fix is None and "line 4" in d.title


def test_non_leaf_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    d = card(shell, "%%gradcheck\nimport torch\nw = torch.ones(2, requires_grad=True)\n(w * 2).sum().backward()\n"
                    "w = w + 1\n(w * 2).sum().backward()\nw.grad\n", "non-leaf-grad", no_notes=True)
    assert "不再是你训练的那个张量" in d.title and "with torch.no_grad():" in d.fix.source


# -- earlier cells: a weight-init helper, a helper that copies weights --

def test_every_write_of_an_init_helper_is_wrapped_not_only_the_first(shell):
    cells = ["import torch\nimport torch.nn as nn\n\n\ndef init_weights(m):\n    if isinstance(m, nn.Linear):\n"
             "        m.weight.fill_(0.01)\n        m.bias.zero_()\n    elif isinstance(m, nn.Conv1d):\n"
             "        m.weight.normal_(0, 0.02)\n",
             "%%gradcheck\nmodel = nn.Sequential(nn.Conv1d(2, 2, 3), nn.Flatten(), nn.Linear(4, 1))\n"
             "model.apply(init_weights)\n"]
    d = card_of(shell, cells, "leaf-modified-in-place", raises=RuntimeError)
    assert (1, 10) in lines_of(d) and d.lines[0].function == "init_weights"
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert fixed_cells[0].count("with torch.no_grad():") == 2


def test_slice_copies_into_a_new_layers_weight_are_wrapped_together(shell):
    cells = ["import torch\nimport torch.nn as nn\n\n\ndef widen(stem):\n"
             "    conv = nn.Conv2d(4, stem.out_channels, 3, bias=False)\n    conv.weight[:, :3] = stem.weight\n"
             "    conv.weight[:, 3:] = stem.weight.mean(dim=1, keepdim=True)\n    return conv\n",
             "%%gradcheck\nstem = widen(nn.Conv2d(3, 8, 3, bias=False))\n"]
    d = card_of(shell, cells, "leaf-modified-in-place", raises=RuntimeError)
    assert (1, 7) in lines_of(d) and (2, 2) in lines_of(d)
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert "    with torch.no_grad():\n        conv.weight[:, :3] = stem.weight\n        conv.weight[:, 3:]" in \
        fixed_cells[0]


def test_column_edits_through_an_indexed_layer_path_are_wrapped_together(shell):
    # knowledge-neuron editing: `model.layers[i].dense.weight[:, pos] -= ...` then `+= ...`, in a loop
    cells = ["import torch\nimport torch.nn as nn\n",
             "def edit(model, layer, positions, ori, tgt):\n    for pos in positions:\n"
             "        model.layers[layer].dense.weight[:, pos] -= ori\n"
             "        model.layers[layer].dense.weight[:, pos] += tgt\n",
             "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.dense = nn.Linear(4, 3)\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
             "        super().__init__()\n        self.layers = nn.ModuleList([Block(), Block()])\n\n\n"
             "net = Net()\n",
             "%%gradcheck\nedit(net, 1, [0, 2], torch.ones(3), torch.zeros(3))\n"]
    d = card_of(shell, cells, "leaf-modified-in-place", raises=RuntimeError)
    assert (2, 3) in lines_of(d)
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert "        with torch.no_grad():\n            model.layers[layer].dense.weight[:, pos] -= ori\n" \
        "            model.layers[layer].dense.weight[:, pos] += tgt" in fixed_cells[1]


def test_four_element_writes_of_a_kernel_helper_are_wrapped_together(shell):
    cells = ["import torch\nimport torch.nn as nn\n",
             "def set_kernel(m):\n    m.weight[0, 0, 0, 0] = 1\n    m.weight[0, 0, 0, 1] = 2\n"
             "    m.weight[0, 0, 1, 0] = 3\n    m.weight[0, 0, 1, 1] = 4\n    return m\n",
             "%%gradcheck\nconv = set_kernel(nn.Conv2d(1, 1, 2, bias=False))\n"
             "deconv = set_kernel(nn.ConvTranspose2d(1, 1, 2, bias=False))\n"]
    d = card_of(shell, cells, "leaf-modified-in-place", raises=RuntimeError)
    assert (2, 2) in lines_of(d)
    assert fix_runs_clean(shell, cells, d)[1].count("        m.weight[0, 0,") == 4


def test_weights_a_helper_makes_with_an_op_after_requires_grad_are_all_fixed_there(shell):
    cells = ["import torch\n\n\ndef make_params():\n    w = torch.randn(3, 2, requires_grad=True).double()\n"
             "    b = torch.zeros(2, requires_grad=True).double()\n    return w, b\n",
             "%%gradcheck\nw, b = make_params()\nloss = (torch.ones(4, 3, dtype=torch.float64) @ w + b).sum()\n"
             "loss.backward()\nw.grad\nb.grad\n"]
    d = card_of(shell, cells, "non-leaf-grad")
    assert (1, 5) in lines_of(d) and (1, 6) in lines_of(d) and (2, 2) in lines_of(d)
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert "w = torch.randn(3, 2).double().requires_grad_()" in fixed_cells[0]
    assert "b = torch.zeros(2).double().requires_grad_()" in fixed_cells[0]


def test_weights_scaled_after_requires_grad_in_an_earlier_cell_are_fixed_there(shell):
    cells = ["import torch\nw = torch.randn(3, 2, requires_grad=True) * 0.01\nb = torch.zeros(2)\n",
             "%%gradcheck\nloss = (torch.ones(4, 3) @ w + b).sum()\nloss.backward()\nw.grad\n"]
    d = card_of(shell, cells, "non-leaf-grad")
    assert (1, 2) in lines_of(d) and (2, 4) in lines_of(d)
    assert "w = (torch.randn(3, 2) * 0.01).requires_grad_()" in fix_runs_clean(shell, cells, d)[0]
