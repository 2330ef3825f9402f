"""Stop the cell on a live card, in JupyterLab 4 with the grad-magic extension (issue 20).

A `%%gradcheck` cell trains a tiny model for 100000 steps (10 ms each) and never zeroes its gradients:
the live card must show while the cell still runs, with Stop the cell on it. A click interrupts the
kernel as the toolbar's stop button does: the cell ends with the user's `KeyboardInterrupt`, the button
says "Interrupt sent." and goes away with the run, and nothing is left behind: a follow-up cell sees
torch's mode stacks, the optimizer hook tables and the interpreter's hooks as they were before, and trains.

NB: JupyterLab only. Notebook 7 renders outputs with the same cell widgets and the same extension code
(the unit tests cover the button on a real notebook widget); a second server would double the cost.
"""
from __future__ import annotations

import json

import nbformat
import pytest

from browser_support import screenshot_path
from notebook_page import MIME, NotebookPage

pytestmark = pytest.mark.browser

PATH = "live_stop.ipynb"
SETUP, TRAIN, AFTER = 0, 1, 2  # cell indexes

SETUP_SOURCE = """\
%load_ext grad_magic
import json, signal, sys, time, warnings
import torch
import torch.optim.optimizer as optimizer_module
from torch.nn.modules import module as module_module


def state():
    \"\"\"What a %%gradcheck run may push or patch, and must leave as it found it.\"\"\"
    shell = get_ipython()
    return {
        "function_modes": torch._C._len_torch_function_stack(),
        "dispatch_modes": torch._C._len_torch_dispatch_stack(),
        "optimizer_pre_hooks": sorted(optimizer_module._global_optimizer_pre_hooks),
        "optimizer_post_hooks": sorted(optimizer_module._global_optimizer_post_hooks),
        "module_forward_hooks": len(module_module._global_forward_hooks),
        "module_forward_pre_hooks": len(module_module._global_forward_pre_hooks),
        "grad_enabled": torch.is_grad_enabled(),
        "anomaly": torch.is_anomaly_enabled(),
        "trace": repr(sys.gettrace()),
        "profile": repr(sys.getprofile()),
        "sigint": repr(signal.getsignal(signal.SIGINT)),
        "showwarning": repr(warnings.showwarning),
        "warning_filters": [repr(f) for f in warnings.filters],
        "showtraceback_patched": "showtraceback" in vars(shell),
    }


# NB: what torch does once per process, as a plain cell would (its first optimizer step imports sympy,
# which adds a warning filter)
torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1).step()
before = state()"""

# NB: the gradients are never zeroed: grads-not-zeroed, a silent bug, found at the second step
TRAIN_SOURCE = """\
%%gradcheck
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(8, 4), torch.randn(8, 1)
for step in range(100000):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    time.sleep(0.01)"""

AFTER_SOURCE = """\
print(json.dumps({"before": before, "after": state(), "step": step,
                  "opt_hooks": [len(opt._optimizer_step_pre_hooks), len(opt._optimizer_step_post_hooks)]}))
opt.zero_grad()
((model(x) - y) ** 2).mean().backward()
opt.step()
print("trained once more")"""

LIVE_CARD = f"""s.outputs[{TRAIN}].some(o => {{
  const d = o.data && o.data['{MIME}'];
  const card = typeof d === 'string' ? JSON.parse(d) : d;
  return !!(card && card.live);
}})"""


def write_notebook(nb: NotebookPage) -> None:
    cells = [nbformat.v4.new_code_cell(source) for source in (SETUP_SOURCE, TRAIN_SOURCE, AFTER_SOURCE)]
    # NB: without a kernelspec JupyterLab asks which kernel to start, and waits
    kernelspec = {"display_name": "Python 3", "language": "python", "name": "python3"}
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": kernelspec})
    nbformat.write(notebook, str(nb.server.root / PATH))


def run_cell(nb: NotebookPage, index: int) -> None:
    """Run one cell with the notebook's own command, without waiting for it."""
    nb.page.evaluate("""([path, index]) => {
      const notebook = window.gmTest.panel(path).content;
      notebook.activeCellIndex = index;
      notebook.deselectAll();
      void window.jupyterapp.commands.execute('notebook:run-cell');
    }""", [nb.path, index])


def live_card(nb: NotebookPage) -> dict:
    for output in nb.state()["outputs"][TRAIN]:
        data = output.get("data", {}).get(MIME)
        card = json.loads(data) if isinstance(data, str) else data
        if card and card.get("live"):
            return card
    raise AssertionError(f"no live card in {nb.state()['outputs'][TRAIN]}")


def errors(outputs: list) -> list:
    return [o for o in outputs if o.get("output_type") == "error"]


def test_jupyterlab_stop_on_a_live_card_interrupts_the_cell_and_leaves_nothing_behind(lab_server, page_for):
    from playwright.sync_api import expect

    nb = NotebookPage(page_for(lab_server), lab_server, PATH)
    write_notebook(nb)
    nb.open()
    run_cell(nb, SETUP)
    state = nb.wait_for(f"s.counts[{SETUP}] !== null && s.kernel === 'idle'")
    assert errors(state["outputs"][SETUP]) == []

    # The live card shows while the cell runs, with Stop the cell on it
    run_cell(nb, TRAIN)
    nb.wait_for(LIVE_CARD)
    d = live_card(nb)
    assert d["kind"] == "grads-not-zeroed" and d["live"]["step"] < 10, d["live"]
    stop = nb.cell(TRAIN).locator(".jp-RenderedGradMagic .gm-card .gm-stop")
    expect(stop).to_be_visible()
    expect(stop).to_have_text(d["labels"]["stop"])
    assert nb.state()["counts"][TRAIN] is None, "the cell is still running"
    nb.cell(TRAIN).screenshot(path=str(screenshot_path("jupyterlab_live_card_stop.png")))

    # Stop: the kernel is interrupted, the cell ends with the user's KeyboardInterrupt
    stop.click()
    status = nb.cell(TRAIN).locator(".gm-live .gm-status")
    expect(status).to_have_text(d["labels"]["stop_sent"])
    state = nb.wait_for(f"s.counts[{TRAIN}] !== null && s.kernel === 'idle'", timeout=60_000)
    assert [e["ename"] for e in errors(state["outputs"][TRAIN])] == ["KeyboardInterrupt"]
    expect(stop).to_be_hidden()  # NB: the button goes with the run; what it said stays
    expect(status).to_have_text(d["labels"]["stop_sent"])
    nb.cell(TRAIN).screenshot(path=str(screenshot_path("jupyterlab_live_card_stopped.png")))

    # Nothing left behind: the next cell finds the state of before, and trains
    run_cell(nb, AFTER)
    state = nb.wait_for(f"s.counts[{AFTER}] !== null && s.kernel === 'idle'")
    assert errors(state["outputs"][AFTER]) == [], state["outputs"][AFTER]
    printed = "".join(o.get("text", "") for o in state["outputs"][AFTER] if o["output_type"] == "stream")
    report = json.loads(printed.splitlines()[0])
    assert report["after"] == report["before"]
    assert report["opt_hooks"] == [0, 0]
    assert report["step"] < 99_999, "the loop was stopped, not finished"
    assert "trained once more" in printed
