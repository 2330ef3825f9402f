"""Watching changes nothing code can observe of torch's functions (issue 31, item 1): red-team probes.

Fast mode (`--fast`, `%gradcheck on`) stands a wrapper in place of each in-place entry point of torch. Code
that names those functions must not tell: TorchScript compiles a function that calls `torch.relu_`, `pickle`
stores `torch.Tensor.add_` and `torch.relu_` by name (and loads torch's own back once watching is off),
`help()` names torch's module.
"""
from __future__ import annotations

import re
import sys

import pytest

from gm_shell import run
from package_paths import in_package, shows_package_frames

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
    assert probe["help"].startswith("Python Library Documentation: ") and not re.search(r"\bgrad_magic\.", probe["help"])  # NB: a module of ours


MODE_PROBE = """\
import inspect, pickle, pydoc, torch
net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.5))
probe = {
    "pickled": pickle.loads(pickle.dumps(torch.nn.Module.train)) is torch.nn.Module.train,
    "help": pydoc.render_doc(torch.nn.Module.train).splitlines()[0],
    "signature": str(inspect.signature(torch.nn.Module.train)),
    "returned": net.eval() is net and net.train() is net,
    "modes": [m.training for m in net.eval().modules()],
}
"""


@pytest.mark.parametrize("how", ["full_cell", "fast_cell"])
def test_module_train_looks_like_torchs_while_the_mode_watch_records_it(shell, how):
    """The mode watch (modewatch.py) stands a wrapper in `torch.nn.Module.train` for the run: pickling, help,
    the signature, what `eval()` returns and the modes it sets are a plain cell's."""
    result = run(shell, ("%%gradcheck\n" if how == "full_cell" else "%%gradcheck --fast\n") + MODE_PROBE)
    assert result.success, result.error_in_exec
    watched = shell.user_ns["probe"]
    assert run(shell, MODE_PROBE).success
    assert watched == shell.user_ns["probe"]
    assert watched["pickled"] and not re.search(r"\bgrad_magic\b", watched["help"])


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


# -- No frame of grad_magic's in what the user's code reads (issue 31, item 1) --

WATCHED = ["always_on", "fast_cell", "full_cell"]


def _watched(shell, how: str, cell: str):
    """`cell` run as `how` watches it (always-on switched off again after it)."""
    if how == "always_on":
        shell.run_line_magic("gradcheck", "on")
    try:
        return run(shell, {"always_on": cell, "fast_cell": "%%gradcheck --fast\n" + cell,
                           "full_cell": "%%gradcheck\n" + cell}[how])
    finally:
        shell.run_line_magic("gradcheck", "off")


FORMAT_EXC = """\
import sys, traceback, torch
w = torch.ones(2, requires_grad=True)
try:
    w.add_(1)
except RuntimeError:
    seen = (traceback.format_exc(), [f.filename for f in traceback.extract_tb(sys.exc_info()[2])])
"""


@pytest.mark.parametrize("how", WATCHED)
def test_an_error_an_in_place_op_raised_carries_no_frame_of_ours(shell, how):
    """`traceback.format_exc()` / `extract_tb` of an error a wrapped in-place op raised: the cell's frame and
    nothing else, as in a plain cell (the wrapper's or the mode's frame taken out of `__traceback__`)."""
    assert run(shell, FORMAT_EXC).success
    plain_text, plain_files = shell.user_ns["seen"]
    assert "a leaf Variable" in plain_text and len(plain_files) == 1
    result = _watched(shell, how, FORMAT_EXC)
    assert result.success, result.error_in_exec
    text, files = shell.user_ns["seen"]
    assert not shows_package_frames(text)
    assert len(files) == len(plain_files) and files[0].startswith("<ipython-input-")


WARNS = """\
import warnings, torch
torch.use_deterministic_algorithms(True, warn_only=True)
try:
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("always")
        torch.zeros(3).put_(torch.tensor([0, 1]), torch.ones(2))
finally:
    torch.use_deterministic_algorithms(False)
seen = [(w.category.__name__, w.filename, w.lineno) for w in recorded]
"""


@pytest.mark.parametrize("how", WATCHED)
def test_a_warning_an_in_place_op_raises_is_recorded_at_the_users_line(shell, how):
    """`warnings.catch_warnings(record=True)` in the cell records torch's warning (here `put_` under
    `use_deterministic_algorithms(warn_only=True)`, raised on each call) at the cell's line, as plain: the
    innermost Python frame, which torch warns at, is the wrapper's (the mode's in full mode)."""
    assert run(shell, WARNS).success
    plain = shell.user_ns["seen"]
    assert len(plain) == 1 and plain[0][0] == "UserWarning" and plain[0][2] == 6
    result = _watched(shell, how, WARNS)
    assert result.success, result.error_in_exec
    (category, filename, lineno), = shell.user_ns["seen"]
    # NB: a %%gradcheck cell's lines are the cell's as typed, the magic's line first (as its tracebacks say)
    assert (category, lineno) == ("UserWarning", 6 if how == "always_on" else 7)
    assert filename.startswith("<ipython-input-")


FILTERED = """\
import warnings, torch
torch.use_deterministic_algorithms(True, warn_only=True)
try:
    with warnings.catch_warnings(record=True) as recorded:
        warnings.filterwarnings("ignore", module="__main__")
        warnings.simplefilter("always", DeprecationWarning)
        torch.zeros(3).put_(torch.tensor([0, 1]), torch.ones(2))
finally:
    torch.use_deterministic_algorithms(False)
seen = len(recorded)
"""


@pytest.mark.parametrize("how", WATCHED)
def test_a_filter_on_the_users_module_still_applies_to_torchs_warning(shell, how):
    """A filter keyed on the warning's module (`__main__`, the cell's) ignores torch's warning raised in a
    watched op, as in a plain cell: the warning is judged where it belongs, not at the wrapper."""
    assert run(shell, FILTERED).success
    assert shell.user_ns["seen"] == 0
    result = _watched(shell, how, FILTERED)
    assert result.success, result.error_in_exec
    assert shell.user_ns["seen"] == 0


ERROR_FILTER = """\
import traceback, warnings, torch
torch.use_deterministic_algorithms(True, warn_only=True)
try:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.zeros(3).put_(torch.tensor([0, 1]), torch.ones(2))
except UserWarning:
    seen = traceback.format_exc()
finally:
    torch.use_deterministic_algorithms(False)
"""


@pytest.mark.parametrize("how", WATCHED)
def test_a_warning_turned_error_by_the_users_filter_shows_no_frame_of_ours(shell, how):
    assert run(shell, ERROR_FILTER).success
    plain = shell.user_ns["seen"]
    assert "put_ does not have a deterministic implementation" in plain
    result = _watched(shell, how, ERROR_FILTER)
    assert result.success, result.error_in_exec
    seen = shell.user_ns["seen"]
    assert not shows_package_frames(seen) and seen.count('File "') == plain.count('File "')


STACK = """\
import inspect, torch
stack = [f.filename for f in inspect.stack()]
"""


def _plain(shell, cell: str):
    """`cell` run plain, from as deep a stack as `_watched` runs it."""
    return run(shell, cell)


def test_inspect_stack_in_a_cell_watched_by_always_on_is_a_plain_cells(shell):
    """Always-on runs the cell as IPython does (its hooks are IPython's events): no frame of ours on the
    stack. (A `%%gradcheck` cell is run by the magic, whose frames are on it, as IPython's are for any
    cell magic.)"""
    assert _plain(shell, STACK).success
    plain = shell.user_ns["stack"]
    result = _watched(shell, "always_on", STACK)
    assert result.success
    assert not [f for f in shell.user_ns["stack"] if in_package(f)]
    assert len(shell.user_ns["stack"]) == len(plain)


TRACED = """\
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        torch.relu_(y)
        y.add_(1)
        return y
net, x = Net(), torch.tensor([-1.0, 0.5, 2.0])
traced = torch.jit.trace(net, x)
graph = {
    "jit.trace": ([n.kind() for n in traced.graph.nodes()], traced(x).tolist()),
    "fx": [(n.op, str(n.target)) for n in torch.fx.symbolic_trace(net).graph.nodes],
    "export": [(n.op, str(n.target)) for n in torch.export.export(net, (x,)).graph.nodes],
}
"""


@pytest.mark.parametrize("how", WATCHED)
def test_tracing_a_module_that_writes_in_place_gives_a_plain_cells_graph(shell, how):
    """torch.jit.trace, torch.fx.symbolic_trace and torch.export.export of a module calling `torch.relu_` and
    `x.add_(1)`: the same graphs (and the traced module's result) as in a plain cell."""
    assert run(shell, TRACED).success
    plain = shell.user_ns["graph"]
    assert "aten::relu_" in plain["jit.trace"][0] and ("call_function", "<built-in method relu_ of type object at "
                                                       ) not in plain["fx"]
    result = _watched(shell, how, TRACED)
    assert result.success, result.error_in_exec
    assert shell.user_ns["graph"] == plain


# -- A DataLoader worker's traceback (issue 31, item 1): workers are forked with the wrappers (or the mode) on --

WORKER_DATASET = """\
import torch
from torch.utils.data import Dataset, DataLoader
class Rows(Dataset):
    def __len__(self):
        return 4
    def __getitem__(self, i):
        t = torch.zeros(2, 2)
        {body}
        return t
"""
WORKER_LOOP = "for batch in DataLoader(Rows(), batch_size=2, num_workers=2):\n    pass\n"


def _worker_text(text: str) -> str:
    """The worker's own traceback in a message or a shown traceback: from torch's "Original Traceback" on."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert "in DataLoader worker process" in text and "Original Traceback" in text, text[-3000:]
    return text[text.index("Original Traceback"):]


@pytest.mark.skipif(sys.platform != "linux", reason="forked DataLoader workers: Linux's default start method")
@pytest.mark.parametrize("body, error", [
    ("t[0].add_(torch.ones(3))", "The size of tensor a (2) must match the size of tensor b (3)"),
    ("t[0] = torch.ones(3)", "The expanded size of the tensor (2) must match the existing size (3)"),
])
@pytest.mark.parametrize("how", ["always_on", "full_cell"])
def test_a_workers_traceback_of_a_failing_in_place_op_shows_no_frame_of_ours(shell, capsys, how, body, error):
    """A `__getitem__` whose in-place op fails in a worker forked while the cell is watched: the worker's
    traceback, in the error the cell raises and in the traceback shown, names the same files as a plain cell's
    (the in-place wrapper's or the mode's frame is not in it) -- the worker inherits the wrappers at the fork."""
    assert run(shell, WORKER_DATASET.format(body=body)).success
    capsys.readouterr()
    plain = run(shell, WORKER_LOOP)
    plain_text = _worker_text(str(plain.error_in_exec))
    assert error in plain_text and not shows_package_frames(plain_text)
    capsys.readouterr()
    result = _watched(shell, how, WORKER_LOOP)
    raised, shown = _worker_text(str(result.error_in_exec)), _worker_text(capsys.readouterr().out)
    for text in (raised, shown):
        assert error in text and not shows_package_frames(text), text
    files = re.compile(r'File "([^"]+)", line \d+')
    assert files.findall(raised) == files.findall(plain_text)
