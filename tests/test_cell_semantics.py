"""`%%gradcheck` runs a cell exactly as a plain cell would: namespace, lines, value, errors, options."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import warnings

import IPython
import pytest
import torch
from IPython.core.error import UsageError

import grad_magic
from gm_shell import displayed, run
from package_paths import in_package, shows_package_frames

FAILING = textwrap.dedent("""\
    %%gradcheck
    import torch
    w = torch.tensor([1.0])
    x = torch.tensor([2.0])

    loss = (w * x).sum()
    loss.backward()
    after = 1
""")


# How IPython heads the cell's part of a traceback: `Cell In[1], line 7` (IPython 8.x and later; early 8.x
# wrote `Input In [1], in <cell line: 7>`); IPython 7 (Colab's) names the compiled cell:
# `<ipython-input-1-0ff31d554e9d> in <module>`.
CELL_HEADER = (r"Cell In\[1\], line 7|Input In \[1\], in <cell line: 7>" if IPython.version_info >= (8,)
               else r"<ipython-input-1-[0-9a-f]+> in <module>")


def cell_frames(tb, filename_prefix="<ipython-input-"):
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(filename_prefix):
            yield tb
        tb = tb.tb_next


def test_names_assigned_before_the_exception_survive(shell):
    result = run(shell, FAILING)
    assert not result.success
    assert "w" in shell.user_ns and "loss" in shell.user_ns
    assert "after" not in shell.user_ns


def test_failure_raises_the_users_original_exception(shell):
    result = run(shell, FAILING)
    exc = result.error_in_exec
    assert type(exc) is RuntimeError
    assert "does not require grad" in str(exc)
    assert sys.last_value is exc


def test_traceback_points_at_the_editor_line(shell, capsys):
    run(shell, FAILING)
    frames = list(cell_frames(sys.last_traceback))
    assert frames, "no frame of the cell in the traceback"
    assert frames[-1].tb_lineno == 7  # the %%gradcheck line is line 1
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)  # NB: IPython 7 colours it regardless
    assert re.search(CELL_HEADER, out), out[-2000:]
    assert "----> 7 loss.backward()" in out
    # NB: grad_magic's own frames are hidden (the card explains; its machinery is noise)
    assert "magics.py" not in out and "cellrun.py" not in out, out[-2000:]


def _inward_from_cell(tb) -> list:
    """(file, function, line) from the cell's frame inward; the cell's line made relative to its body."""
    frames = []
    while tb is not None:
        code = tb.tb_frame.f_code
        frames.append((code.co_filename, code.co_name, tb.tb_lineno))
        tb = tb.tb_next
    start = max(i for i, (f, _, _) in enumerate(frames) if f.startswith(("<ipython-input-", "/tmp/ipykernel_")))
    return [("<cell>", "<module>", 0)] + frames[start + 1:]


@pytest.mark.parametrize("body", [
    "m = torch.nn.Linear(2, 3)\nm(torch.ones(4))\n",  # C function under a module: the tracker was innermost
    "(torch.ones(1) * 2).sum().backward()\n",  # Tensor.backward: a Python torch function, dispatched
    "torch.nn.functional.relu(torch.ones(2), inplace=True).add_(torch.ones(3))\n",
    "torch.cat([torch.ones(2), torch.zeros(2, device='meta')])\n",
    "torch.nn.functional.mse_loss(torch.ones(2), torch.zeros(2, device='meta'))\n",
])
@pytest.mark.parametrize("options", ["", " --fast"])
def test_a_torch_error_has_the_traceback_of_a_plain_cell(shell, body, options):
    """The op tracker sits in torch's dispatch of every call; an error in one must not show its frame, nor
    torch's `handle_torch_function` that called it (the traceback the user reads, and `%debug` walks)."""
    for _ in range(2):  # NB: the second time: some torch paths differ on their first call (library stubs)
        run(shell, "import torch\n" + body)
    plain = _inward_from_cell(sys.last_traceback)
    run(shell, f"%%gradcheck{options}\nimport torch\n" + body)
    checked = _inward_from_cell(sys.last_traceback)
    assert checked == plain
    assert not [f for f, _, _ in checked if in_package(f) or f.endswith("overrides.py")], checked


def test_the_whole_traceback_is_a_plain_cells_with_no_magic_call_line(shell, capsys):
    """From IPython's own frame on (what `sys.last_traceback`, `%debug` and the shown traceback read): no
    `get_ipython().run_cell_magic('gradcheck', ...)` line, no "[... skipping hidden frames]"."""
    def whole(tb):
        frames = []
        while tb is not None:
            code = tb.tb_frame.f_code
            cell = code.co_filename.startswith(("<ipython-input-", "/tmp/ipykernel_"))
            # NB: a cell's code is `<module>`, or `<cell line: N>` in IPython 7.34 (Colab's)
            frames.append(("<cell>", "<cell>") if cell else (code.co_filename, code.co_name))
            tb = tb.tb_next
        return frames

    body = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x.sigmoid()\ny.mul_(2)\ny.sum().backward()\n"
    run(shell, body)
    plain = whole(sys.last_traceback)
    capsys.readouterr()
    run(shell, "%%gradcheck\n" + body)
    shown = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    assert whole(sys.last_traceback) == plain
    assert "run_cell_magic" not in shown and "skipping hidden" not in shown, shown[:3000]


def test_a_magic_stacked_above_keeps_the_editor_line_numbers(shell, capsys):
    """`%%time` over `%%gradcheck`: the editor counts the `%%time` line, so do the traceback and the card;
    the fixed cell keeps it."""
    run(shell, FAILING)
    alone = grad_magic.last_diagnosis()
    capsys.readouterr()
    result = run(shell, "%%time\n" + FAILING)
    # NB: IPython 8 and later fail the cell; IPython 7's %%time (Colab's) shows the error and returns
    assert type(sys.last_value) is RuntimeError
    assert result.error_in_exec is sys.last_value or IPython.version_info < (8,) and result.error_in_exec is None
    assert list(cell_frames(sys.last_traceback))[-1].tb_lineno == 8
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    assert "----> 8 loss.backward()" in out, out[-2000:]
    stacked = grad_magic.last_diagnosis()
    assert stacked.kind == alone.kind and stacked.source == "%%time\n" + FAILING
    assert [(line.lineno, line.text) for line in stacked.lines] == [
        (line.lineno + 1, line.text) for line in alone.lines] and stacked.lines
    assert stacked.fix is not None and stacked.fix.source == "%%time\n" + alone.fix.source
    assert run(shell, stacked.fix.source).success  # NB: the fixed cell, as the card hands it over, runs


def test_blank_lines_at_the_top_of_the_body_keep_line_numbers(shell):
    run(shell, "%%gradcheck\n\n\nraise ValueError('x')\n")
    assert list(cell_frames(sys.last_traceback))[-1].tb_lineno == 4


def test_debug_opens_at_the_original_frame(shell):
    run(shell, "%%gradcheck\ndef inner():\n    local_marker = 1\n    raise KeyError('k')\ninner()\n")
    tb = sys.last_traceback
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert tb.tb_frame.f_code.co_name == "inner"
    assert tb.tb_frame.f_locals["local_marker"] == 1
    assert tb.tb_lineno == 4


def test_last_expression_is_the_cell_value(shell):
    result = run(shell, "%%gradcheck\nx = 20\nx + 22\n")
    assert result.success and result.result == 42
    assert shell.user_ns["_"] == 42


def test_trailing_semicolon_silences_the_value(shell):
    assert run(shell, "%%gradcheck\nx = 20\nx + 22;\n").result is None


@pytest.mark.parametrize("body", ["zz = {'#': 1}\nzz.get('#', 0);\n", "zz = {}\nzz.get('#', 0)  # ends;\n",
                                  "zz = 3\nzz; # a comment\n", "zz = ';'\nzz\n", "zz = 1\nzz  ;  \n",
                                  "zz = 1\n(zz +\n 1);\n", "zz = 1\n\"\"\"a\nb;\"\"\"\n", "zz = 1; zz\n"])
def test_the_value_shows_exactly_when_a_plain_cell_shows_it(shell, body):
    """IPython's own `;` check (its tokenizer): a `#` or `;` inside a string or a comment is no silencer."""
    plain = run(shell, body)
    magic = run(shell, "%%gradcheck\n" + body)
    assert plain.success and magic.success
    assert magic.result == plain.result


INTERACTIVITY_CELLS = ["a = 1\na + 1\na + 2\n", "a = 5\n", "a = 1\nfor i in range(2):\n    i\n", "x = 3\nx;\n",
                      "x = 1\nx\nx + 1;\n", "b = [1]\nb[0] = 2\n", "y: int = 7\n", "z = 1\nz += 1\n"]


@pytest.mark.parametrize("mode", ["last_expr", "all", "last", "none", "last_expr_or_assign"])
def test_the_values_shown_follow_ast_node_interactivity_as_in_a_plain_cell(shell, capsys, monkeypatch, mode):
    monkeypatch.setattr(shell, "ast_node_interactivity", mode)
    for cell in INTERACTIVITY_CELLS:
        shown = []
        for magic in ("", "%%gradcheck\n"):
            result = run(shell, magic + cell)
            assert result.success, result.error_in_exec
            shown.append(re.sub(r"Out\[\d+\]", "Out", capsys.readouterr().out))
        assert shown[1] == shown[0], cell


def test_sys_exit_is_not_explained(shell):
    result = run(shell, "%%gradcheck\nimport sys\nbefore = 1\nsys.exit('bye')\n")
    assert isinstance(result.error_in_exec, SystemExit)
    assert shell.user_ns["before"] == 1
    assert displayed(shell) == [] and grad_magic.last_diagnoses() == []


def test_ipython_syntax_in_the_body(shell):
    result = run(shell, "%%gradcheck\n%env GM_TEST_VAR=hello\nlines = !echo hi\nvalue = %env GM_TEST_VAR\n")
    assert result.success, result.error_in_exec
    assert shell.user_ns["lines"] == ["hi"]
    assert shell.user_ns["value"] == "hello"


def _cell_named(text: str) -> str:
    """Output with the cell's name and line number left out: `In[3], line 2` (IPython 8+),
    `"<ipython-input-3-ab12>", line 2` (IPython 7), colours dropped."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    return re.sub(r'(In\[\d+\]|"<ipython-input-\d+-[0-9a-f]+>"), line \d+', "<cell>, line L", text)


def test_syntax_error_is_a_plain_cells_with_the_editor_line(shell, capsys):
    """As a plain cell: the cell fails before anything runs, and Python's message is all that shows (no frames
    of IPython's or grad_magic's), at the editor's line."""
    plain = run(shell, "ran = 1\ny = (\n")
    plain_out = capsys.readouterr()
    result = run(shell, "%%gradcheck\nran = 2\ny = (\n")
    out = capsys.readouterr()
    assert isinstance(result.error_before_exec, SyntaxError) and result.error_in_exec is None
    assert isinstance(plain.error_before_exec, SyntaxError) and not result.success
    assert result.error_before_exec.lineno == 3 and "ran" not in shell.user_ns
    assert displayed(shell) == []  # Python's own message says it all
    shown, plain_shown = (_cell_named(o.out + o.err) for o in (out, plain_out))
    assert shown == plain_shown
    assert not shows_package_frames(shown) and "run_cell_magic" not in shown


def test_unknown_option_is_a_usage_error_and_runs_nothing(shell):
    result = run(shell, "%%gradcheck --bogus\nran = True\n")
    assert isinstance(result.error_in_exec, UsageError)
    assert "usage" in str(result.error_in_exec).lower() and "--fast" in str(result.error_in_exec)
    assert "ran" not in shell.user_ns


def test_help_prints_usage_and_runs_nothing(shell, capsys):
    run(shell, "%%gradcheck --help\nran = True\n")
    out = capsys.readouterr().out
    assert "--no-nan-check" in out and "--quiet" in out
    assert "ran" not in shell.user_ns


@pytest.mark.parametrize("options, anomaly, check_nan", [
    ("", True, True), ("--fast", False, None), ("--no-nan-check", True, False)])
def test_options_set_anomaly_mode_during_the_cell(shell, options, anomaly, check_nan):
    run(shell, f"%%gradcheck {options}\nimport torch\n"
               "seen = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())\n")
    seen = shell.user_ns["seen"]
    assert seen[0] is anomaly
    if check_nan is not None:
        assert seen[1] is check_nan
    assert not torch.is_anomaly_enabled()


META_TRAINING = ("import torch\nnet = torch.nn.Linear(4, 2).to('meta')\n"
                 "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
                 "for _ in range(3):\n    opt.zero_grad()\n"
                 "    net(torch.randn(8, 4, device='meta')).pow(2).mean().backward()\n    opt.step()\n"
                 "g = torch.autograd.grad(net(torch.randn(2, 4, device='meta')).sum(), net.weight)\n"
                 "after = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())\n")


def test_healthy_training_on_meta_tensors_runs_as_in_a_plain_cell(shell):
    # NB: anomaly mode's NaN check reads each gradient with .item(), which meta tensors refuse: the check is
    # grad_magic's own, so a backward() on meta runs without it (deferred initialisation trains on meta)
    result = run(shell, "%%gradcheck\n" + META_TRAINING)
    assert result.error_in_exec is None
    assert displayed(shell) == []
    assert shell.user_ns["after"] == (True, True)  # the check is back for the rest of the cell
    assert not torch.is_anomaly_enabled()


def test_the_users_own_nan_check_still_fails_on_meta_as_in_a_plain_cell(shell):
    body = "torch.autograd.set_detect_anomaly(True, check_nan=True)\ntry:\n" + \
        textwrap.indent(META_TRAINING, "    ") + "finally:\n    torch.autograd.set_detect_anomaly(False)\n"
    plain = run(shell, "import torch\n" + body)
    watched = run(shell, "%%gradcheck\nimport torch\n" + body)
    assert "meta" in str(plain.error_in_exec)
    assert str(watched.error_in_exec) == str(plain.error_in_exec)


def test_failing_cell_shows_a_card_before_the_error(shell):
    run(shell, FAILING)
    bundles = displayed(shell)
    assert len(bundles) == 1
    assert "text/html" in bundles[0] and "text/plain" in bundles[0]
    assert grad_magic.last_diagnosis() is not None
    assert grad_magic.last_diagnosis().error_type == "RuntimeError"


def test_healthy_cell_shows_nothing_and_clears_the_last_diagnoses(shell):
    run(shell, FAILING)
    run(shell, "%%gradcheck\ny = 1\n")
    assert grad_magic.last_diagnoses() == []
    assert len(displayed(shell)) == 1


def test_keyboard_interrupt_propagates_without_a_card(shell):
    result = run(shell, "%%gradcheck\nbefore = 1\nraise KeyboardInterrupt\n")
    assert isinstance(result.error_in_exec, KeyboardInterrupt)
    assert shell.user_ns["before"] == 1
    assert displayed(shell) == []


def test_gradfix_without_a_fix_says_so(shell, capsys):
    run(shell, "%%gradcheck\nx = 1\n")
    shell.run_line_magic("gradfix", "")
    assert "No fixed cell" in capsys.readouterr().out


def test_gradfix_puts_the_fixed_cell_in_the_next_input(shell, capsys):
    fixed = "%%gradcheck\nx = 2\n"
    grad_magic.state.remember([grad_magic.Diagnosis(
        kind="k", severity="error", title="t", summary="s", what="w", why="y", where="h",
        fix=grad_magic.Fix(description="d", source=fixed, edits=()))])
    shell.run_line_magic("gradfix", "")
    assert shell.rl_next_input == fixed[:-1]  # NB: the newline IPython appends to a cell body is not typed


NETS = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n"
        "        return self.fc(x + torch.randn(x.shape))\n")
HELPERS = "import torch\n\n\ndef noisy(x):\n    return x + torch.randn(x.shape)\n"


@pytest.mark.parametrize("module, cells", [
    # a class defined in a module: the model made from it in a cell of its own must be made again
    ("gm_nets_case", ["import torch\nfrom gm_nets_case import Net",
                      "model = Net().to('meta')\nx = torch.randn(3, 4, device='meta')",
                      "%%gradcheck --no-nan-check\nloss = model(x).sum()"]),
    # a helper function in a module, called by the failing cell
    ("gm_helpers_case", ["import torch\nimport gm_helpers_case as helpers",
                         "x = torch.randn(3, 4, device='meta')",
                         "%%gradcheck --no-nan-check\nloss = helpers.noisy(x).sum()"]),
])
def test_gradfix_of_a_users_file_reloads_its_module_and_the_notebook_runs_clean(shell, capsys, tmp_path,
                                                                              monkeypatch, module, cells):
    """A fix in the user's own `.py` file (issue 31): `%gradfix` never puts the file's text in a cell (a second
    copy beside the module's); it says to change the file as the diff shows and puts the cell that reloads
    the module (and imports again what the cells imported from it) in the next input, naming the cells that
    used it. Done as it says, the failing cell runs clean."""
    path = tmp_path / f"{module}.py"
    path.write_text(NETS if "nets" in module else HELPERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    counts = []
    for cell in cells:
        counts.append(shell.execution_count)
        run(shell, cell)
    [fixed] = grad_magic.last_diagnosis().fix.elsewhere
    assert fixed.file == str(path) and "device=" in fixed.source
    shell.rl_next_input = None
    capsys.readouterr()
    shell.run_line_magic("gradfix", "")
    said = capsys.readouterr().out
    reload = shell.rl_next_input
    assert f"importlib.reload({module})" in reload and "class Net" not in reload and "def noisy" not in reload
    assert "+ " in said and "device=" in said  # NB: the diff, to change the file by
    path.write_text(fixed.source)  # NB: the user changes the file as the diff shows
    assert run(shell, reload).success
    again = [n for n in fixed.rerun]
    assert again == ([counts[1]] if "nets" in module else [])
    for n in again:
        assert f"In [{n}]" in said
        assert run(shell, cells[counts.index(n)]).success
    result = run(shell, cells[-1])
    assert result.success, result.error_in_exec
    sys.modules.pop(module, None)


def test_gradfix_out_of_range_or_not_a_number_says_so(shell, capsys):
    grad_magic.state.remember([grad_magic.Diagnosis(
        kind="k", severity="error", title="t", summary="s", what="w", why="y", where="h",
        fix=grad_magic.Fix(description="d", source="%%gradcheck\nx = 2\n", edits=()))])
    shell.rl_next_input = None
    shell.run_line_magic("gradfix", "999")
    out = capsys.readouterr().out
    assert "No fixed cell 999" in out and "has 1" in out and "proposed none" not in out
    assert shell.rl_next_input is None
    with pytest.raises(UsageError, match="number of a fixed cell"):
        shell.run_line_magic("gradfix", "two")


def test_reload_ext_keeps_always_on_as_it_was(shell, capsys):
    shell.run_line_magic("gradcheck", "on")
    shell.run_line_magic("reload_ext", "grad_magic")
    shell.run_line_magic("gradcheck", "")
    assert "is watching every cell" in capsys.readouterr().out.splitlines()[-1]
    run(shell, "import torch\nx = torch.ones(2, requires_grad=True)\ny = x.sigmoid()\ny.relu_()\n"
               "y.sum().backward()\n")
    assert grad_magic.last_diagnosis() is not None  # NB: still watching: the cell got its card
    shell.run_line_magic("gradcheck", "off")
    shell.run_line_magic("unload_ext", "grad_magic")
    shell.run_line_magic("load_ext", "grad_magic")
    shell.run_line_magic("gradcheck", "")
    assert "is not watching" in capsys.readouterr().out.splitlines()[-1]  # NB: a deliberate unload still forgets it


def test_unload_removes_the_magics(shell):
    shell.run_line_magic("unload_ext", "grad_magic")
    assert "gradcheck" not in shell.magics_manager.magics["cell"]
    assert "gradfix" not in shell.magics_manager.magics["line"]
    shell.run_line_magic("load_ext", "grad_magic")
    assert "gradcheck" in shell.magics_manager.magics["cell"]


def test_loading_imports_nothing_heavy_beyond_torch():
    code = textwrap.dedent("""
        import sys, torch
        from IPython.core.interactiveshell import InteractiveShell
        sh = InteractiveShell.instance()
        before = set(sys.modules)
        sh.run_line_magic("load_ext", "grad_magic")
        new = set(sys.modules) - before
        heavy = sorted(m for m in new if m.split(".")[0] in
                       ("jinja2", "pygments", "numpy", "nbformat", "nbclient", "pandas", "matplotlib"))
        print("HEAVY", heavy)
        print("LOADED", "gradcheck" in sh.magics_manager.magics["cell"])
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out and "LOADED True" in out



def test_making_a_card_leaves_the_users_warning_registry_as_it_was():
    """A "default" warning shows once per place; diagnosing and rendering a card (which parses and highlights
    the cell, SyntaxWarnings and all) must not make it show again. NB: `warnings.catch_warnings()` would:
    leaving it empties every registry."""
    from grad_magic.engine import diagnose
    from grad_magic.record import RunRecord
    from grad_magic.render import mimebundle

    namespace = {"__name__": "user_module"}
    exec("import warnings\ndef f():\n    warnings.warn('once here', UserWarning)\n", namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        seen = []
        warnings.showwarning = lambda message, *args, **kwargs: seen.append(str(message))
        namespace["f"]()
        source = f"%%gradcheck\nx = 1 is 1  # {id(seen)}\ny = x.bad\n"  # NB: a cell no cache has seen
        record = RunRecord(filename="<c>", source=source, exception=AttributeError("bad"), error_lineno=3)
        mimebundle(diagnose(record, {}, "en")[0])
        namespace["f"]()
        assert seen.count("once here") == 1, seen


AWAITING = "import asyncio\nx = await asyncio.sleep(0, result=3)\nx + 4\n"


def test_top_level_await_is_awaited_as_in_a_plain_cell():
    """In a shell of its own (NB: this test process's thread may hold a running event loop of a browser test's,
    and a plain cell with `await` fails there too): the value, a failure after an await with its card, and
    the names assigned before it, as in a plain cell."""
    code = textwrap.dedent("""
        from IPython.core.interactiveshell import InteractiveShell
        import grad_magic
        sh = InteractiveShell.instance()
        sh.run_line_magic("load_ext", "grad_magic")
        cell = %r
        plain, magic = sh.run_cell(cell, store_history=True), sh.run_cell("%%%%gradcheck\\n" + cell, store_history=True)
        print("VALUES", plain.success, magic.success, plain.result, magic.result)
        failing = sh.run_cell("%%%%gradcheck\\nimport asyncio, torch\\nbefore = await asyncio.sleep(0, result=1)\\n"
                              "w = torch.tensor([1.0])\\n(w * 2).sum().backward()\\n", store_history=True)
        d = grad_magic.last_diagnosis()
        print("FAILING", type(failing.error_in_exec).__name__, sh.user_ns["before"], d.kind)
        print("FIXED", d.fix.source.splitlines()[3])
    """ % AWAITING)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "VALUES True True 7 7" in out
    assert "FAILING RuntimeError 1 missing-requires-grad" in out
    assert "FIXED w = torch.tensor([1.0], requires_grad=True)" in out


def test_with_autoawait_off_an_await_fails_as_in_a_plain_cell(shell, monkeypatch):
    monkeypatch.setattr(shell, "autoawait", False)
    plain = run(shell, AWAITING)
    magic = run(shell, "%%gradcheck\n" + AWAITING)
    assert type(plain.error_before_exec or plain.error_in_exec) is SyntaxError
    assert type(magic.error_before_exec or magic.error_in_exec) is SyntaxError


def test_the_await_transformer_comes_off_with_the_extension(shell):
    from grad_magic.cellrun import awaited_magic_call

    assert shell.input_transformers_post.count(awaited_magic_call) == 1
    shell.run_line_magic("unload_ext", "grad_magic")
    try:
        assert awaited_magic_call not in shell.input_transformers_post
    finally:
        shell.run_line_magic("load_ext", "grad_magic")
