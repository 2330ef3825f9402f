"""Issue 19, "evidence, never the wrong thing", probed through a real shell as a user meets it: a card
blames only what the run touched, diagnosis and `%grad_device` run none of the user's code, and both stay
bounded (in time, in size) whatever the namespace or the cell holds.
"""
from __future__ import annotations

import os
import sys
import time

import grad_magic
from grad_magic import state
from grad_magic.render import Card, mimebundle
from gm_shell import run

PACKAGE = os.path.dirname(os.path.abspath(grad_magic.__file__))

# NB: defined in the user's namespace: counts each call of a user property made from grad_magic's code
COUNTING = '''
import sys, time, torch
FROM_TOOL = []
def _counted(what):
    caller = sys._getframe(2).f_code.co_filename
    if caller.startswith(PACKAGE):
        FROM_TOOL.append((what, caller))
class Slow:
    @property
    def __class__(self):
        _counted("__class__")
        time.sleep(0.05)
        return Slow
class Base:
    pass
class Holder(Base):
    def __init__(self):
        vars(Base)["__dict__"].__get__(self)["t"] = torch.zeros(1)  # NB: the dict Python keeps, behind:
    @property
    def __dict__(self):
        _counted("__dict__")
        return {}
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 2)
    def named_parameters(self, *a, **k):
        _counted("named_parameters")
        raise RuntimeError("user code")
    def named_modules(self, *a, **k):
        _counted("named_modules")
        return iter([("", self)])
class Traced(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        _counted("__torch_function__")
        return super().__torch_function__(func, types, args, kwargs or {})
'''


def card(sh) -> str:
    d = state.last_diagnosis()
    assert d is not None
    return str(Card(d))  # NB: the whole text card (what the terminal's short one leaves out is in it too)


def test_a_leftover_of_an_earlier_cell_is_not_blamed(shell):
    run(shell, "import torch\nclf = torch.nn.Linear(3, 2)\nout = torch.zeros(2)")
    run(shell, "%%gradcheck\nlogits = torch.randn(4, 2)\ntarget = torch.tensor([0, 1, 2, 3])\n"
               "loss = torch.nn.functional.cross_entropy(logits, target)")
    d = state.last_diagnosis()
    assert d.kind == "target-out-of-range" and "clf" not in card(shell)
    run(shell, "%%gradcheck\na = torch.randn(2, 3)\nc = torch.empty(2, 3, dtype=torch.long)\n"
               "torch.add(a, 1, out=c)")
    d = state.last_diagnosis()
    assert [t.name for t in d.tensors] == ["a", "c"]  # NB: `out=` is a keyword, not the stale `out`


def test_a_classifier_the_cell_uses_is_still_named(shell):
    run(shell, "import torch\nclf = torch.nn.Linear(3, 2)")
    run(shell, "%%gradcheck\nlogits = clf(torch.randn(4, 3))\ntarget = torch.tensor([0, 1, 2, 3])\n"
               "loss = torch.nn.functional.cross_entropy(logits, target)")
    assert "`clf`" in card(shell)


def test_diagnosis_calls_no_user_property(shell):
    shell.user_ns["PACKAGE"] = PACKAGE
    run(shell, COUNTING + "s = Slow()\nx = torch.randn(3)")
    started = time.monotonic()
    run(shell, "%%gradcheck\ny = x + s")
    elapsed = time.monotonic() - started
    assert state.last_diagnosis() is not None
    assert shell.user_ns["FROM_TOOL"] == []
    assert elapsed < 30  # NB: a generous bound on a shared machine; the count above is the check


def test_grad_device_runs_no_user_code(shell):
    shell.user_ns["PACKAGE"] = PACKAGE
    run(shell, COUNTING + "h = Holder()\nm = Model()\nt = torch.zeros(2).as_subclass(Traced)")
    report = shell.run_line_magic("grad_device", "")
    assert shell.user_ns["FROM_TOOL"] == []
    assert {r.path for r in report.rows} == {"h.t", "m.fc.weight", "m.fc.bias", "t"}


def test_grad_device_in_a_namespace_of_a_million_lists_is_bounded(shell):
    run(shell, "lists = {f'l{i}': [i] for i in range(1_000_000)}\nglobals().update(lists)\ndel lists")
    started = time.monotonic()
    report = shell.run_line_magic("grad_device", "--time 0.5")
    elapsed = time.monotonic() - started
    assert elapsed < 15, elapsed
    stop, unwalked = report.skipped[:2]
    assert stop.reason.startswith("time limit: stopped after 0.5 s") and unwalked.reason.startswith("not walked: `l")
    assert "not walked" in str(report)  # NB: said where the user reads the report
    run(shell, "for _k in [k for k in globals() if k[:1] == 'l' and k[1:].isdigit()]: del globals()[_k]")


def test_a_megabyte_comment_makes_a_small_card(shell):
    comment = "x" * 1_000_000
    run(shell, "import torch")
    run(shell, f"%%gradcheck\nw = torch.randn(3)\nopt = torch.optim.SGD([w], lr=0.1)\nloss = (w * 2).sum()\n"
               f"loss.backward()  # {comment}")
    d = state.last_diagnosis()
    assert d.kind == "missing-requires-grad"
    bundle = mimebundle(d)
    assert sum(len(str(v)) for v in bundle.values()) < 100_000
    assert d.fix is None and any("too long to carry on a card" in n for n in d.notes)
    small = sys.getsizeof(d.source) + sum(sys.getsizeof(sl.text) for sl in d.lines)
    assert small < 20_000


def test_the_step_watch_runs_no_user_code(shell):
    """The step watch reads a training function's locals at every optimizer.step(): a `__class__` or
    `__dict__` property among them is never called."""
    shell.user_ns["PACKAGE"] = PACKAGE
    run(shell, COUNTING + "def train(model, opt):\n    s, h = Slow(), Holder()\n    for _ in range(3):\n"
               "        opt.zero_grad()\n        model(torch.ones(2, 2)).sum().backward()\n        opt.step()\n")
    run(shell, "%%gradcheck\nnet = torch.nn.Linear(2, 2)\ntrain(net, torch.optim.SGD(net.parameters(), lr=0.1))")
    assert shell.user_ns["FROM_TOOL"] == []


def test_the_device_culprit_walk_runs_no_user_code(shell):
    """device-mismatch follows a function's locals to the odd tensor: a proxy among them is not opened."""
    shell.user_ns["PACKAGE"] = PACKAGE
    run(shell, COUNTING + "def step(x):\n    s, h = Slow(), Holder()\n    w = torch.ones(2, device='meta')\n"
               "    return torch.cat([x, w])\n")
    run(shell, "%%gradcheck\nstep(torch.ones(2))")
    assert state.last_diagnosis().kind == "device-mismatch"
    assert shell.user_ns["FROM_TOOL"] == []
