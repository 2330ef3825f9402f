"""The inplace family: saved-tensor-modified-in-place (message variants, matching, fixes, wording)."""
from __future__ import annotations

import re
import weakref

import pytest
import torch

from grad_magic.record import CapturedWarning, OpEvent, TensorSnapshot
from grad_magic.render import Card
from grad_magic.rules.inplace.message import parse_saved_tensor_error
from cards import card, diagnosis
from earlier_cells import card_of, fix_runs_clean, lines_of

HEAD = ("one of the variables needed for gradient computation has been modified by an inplace "
        "operation: ")
HINT_OLD = (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
            "with torch.autograd.set_detect_anomaly(True).")
HINT_NEW = (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
            "with torch.autograd.set_detect_anomaly(True, check_nan=False).")
HINT_ANOMALY = (" Hint: the backtrace further above shows the operation that failed to compute its "
                "gradient. The variable in question was changed in there or anywhere later. Good luck!")

# Every wording seen from torch 2.1 to 2.13 (reproduced with each release; strings checked in the .so
# files), plus the pre-1.10 node names without the trailing 0 and the bare pre-1.0 sentence.
VARIANTS = [
    # torch 2.13: the op's name; check_nan=False hint
    (HEAD + "[torch.FloatTensor [2]], which is output 0 of Sigmoid, is at version 1; expected version 0 "
     "instead." + HINT_NEW, dict(shape=(2,), dtype="float32", device="cpu", grad_fn="Sigmoid", version=1,
                                 expected=0, output=0)),
    # torch 2.1 ... 2.12: the node's name; torch 2.1 ... 2.10 hint
    (HEAD + "[torch.FloatTensor [2, 3]], which is output 0 of SigmoidBackward0, is at version 2; expected "
     "version 0 instead." + HINT_OLD, dict(shape=(2, 3), grad_fn="SigmoidBackward0", version=2, expected=0)),
    # before torch 1.10: no trailing 0
    (HEAD + "[torch.FloatTensor [2]], which is output 0 of SigmoidBackward, is at version 1; expected "
     "version 0 instead." + HINT_OLD, dict(grad_fn="SigmoidBackward")),
    # anomaly mode on (every version)
    (HEAD + "[torch.FloatTensor [16, 1]], which is output 0 of Sigmoid, is at version 1; expected version "
     "0 instead." + HINT_ANOMALY, dict(shape=(16, 1), version=1)),
    # CUDA
    (HEAD + "[torch.cuda.FloatTensor [2, 3]], which is output 0 of AddmmBackward0, is at version 3; "
     "expected version 2 instead." + HINT_OLD, dict(device="cuda", dtype="float32", expected=2)),
    (HEAD + "[torch.cuda.HalfTensor [8]], which is output 0 of Exp, is at version 1; expected version 0 "
     "instead." + HINT_NEW, dict(device="cuda", dtype="float16")),
    # dtypes without a legacy tensor type name print the dispatch key's type
    (HEAD + "[CPUBFloat16Type [2, 3]], which is output 0 of Exp, is at version 1; expected version 0 "
     "instead." + HINT_NEW, dict(device="cpu", dtype="bfloat16", shape=(2, 3))),
    (HEAD + "[CUDABFloat16Type [4]], which is output 0 of ExpBackward0, is at version 1; expected version 0 "
     "instead." + HINT_OLD, dict(device="cuda", dtype="bfloat16")),
    (HEAD + "[torch.DoubleTensor [2]], which is output 0 of Sigmoid, is at version 1; expected version 0 "
     "instead." + HINT_NEW, dict(dtype="float64")),
    # a leaf: no "which is output" clause
    (HEAD + "[torch.FloatTensor [2, 2]] is at version 1; expected version 0 instead." + HINT_NEW,
     dict(shape=(2, 2), grad_fn=None, output=None, version=1, expected=0)),
    # a 0-dim tensor
    (HEAD + "[torch.FloatTensor []], which is output 0 of Sigmoid, is at version 1; expected version 0 "
     "instead." + HINT_NEW, dict(shape=())),
    # a view's base, regenerated as AsStrided after an optimizer step (GAN)
    (HEAD + "[torch.FloatTensor [2, 1]], which is output 0 of AsStridedBackward0, is at version 2; "
     "expected version 1 instead." + HINT_OLD, dict(grad_fn="AsStridedBackward0", version=2, expected=1)),
    # torch replaces only CPU/CUDA Byte..Half types by their legacy names; a message that skipped the
    # replacement (or another backend) shows the dispatch key's type
    (HEAD + "[CPUFloatType [2]], which is output 0 of Sigmoid, is at version 1; expected version 0 "
     "instead." + HINT_NEW, dict(device="cpu", dtype="float32", shape=(2,))),
    (HEAD + "[MPSFloatType [2, 2]], which is output 0 of Tanh, is at version 1; expected version 0 "
     "instead." + HINT_NEW, dict(device="mps", dtype="float32")),
    (HEAD + "[CPUComplexFloatType [3]], which is output 0 of Exp, is at version 1; expected version 0 "
     "instead." + HINT_NEW, dict(dtype="complex64")),
    # an unknown backend still parses, without dtype or device
    (HEAD + "[MyDeviceFloatType [3]], which is output 0 of Exp, is at version 1; expected version 0 "
     "instead.", dict(shape=(3,), dtype=None, device=None)),
]


@pytest.mark.parametrize("message,expected", VARIANTS, ids=range(len(VARIANTS)))
def test_every_known_wording_is_recognised(message, expected):
    err = parse_saved_tensor_error(message)
    assert err is not None
    for field, value in expected.items():
        assert getattr(err, field) == value, field


def test_the_bare_old_sentence_is_recognised_without_details():
    err = parse_saved_tensor_error(HEAD.rstrip(": "))
    assert err is not None and err.version is None and err.shape is None


@pytest.mark.parametrize("message", [
    "a leaf Variable that requires grad is being used in an in-place operation.",
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed).",
    "element 0 of tensors does not require grad and does not have a grad_fn",
])
def test_other_errors_are_not_this_kind(message):
    assert parse_saved_tensor_error(message) is None


def test_real_torch_message_of_this_version_is_recognised():
    a = torch.ones(2, 3, requires_grad=True)
    x = torch.sigmoid(a)
    x += 1
    with pytest.raises(RuntimeError) as info:
        x.sum().backward()
    err = parse_saved_tensor_error(str(info.value))
    assert (err.shape, err.dtype, err.device, err.version, err.expected) == ((2, 3), "float32", "cpu", 1, 0)
    assert re.fullmatch(r"Sigmoid(Backward0?)?", err.grad_fn)


# -- the rule on hand-made records: odd input, ambiguity --

def _snap(t: torch.Tensor, version: int) -> TensorSnapshot:
    return TensorSnapshot(ident=id(t), shape=tuple(t.shape), dtype="float32", device="cpu",
                          version=version, requires_grad=True, is_leaf=False, ref=weakref.ref(t))


MESSAGE = HEAD + "[torch.FloatTensor [2]], which is output 0 of Sigmoid, is at version 1; expected " \
                 "version 0 instead." + HINT_NEW


def _diagnose(source: str, events=(), warnings=(), namespace=None, message=MESSAGE):
    return diagnosis(source, message, 4, kind="saved-tensor-modified-in-place", namespace=namespace,
                     inplace_ops=list(events), warnings=list(warnings))


def test_nothing_recorded_still_explains_and_proposes_no_fix():
    d = _diagnose("%%gradcheck\nx = f()\ng(x)\nx.sum().backward()\n", message=HEAD.rstrip(": "))
    assert d.fix is None and not d.notes
    assert "did not see which in-place operation" in d.why


def test_two_lines_that_fit_equally_name_neither():
    x, y = torch.ones(2), torch.ones(2)
    source = "%%gradcheck\nx += 1\ny += 1\nz.backward()\n"
    events = [OpEvent("add_", 2, (_snap(x, 1),), "method"), OpEvent("add_", 3, (_snap(y, 1),), "method")]
    d = _diagnose(source, events, namespace={"x": x, "y": y})
    assert d.fix is None
    assert [sl.lineno for sl in d.lines] == [4]


def test_the_forward_line_breaks_a_tie():
    x, y = torch.ones(2), torch.ones(2)
    x.add_(1), y.add_(1)
    source = "%%gradcheck\nx = torch.sigmoid(a)\nx += 1\ny += 1\nz.backward()\n"
    events = [OpEvent("add_", 3, (_snap(x, 1),), "method"), OpEvent("add_", 4, (_snap(y, 1),), "method")]
    warning = CapturedWarning("UserWarning", 'Error detected in SigmoidBackward0. Traceback of forward call '
                              'that caused the error:\n  File "<cell>", line 2, in <module>\n', "graph.py", 1)
    d = _diagnose(source, events, [warning], namespace={"x": x, "y": y})
    assert d.title.startswith("`x`") and "line 2" in d.why
    assert d.fix is not None and "x = x + 1" in d.fix.source


def test_the_first_of_two_writes_is_the_culprit():
    x = torch.ones(2)
    source = "%%gradcheck\nx = torch.sigmoid(a)\nx += 1\nx *= 3\nx.sum().backward()\n"
    message = MESSAGE.replace("at version 1", "at version 2")
    events = [OpEvent("add_", 3, (_snap(x, 1),), "method"), OpEvent("mul_", 4, (_snap(x, 2),), "method")]
    d = _diagnose(source, events, message=message)
    assert "line 3" in d.where and d.fix.source.splitlines()[2] == "x = x + 1"


def test_a_forward_in_another_file_is_named_but_has_no_line():
    x = torch.ones(2)
    warning = CapturedWarning("UserWarning", 'Error detected in ExpBackward0. Traceback of forward call '
                              'that caused the error:\n  File "/lib/model.py", line 9, in forward\n',
                              "graph.py", 1)
    d = _diagnose("%%gradcheck\nx.add_(1)\nx.sum().backward()\n",
                  [OpEvent("add_", 2, (_snap(x, 1),), "method")], [warning])
    assert "ExpBackward0" in d.why and "outside this cell" in d.why


# -- fixes through the shell --

def test_an_operand_that_is_an_expression_is_parenthesised(shell):
    d = card(shell, "%%gradcheck\nimport torch\na = torch.ones(2, requires_grad=True)\nx = a.exp()\n"
                    "x *= a + 1\nx.sum().backward()\n", "saved-tensor-modified-in-place", raises=RuntimeError)
    assert d.fix.source.splitlines()[4] == "x = x * (a + 1)"


def test_an_in_place_call_whose_result_is_used_gets_a_clone(shell):
    d = card(shell, "%%gradcheck\nimport torch\na = torch.ones(2, requires_grad=True)\nx = a.exp()\n"
                    "y = x.mul_(2)\ny.sum().backward()\n", "saved-tensor-modified-in-place", raises=RuntimeError)
    assert d.fix.source.splitlines()[4:6] == ["x = x.clone()", "y = x.mul_(2)"]


def test_a_method_without_an_out_of_place_twin_gets_a_clone(shell):
    d = card(shell, "%%gradcheck\nimport torch\na = torch.ones(2, requires_grad=True)\nx = a.exp()\n"
                    "if True:\n    x.zero_()\nx.sum().backward()\n",
             "saved-tensor-modified-in-place", raises=RuntimeError)
    assert d.fix.source.splitlines()[5:7] == ["    x = x.clone()", "    x.zero_()"]


def test_a_write_after_a_semicolon_gets_no_fix(shell):
    d = card(shell, "%%gradcheck\nimport torch\na = torch.ones(2, requires_grad=True)\nx = a.exp()\n"
                    "b = 1; x[0] = 0\nx.sum().backward()\n", "saved-tensor-modified-in-place", raises=RuntimeError)
    assert d.fix is None and "No automatic fix" in d.why


def test_of_two_inplace_flags_the_module_that_ran_is_fixed(shell):
    # NB: the tracker saw which module wrote (act1): its flag is the one changed, act2's stays
    d = card(shell, "%%gradcheck\nimport torch\nimport torch.nn as nn\n"
                    "act1, act2 = nn.ReLU(inplace=True), nn.ReLU(inplace=True)\n"
                    "a = torch.ones(2, requires_grad=True)\nx = a.sigmoid()\ny = act1(x)\n"
                    "y.sum().backward()\n", "saved-tensor-modified-in-place", raises=RuntimeError)
    assert d.names == ("act1",) and [sl.lineno for sl in d.lines] == [4, 6, 7, 8]
    assert d.fix.source.splitlines()[3] == "act1, act2 = nn.ReLU(inplace=False), nn.ReLU(inplace=True)"
    assert shell.run_cell(d.fix.source).error_in_exec is None


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    d = card(shell, "%%gradcheck\nimport torch\na = torch.ones(2, requires_grad=True)\nx = a.exp()\n"
                    "x += 1\nx.sum().backward()\n", "saved-tensor-modified-in-place", raises=RuntimeError)
    assert d.language == "zh"
    assert "原地修改" in d.title and "第 5 行" in d.summary and "第 4 行" in d.why
    assert "非原地运算" in d.fix.description and "x = x + 1" in d.fix.description
    text = str(Card(d))
    assert "发生了什么" in text and "x = x + 1" in text


# -- the write in an earlier cell: a block's forward(), a module built in place, a helper's loop --
# NB: cells run as a notebook runs them (In [1], In [2], ...); every fix is applied to the cells it changes and
# the whole notebook is run again in a fresh session, where it must not fail.

KIND = "saved-tensor-modified-in-place"
IMPORTS = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


BLOCK = IMPORTS + """

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
{write}
        return h
"""
RUN_BLOCK = ("%%gradcheck\ntorch.manual_seed(0)\nblock = Block()\nloss = block(torch.randn(3, 4)).sum()\n"
             "loss.backward()\n")


@pytest.mark.parametrize("write,fixed", [
    ("        h += x", "        h = h + x"),
    ("        h.mul_(2)", "        h = h.mul(2)"),
    ("        h[:, 0] = x[:, 0]", "        h = h.clone()\n        h[:, 0] = x[:, 0]"),
    ("        h = F.relu(h, True)", "        h = F.relu(h)"),
    ("        h = F.dropout(h, 0.5, True, True)", "        h = F.dropout(h, 0.5, True)"),
])
def test_a_write_in_a_block_forward_of_an_earlier_cell_is_fixed_there(shell, write, fixed):
    cells = [BLOCK.format(write=write), RUN_BLOCK]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    assert (1, 13) in lines_of(d) and d.lines[-1].cell == 2  # the write, then the calling line of this cell
    assert "In [1], line 13, in Block.forward" in d.where
    assert d.fix.source == "" and [cf.cell for cf in d.fix.elsewhere] == [1]
    assert fix_runs_clean(shell, cells, d)[0] == BLOCK.format(write=fixed).rstrip("\n")


def test_a_helper_that_writes_into_its_argument_is_named_without_a_fix(shell):
    # NB: `scale_` is meant to change the caller's tensor: a copy or a rebind inside it would change nothing
    cells = [IMPORTS + "\n\ndef scale_(t):\n    t *= 2\n    return t\n",
             "%%gradcheck\na = torch.ones(3, requires_grad=True)\ne = a.exp()\nscale_(e)\ne.sum().backward()\n"]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    assert (1, 7) in lines_of(d) and "in scale_" in d.where
    assert d.fix is None and "No automatic fix" in d.why


NET = IMPORTS + """

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(4, 8),
            nn.Sigmoid(),
            {module},
            nn.Linear(8, 1),
        )

    def forward(self, x):
        return self.main(x)
"""


@pytest.mark.parametrize("module,fixed", [
    ("nn.ReLU(inplace=True)", "nn.ReLU(inplace=False)"),
    ("nn.LeakyReLU(0.2, True)", "nn.LeakyReLU(0.2)"),
    ("nn.Dropout(p=0.1, inplace=True)", "nn.Dropout(p=0.1, inplace=False)"),
])
def test_a_module_built_in_place_in_an_earlier_cell_is_named_and_fixed_where_it_is_built(shell, module, fixed):
    cells = [NET.format(module=module), "torch.manual_seed(0)\nnet = Net()\nx = torch.randn(5, 4)\n",
             "%%gradcheck\nloss = net(x).pow(2).mean()\nloss.backward()\n"]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    assert d.title.startswith("`net.main[2]`") and d.names == ("net.main[2]",)
    assert (1, 12) in lines_of(d) and "In [1], line 12, in Net.__init__" in d.where
    assert fix_runs_clean(shell, cells, d)[0] == NET.format(module=fixed).rstrip("\n")


def test_a_top_level_sequential_of_an_earlier_cell_is_fixed_in_that_cell(shell):
    cells = [IMPORTS, "torch.manual_seed(0)\nD = nn.Sequential(\n    nn.Linear(4, 8),\n    nn.Tanh(),\n"
                      "    nn.LeakyReLU(0.2, inplace=True),\n    nn.Linear(8, 1),\n)\n",
             "%%gradcheck\nscore = D(torch.randn(5, 4)).mean()\nscore.backward()\n"]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    assert d.names == ("D[2]",) and (2, 5) in lines_of(d)
    fixed = fix_runs_clean(shell, cells, d)
    assert fixed[1].splitlines()[4] == "    nn.LeakyReLU(0.2, inplace=False),"


def test_the_tracker_records_the_modules_an_inplace_op_ran_in():
    from grad_magic.tracker import OpLog, OpTracker
    net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU(inplace=True))
    log = OpLog(None)
    with OpTracker(log):
        net(torch.randn(1, 2)).add_(1)
    relu, add = log.inplace
    assert relu.name == "relu" and [r() for r in relu.modules] == [net[1], net]
    assert add.name == "add_" and not getattr(add, "modules", ())


# -- an optimizer step between a forward pass and its backward --

GAN = IMPORTS + """

def train_step(G, D, opt_G, opt_D, z):
    fake = G(z)
    p_fake = D(fake)
    d_loss = p_fake.mean()
    g_loss = -p_fake.mean()
    opt_D.zero_grad()
    d_loss.backward(retain_graph=True)
    opt_D.step()
    opt_G.zero_grad()
    g_loss.backward()
    opt_G.step()
    return d_loss.item(), g_loss.item()
"""
GAN_MODELS = ("torch.manual_seed(0)\nnet_G, net_D = nn.Linear(2, 2), nn.Linear(2, 1)\n"
              "opt_G = torch.optim.SGD(net_G.parameters(), lr=0.1)\n"
              "opt_D = torch.optim.SGD(net_D.parameters(), lr=0.1)\n")


def test_a_step_before_the_second_backward_in_a_helper_recomputes_the_loss_after_it(shell):
    cells = [GAN, GAN_MODELS,
             "%%gradcheck\nfor i in range(3):\n    train_step(net_G, net_D, opt_G, opt_D, torch.randn(4, 2))\n"]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    assert (1, 13) in lines_of(d) and (1, 15) in lines_of(d) and "In [1], line 13, in train_step" in d.where
    assert "g_loss" in d.fix.description
    assert "the backward() on line 15 of In [1] still ran" in d.why  # the cell said once
    helper = fix_runs_clean(shell, cells, d)[0].splitlines()
    assert helper[8:15] == ["    d_loss = p_fake.mean()", "    opt_D.zero_grad()",
                            "    d_loss.backward(retain_graph=True)", "    opt_D.step()", "    p_fake = D(fake)",
                            "    g_loss = -p_fake.mean()", "    opt_G.zero_grad()"]


def test_a_step_whose_loss_cannot_be_recomputed_alone_gets_words(shell):
    # NB: the loss reads the output through a dict item: no statement to re-run after the step
    cells = [GAN.replace("    p_fake = D(fake)\n    d_loss = p_fake.mean()\n    g_loss = -p_fake.mean()\n",
                         "    outs = {}\n    outs['fake'] = D(fake)\n    d_loss = outs['fake'].mean()\n"
                         "    g_loss = -outs['fake'].mean()\n"),
             GAN_MODELS, "%%gradcheck\ntrain_step(net_G, net_D, opt_G, opt_D, torch.randn(4, 2))\n"]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    assert d.fix is None and "No automatic fix" in d.why and "In [1]" in d.where


def test_a_vae_with_two_optimizers_reruns_the_forward_that_returns_a_tuple(shell):
    cells = [IMPORTS + """

class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 4))
        self.dec = nn.Linear(2, 6)

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar
""", "torch.manual_seed(0)\nvae = VAE()\nopt_enc = torch.optim.Adam(vae.enc.parameters())\n"
     "opt_dec = torch.optim.Adam(vae.dec.parameters())\nx = torch.randn(8, 6)\n",
             "%%gradcheck\nfor step in range(3):\n    recon, mu, logvar = vae(x)\n"
             "    kl = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).mean()\n"
             "    rec = F.mse_loss(recon, x)\n    opt_enc.zero_grad()\n    kl.backward(retain_graph=True)\n"
             "    opt_enc.step()\n    opt_dec.zero_grad()\n    rec.backward()\n    opt_dec.step()\n"]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    assert (3, 8) in lines_of(d) and "rec" in d.fix.description
    fixed = fix_runs_clean(shell, cells, d)[2].splitlines()
    assert fixed[6:9] == ["    opt_enc.step()", "    recon, mu, logvar = vae(x)", "    rec = F.mse_loss(recon, x)"]
BUILDERS = IMPORTS + """

def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.Sigmoid(), nn.ReLU(inplace=True))


def make_layers(widths):
    layers = []
    for cin, cout in zip(widths, widths[1:]):
        layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.Tanh(), nn.Dropout(0.2, True)]
    return nn.Sequential(*layers)
"""


@pytest.mark.parametrize("built,line,fixed", [
    ("nn.Sequential(conv_block(3, 4), conv_block(4, 4))", 7, "nn.ReLU(inplace=False)"),
    ("make_layers([3, 4, 4])", 13, "nn.Dropout(0.2)"),
])
def test_a_module_built_by_the_users_builder_function_is_fixed_in_the_builder(shell, built, line, fixed):
    cells = [BUILDERS, f"torch.manual_seed(0)\nfeatures = {built}\n",
             "%%gradcheck\nloss = features(torch.randn(2, 3, 8, 8)).mean()\nloss.backward()\n"]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    assert (1, line) in lines_of(d)
    assert fixed in fix_runs_clean(shell, cells, d)[0].splitlines()[line - 1]


# -- every write over a saved tensor of the graph, not only the one backward() met first --

def test_two_modules_that_spoil_saved_tensors_are_both_fixed(shell):
    cells = [IMPORTS, "torch.manual_seed(0)\nnet = nn.Sequential(\n    nn.Linear(4, 8),\n    nn.Sigmoid(),\n"
                      "    nn.ReLU(inplace=True),\n    nn.Linear(8, 8),\n    nn.Tanh(),\n    nn.ReLU(inplace=True),\n"
                      "    nn.Linear(8, 1),\n)\n",
             "%%gradcheck\nloss = net(torch.randn(3, 4)).sum()\nloss.backward()\n"]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    assert d.names == ("net[5]",) and "`net[2]`" in d.fix.description
    fixed = fix_runs_clean(shell, cells, d)[1].splitlines()
    assert fixed[4] == fixed[7] == "    nn.ReLU(inplace=False),"


def test_two_writes_in_one_forward_are_both_fixed(shell):
    write = "        h += 1\n        h = torch.tanh(h)\n        h *= 2"
    cells = [BLOCK.format(write=write), RUN_BLOCK]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    fixed = fix_runs_clean(shell, cells, d)[0]
    assert fixed == BLOCK.format(write="        h = h + 1\n        h = torch.tanh(h)\n        h = h * 2").rstrip("\n")


def test_a_second_write_in_another_cell_leaves_words_and_no_fix(shell):
    cells = [BLOCK.format(write="        h += x"),
             "%%gradcheck\ntorch.manual_seed(0)\nblock = Block()\ny = block(torch.randn(3, 4)).exp()\ny += 1\n"
             "y.sum().backward()\n"]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    assert d.fix is None and "Other in-place writes spoiled saved tensors" in d.why


MLP = IMPORTS + """

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x):
        x = F.relu(self.fc1(x), True)
        x = F.dropout(x, 0.5, self.training, {flag})
        x = F.relu(self.fc2(x), True)
        x = F.dropout(x, 0.5, self.training, {flag})
        return x.sum()
"""


def test_the_same_positional_flag_on_two_lines_of_a_forward_is_dropped_on_both(shell):
    # NB: the two dropouts tie (same op, same shape, both over a ReLU output): each spoiled a saved tensor
    cells = [MLP.format(flag="True"), "%%gradcheck\ntorch.manual_seed(0)\nMLP()(torch.randn(3, 4)).backward()\n"]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    assert (1, 16) in lines_of(d) and "In [1], line 16, in MLP.forward" in d.where
    assert "line 14 of In [1]" in d.fix.description
    fixed = fix_runs_clean(shell, cells, d)[0]
    assert fixed == MLP.format(flag="True").replace(", self.training, True)", ", self.training)").rstrip("\n")


FPN = IMPORTS + """

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.lateral = nn.ModuleList(nn.Sequential(nn.Conv2d(2, 2, 1), nn.ReLU()) for _ in range(2))

    def forward(self, feats):
        laterals = [conv(f) for conv, f in zip(self.lateral, feats)]
        laterals[0] += F.interpolate(laterals[1], size=laterals[0].shape[2:])
        return laterals[0].sum()
"""


def test_an_item_of_a_list_added_to_in_place_is_rebound_not_the_list_cloned(shell):
    cells = [FPN, "%%gradcheck\ntorch.manual_seed(0)\nHead()([torch.randn(1, 2, 4, 4), torch.randn(1, 2, 2, 2)])"
                  ".backward()\n"]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    assert (1, 13) in lines_of(d)
    fixed = fix_runs_clean(shell, cells, d)[0].splitlines()
    assert fixed[12] == "        laterals[0] = laterals[0] + F.interpolate(laterals[1], size=laterals[0].shape[2:])"


def test_a_slice_of_a_tensor_added_to_in_place_is_not_taken_for_an_item(shell):
    cells = [BLOCK.format(write="        h[:, 0] += x[:, 0]"), RUN_BLOCK]
    d = card_of(shell, cells, KIND, raises=RuntimeError)
    fixed = fix_runs_clean(shell, cells, d)[0]
    assert fixed == BLOCK.format(write="        h = h.clone()\n        h[:, 0] += x[:, 0]").rstrip("\n")


def test_a_dropout_switched_to_in_place_after_it_was_built_gets_a_copy_of_its_input(shell):
    """MVANet's __init__ turns every Dropout to `inplace = True` after building it: no `True` to turn off where it
    was made. The dropout then overwrites relu's output, which relu saved. The fix hands the dropout a copy of its
    input on the forward's line (the maintainers' own fix): the same values, the saved tensor left alone."""
    cells = ["import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n",
             "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.fc = nn.Linear(4, 4)\n        self.dropout = nn.Dropout(0.5)\n"
             "        for m in self.modules():\n            if isinstance(m, nn.Dropout):\n"
             "                m.inplace = True\n\n    def forward(self, x):\n"
             "        return self.dropout(F.relu(self.fc(x)))\n",
             "%%gradcheck\nblock = Block()\nblock(torch.randn(3, 4)).sum().backward()\n"]
    d = card_of(shell, cells, "saved-tensor-modified-in-place", raises=RuntimeError)
    assert (2, 11) in lines_of(d)
    fixed = fix_runs_clean(shell, cells, d)
    assert fixed[1].endswith("        return self.dropout(F.relu(self.fc(x)).clone())")
