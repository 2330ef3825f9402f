"""Shared fixtures. After every test the global torch / warnings state must be exactly as before."""
from __future__ import annotations

import sys
import warnings

import pytest
import torch
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
def state_is_restored():
    before = global_state()
    language = grad_magic.state._language
    yield
    # NB: put back even after a failing test, so one failure cannot turn every later card Chinese
    grad_magic.state.set_language(language)
    assert global_state() == before, "a test left global torch / warnings state changed"


@pytest.fixture
def shell():
    """An IPython shell with grad_magic loaded, a clean namespace and captured display output."""
    sh = SHELL
    sh.reset(new_session=True)
    sh.colors = "nocolor" if hasattr(sh, "colors") else sh.colors
    sh.run_line_magic("load_ext", "grad_magic")
    publisher, sh.display_pub = sh.display_pub, CapturingDisplayPublisher()
    sh.display_pub.shell = sh
    try:
        yield sh
    finally:
        sh.display_pub = publisher
        sh.run_line_magic("unload_ext", "grad_magic")
        grad_magic.state.remember([])


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
