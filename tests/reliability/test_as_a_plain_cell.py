"""Probes of issue 19: a `%%gradcheck` cell behaves as the same cell without it, run side by side.

Values shown (top-level `await`, `ast_node_interactivity`, `;`), `sys.exit`, torch's function-mode stack
both ways (a mode or a generator holding `with mode:` left entered, or exited in a later cell), global
settings the user changes in the cell (anomaly mode, saved-and-restored functions), the warning registry,
and the user's warning filters: torch's evidence reaches the card whatever they say, and what they hide
stays hidden.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import types
import warnings

import pytest
import torch

import grad_magic
from gm_shell import displayed, run


def in_a_fresh_shell(script: str) -> str:
    """Run `script` in a new process with an InteractiveShell `sh` (grad_magic loaded) and `cell(source)`,
    which runs a cell and returns what it printed, its value and its error; the script's stdout."""
    prelude = textwrap.dedent("""
        import contextlib, io, json, re, sys
        from IPython.core.interactiveshell import InteractiveShell
        sh = InteractiveShell.instance()
        sh.colors = "nocolor" if hasattr(sh, "colors") else sh.colors
        sh.run_line_magic("load_ext", "grad_magic")

        def cell(source):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                result = sh.run_cell(source, store_history=True)
            error = result.error_before_exec or result.error_in_exec
            text = re.sub(r"Out\\[\\d+\\]", "Out", out.getvalue() + err.getvalue())
            text = re.sub(r"In\\[\\d+\\]|<ipython-input-\\d+-[0-9a-f]+>", "<cell>", text)
            return {"shown": text, "value": repr(result.result), "error": type(error).__name__ if error else None}
    """)
    done = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(script)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


# -- the values a cell shows --

VALUE_CELLS = [
    "import asyncio\nawait asyncio.sleep(0.01)\n7\n",
    "import asyncio\nx = await asyncio.sleep(0, result=3)\nx + 4\nx * 2\n",
    "import asyncio\nasync def twice(v):\n    return 2 * v\nawait twice(21);\n",
    "a = 1\na + 1\na + 2\n", "a = 5\n", "zz = {'#': 1}\nzz.get('#', 0);\n", "zz = {}\nzz.get('#', 0)  # ends;\n",
    "b = [1]\nb[0] = 2\n", "z = 1\nz += 1\n", "x = 1\nx\nx + 1;\n",
]


def test_values_shown_match_a_plain_cell_in_every_interactivity_mode_with_await():
    """Each cell run plain and under %%gradcheck, in each of IPython's `ast_node_interactivity` modes: the
    same printed `Out`, the same value, the same (no) error -- top-level `await` included."""
    out = in_a_fresh_shell(f"""
        for mode in ("last_expr", "all", "last", "none", "last_expr_or_assign"):
            sh.ast_node_interactivity = mode
            for body in {VALUE_CELLS!r}:
                print(json.dumps([mode, body, cell(body), cell("%%gradcheck\\n" + body)]))
    """)
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 5 * len(VALUE_CELLS)
    for mode, body, plain, magic in rows:
        assert plain["error"] is None, (mode, body, plain)
        assert magic == plain, (mode, body)


def test_sys_exit_reads_as_in_a_plain_cell():
    """No card, IPython's "To exit" warning once: each in a fresh process (the warning shows once per
    session), the output of the %%gradcheck cell is the plain cell's."""
    script = """
        import grad_magic
        got = cell({!r})
        print(json.dumps([got, len(grad_magic.last_diagnoses())]))
    """
    plain = json.loads(in_a_fresh_shell(script.format("import sys\nsys.exit('bye')\n")))
    magic = json.loads(in_a_fresh_shell(script.format("%%gradcheck\nimport sys\nsys.exit('bye')\n")))
    assert magic == plain
    assert magic[0]["shown"].count("UserWarning: To exit") == 1 and magic[0]["error"] == "SystemExit" and magic[1] == 0


# -- torch's function-mode stack --

class UserMode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


GENERATOR = "def holding(mode):\n    with mode:\n        yield 1\n    yield 2\n"


def modes():
    return torch.overrides._get_current_function_mode_stack()


def test_a_generator_holding_a_mode_when_the_cell_ends_keeps_it_and_only_it(shell):
    shell.user_ns["UserMode"] = UserMode
    try:
        result = run(shell, "%%gradcheck\nimport torch\n" + GENERATOR + "mode = UserMode()\nheld = holding(mode)\n"
                            "next(held)\ny = torch.ones(2) + 1\n")
        assert result.success, result.error_in_exec
        assert modes() == [shell.user_ns["mode"]]  # NB: grad_magic's tracker is off, the user's mode on
        result = run(shell, "%%gradcheck\nimport torch\ny = torch.ones(2) * 3\nnext(held)\nz = torch.ones(2) - 1\n")
        assert result.success, result.error_in_exec
        assert modes() == []  # NB: the generator's exit popped the user's mode, not the tracker
    finally:
        while torch._C._len_torch_function_stack():
            torch._C._pop_torch_function_stack()


def test_a_generator_entered_in_a_plain_cell_and_left_in_a_checked_one(shell):
    shell.user_ns["UserMode"] = UserMode
    try:
        assert run(shell, GENERATOR + "mode = UserMode()\nheld = holding(mode)\nnext(held)\n").success
        result = run(shell, "%%gradcheck\nimport torch\nw = torch.ones(2, requires_grad=True)\nnext(held)\n"
                            "w.add_(1)\n")
        assert isinstance(result.error_in_exec, RuntimeError)
        assert grad_magic.last_diagnosis().kind == "leaf-modified-in-place"  # NB: the tracker saw the write
        assert modes() == []
    finally:
        while torch._C._len_torch_function_stack():
            torch._C._pop_torch_function_stack()


# -- settings the user changes in the cell --

@pytest.mark.parametrize("call", ["torch.autograd.set_detect_anomaly(True)", "torch.set_anomaly_enabled(True)"])
def test_anomaly_mode_the_cell_turns_on_stays_on_also_when_it_equals_grad_magics(shell, call):
    assert not torch.is_anomaly_enabled()
    try:
        assert run(shell, f"%%gradcheck\nimport torch\n{call}\n").success
        assert (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()) == (True, True)
    finally:
        torch.set_anomaly_enabled(False)


def test_anomaly_mode_a_with_block_in_the_cell_leaves_as_it_found(shell):
    """`with detect_anomaly():` in the cell puts back, on exit, what was there when it was entered: in a plain
    cell the state from before the cell (off), not grad_magic's."""
    assert run(shell, "%%gradcheck\nimport torch\nwith torch.autograd.detect_anomaly():\n    x = 1\n").success
    assert not torch.is_anomaly_enabled()
    assert run(shell, "%%gradcheck --no-nan-check\nimport torch\nwith torch.autograd.set_detect_anomaly(True):\n"
                      "    x = 1\ntorch.autograd.set_detect_anomaly(True, check_nan=False)\n").success
    try:
        assert (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()) == (True, False)
    finally:
        torch.set_anomaly_enabled(False)


@pytest.mark.parametrize("where, name", [("torch.optim.Optimizer", "zero_grad"), ("torch.nn.Module", "zero_grad"),
                                         ("torch", "set_anomaly_enabled"), ("torch.fx.traceback", "format_stack"),
                                         ("warnings", "showwarning")])
def test_a_function_saved_in_the_cell_and_put_back_later_is_torchs_own_again(shell, where, name):
    """grad_magic swaps these while a cell runs; a user who saves one in the cell and puts it back later
    holds grad_magic's: at its first call it passes the call on and puts back what it had replaced."""
    owner = eval(where, {"torch": torch, "warnings": warnings})
    original = getattr(owner, name)
    shell.user_ns["owner"] = owner
    try:
        assert run(shell, f"%%gradcheck\nimport torch\nsaved = owner.{name}\n").success
        assert shell.user_ns["saved"] is not original  # NB: grad_magic's, while the cell ran
        setattr(owner, name, shell.user_ns["saved"])
        w = torch.nn.Parameter(torch.ones(2))
        calls = {"zero_grad": lambda: (torch.optim.SGD([w], lr=0.1) if owner is torch.optim.Optimizer
                                       else torch.nn.Linear(1, 1)).zero_grad(),
                 "set_anomaly_enabled": lambda: torch.set_anomaly_enabled(False),
                 "format_stack": lambda: torch.fx.traceback.format_stack(),
                 "showwarning": lambda: warnings.showwarning("m", UserWarning, "f.py", 1, file=_Sink())}
        calls[name]()
        assert getattr(owner, name) is original
    finally:
        setattr(owner, name, original)


class _Sink:
    def write(self, text: str) -> None:
        pass


# -- the user's warning registry and filters --

def users_module():
    """A module of the user's whose function warns (a "default" warning: once per place)."""
    module = types.ModuleType("users_module_gm19")
    exec(compile("import warnings\ndef f():\n    warnings.warn('once here', UserWarning)\n",
                 "/tmp/users_module_gm19.py", "exec"), vars(module))
    return module


NON_LEAF = "%%gradcheck\nimport torch\nx = torch.ones(3, requires_grad=True)\ny = x * 2\ny.sum().backward()\ng = y.grad\n"
SAVED = "%%gradcheck\nimport torch\na = torch.ones(3, requires_grad=True)\nb = a.tanh()\nb.mul_(2)\nb.sum().backward()\n"
SYNTAX = "%%gradcheck\nx = (\n"


@pytest.fixture
def seen():
    """Every warning shown, by its message; the filters as pytest left them, put back after."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        shown = []
        warnings.showwarning = lambda message, *args, **kwargs: shown.append(str(message))
        yield shown


@pytest.mark.parametrize("cell", [NON_LEAF, SAVED, SYNTAX])
def test_after_a_card_a_modules_default_warning_does_not_fire_again(shell, seen, cell):
    module = users_module()
    module.f()
    run(shell, cell)
    module.f()
    assert seen.count("once here") == 1, seen


def test_ignored_warnings_still_reach_the_cards_and_stay_hidden(shell, seen):
    """`warnings.filterwarnings("ignore")` in an earlier cell: the non-leaf `.grad` card and the saved tensor's
    forward line (anomaly mode's trace, a warning) are still there; the user sees no warning; the filters are
    the same objects after, and their version unbumped (a module's once-warning does not fire again)."""
    module = users_module()
    run(shell, "import warnings\nwarnings.filterwarnings('ignore')\n")
    warnings.filterwarnings("default", module=module.__name__)  # NB: the module's warning shows, once
    module.f()
    filters = list(warnings.filters)
    run(shell, NON_LEAF)
    assert [d.kind for d in grad_magic.last_diagnoses()] == ["non-leaf-grad"]
    run(shell, SAVED)
    d = grad_magic.last_diagnosis()
    assert d.kind == "saved-tensor-modified-in-place"
    assert (4, "b = a.tanh()") in [(line.lineno, line.text) for line in d.lines]
    assert len(displayed(shell)) == 2
    assert len(warnings.filters) == len(filters) and all(f is g for f, g in zip(warnings.filters, filters))
    module.f()  # NB: still marked as shown: the filters' version was not bumped
    assert seen == ["once here"]


def test_an_ignore_filter_set_in_the_checked_cell_itself_costs_no_evidence(shell, seen):
    run(shell, "%%gradcheck\nimport warnings\nwarnings.filterwarnings('ignore')\n" + NON_LEAF.split("\n", 1)[1])
    assert [d.kind for d in grad_magic.last_diagnoses()] == ["non-leaf-grad"]
    assert seen == []
    assert warnings.filters[0][:2] == ("ignore", None)  # NB: the cell's filter stays, as after a plain cell


@pytest.mark.parametrize("setting", ["default", "always", "error", "module"])
def test_torchs_warnings_show_or_raise_as_the_users_filters_say(shell, seen, setting):
    """A loop reading a non-leaf `.grad` three times at one line: shown, counted and raised as in a plain cell
    (raised: with a plain cell's traceback, which ends at the user's line)."""
    body = (f"import torch, warnings\nwarnings.simplefilter({setting!r})\nx = torch.ones(2, requires_grad=True)\n"
            "for _ in range(3):\n    g = (x * 2).grad\n")
    outcomes = []
    for magic in ("", "%%gradcheck\n"):
        seen.clear()
        result = run(shell, magic + body)
        outcomes.append((type(result.error_in_exec).__name__, len(seen), _last_frame(magic.count("\n")) if result.error_in_exec else None))
    assert outcomes[1] == outcomes[0], outcomes


def _last_frame(above: int):
    """The last error's traceback from the cell's frame inward: the cell's line (the lines above the body left
    out), then each inner frame's function and file."""
    entries, tb = [], sys.last_traceback
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    start = max(i for i, e in enumerate(entries) if e.tb_frame.f_code.co_filename.startswith("<ipython-input-"))
    return entries[start].tb_lineno - above, [(e.tb_frame.f_code.co_name, e.tb_frame.f_code.co_filename)
                                              for e in entries[start + 1:]]
