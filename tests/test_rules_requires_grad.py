"""The requires_grad family: missing-requires-grad and integer-requires-grad (wordings, causes, fixes)."""
from __future__ import annotations

import pytest
import torch

from grad_magic.cell import cell_tree
from grad_magic.edits import apply_edits
from grad_magic.rules.requires_grad.fix import leaf_edits
from grad_magic.rules.requires_grad.message import NoGradFn, NotFloat, parse_no_grad_fn, parse_not_float
from cards import card, diagnosis
from earlier_cells import card_of, fix_runs_clean, fixed, lines_of

# -- message variants --

# "element N of tensors ..." since torch 0.4 (checked with torch 2.1, 2.10, 2.11, 2.12, 2.13);
# "... of variables ..." before 0.4 (torch/csrc/autograd/python_engine.cpp of that time).
NO_GRAD_FN = [
    ("element 0 of tensors does not require grad and does not have a grad_fn", 0),
    ("element 1 of tensors does not require grad and does not have a grad_fn", 1),
    ("element 0 of variables does not require grad and does not have a grad_fn", 0),
]
# torch.tensor(..., requires_grad=True) / x.requires_grad = True (1.6+); x.requires_grad_() on every version;
# everything before complex autograd (1.5 and older).
NOT_FLOAT = [
    "Only Tensors of floating point and complex dtype can require gradients",
    "only Tensors of floating point and complex dtype can require gradients",
    "only Tensors of floating point dtype can require gradients",
    "Only Tensors of floating point dtype can require gradients",
]
OTHERS = [
    "One of the differentiated Tensors does not require grad",
    "a leaf Variable that requires grad is being used in an in-place operation.",
    "Trying to backward through the graph a second time",
]


@pytest.mark.parametrize("message,index", NO_GRAD_FN)
def test_every_wording_of_the_no_grad_fn_error_is_recognised(message, index):
    assert parse_no_grad_fn(message) == NoGradFn(index)


@pytest.mark.parametrize("message", NOT_FLOAT)
def test_every_wording_of_the_integer_error_is_recognised(message):
    assert parse_not_float(message) == NotFloat(complex_allowed="complex" in message)


@pytest.mark.parametrize("message", OTHERS + NOT_FLOAT)
def test_other_errors_are_not_the_no_grad_fn_error(message):
    assert parse_no_grad_fn(message) is None


@pytest.mark.parametrize("message", OTHERS + [m for m, _ in NO_GRAD_FN])
def test_other_errors_are_not_the_integer_error(message):
    assert parse_not_float(message) is None


def test_this_torch_raises_the_recognised_wordings():
    with pytest.raises(RuntimeError) as info:
        torch.ones(2).sum().backward()
    assert parse_no_grad_fn(str(info.value)) == NoGradFn(0)
    with pytest.raises(RuntimeError) as info:
        torch.autograd.backward([torch.ones(1, requires_grad=True).sum(), torch.ones(1).sum()])
    assert parse_no_grad_fn(str(info.value)) == NoGradFn(1)
    for make in (lambda: torch.tensor([1, 2], requires_grad=True), lambda: torch.arange(3).requires_grad_(),
                 lambda: setattr(torch.tensor([1]), "requires_grad", True),
                 lambda: torch.nn.Parameter(torch.tensor([1, 2]))):
        with pytest.raises(RuntimeError) as info:
            make()
        assert parse_not_float(str(info.value)) is not None, str(info.value)


# -- the fix's text edits --

@pytest.mark.parametrize("value,fixed", [
    ("torch.zeros(3)", "torch.zeros(3, requires_grad=True)"),
    ("torch.zeros(3, requires_grad=False)", "torch.zeros(3, requires_grad=True)"),
    ("torch.randn(2,\n    3)", "torch.randn(2,\n    3, requires_grad=True)"),
    ("torch.from_numpy(a)", "torch.from_numpy(a).requires_grad_()"),
    ("torch.randn(3) * 0.01", "(torch.randn(3) * 0.01).requires_grad_()"),
    ("T.ones(2)", "T.ones(2, requires_grad=True)"),
])
def test_a_leaf_is_made_to_require_grad_with_one_small_edit(value, fixed):
    source = f"w = {value}\n"
    tree = cell_tree(source)
    assert apply_edits(source, leaf_edits(source, tree.body[0].value, {"torch", "T"})) == f"w = {fixed}\n"


def test_a_factory_given_kwargs_gets_no_edit():
    source = "w = torch.zeros(3, **opts)\n"
    assert leaf_edits(source, cell_tree(source).body[0].value, {"torch"}) == []


# -- the rule on hand-made records: what is known, and no fix when unsure --

def test_more_gradless_leaves_than_the_cap_get_no_fix():
    names = "abcdef"
    ns = {n: torch.ones(2) for n in names}
    ns["loss"] = torch.ones(())
    source = "%%gradcheck\n" + "".join(f"{n} = torch.ones(2)\n" for n in names) + \
        "loss = (" + " * ".join(names) + ").sum()\nloss.backward()\n"
    d = diagnosis(source, NO_GRAD_FN[0][0], len(names) + 3, kind="missing-requires-grad", namespace=ns,
                  error_locals=ns)
    assert d.fix is None and not d.notes


def test_an_integer_leaf_is_not_given_requires_grad():
    ns = {"w": torch.tensor([1, 2]), "loss": torch.tensor(3)}
    d = diagnosis("%%gradcheck\nw = torch.tensor([1, 2])\nloss = w.sum()\nloss.backward()\n", NO_GRAD_FN[0][0], 4,
                  kind="missing-requires-grad", namespace=ns, error_locals=ns)
    assert "`w`" in d.title and d.fix is None and not d.notes


def test_a_cell_that_does_not_parse_is_explained_without_a_fix():
    ns = {"loss": torch.ones(())}
    d = diagnosis("%%gradcheck\nloss = (\nloss.backward()\n", NO_GRAD_FN[0][0], 3, kind="missing-requires-grad",
                  namespace=ns, error_locals=ns)
    assert d.fix is None and "could not read" in d.summary and not d.notes


def test_autograd_switched_off_for_the_session_is_said():
    was = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    try:
        model = torch.nn.Linear(2, 1)
        loss = model(torch.ones(1, 2)).sum()
        ns = {"model": model, "x": torch.ones(1, 2), "loss": loss}
        d = diagnosis("%%gradcheck\nloss = model(x).sum()\nloss.backward()\n", NO_GRAD_FN[0][0], 3,
                      kind="missing-requires-grad", namespace=ns, error_locals=ns)
    finally:
        torch.set_grad_enabled(was)
    assert d.fix is None and "set_grad_enabled(True)" in d.why and not d.notes


def test_an_inference_tensor_is_said_to_come_from_inference_mode():
    model = torch.nn.Linear(2, 1)
    with torch.inference_mode():
        loss = model(torch.ones(1, 2)).sum()
    ns = {"loss": loss}
    d = diagnosis("%%gradcheck\nloss = compute()\nloss.backward()\n", NO_GRAD_FN[0][0], 3,
                  kind="missing-requires-grad", namespace=ns, error_locals=ns)
    assert d.fix is None and "inference_mode" in d.why and not d.notes


# -- through the shell --

def test_evidence_picks_the_weight_not_the_data(shell):
    d = card(shell, "%%gradcheck\nimport torch\nx = torch.randn(8, 2)\nw = torch.zeros(2)\n"
                    "opt = torch.optim.SGD([w], lr=0.1)\nloss = (x @ w).pow(2).mean()\nloss.backward()\n",
             "missing-requires-grad", raises=RuntimeError, no_notes=True)
    assert d.names == ("w",) and d.fix.source.splitlines()[3] == "w = torch.zeros(2, requires_grad=True)"


def test_a_numpy_round_trip_is_replaced_by_the_tensor_itself(shell):
    d = card(shell, "%%gradcheck\nimport torch\nw = torch.ones(2, requires_grad=True)\n"
                    "v = torch.from_numpy((w * 2).detach().numpy())\nv.sum().backward()\n",
             "missing-requires-grad", raises=RuntimeError, no_notes=True)
    cell = "%%gradcheck\nimport torch\nw = torch.ones(2, requires_grad=True)\n" \
           "v = torch.from_numpy((w * 2).detach().numpy())\nv.sum().backward()\n"
    assert "torch.from_numpy(...)" in d.title and d.fix.source.splitlines()[3] == "v = (w * 2)"
    fix_runs_clean(shell, [cell], d)


def test_a_forward_between_other_lines_of_a_no_grad_block_is_split_out(shell):
    d = card(shell, "%%gradcheck\nimport torch\nw = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n"
                    "    print('eval')\n    y = w * 2\n    print('done')\ny.sum().backward()\n",
             "missing-requires-grad", raises=RuntimeError, no_notes=True)
    assert d.fix.source.splitlines()[3:8] == ["with torch.no_grad():", "    print('eval')", "y = w * 2",
                                              "with torch.no_grad():", "    print('done')"]


def test_a_one_line_no_grad_block_gets_no_fix(shell):
    d = card(shell, "%%gradcheck\nimport torch\nw = torch.ones(2, requires_grad=True)\n"
                    "with torch.no_grad(): y = w * 2\ny.sum().backward()\n",
             "missing-requires-grad", raises=RuntimeError, no_notes=True)
    assert d.fix is None and "no_grad" in d.title


def test_a_frozen_layer_used_directly_names_the_parameter(shell):
    d = card(shell, "%%gradcheck\nimport torch\nlin = torch.nn.Linear(2, 1)\nlin.weight.requires_grad_(False)\n"
                    "lin.bias.requires_grad_(False)\nloss = lin(torch.ones(1, 2)).sum()\nloss.backward()\n",
             "missing-requires-grad", raises=RuntimeError, no_notes=True)
    assert d.fix is None and "`lin`" in d.title and "Line 4 (`lin.weight.requires_grad_(False)`)" in d.why
    assert "`lin.requires_grad_(True)` unfreezes it" in d.why


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    d = card(shell, "%%gradcheck\nimport torch\nw = torch.tensor([1.0])\nloss = (w * 2).sum()\nloss.backward()\n",
             "missing-requires-grad", raises=RuntimeError, no_notes=True)
    assert d.language == "zh"
    assert "没有计算图" in d.title and "第 3 行" in d.why and "requires_grad=True" in d.fix.description


def test_integer_fix_replaces_an_integer_dtype(shell):
    d = card(shell, "%%gradcheck\nimport torch\nw = torch.zeros(2, dtype=torch.int32, requires_grad=True)\n",
             "integer-requires-grad", raises=RuntimeError, no_notes=True)
    assert d.fix.source.splitlines()[2] == "w = torch.zeros(2, dtype=torch.float32, requires_grad=True)"
    assert "int32" in d.title


def test_integer_tensor_from_numpy_gets_no_fix(shell):
    d = card(shell, "%%gradcheck\nimport numpy as np\nimport torch\nt = torch.from_numpy(np.arange(3))\n"
                    "t.requires_grad_()\n", "integer-requires-grad", raises=RuntimeError, no_notes=True)
    assert d.fix is None and "int64" in d.title


# -- earlier cells --

MASKED_CORE = ("import torch\nimport torch.nn as nn\n\n\nclass Core(nn.Module):\n"
               "    def __init__(self, mask):\n        super().__init__()\n        self.mask = nn.Parameter(mask)\n"
               "        self.fc = nn.Linear(4, 3)\n\n    def forward(self, x):\n"
               "        return self.fc(x).masked_fill(self.mask == 0, -1e4)\n")


def test_an_integer_mask_kept_as_a_parameter_stays_data(shell):
    cells = [MASKED_CORE, "mask = torch.tensor([1, 0, 1])\n",
             "%%gradcheck\ncore = Core(mask)\nloss = core(torch.randn(2, 4)).logsumexp(1).mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "integer-requires-grad", raises=RuntimeError)
    assert (1, 8) in lines_of(d) and d.lines[0].function == "Core.__init__"
    assert "compares, masks or indexes with `self.mask`" in d.why
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert "self.mask = nn.Parameter(mask, requires_grad=False)" in fixed_cells[0]


def test_an_integer_parameter_used_as_a_weight_is_made_float_where_its_value_is_made(shell):
    cells = [MASKED_CORE.replace("masked_fill(self.mask == 0, -1e4)", "mul(self.mask)"),
             "mask = torch.tensor([1, 0, 1])\n", "%%gradcheck\ncore = Core(mask)\n"]
    d = card_of(shell, cells, "integer-requires-grad", raises=RuntimeError)
    assert (1, 8) in lines_of(d) and (2, 1) in lines_of(d)
    assert fix_runs_clean(shell, cells, d)[1] == "mask = torch.tensor([1, 0, 1], dtype=torch.float32)"


NET = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
       "        super().__init__()\n        self.body = nn.Linear(4, 8)\n        self.head = nn.Linear(8, 3)\n\n"
       "    def forward(self, x):\n        h = torch.relu(self.body(x))\n        return self.head(h)\n")
STEP = "%%gradcheck\nmodel = Net()\nloss = model(torch.randn(2, 4)).pow(2).mean()\nloss.backward()\n"


@pytest.mark.parametrize("cut", [".detach()", ".data"])
def test_a_cut_in_an_earlier_cells_forward_is_dropped_there(shell, cut):
    cells = [NET.replace("return self.head(h)", f"return self.head(h){cut}"), STEP]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (1, 13) in lines_of(d) and (2, 4) in lines_of(d) and d.lines[0].function == "Net.forward"
    assert "return self.head(h)\n" in fix_runs_clean(shell, cells, d)[0] + "\n"


def test_a_numpy_round_trip_in_a_helper_is_named_there_without_a_fix(shell):
    cells = [NET, "import numpy as np\n\n\ndef probs(logits):\n    p = logits.softmax(-1).detach().numpy()\n"
                  "    return torch.tensor(np.clip(p, 0.01, 0.99))\n",
             "%%gradcheck\nmodel = Net()\nloss = probs(model(torch.randn(2, 4))).log().mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (2, 5) in lines_of(d) and "`.numpy()`" in d.title and d.fix is None


def test_a_forward_helper_under_no_grad_in_an_earlier_cell_is_named(shell):
    cells = [NET, "@torch.no_grad()\ndef predict(model, x):\n    return model(x)\n",
             "%%gradcheck\nmodel = Net()\nloss = predict(model, torch.randn(2, 4)).pow(2).mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (2, 1) in lines_of(d) and (2, 3) in lines_of(d)
    assert "def predict" in fix_runs_clean(shell, cells, d)[1] and "no_grad" not in fixed(cells, d)[1]


def test_an_argmax_decoded_value_gets_the_differentiable_argmax(shell):
    cells = [NET, "def decode(scores):\n    idx = scores.argmax(dim=1)\n    return idx.float() / 2\n",
             "%%gradcheck\nmodel = Net()\nloss = (decode(model(torch.randn(2, 4))) - 1).abs().mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (2, 2) in lines_of(d) and "requires_grad=True` anywhere would run but train nothing" in d.why
    assert "On line 2 of In [2] (`idx = scores.argmax(dim=1)`)" in d.why
    assert ".softmax(dim=1).movedim(1, -1)" in fix_runs_clean(shell, cells, d)[1]


def test_a_loss_from_a_comparison_is_named_and_not_fixed(shell):
    cells = [NET, "def error_rate(scores, y):\n    return (scores.argmax(1) != y).float().mean()\n",
             "%%gradcheck\nmodel = Net()\nloss = error_rate(model(torch.randn(2, 4)), torch.tensor([0, 2]))\n"
             "loss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (2, 2) in lines_of(d) and d.fix is None and "cross_entropy on the logits" in d.why


def test_a_model_frozen_by_a_helper_names_the_call_that_froze_it_and_keeps_the_head(shell):
    cells = [NET, "def freeze(model, names):\n    for name in names:\n"
                  "        for p in getattr(model, name).parameters():\n            p.requires_grad = False\n",
             "model = Net()\nfreeze(model, ['body', 'head'])\n",
             "%%gradcheck\nloss = model(torch.randn(2, 4)).pow(2).mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (3, 2) in lines_of(d) and "`model`" in d.title
    assert "freeze(model, ['body'])" in fix_runs_clean(shell, cells, d)[2]  # NB: the head is left out


def test_backward_in_a_helper_follows_its_arguments_to_the_caller(shell):
    cells = ["import torch\n\n\ndef fit_step(w, x):\n    loss = (x @ w).pow(2).mean()\n    loss.backward()\n",
             "%%gradcheck\nw = torch.randn(3, 1)\nfit_step(w, torch.randn(4, 3))\nw.grad\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (2, 2) in lines_of(d) and (1, 6) in lines_of(d)
    assert "w = torch.randn(3, 1, requires_grad=True)" in fix_runs_clean(shell, cells, d)[1]


def test_a_forward_helper_under_inference_mode_in_an_earlier_cell_is_named(shell):
    cells = [NET, "def predict(model, x):\n    with torch.inference_mode():\n        out = model(x)\n    return out\n",
             "%%gradcheck\nmodel = Net()\nloss = predict(model, torch.randn(2, 4)).pow(2).mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (2, 2) in lines_of(d) and (2, 3) in lines_of(d)
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert "    out = model(x)\n" in fixed_cells[1] and "inference_mode" not in fixed_cells[1]


def test_a_model_frozen_by_a_loop_of_an_earlier_cell_names_the_loop(shell):
    cells = [NET, "model = Net()\nfor p in model.parameters():\n    p.requires_grad = False\n",
             "%%gradcheck\nloss = model(torch.randn(2, 4)).pow(2).mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (2, 2) in lines_of(d) and (3, 3) in lines_of(d) and d.fix is None


def test_a_freeze_loop_inside_an_if_of_an_earlier_cell_names_the_loop_not_the_if(shell):
    """The finetune block of Ultra-Fast-Lane-Detection (blind batch c4): the loop that froze the model sits in an
    `if`; the line to change is the loop's (`net.model.parameters()` would keep the head), not the `if`."""
    cells = [NET, "model = Net()\nfinetune = True\nif finetune:\n    print('finetune')\n"
                  "    for p in model.parameters():\n        p.requires_grad = False\n",
             "%%gradcheck\nloss = model(torch.randn(2, 4)).pow(2).mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (2, 5) in lines_of(d) and (2, 3) not in lines_of(d), lines_of(d)
    assert "Line 5 of In [2] (`for p in model.parameters():`) turned requires_grad off." in d.why, d.why


def test_a_weight_of_an_earlier_cell_the_optimizer_trains_gets_requires_grad_there(shell):
    cells = ["import torch\nweights = torch.randn(3)\n",
             "%%gradcheck\nopt = torch.optim.SGD([weights], lr=0.1)\nfeatures = torch.randn(5, 3)\n"
             "loss = (features @ weights).sigmoid().mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (1, 2) in lines_of(d) and (2, 5) in lines_of(d)
    assert "weights = torch.randn(3, requires_grad=True)" in fix_runs_clean(shell, cells, d)[0]


def test_an_integer_tensor_made_in_an_earlier_cell_is_made_float_there(shell):
    cells = ["import torch\nscale = torch.tensor([1, 2, 3])\n",
             "%%gradcheck\nscale.requires_grad_()\nloss = (scale * torch.randn(3)).sum()\nloss.backward()\n"]
    d = card_of(shell, cells, "integer-requires-grad", raises=RuntimeError)
    assert (1, 2) in lines_of(d) and (2, 2) in lines_of(d)
    assert "scale = torch.tensor([1, 2, 3], dtype=torch.float32)" in fix_runs_clean(shell, cells, d)[0]


# -- issue 15: the causes real code has, each fixed where it is --

NET15 = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
       "        super().__init__()\n        self.backbone = nn.Linear(4, 4)\n        self.head = nn.Linear(4, 2)\n\n"
       "    def forward(self, x):\n        return self.head(self.backbone(x))\n")
STEP15 = "%%gradcheck\nloss = net(torch.randn(3, 4)).sum()\nloss.backward()\n"


def test_a_setup_helper_freezing_every_parameter_freezes_the_backbone_only(shell):
    cells = [NET15, "def setup(net):\n    for p in net.parameters():\n        p.requires_grad = False\n    return net\n",
             "net = setup(Net())\n", STEP15]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (2, 2) in lines_of(d) and (3, 1) in lines_of(d)
    assert "    for p in net.backbone.parameters():\n" in fix_runs_clean(shell, cells, d)[1]


def test_a_freeze_helper_given_every_child_by_name_leaves_the_head_out(shell):
    cells = [NET15, "def freeze(model, names):\n    for name in names:\n"
                  "        getattr(model, name).requires_grad_(False)\n",
             "net = Net()\nfreeze(net, ['backbone', 'head'])\n", STEP15]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (3, 2) in lines_of(d)
    assert "freeze(net, ['backbone'])" in fix_runs_clean(shell, cells, d)[2]


def test_a_no_grad_decorated_method_the_loss_came_through_loses_its_decorator(shell):
    cells = [NET15 + "\n    @torch.no_grad()\n    def scores(self, x):\n        return self(x)\n",
             "net = Net()\n", "%%gradcheck\nloss = net.scores(torch.randn(3, 4)).sum()\nloss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (1, 14) in lines_of(d)
    assert "@torch.no_grad()" not in fix_runs_clean(shell, cells, d)[0]


def test_a_numpy_round_trip_through_a_helper_gives_the_loss_the_tensor_itself(shell):
    cells = [NET15, "def to_numpy(t):\n    return t.detach().cpu().numpy()\n\n\n"
                  "def loss_of(out):\n    probs = torch.tensor(to_numpy(torch.sigmoid(out)))\n    return probs.sum()\n",
             "net = Net()\n", "%%gradcheck\nloss = loss_of(net(torch.randn(3, 4)))\nloss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (2, 6) in lines_of(d)
    assert "    probs = torch.sigmoid(out)\n" in fix_runs_clean(shell, cells, d)[1]


def test_a_thresholded_probability_in_a_loss_module_is_replaced_by_the_probability(shell):
    cells = [NET15, "class DiceLoss(torch.nn.Module):\n    def forward(self, logits, y):\n"
                  "        pr = (torch.sigmoid(logits) > 0.5).float()\n        return 1 - (pr * y).sum() / (pr + y).sum()\n",
             "net = Net()\ncriterion = DiceLoss()\n",
             "%%gradcheck\nloss = criterion(net(torch.randn(3, 4)), torch.ones(3, 2))\nloss.backward()\n"]
    d = card_of(shell, cells, "missing-requires-grad", raises=RuntimeError)
    assert (2, 3) in lines_of(d) and "requires_grad=True" not in d.fix.source
    assert "        pr = torch.sigmoid(logits)\n" in fix_runs_clean(shell, cells, d)[1]


def test_a_comparison_of_raw_scores_gets_words_not_a_fix(shell):
    d = card(shell, "%%gradcheck\nimport torch\nw = torch.randn(3, requires_grad=True)\n"
                    "loss = (w > 0).float().mean()\nloss.backward()\n",
             "missing-requires-grad", raises=RuntimeError, no_notes=True)
    assert d.fix is None and "w > 0" in d.title


def test_integer_tensors_asked_for_grad_in_a_row_are_all_made_float(shell):
    cells = ["import torch as t\nfrom torch.autograd import Variable as V\n\n\ndef make():\n"
             "    x = V(t.arange(-2, 4), requires_grad=True)\n    a = t.tensor(1, requires_grad=True)\n"
             "    b = t.tensor([0.5, 1.0], requires_grad=True)\n    c = t.tensor(0, requires_grad=True)\n"
             "    return x, a, b, c\n", "%%gradcheck\nx, a, b, c = make()\n(a * x + c).sum().backward()\n"]
    d = card_of(shell, cells, "integer-requires-grad", raises=RuntimeError)
    assert {(1, 6), (1, 7), (1, 9)} <= set(lines_of(d)) and (1, 8) not in lines_of(d)
    made = fix_runs_clean(shell, cells, d)[0].splitlines()
    assert made[5:9] == ["    x = V(t.arange(-2, 4, dtype=t.float32), requires_grad=True)",
                         "    a = t.tensor(1, dtype=t.float32, requires_grad=True)",
                         "    b = t.tensor([0.5, 1.0], requires_grad=True)",
                         "    c = t.tensor(0, dtype=t.float32, requires_grad=True)"]
