"""The backward family: backward-non-scalar, backward-twice, out-with-grad, inference-tensor-backward
(message variants, the cell's syntax, the fixes, wording)."""
from __future__ import annotations

import sys
import time

import pytest
import torch

import grad_magic
from cards import diagnosis
from earlier_cells import card_of, fix_runs_clean, lines_of
from grad_magic.rules.backward.message import INFERENCE, NON_SCALAR, OUT, OUT_OP, TWICE
from gm_shell import run

TWICE_NOW = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
             "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
             "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
             "or if you need to access saved tensors after calling backward.")
INFERENCE_NOW = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                 "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
                 "normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                 "`torch.inference_mode()`.")
TORCH = {"torch": torch}  # the namespace of the hand-made records

# (pattern, message): every wording documented for torch 0.4 ... 2.13
VARIANTS = [
    (NON_SCALAR, "grad can be implicitly created only for scalar outputs"),  # 0.4 ... 2.13
    (NON_SCALAR, "grad can be implicitly created only for real scalar outputs but got torch.complex64"),
    (TWICE, TWICE_NOW),  # 1.9 ... 2.13
    (TWICE, "Trying to backward through the graph a second time, but the saved intermediate results have "
                  "already been freed. Specify retain_graph=True when calling backward the first time."),  # 1.x
    (TWICE, "Trying to backward through the graph a second time, but the buffers have already been freed. "
                  "Specify retain_graph=True when calling backward the first time."),  # 0.4
    (OUT, "add(): functions with out=... arguments don't support automatic differentiation, but one of the "
                "arguments requires grad."),
    (INFERENCE, INFERENCE_NOW),  # 2.13
    (INFERENCE, "Inference tensors cannot be saved for backward. To work around you can make a clone to get "
                      "a normal tensor and use it in autograd."),  # 1.9 ... 2.x
    (INFERENCE, "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
                      "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
                      "for more details."),
    (INFERENCE, "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."),
]


@pytest.mark.parametrize("pattern,message", VARIANTS, ids=range(len(VARIANTS)))
def test_every_known_wording_is_recognised(pattern, message):
    assert pattern.search(message)


def test_the_real_messages_of_this_torch_are_recognised():
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        (x * 2).backward()
    assert NON_SCALAR.search(str(info.value))
    y = (x.exp()).sum()
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    assert TWICE.search(str(info.value))
    with pytest.raises(RuntimeError) as info:
        torch.mul(x, 2, out=torch.empty(3))
    assert OUT.search(str(info.value))
    with torch.inference_mode():
        t = torch.ones(3)
    for action in (lambda: (t * x).sum(), lambda: t.add_(1), lambda: t.requires_grad_()):
        with pytest.raises(RuntimeError) as info:
            action()
        assert INFERENCE.search(str(info.value))


@pytest.mark.parametrize("pattern", [NON_SCALAR, TWICE, OUT, OUT_OP, INFERENCE])
def test_patterns_are_linear_on_a_megabyte(pattern):
    started = time.perf_counter()
    for filler in ("a" * 1_000_000 + "!", "a(" * 500_000 + "!", "add(): " * 150_000 + "!"):
        assert pattern.search(filler) is None
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("message", [
    "element 0 of tensors does not require grad and does not have a grad_fn",
    "one of the variables needed for gradient computation has been modified by an inplace operation",
    "Inference tensors do not track version counter.",  # alone: not the user's inference tensor in a graph
    "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x3)",
])
def test_other_errors_are_not_this_family(message):
    d = diagnosis("%%gradcheck\nx = 1\n", message, 2, namespace=TORCH)
    assert d.kind not in ("backward-non-scalar", "backward-twice", "out-with-grad", "inference-tensor-backward")


# -- hand-made records: the cell's syntax decides the fix --

def test_autograd_backward_of_an_expression_is_wrapped_in_parentheses():
    d = diagnosis("%%gradcheck\nimport torch\ntorch.autograd.backward(a * b)\n",
                  "grad can be implicitly created only for scalar outputs", 3, namespace=TORCH,
                  kind="backward-non-scalar")
    assert d.fix.source.splitlines()[2] == "torch.autograd.backward((a * b).sum())"


def test_a_parenthesised_receiver_gets_the_reduction_after_its_parenthesis():
    d = diagnosis("%%gradcheck\n(a * b).backward()\n", "grad can be implicitly created only for scalar outputs",
                  2, namespace=TORCH, kind="backward-non-scalar")
    assert d.fix.source.splitlines()[1] == "(a * b).sum().backward()"


def test_a_loss_with_reduction_none_in_the_call_gets_no_fix():
    d = diagnosis("%%gradcheck\nimport torch.nn.functional as F\nloss = F.l1_loss(p, q, reduction='none')\n"
                  "loss.backward()\n", "grad can be implicitly created only for scalar outputs", 4,
                  namespace=TORCH, kind="backward-non-scalar")
    assert d.fix is None and "reduction='none'" in d.why


def test_a_loss_named_tensor_is_averaged_and_another_summed():
    for name, reduce in (("val_cost", "mean"), ("activations", "sum")):
        d = diagnosis(f"%%gradcheck\n{name}.backward()\n", "grad can be implicitly created only for scalar outputs",
                      2, namespace=TORCH, kind="backward-non-scalar")
        assert d.fix.source.splitlines()[1] == f"{name}.{reduce}().backward()"


def test_backward_twice_with_retain_graph_already_there_gets_no_fix():
    src = "%%gradcheck\ny.backward(retain_graph=False)\ny.backward()\n"
    d = diagnosis(src, TWICE_NOW, 3, namespace=TORCH, kind="backward-twice")
    assert d.fix is None and "retain_graph=True" in d.why


def test_backward_twice_without_a_backward_call_on_the_line_explains_without_fix():
    d = diagnosis("%%gradcheck\nprint(node._saved_self)\n", TWICE_NOW, 2, namespace=TORCH, kind="backward-twice")
    assert d.fix is None and d.title


def test_a_graph_before_the_loop_that_is_read_again_before_the_loop_is_not_moved():
    x = torch.randn(2, requires_grad=True)
    pred = x * 2
    loss = pred.sum()
    src = ("%%gradcheck\npred = x * 2\nloss = pred.sum()\nprint(pred)\nfor i in range(3):\n"
           "    loss.backward()\n")
    d = diagnosis(src, TWICE_NOW, 6, namespace={**TORCH, "x": x, "pred": pred, "loss": loss}, kind="backward-twice")
    assert d.fix is None and "before the loop" in d.title


def test_out_with_a_tuple_target_assigns_the_tuple():
    src = "%%gradcheck\nimport torch\ntorch.max(x, 0, out=(values, indices))\n"
    d = diagnosis(src, "max(): functions with out=... arguments don't support automatic differentiation, but one "
                  "of the arguments requires grad.", 3, namespace=TORCH, kind="out-with-grad")
    assert d.fix.source.splitlines()[2] == "(values, indices) = torch.max(x, 0)"
    assert d.title.startswith("max(..., out=...)")


def test_out_given_first_among_keywords():
    src = "%%gradcheck\nimport torch\ntorch.add(input=a, out=c, other=b)\n"
    d = diagnosis(src, "add(): functions with out=... arguments don't support automatic differentiation, but one "
                  "of the arguments requires grad.", 3, namespace=TORCH, kind="out-with-grad")
    assert d.fix.source.splitlines()[2] == "c = torch.add(input=a, other=b)"


def test_the_users_own_message_reaches_the_card(shell):
    """Recording the failed op reads only metadata an inference tensor has: torch's message is not replaced."""
    run(shell, "%%gradcheck\nimport torch\nwith torch.inference_mode():\n    x = torch.ones(3)\n"
               "w = torch.ones(3, requires_grad=True)\n(x * w).sum().backward()\n")
    assert INFERENCE.search(str(sys.last_value)), sys.last_value
    assert grad_magic.last_diagnosis().kind == "inference-tensor-backward"


def test_the_rules_never_raise_on_a_cell_that_does_not_parse():
    for message, kind in ((TWICE_NOW, "backward-twice"), (INFERENCE_NOW, "inference-tensor-backward"),
                          ("grad can be implicitly created only for scalar outputs", "backward-non-scalar")):
        d = diagnosis("%%gradcheck\nthis is not python(\n", message, 2, namespace=TORCH, kind=kind)
        assert d.fix is None and not d.notes


# -- through the shell: the variants of other versions raised verbatim, and the Chinese card --

def test_old_wording_of_backward_twice_is_diagnosed_with_its_fix(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    cell = ("%%gradcheck\nimport torch\nh = torch.zeros(2)\nfor step in range(3):\n    h = h + 1\n"
            "    raise RuntimeError('Trying to backward through the graph a second time, but the buffers have "
            "already been freed. Specify retain_graph=True when calling backward the first time.')\n")
    shell.user_ns["torch"] = torch
    result = run(shell, cell)
    assert isinstance(result.error_in_exec, RuntimeError)
    d = grad_magic.last_diagnosis()
    assert d.kind == "backward-twice" and d.fix is None  # no backward() on the line: the cause is unknown


def test_old_wording_of_inference_tensor_is_diagnosed(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    cell = ("%%gradcheck\nimport torch\nwith torch.inference_mode():\n    feats = torch.ones(2)\n"
            "raise RuntimeError('Inference tensors cannot be saved for backward. To work around you can make a "
            "clone to get a normal tensor and use it in autograd.')  # feats\n")
    run(shell, cell)
    d = grad_magic.last_diagnosis()
    assert d.kind == "inference-tensor-backward" and "`feats`" in d.title
    assert d.fix.source.splitlines()[2] == "with torch.no_grad():"


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    run(shell, "%%gradcheck\nimport torch\nx = torch.ones(4, requires_grad=True)\nloss = x * 3\nloss.backward()\n")
    d = grad_magic.last_diagnosis()
    assert d.kind == "backward-non-scalar" and d.language == "zh"
    assert "(4,)" in d.title and "第 5 行" in d.what and "loss.mean()" in d.fix.description
    assert d.fix.source.splitlines()[4] == "loss.mean().backward()"


def test_two_carried_states_are_detached_on_one_line():
    w = torch.randn(2, requires_grad=True)
    h, c = w * 2, w * 3
    loss = (h + c).sum()
    src = ("%%gradcheck\nh, c = None, None\nfor x in xs:\n    h, c = cell(x, h, c)\n    loss = (h + c).sum()\n"
           "    loss.backward()\n")
    d = diagnosis(src, TWICE_NOW, 6, namespace={**TORCH, "h": h, "c": c, "loss": loss}, kind="backward-twice")
    assert d.fix.source.splitlines()[3] == \
        "    c, h = c.detach() if c is not None else None, h.detach() if h is not None else None"
    assert "`c` and `h`" in d.title


def test_a_state_an_earlier_cell_set_to_none_is_detached_only_when_it_is_a_tensor(shell):
    """`h_state = None` in a cell of its own (MorvanZhou's RNN tutorial): the first iteration gets None, so the
    fix's detach must let None through -- and the fixed cells run clean."""
    cells = ["import torch\nrnn = torch.nn.RNN(1, 4, batch_first=True)\n"
             "opt = torch.optim.SGD(rnn.parameters(), lr=0.01)\n",
             "h_state = None      # for initial hidden state\n",
             "%%gradcheck\nfor step in range(3):\n    x = torch.randn(1, 5, 1)\n"
             "    out, h_state = rnn(x, h_state)\n    loss = out.pow(2).mean()\n"
             "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"]
    d = card_of(shell, cells, "backward-twice", raises=RuntimeError)
    assert d.fix is not None and \
        "    h_state = h_state.detach() if h_state is not None else None" in d.fix.source.splitlines(), d.fix.source
    fix_runs_clean(shell, cells, d)


def test_a_backward_inside_a_function_called_in_the_loop_gets_no_fix():
    w = torch.randn(2, requires_grad=True)
    loss = (w * 2).sum()
    src = "%%gradcheck\ndef step():\n    loss.backward()\n\nfor i in range(3):\n    step()\n"
    d = diagnosis(src, TWICE_NOW, 3, namespace={**TORCH, "loss": loss}, kind="backward-twice")
    assert d.fix is None


def test_a_module_from_an_earlier_cell_gets_no_clone(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    assert run(shell, "import torch\nwith torch.inference_mode():\n    net = torch.nn.Linear(2, 1)\n").success
    run(shell, "%%gradcheck\nx = torch.ones(3, 2, requires_grad=True)\nnet(x).sum().backward()\n")
    d = grad_magic.last_diagnosis()
    assert d.kind == "inference-tensor-backward" and "`net` was built under" in d.title
    assert d.fix is None and "the parameters of `net`" in d.what


# -- across cells: the backward() in a helper, the culprit where the state, graph or decorator lives --

IMPORTS = "import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\n"


def test_a_state_carried_by_the_callers_loop_is_detached_in_that_loop(shell):
    cells = [IMPORTS, "rnn = nn.GRU(3, 4, batch_first=True)\nhead = nn.Linear(4, 1)\n"
             "opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)\n\n"
             "def train_step(x, y, h):\n    out, h = rnn(x, h)\n    loss = ((head(out[:, -1]) - y) ** 2).mean()\n"
             "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n    return loss.item(), h\n",
             "%%gradcheck\nh = torch.zeros(1, 2, 4)\nfor step in range(3):\n    x, y = torch.randn(2, 5, 3), "
             "torch.randn(2, 1)\n    loss, h = train_step(x, y, h)\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert lines_of(d) == [(3, 3), (3, 5), (2, 9)] and "`h`" in d.title
    assert "In [2], line 9, in train_step" in d.what
    assert fix_runs_clean(shell, cells, d)[2].splitlines()[3] == "    h = h.detach()"


def test_a_state_a_module_keeps_is_detached_in_its_forward(shell):
    cells = [IMPORTS, "class LM(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.lstm = nn.LSTM(3, 4, batch_first=True)\n        self.head = nn.Linear(4, 3)\n"
             "        self.hidden = None\n\n    def forward(self, x):\n"
             "        out, self.hidden = self.lstm(x, self.hidden)\n        return self.head(out)\n",
             "model = LM()\nopt = torch.optim.Adam(model.parameters())\n\ndef train(model, batches):\n"
             "    for x, y in batches:\n        opt.zero_grad()\n        loss = ((model(x) - y) ** 2).mean()\n"
             "        loss.backward()\n        opt.step()\n",
             "%%gradcheck\nbatches = [(torch.randn(2, 5, 3), torch.randn(2, 5, 3)) for _ in range(3)]\n"
             "train(model, batches)\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert (2, 9) in lines_of(d) and (3, 8) in lines_of(d) and "`self.hidden`" in d.title
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert fixed_cells[1].splitlines()[8] == \
        "        self.hidden = tuple(t.detach() for t in self.hidden) if self.hidden is not None else None"
    assert fixed_cells[2:] == cells[2:]


def test_a_loss_passed_to_a_helpers_loop_is_explained_at_the_caller_without_fix(shell):
    cells = [IMPORTS, "def fit(loss, opt, steps):\n    for _ in range(steps):\n        opt.zero_grad()\n"
             "        loss.backward()\n        opt.step()\n",
             "%%gradcheck\nnet = nn.Linear(3, 1)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
             "loss = ((net(torch.randn(8, 3)) - torch.randn(8, 1)) ** 2).mean()\nfit(loss, opt, 5)\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert lines_of(d) == [(3, 4), (3, 5), (2, 4)] and d.fix is None
    assert "`fit`" in d.title and "compute it inside the loop" in d.why


def test_a_graph_built_before_a_helpers_loop_is_moved_into_it(shell):
    cells = [IMPORTS, "net = nn.Linear(3, 1)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
             "x, y = torch.randn(8, 3), torch.randn(8, 1)\n\ndef fit(steps):\n    pred = net(x)\n"
             "    loss = ((pred - y) ** 2).mean()\n    for _ in range(steps):\n        opt.zero_grad()\n"
             "        loss.backward()\n        opt.step()\n", "%%gradcheck\nfit(5)\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert (2, 6) in lines_of(d) and (2, 10) in lines_of(d)
    assert fix_runs_clean(shell, cells, d)[1].splitlines()[6:8] == ["        pred = net(x)",
                                                                   "        loss = ((pred - y) ** 2).mean()"]


def test_a_recurrent_state_left_by_an_earlier_cell_is_detached_before_its_first_use(shell):
    cells = [IMPORTS + "rnn = nn.LSTM(3, 4)\n",
             "h, c = torch.zeros(1, 2, 4), torch.zeros(1, 2, 4)\nout, (h, c) = rnn(torch.randn(5, 2, 3), (h, c))\n"
             "out.sum().backward()\n",
             "%%gradcheck\nout, (h, c) = rnn(torch.randn(5, 2, 3), (h, c))\nloss = out.pow(2).mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert lines_of(d) == [(3, 2), (3, 4)] and "`c` and `h`" in d.title
    assert fix_runs_clean(shell, cells, d)[2].splitlines()[1] == "c, h = c.detach(), h.detach()"


def test_a_forward_pass_left_by_an_earlier_cell_is_explained_in_words(shell):
    cells = [IMPORTS + "emb = nn.Embedding(5, 3)\nvectors = emb(torch.tensor([1, 2]))\n",
             "vectors.sum().backward()\n", "%%gradcheck\nloss = vectors.pow(2).sum()\nloss.backward()\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert (3, 2) in lines_of(d) and d.fix is None and "`vectors`" in d.title  # NB: detach would train nothing


def test_a_gan_discriminator_loss_gets_the_fake_batch_detached(shell):
    cells = [IMPORTS + "G, D = nn.Linear(2, 4), nn.Linear(4, 1)\n"
             "optG, optD = torch.optim.Adam(G.parameters()), torch.optim.Adam(D.parameters())\n",
             "def gan_step(real):\n    fake = G(torch.randn(8, 2))\n    d_loss = D(real).mean() - D(fake).mean()\n"
             "    optD.zero_grad()\n    d_loss.backward()\n    optD.step()\n    g_loss = -D(fake).mean()\n"
             "    optG.zero_grad()\n    g_loss.backward()\n    optG.step()\n",
             "%%gradcheck\nfor _ in range(2):\n    gan_step(torch.randn(8, 4))\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert {(2, 3), (2, 5), (2, 9)} <= set(lines_of(d))
    assert fix_runs_clean(shell, cells, d)[1].splitlines()[2] == "    d_loss = D(real).mean() - D(fake.detach()).mean()"


def test_a_shared_tensor_behind_the_stepped_optimizers_parameters_is_not_detached(shell):
    cells = [IMPORTS + "net = nn.Linear(2, 2)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n",
             "%%gradcheck\nout = net(torch.randn(4, 2))\nfirst = out.sum()\nfirst.backward()\nopt.step()\n"
             "second = out.pow(2).sum()\nsecond.backward()\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert d.fix is None and "optimizer step" in d.why


def test_each_loss_of_a_list_backpropagated_in_a_helper_becomes_one_backward_of_their_sum(shell):
    cells = [IMPORTS, "net = nn.Linear(4, 4)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n\n"
             "def train_step(x):\n    h = net(x)\n    losses = [h.pow(2).mean(), h.abs().mean()]\n"
             "    opt.zero_grad()\n    for loss in losses:\n        loss.backward()\n    opt.step()\n"
             "    return [loss.item() for loss in losses]\n",
             "%%gradcheck\nfor _ in range(2):\n    train_step(torch.randn(3, 4))\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert (2, 8) in lines_of(d) and (2, 9) in lines_of(d)
    assert fix_runs_clean(shell, cells, d)[1].splitlines()[7] == "    sum(losses).backward()"


def test_each_loss_whose_variable_is_read_after_the_loop_gets_no_fix(shell):
    cells = [IMPORTS + "w = torch.ones(3, requires_grad=True)\n",
             "%%gradcheck\nh = w * 2\nlosses = [h.sum(), h.pow(2).sum()]\nfor loss in losses:\n    loss.backward()\n"
             "print(loss.item())\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert d.fix is None and "`losses`" in d.title


def test_a_non_scalar_loss_in_a_helper_is_reduced_there(shell):
    cells = [IMPORTS + "net = nn.Linear(3, 2)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n",
             "def train_step(x, y):\n    opt.zero_grad()\n    loss = (net(x) - y) ** 2\n    loss.backward()\n"
             "    opt.step()\n", "%%gradcheck\nfor _ in range(2):\n    train_step(torch.randn(4, 3), torch.randn(4, 2))\n"]
    d = card_of(shell, cells, "backward-non-scalar", RuntimeError)
    assert (2, 4) in lines_of(d)
    assert fix_runs_clean(shell, cells, d)[1].splitlines()[3] == "    loss.mean().backward()"


def test_an_out_call_in_a_forward_is_fixed_there(shell):
    cells = [IMPORTS, "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.lin = nn.Linear(3, 3)\n        self.buf = torch.empty(4, 3)\n\n    def forward(self, x):\n"
             "        torch.add(self.lin(x), x, out=self.buf)\n        return self.buf\n",
             "%%gradcheck\nb = Block()\nb(torch.randn(4, 3)).sum().backward()\n"]
    d = card_of(shell, cells, "out-with-grad", RuntimeError)
    assert (2, 8) in lines_of(d)
    assert fix_runs_clean(shell, cells, d)[1].splitlines()[7] == "        self.buf = torch.add(self.lin(x), x)"


def test_a_forward_decorated_with_inference_mode_gets_no_grad_there(shell):
    cells = [IMPORTS, "class Backbone(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.fc = nn.Linear(4, 4)\n\n    @torch.inference_mode()\n    def forward(self, x):\n"
             "        return self.fc(x)\n",
             "backbone, head = Backbone(), nn.Linear(4, 1)\nopt = torch.optim.SGD(head.parameters(), lr=0.1)\n\n"
             "def train_step(x):\n    feats = backbone(x)\n    loss = head(feats).pow(2).mean()\n    opt.zero_grad()\n"
             "    loss.backward()\n    opt.step()\n", "%%gradcheck\ntrain_step(torch.randn(8, 4))\n"]
    d = card_of(shell, cells, "inference-tensor-backward", RuntimeError)
    assert (2, 6) in lines_of(d) and (3, 6) in lines_of(d) and "`Backbone.forward`" in d.why
    assert fix_runs_clean(shell, cells, d)[1].splitlines()[5] == "    @torch.no_grad()"


def test_an_inference_tensor_assigned_by_an_earlier_cell_gets_no_grad_there(shell):
    cells = [IMPORTS + "backbone, head = nn.Linear(4, 4), nn.Linear(4, 1)\nx = torch.randn(8, 4)\n",
             "with torch.inference_mode():\n    feats = backbone(x)\n",
             "%%gradcheck\nloss = head(feats).pow(2).mean()\nloss.backward()\n"]
    d = card_of(shell, cells, "inference-tensor-backward", RuntimeError)
    assert lines_of(d) == [(2, 1), (3, 2)]
    assert fix_runs_clean(shell, cells, d)[1].splitlines() == ["with torch.no_grad():", "    feats = backbone(x)"]


def test_a_critics_loop_over_a_generator_output_made_before_it_reads_it_detached(shell):
    cells = [IMPORTS + "G, D = nn.Linear(2, 4), nn.Linear(4, 1)\noptD = torch.optim.RMSprop(D.parameters(), lr=5e-5)\n",
             "%%gradcheck\nreal = torch.randn(8, 4)\nfake = G(torch.randn(8, 2))\nfor _ in range(5):\n"
             "    critic_fake = D(fake).mean()\n    d_loss = critic_fake - D(real).mean()\n    optD.zero_grad()\n"
             "    d_loss.backward()\n    optD.step()\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert {(2, 3), (2, 4), (2, 5), (2, 8)} <= set(lines_of(d)) and "`optD`" in d.why
    assert fix_runs_clean(shell, cells, d)[1].splitlines()[4] == "    critic_fake = D(fake.detach()).mean()"


def test_an_out_buffer_a_helper_was_given_is_not_rebound(shell):
    cells = [IMPORTS, "def fill(a, b, buf):\n    torch.mul(a, b, out=buf)\n    return buf\n",
             "%%gradcheck\nw = torch.ones(3, requires_grad=True)\nfill(w, w, torch.empty(3))\n"]
    d = card_of(shell, cells, "out-with-grad", RuntimeError)
    assert (2, 2) in lines_of(d) and d.fix is None and "parameter of the function" in d.why


def test_a_loss_computed_before_the_loop_that_calls_the_helper_is_moved_into_that_loop(shell):
    cells = [IMPORTS + "net = nn.Linear(3, 1)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n\n"
             "def train_step(loss):\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n    return loss.item()\n",
             "%%gradcheck\nx, y = torch.randn(8, 3), torch.randn(8, 1)\nloss = ((net(x) - y) ** 2).mean()\n"
             "for epoch in range(3):\n    train_step(loss)\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert lines_of(d) == [(2, 3), (2, 4), (2, 5), (1, 9)]
    assert fix_runs_clean(shell, cells, d)[1].splitlines()[2:] == [
        "for epoch in range(3):", "    loss = ((net(x) - y) ** 2).mean()", "    train_step(loss)"]


def test_a_state_left_by_an_earlier_cell_and_passed_to_a_helper_is_detached_before_the_call(shell):
    cells = [IMPORTS + "rnn = nn.GRU(3, 4, batch_first=True)\nopt = torch.optim.SGD(rnn.parameters(), lr=0.1)\n\n"
             "def train_step(x, h):\n    out, h = rnn(x, h)\n    loss = out.pow(2).mean()\n    opt.zero_grad()\n"
             "    loss.backward()\n    opt.step()\n    return loss.item(), h\n",
             "h = torch.zeros(1, 2, 4)\nloss, h = train_step(torch.randn(2, 5, 3), h)\n",
             "%%gradcheck\nloss, h = train_step(torch.randn(2, 5, 3), h)\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert lines_of(d) == [(3, 2), (1, 11)]
    assert fix_runs_clean(shell, cells, d)[2].splitlines()[1] == "h = h.detach()"


@pytest.mark.slow  # NB: importing lightning takes seconds
def test_a_lightning_modules_hidden_state_is_detached_in_its_forward(shell):
    """Lightning runs backward() inside its own loop: no user frame calls it, the state the model keeps is found."""
    pytest.importorskip("lightning", reason="needs lightning (requirements-dev.txt)")
    cells = ["import logging\nfor name in ('lightning', 'lightning.pytorch', 'lightning.fabric'):\n"
             "    logging.getLogger(name).setLevel(logging.ERROR)\n" + IMPORTS +
             "import lightning as L\nfrom torch.utils.data import DataLoader, TensorDataset\n",
             "class LitLM(L.LightningModule):\n    def __init__(self):\n        super().__init__()\n"
             "        self.lstm = nn.LSTM(3, 8, batch_first=True)\n        self.head = nn.Linear(8, 3)\n"
             "        self.hidden = None\n\n    def forward(self, x):\n        out, self.hidden = self.lstm(x, self.hidden)\n"
             "        return self.head(out)\n\n    def training_step(self, batch, batch_idx):\n        x, y = batch\n"
             "        return nn.functional.mse_loss(self(x), y)\n\n    def configure_optimizers(self):\n"
             "        return torch.optim.SGD(self.parameters(), lr=0.1)\n",
             "%%gradcheck\nmodel = LitLM()\ntrainer = L.Trainer(max_epochs=1, accelerator='cpu', logger=False,\n"
             "                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)\n"
             "trainer.fit(model, DataLoader(TensorDataset(torch.randn(8, 5, 3), torch.randn(8, 5, 3)), batch_size=4))\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert lines_of(d) == [(2, 9), (3, 5)] and "trainer.fit" in d.what
    assert fix_runs_clean(shell, cells, d)[1].splitlines()[7:9] == [
        "    def forward(self, x):",
        "        self.hidden = tuple(t.detach() for t in self.hidden) if self.hidden is not None else None"]


def test_an_inference_mode_forward_reached_through_a_helper_is_found_and_an_uncalled_one_left_alone(shell):
    cells = [IMPORTS + "class Enc(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.fc = nn.Linear(4, 4)\n\n    @torch.inference_mode()\n    def forward(self, x):\n"
             "        return self.fc(x)\n\nenc, head = Enc(), nn.Linear(4, 1)\n",
             "@torch.inference_mode()\ndef evaluate(x):\n    return head(enc(x))\n\ndef extract(x):\n    return enc(x)\n\n"
             "opt = torch.optim.SGD(head.parameters(), lr=0.1)\n\ndef train_step(x):\n    feats = extract(x)\n"
             "    loss = head(feats).pow(2).mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n",
             "%%gradcheck\ntrain_step(torch.randn(8, 4))\n"]
    d = card_of(shell, cells, "inference-tensor-backward", RuntimeError)
    assert (1, 9) in lines_of(d) and (2, 12) in lines_of(d) and "`Enc.forward`" in d.why
    fixed_cells = fix_runs_clean(shell, cells, d)
    assert fixed_cells[0].splitlines()[8] == "    @torch.no_grad()" and fixed_cells[1] == cells[1]


def test_a_loss_given_to_a_libraries_backward_method_is_the_receiver():
    """`accelerator.backward(loss)`: the loss is the argument, the owner is no tensor."""
    class Accelerator:
        def backward(self, loss):
            loss.backward()

    d = diagnosis("%%gradcheck\naccelerator.backward(a * b)\n", "grad can be implicitly created only for scalar outputs",
                  2, namespace={**TORCH, "accelerator": Accelerator()}, kind="backward-non-scalar")
    assert d.fix.source.splitlines()[1] == "accelerator.backward((a * b).sum())"


def test_every_state_a_module_carries_is_cut_where_forward_first_reads_it(shell):
    """An attention memory (`M`, `z`) read by one method before another assigns it (blind batch b7): both
    states are cut, at forward's first statement that reads them, or backward() reaches the other's graph."""
    cells = [IMPORTS + "class Memory(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.fc = nn.Linear(4, 4)\n        self.M = None\n        self.z = None\n\n"
             "    def _read(self, q):\n        return q @ self.M / (self.z.sum() + 1)\n\n"
             "    def _update(self, k):\n        if self.M is None:\n            self.M = k.T @ k\n"
             "            self.z = k.sum(0)\n        else:\n            self.M = self.M + k.T @ k\n"
             "            self.z = self.z + k.sum(0)\n\n"
             "    def forward(self, x):\n        k = self.fc(x)\n"
             "        out = k if self.M is None else k + self._read(k)\n        self._update(k)\n        return out\n\n"
             "model = Memory()\nopt = torch.optim.SGD(model.parameters(), lr=0.01)\n",
             "%%gradcheck\nfor step in range(3):\n    loss = model(torch.randn(2, 4)).pow(2).mean()\n"
             "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"]
    d = card_of(shell, cells, "backward-twice", RuntimeError)
    assert (1, 16) in lines_of(d) and (1, 24) in lines_of(d)  # NB: where M is assigned; forward's first read
    fixed_lines = fix_runs_clean(shell, cells, d)[0].splitlines()
    assert fixed_lines[23] == "        self.M, self.z = self.M.detach() if self.M is not None else None, " \
        "self.z.detach() if self.z is not None else None"


def test_a_per_sample_loss_made_in_another_cells_function_is_marked_where_it_was_made(shell):
    """backward() on a model's loss that its `compute_loss` returned per sample (blind batches b6, b7): the
    run's record says which op gave the tensor its shape; that line, in the earlier cell, is marked."""
    cells = [IMPORTS + "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.fc = nn.Linear(4, 3)\n\n    def compute_loss(self, out, y):\n"
             "        ce = nn.functional.cross_entropy(out, y, reduction='none')\n"
             "        return ce.unsqueeze(1)\n\n    def forward(self, x, y):\n"
             "        return {'loss': self.compute_loss(self.fc(x), y)}\n\nmodel = Net()\n",
             "%%gradcheck\nloss = model(torch.randn(4, 4), torch.tensor([0, 1, 2, 0]))['loss']\nloss.backward()\n"]
    d = card_of(shell, cells, "backward-non-scalar", RuntimeError)
    assert (1, 11) in lines_of(d) and (2, 3) in lines_of(d), lines_of(d)  # NB: the unsqueeze that made it (4, 1)
    fix_runs_clean(shell, cells, d)
