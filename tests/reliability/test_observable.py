"""Watching changes nothing code can observe of torch's functions (issue 31, item 1): red-team probes.

Fast mode (`--fast`, `%gradcheck on`) stands a wrapper in place of each in-place entry point of torch. Code
that names those functions must not tell: TorchScript compiles a function that calls `torch.relu_`, `pickle`
stores `torch.Tensor.add_` and `torch.relu_` by name (and loads torch's own back once watching is off),
`help()` names torch's module.
"""
from __future__ import annotations

import pytest

from gm_shell import run

PROBE = """\
import pickle, pydoc, torch
def scripted(x):
    return torch.relu_(x.clone()) + torch.sigmoid_(x.clone()) + torch.clamp_(x.clone(), 0, 1)
probe = {
    "script": torch.jit.script(scripted)(torch.ones(2)).tolist(),
    "pickled": [pickle.loads(pickle.dumps(f)) is f for f in (torch.Tensor.add_, torch.relu_, torch.Tensor.__iadd__)],
    "help": pydoc.render_doc(torch.Tensor.add_).splitlines()[0],
}
"""


@pytest.mark.parametrize("how", ["always_on", "fast_cell"])
def test_torchs_in_place_functions_look_like_torchs_while_watched(shell, how):
    if how == "always_on":
        shell.run_line_magic("gradcheck", "on")
    try:
        result = run(shell, PROBE if how == "always_on" else "%%gradcheck --fast\n" + PROBE)
        assert result.success, result.error_in_exec
    finally:
        shell.run_line_magic("gradcheck", "off")
    probe = shell.user_ns["probe"]
    plain = run(shell, PROBE)
    assert plain.success
    assert probe["script"] == shell.user_ns["probe"]["script"]
    assert probe["pickled"] == [True, True, True]
    assert probe["help"].startswith("Python Library Documentation: ") and "grad_magic" not in probe["help"]


SUBCLASS = """\
import torch
HANDLED = {}
calls = []
class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in HANDLED:
            calls.append(HANDLED[func])
        return super().__torch_function__(func, types, args, kwargs or {})
HANDLED[torch.Tensor.add_] = "add_"
HANDLED[torch.Tensor.__setitem__] = "setitem"
"""
USE = "t = torch.zeros(3).as_subclass(Logged)\nt.add_(1)\nt[0] = 5\nseen = (list(calls), t.tolist())\ncalls.clear()\n"


@pytest.mark.parametrize("how", ["always_on", "fast_cell", "full_cell"])
def test_a_subclass_dispatch_table_keyed_by_torchs_functions_finds_its_handlers(shell, how):
    """A Tensor subclass whose `__torch_function__` looks `func` up in a table keyed by torch's own functions
    (made before watching began) is handed torch's function, not a wrapper: its handlers run as in a plain
    cell, and so the result is the same."""
    assert run(shell, SUBCLASS).success
    assert run(shell, USE).success
    plain = shell.user_ns["seen"]
    assert plain == (["add_", "setitem"], [5.0, 1.0, 1.0])
    if how == "always_on":
        shell.run_line_magic("gradcheck", "on")
    try:
        cell = {"always_on": USE, "fast_cell": "%%gradcheck --fast\n" + USE, "full_cell": "%%gradcheck\n" + USE}[how]
        result = run(shell, cell)
    finally:
        shell.run_line_magic("gradcheck", "off")
    assert result.success, result.error_in_exec
    assert shell.user_ns["seen"] == plain
