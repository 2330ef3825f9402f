"""Shared fixtures. After every test the global torch / warnings state must be exactly as before."""
from __future__ import annotations

import copy
import gc
import os
import sys
import warnings

import pytest

# NB: torch runs an op on as many threads as the machine has cores, and its threads spin while they wait for
# each other: with `-n 2` on two cores, two workers of two threads each made small ops ~10x slower (a healthy
# case: 1.4 s alone, 27 s beside another worker; 2026-12-07). Each xdist worker, and each kernel it starts,
# gets its share of the cores. Nothing tested depends on the count.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    os.environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // _WORKERS))

import torch  # noqa: E402

if _WORKERS > 1:
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
import torch.fx.traceback
import torch.optim.optimizer as optimizer_module
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell

import grad_magic
from gm_shell import displayed, run  # noqa: F401 -- re-exported for older imports

# NB: created once, up front: creating the shell installs IPython's own warning filters, which must not
# count as a change made by a test.
SHELL = InteractiveShell.instance()
# NB: torch's first meta-device op imports sympy, which adds a warning filter: done here, once, so that
# it is not counted as a change made by whichever test happens to be first.
try:
    torch.cat([torch.zeros(1), torch.zeros(1, device="meta")])
except RuntimeError:
    pass
# NB: transformers, lightning and accelerate add warning filters at their first import (the healthy corpus imports them
# inside cells): imported here, once, for the same reason
for _library in ("transformers", "lightning", "accelerate"):
    try:
        __import__(_library)
    except ImportError:
        pass
# NB: the `shell` fixture's `reset()` runs IPython's displayhook flush, which calls gc.collect(): over a heap
# holding torch, transformers and lightning that took ~0.9 s a test, half of the fast tier's time (cProfile of
# test_rules_shapes.py, 2026-12-07). What exists now lives as long as the worker does: frozen, out of the
# collector's sight (see also `shell`).
gc.freeze()


def global_state() -> dict:
    return {
        "anomaly": torch.is_anomaly_enabled(),
        "check_nan": torch.is_anomaly_check_nan_enabled(),
        "function_modes": torch._C._len_torch_function_stack(),
        "optimizer_pre_hooks": len(optimizer_module._global_optimizer_pre_hooks),
        "optimizer_post_hooks": len(optimizer_module._global_optimizer_post_hooks),
        "warning_filters": list(warnings.filters),
        "showwarning": warnings.showwarning,
        "excepthook": sys.excepthook,
        "anomaly_trace": torch.fx.traceback.format_stack,
        "zero_grad": (torch.optim.Optimizer.zero_grad, torch.nn.Module.zero_grad),
    }


@pytest.fixture(autouse=True)
def working_directory_is_restored():
    """A case's setup may chdir (the article loads 'model.pth' from the working directory): put back after each
    test, so that no later test of the same worker runs elsewhere."""
    here = os.getcwd()
    yield
    if os.getcwd() != here:
        os.chdir(here)


@pytest.fixture(autouse=True)
def state_is_restored():
    before = global_state()
    language = grad_magic.state._language
    yield
    # NB: put back even after a failing test, so one failure cannot turn every later card Chinese
    grad_magic.state.set_language(language)
    assert global_state() == before, "a test left global torch / warnings state changed"


_THAW = 25
_shells = [0]


@pytest.fixture
def shell():
    """An IPython shell with grad_magic loaded, a clean namespace and captured display output."""
    sh = SHELL
    # NB: reset()'s gc.collect() scans what is not frozen: without freezing, the ~280k objects the tests' lazy
    # imports (grad_magic's rules, IPython's traceback machinery) leave alive cost ~0.3 s at every test's reset.
    # What is alive after a collection is frozen, so the next reset scans only what one test made. A frozen
    # object that later dies in a cycle (a traceback kept in sys.last_value until the next error) is not
    # collected: every _THAW-th test thaws them all first, and its reset collects everything.
    _shells[0] += 1
    if _shells[0] % _THAW == 0:
        gc.unfreeze()
    sh.reset(new_session=True)
    gc.freeze()
    sh.colors = "nocolor" if hasattr(sh, "colors") else sh.colors
    sh.run_line_magic("load_ext", "grad_magic")
    publisher, sh.display_pub = sh.display_pub, CapturingDisplayPublisher()
    sh.display_pub.shell = sh
    configured = copy.deepcopy(sh.config.get("GradMagic"))
    try:
        yield sh
    finally:
        sh.display_pub = publisher
        sh.run_line_magic("unload_ext", "grad_magic")
        grad_magic.state.remember([])
        # NB: a `%config GradMagic.language = "zh"` of a test would be applied again at the next load_ext
        if configured is None:
            sh.config.pop("GradMagic", None)
        else:
            sh.config["GradMagic"] = configured


# NB: the fast tier (`pytest -m "not slow"`, under a minute, for work in progress) leaves out what runs a
# real kernel, server, browser or terminal, the reliability suites and the golden suite (test_cases.py,
# marked in its file); CI runs everything.
SLOW_FOLDERS = ("browser", "reliability", "gpu")
SLOW_MARKS = ("kernel", "browser")


def pytest_collection_modifyitems(config, items):
    for item in items:
        folder = item.path.parent.name
        if folder in SLOW_FOLDERS or any(item.get_closest_marker(m) for m in SLOW_MARKS):
            item.add_marker(pytest.mark.slow)


# -- Warnings the tests provoke on purpose --
# NB: a failing backward under %%gradcheck runs in anomaly mode, and torch then warns "Error detected in
# XBackward0. Traceback of forward call that caused the error:" with the whole Python stack under it,
# pytest's own frames included: some ninety lines a test, thousands in a run. grad_magic records the
# warning (rules read it) and passes it on to `warnings.showwarning`; here, at the end of that chain, the
# expected ones are counted instead of listed, and one line of the summary says how many. An "ignore"
# filter would not do: a filtered warning never reaches grad_magic's recorder, and the cards would change.
# A test that asserts on such a warning captures it itself (pytest.warns, recwarn), before this point.
import re  # noqa: E402
from collections import Counter  # noqa: E402

EXPECTED_WARNINGS = (
    (UserWarning, re.compile(r"Error detected in \w+\. (Traceback of forward call|No forward pass)"),
     "anomaly-mode reports of a failing backward (torch's 'Error detected in ...' warning)"),
    (UserWarning, re.compile(r"The \.grad attribute of a Tensor that is not a leaf Tensor is being accessed"),
     "non-leaf .grad reads (torch's warning that the non-leaf-grad rule explains)"),
)
_expected_warnings: Counter = Counter()


class _CountExpectedWarnings:
    """A `warnings.showwarning` that counts the expected warnings and passes every other one on."""

    def __init__(self, shown) -> None:
        self.shown = shown

    def __call__(self, message, category, filename, lineno, file=None, line=None) -> None:
        for expected_category, pattern, what in EXPECTED_WARNINGS:
            if issubclass(category, expected_category) and pattern.match(str(message)):
                _expected_warnings[what] += 1
                return
        self.shown(message, category, filename, lineno, file, line)


@pytest.fixture(autouse=True)
def expected_warnings_are_counted():
    shown = warnings.showwarning
    counter = warnings.showwarning = _CountExpectedWarnings(shown)
    try:
        yield
    finally:
        if warnings.showwarning is counter:  # NB: a test that replaced it has its own check to fail
            warnings.showwarning = shown


def pytest_terminal_summary(terminalreporter):
    for what, count in sorted(_expected_warnings.items()):
        terminalreporter.write_line(f"{count} {what}: provoked on purpose, counted, not listed")
