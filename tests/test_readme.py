"""The README's promises that code can check: a five-minute read, its tables are their sources', every code
block runs -- its own and those of the pages moved out of it (PAGES).

The README is at most 200 lines, with no placeholder a reader cannot copy, and every file it links to exists.
Every code block is fenced with its language. `python` blocks run in order (the README's, then each page's),
one cell each, in an IPython shell, as a reader would type them into a notebook (the first example must give
its card, not a NameError). `bash` lines each have a test that runs them (SHELL_COMMANDS says which; CI runs
the test command itself, from .ci/run). `text` is for the layout (docs/DEVELOPING.md), which is not code.
"""
from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import List, NamedTuple

import pytest

import grad_magic
import ledger
from gm_shell import displayed, run

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# The pages that hold what the README held before it was cut to a five-minute read (issue 33)
PAGES = [ROOT / "docs" / name for name in ("USAGE.md", "FRONTENDS.md", "JSON.md", "EVALUATION.md", "BENCHMARKS.md",
                                           "RELIABILITY.md", "DEVELOPING.md")]
MAX_LINES = 200
PLACEHOLDERS = ("OWNER/REPO", "<repository URL>", "<address>", "TODO", "FAST_TIER_TIME")
TEST_COMMAND = "bash scripts/setup.sh && .venv/bin/python -m pytest -q -n 2 --dist loadfile"
DEMO_COMMAND = "bash scripts/setup.sh && .venv/bin/python scripts/run_demos.py"
LAB_COMMAND = ".venv/bin/jupyter lab --allow-root"
# NB: Colab's install line (docs/FRONTENDS.md) cannot run here (Colab, and an sdist uploaded there): what it
# relies on, a build from the checkout's files without node when GRAD_MAGIC_SKIP_LABEXTENSION=1, is tested in
# test_packaging.py.
COLAB_INSTALL = "!GRAD_MAGIC_SKIP_LABEXTENSION=1 pip install -q grad_magic-0.1.0.tar.gz"
# Each shell command of the README (comments dropped) and the test that runs it.
SHELL_COMMANDS = {
    TEST_COMMAND: "tests/test_readme.py::test_the_test_command_is_what_ci_runs",
    DEMO_COMMAND: "tests/test_readme.py::test_the_demo_command_runs_the_demos",
    LAB_COMMAND: "tests/test_readme.py::test_jupyter_lab_starts_as_typed_with_the_extension",
    "pip install .": "tests/test_packaging.py::test_pip_install_from_a_clone_builds_the_extension_into_the_wheel",
    ".venv/bin/python bench/run.py": "tests/test_bench_smoke.py::test_quick_bench_writes_every_section",
    COLAB_INSTALL: "tests/test_packaging.py::test_building_without_the_extension_on_purpose_needs_no_node_and_says_so",
}
LANGUAGES = ("python", "bash", "text")


class Block(NamedTuple):
    language: str
    code: str
    line: int  # of the opening fence, 1-based


def _tables():
    spec = importlib.util.spec_from_file_location("readme_tables", ROOT / "scripts" / "readme_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def readme_blocks(text: str) -> List[Block]:
    return [Block(m.group(1), m.group(2), text[:m.start()].count("\n") + 1)
            for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)]


def indented_blocks(text: str) -> List[int]:
    """Lines that open a Markdown code block by indentation (4 spaces after a blank line, outside fences)."""
    found, fenced, previous = [], False, ""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("    ") and line.strip() and not previous.strip():
            found.append(number)
        previous = line
    return found


def shell_commands(blocks: List[Block]) -> List[str]:
    lines = [ln for b in blocks if b.language == "bash" for ln in b.code.splitlines()]
    lines += [ln for b in blocks if b.language == "python" for ln in b.code.splitlines() if ln.startswith("!")]
    return [re.sub(r"\s+#.*$", "", ln).strip() for ln in lines if ln.strip()]


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))
PAGE_BLOCKS = [b for page in PAGES for b in readme_blocks(page.read_text(encoding="utf-8"))]


def test_the_readme_reads_in_five_minutes():
    readme = README.read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= MAX_LINES, f"README.md is over {MAX_LINES} lines: move detail to docs/"
    for text, name in [(readme, "README.md")] + [(p.read_text(encoding="utf-8"), p.name) for p in PAGES]:
        assert not [p for p in PLACEHOLDERS if p in text], f"{name}: a placeholder a reader cannot copy"


def test_every_file_the_readme_links_to_exists():
    readme = README.read_text(encoding="utf-8")
    links = {m.split("#")[0] for m in re.findall(r"\]\(([^)\s]+)\)", readme) if "://" not in m}
    links -= {""}
    assert {"docs/card.png"} <= links and set(PAGES) <= {ROOT / link for link in links}
    assert [link for link in links if not (ROOT / link).is_file()] == []


def test_the_tables_are_their_sources():
    """The table of kinds is the registry's, the ledger's rows are docs/LEDGER.md's."""
    tables = _tables()
    readme = README.read_text(encoding="utf-8")
    assert tables.with_table(readme) == readme, "run: .venv/bin/python scripts/readme_tables.py"
    ledger_rows = [ln for ln in readme.split(tables.LEDGER_START)[1].split(tables.LEDGER_END)[0].splitlines()
                   if ln.startswith("| 2")]
    assert len(ledger_rows) == min(tables.LEDGER_ROWS, len(ledger.rows())) > 0


def test_every_rule_says_what_it_keys_on_and_how_it_fixes():
    from grad_magic.rules.registry import RULES

    undocumented = [r.slug for r in RULES.values() if not r.matches]
    assert not undocumented, f"rules without matches=: {undocumented}"


# -- every code block --

def test_every_code_block_is_fenced_with_a_language():
    for page in [README] + PAGES:
        text = page.read_text(encoding="utf-8")
        assert not indented_blocks(text), f"{page.name}: fence them: ```python, ```bash or ```text"
        assert [b.line for b in readme_blocks(text) if b.language not in LANGUAGES] == [], page.name
    assert [b.language for b in BLOCKS + PAGE_BLOCKS].count("text") == 1, "text is for the layout only"


def test_the_readme_carries_the_two_commands():
    commands = shell_commands(BLOCKS)
    assert commands[:2] == [DEMO_COMMAND, TEST_COMMAND], "the two commands come first"
    assert commands.count(DEMO_COMMAND) == commands.count(TEST_COMMAND) == 1


def test_every_shell_command_has_a_test_that_runs_it():
    assert sorted(shell_commands(BLOCKS + PAGE_BLOCKS)) == sorted(SHELL_COMMANDS), "a new command needs a test"
    for where in SHELL_COMMANDS.values():
        path, name = where.split("::")
        assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), f"{where} is gone"


def test_the_python_blocks_run_in_order_as_typed(shell):
    """The first example must give its card (not a NameError); the others, the README's and then the pages',
    must run without an error."""
    shell.run_line_magic("unload_ext", "grad_magic")  # NB: the README loads it itself
    blocks = [b for b in BLOCKS + PAGE_BLOCKS if b.language == "python"]
    assert blocks[0].code.splitlines()[:2] == ["%load_ext grad_magic", "import torch"]
    for block in blocks:
        cell = "\n".join(ln for ln in block.code.splitlines() if ln != COLAB_INSTALL)
        assert not cell.lstrip().startswith("!"), f"README line {block.line}: an unknown shell line"
        shown = len(displayed(shell))
        result = run(shell, cell)
        if cell.startswith("%%gradcheck"):
            assert isinstance(result.error_in_exec, RuntimeError), (block.line, result.error_in_exec)
            assert [d.kind for d in grad_magic.last_diagnoses()] == ["missing-requires-grad"]
            json = [b for b in displayed(shell)[shown:] if "application/vnd.grad-magic.diagnosis+json" in b]
            assert len(json) == 1 and "requires_grad=True" in json[0]["text/html"]
        else:
            assert result.success, (f"README line {block.line}", result.error_before_exec, result.error_in_exec)
    ns = shell.user_ns
    assert [d.kind for d in ns["run"].diagnoses] == ["missing-requires-grad"]  # the Python API block (USAGE.md)
    assert grad_magic.state.language() == "zh"  # the %config block (the fixtures put it back)
    assert ns["report"].rows, "%grad_device found the README's tensors"


# -- the shell commands --

def test_the_colab_line_names_the_sdist_of_this_version():
    version = re.search(r"^version = (\S+)$", (ROOT / "setup.cfg").read_text(encoding="utf-8"), re.M).group(1)
    assert f" grad_magic-{version}.tar.gz" in COLAB_INSTALL, "the sdist python -m build --sdist writes"


def test_the_test_command_is_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert any(ln.strip().startswith(TEST_COMMAND) for ln in ci.splitlines()), ".ci/run must run it as typed"


@pytest.mark.slow
def test_the_demo_command_runs_the_demos(tmp_path):
    """The demo command after its setup (the same scripts/setup.sh as the test command, run by CI)."""
    setup, demos = DEMO_COMMAND.split(" && ")
    assert TEST_COMMAND.startswith(setup + " && ")
    script = shlex.split(demos)[1]
    done = subprocess.run([sys.executable, script, "--out", str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    notebooks = sorted(p.name for p in (ROOT / "demo_notebooks").glob("*.ipynb"))
    assert notebooks and all(f"{name}: executed" in done.stdout for name in notebooks), done.stdout
    assert all((tmp_path / name).is_file() and (tmp_path / name.replace(".ipynb", ".cards.html")).is_file()
               for name in notebooks)


@pytest.mark.slow
def test_jupyter_lab_starts_as_typed_with_the_extension(tmp_path):
    """The README's `jupyter lab` line starts a server (as root too: this machine's CI runs as root) whose
    page loads the grad-magic extension; the flags added here only pick a port and keep it off the network."""
    support = _browser_support()
    support.require(support.extension_installed(), "the JupyterLab extension is not built and linked")
    program, *arguments = shlex.split(LAB_COMMAND)
    assert program == ".venv/bin/jupyter"
    port, token = support.free_port(), "readme"
    command = [str(Path(sys.executable).parent / "jupyter"), *arguments, "--no-browser",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.news_url=None"]
    log = tmp_path / "lab.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=tmp_path, env=support._environment(tmp_path), stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    server = support.JupyterServer("lab", f"http://127.0.0.1:{port}/", token, tmp_path, process, log)
    try:
        support._wait_until_up(server)
        with urllib.request.urlopen(server.page_url("lab"), timeout=30) as response:
            page = response.read().decode("utf-8")
    finally:
        support.stop_server(server)
    assert '"name": "grad-magic"' in page or '"name":"grad-magic"' in page, "the page does not load the extension"


def _browser_support():
    spec = importlib.util.spec_from_file_location("readme_browser_support",
                                                  ROOT / "tests" / "browser" / "browser_support.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # NB: dataclasses look it up
    spec.loader.exec_module(module)
    return module
