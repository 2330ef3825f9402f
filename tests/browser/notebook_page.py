"""A notebook open in JupyterLab 4 or Notebook 7, seen through the app the page exposes (`window.jupyterapp`).

The tests click and type like a person; this reads back what the notebook model holds (cell sources,
the active cell, outputs, the kernel's status) so assertions are on the model, not on pixels.
"""
from __future__ import annotations

import json
from typing import Any, Dict

from browser_support import NOTEBOOK, JupyterServer

MIME = "application/vnd.grad-magic.diagnosis+json"
KERNEL_TIMEOUT = 180_000  # ms: a cold kernel importing torch on a 2-core machine

# NB: installed before the page's own scripts; reads the notebook's shared model, changes nothing.
_HELPERS = """
window.gmTest = {
  panel(path) {
    const app = window.jupyterapp;
    if (!app || !app.shell) { return null; }
    for (const widget of app.shell.widgets('main')) {
      if (widget.context && widget.context.path === path && widget.content && widget.content.model) {
        return widget;
      }
    }
    return null;
  },
  async ready(path) {
    const panel = this.panel(path);
    await panel.context.ready;
    await panel.sessionContext.ready;
  },
  state(path) {
    const panel = this.panel(path);
    const cells = panel.content.model.sharedModel.cells;
    const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
    return {
      sources: cells.map(c => c.getSource()),
      types: cells.map(c => c.cell_type),
      counts: cells.map(c => (c.cell_type === 'code' ? c.execution_count : null)),
      outputs: cells.map(c => (c.cell_type === 'code' ? c.outputs : [])),
      active: panel.content.activeCellIndex,
      kernel: kernel ? kernel.status : null
    };
  }
};
"""


class NotebookPage:
    def __init__(self, page: Any, server: JupyterServer, path: str = NOTEBOOK) -> None:
        self.page = page
        self.server = server
        self.path = path  # one of browser_support.NOTEBOOKS

    def open(self) -> None:
        """Open the test notebook and wait until its kernel is up and idle."""
        self.page.add_init_script(_HELPERS)
        self.page.goto(self.server.notebook_url(self.path))
        self.page.wait_for_function("path => window.gmTest.panel(path) !== null", arg=self.path,
                                    timeout=KERNEL_TIMEOUT)
        self.page.evaluate("path => window.gmTest.ready(path)", self.path)
        self.wait_for("s.kernel === 'idle'")

    def state(self) -> Dict[str, Any]:
        return self.page.evaluate("path => window.gmTest.state(path)", self.path)

    def wait_for(self, condition: str, timeout: int = KERNEL_TIMEOUT) -> Dict[str, Any]:
        """Wait until `condition` (JavaScript over the state `s`) holds; the state then."""
        self.page.wait_for_function(f"path => {{ const s = window.gmTest.state(path); return {condition}; }}",
                                    arg=self.path, timeout=timeout)
        return self.state()

    def run_all(self, failing: int = 1) -> Dict[str, Any]:
        """Run every cell (cell `failing` fails: the first that has one fails) and wait for the kernel."""
        self.page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        return self.wait_for(f"s.counts[{failing}] !== null && s.outputs[{failing}].length > 0 "
                             "&& s.kernel === 'idle'")

    def diagnosis(self, index: int = 1) -> Dict[str, Any]:
        """The card's JSON in the outputs of cell `index`."""
        for output in self.state()["outputs"][index]:
            if MIME in output.get("data", {}):
                data = output["data"][MIME]
                return json.loads(data) if isinstance(data, str) else data
        raise AssertionError(f"no {MIME} output in cell {index}: {self.state()['outputs'][index]}")

    def cell(self, index: int) -> Any:
        return self.page.locator(".jp-Notebook .jp-Cell").nth(index)
