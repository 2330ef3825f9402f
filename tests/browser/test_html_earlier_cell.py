"""The HTML card's Insert for a fix of an earlier cell, in classic Notebook and Colab (issue 14).

The model class runs as one cell and its `forward` makes a tensor without `device=`; the `%%gradcheck`
cell trains the model on the `meta` device (a stand-in for CUDA), so torch raises a real device mismatch
in the earlier cell. The HTML card's block for that cell says "Insert fixed copy of In [k] below": in the
classic Notebook it inserts the corrected definitions right below the failing cell (the cell that shows
the card), in Colab it calls `addCell(code, 'code')` as Colab's own outputs do. The inserted text is the
JSON card's `fix.cells` text, and running it, then the failing cell again, runs clean. Neither app is
here: stand-ins with their APIs' signatures (classic: `Jupyter.notebook`; Colab: `google.colab.notebook`).
"""
from __future__ import annotations

import pytest

from browser_support import screenshot_path
from gm_shell import displayed, run

pytestmark = pytest.mark.browser

MIME = "application/vnd.grad-magic.diagnosis+json"
SETUP = 'import torch\nimport torch.nn as nn\ndevice = torch.device("meta")  # stands in for "cuda"\n'
MODEL = ("class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n        noise = torch.randn(x.shape)\n"
         "        return self.fc(x + noise)\n")
# NB: the common layout: the model is made in a cell of its own, between the class and the training
MAKE = "model = Net().to(device)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
TRAIN = ("%%gradcheck --no-nan-check\n"
         "x = torch.randn(3, 4, device=device)\nfor step in range(2):\n    loss = model(x).sum()\n"
         "    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n")

# NB: run before the card's page. Classic Notebook: cells are DOM nodes in `element[0]`, the card's Insert
# finds its own cell among them and inserts below it. Colab: addCell returns a promise the test settles.
STAND_INS = """
window.inserted = [];
window.Jupyter = {notebook: {
  get_cells: function () {
    return Array.prototype.map.call(document.querySelectorAll('#notebook > .cell'), function (e) {
      return {element: [e]}; });
  },
  insert_cell_below: function (type, index) {
    var cell = {type: type, index: index, text: null, set_text: function (t) { this.text = t; }};
    window.inserted.push(cell);
    return cell;
  },
  find_cell_index: function (cell) { return cell.index + 1; },
  select: function (index) { window.selected = index; }
}};
window.colabCalls = [];
window.google = {colab: {notebook: {addCell: function (code, type) {
  window.colabCalls.push({code: code, type: type});
  return new Promise(function (resolve) { window.colabSettle = resolve; });
}}}};
"""


@pytest.fixture
def earlier_card(shell, tmp_path):
    """The failing run's cards, and `open_page(app)`: the HTML card in a page with the app's stand-in."""
    run(shell, SETUP)
    model_count = shell.execution_count
    run(shell, MODEL)
    run(shell, MAKE)
    run(shell, TRAIN)
    bundle = next(b for b in displayed(shell) if MIME in b)
    d = bundle[MIME]
    [fixed] = d["fix"]["cells"]
    assert fixed["target"] == {"execution_count": model_count}, d["fix"]
    assert fixed["original"] == MODEL.rstrip("\n") and "device=" in fixed["source"]
    assert fixed["rerun"] == [model_count + 1]  # NB: the cell that made the model from the class
    # classic Notebook's page: In [k], the failing cell with the card in its output, a cell after it
    page_html = ("<!doctype html><html><head><meta charset='utf-8'></head><body><div id='notebook'>"
                 "<div class='cell'><pre>class Net ...</pre></div>"
                 f"<div class='cell'><pre>%%gradcheck ...</pre><div class='output'>{bundle['text/html']}</div></div>"
                 "<div class='cell'><pre>print('after')</pre></div></div></body></html>")
    path = tmp_path / "earlier_card.html"
    path.write_text(page_html, encoding="utf-8")

    def open_page(page_for, app: str):
        page = page_for(None)
        page.add_init_script(STAND_INS + ("window.google = undefined;" if app == "classic" else
                                          "window.Jupyter = undefined;"))
        page.goto(path.as_uri())
        return page

    return d, fixed, model_count, open_page


def check_runs_clean(shell, inserted: str) -> None:
    """The inserted cell runs, then the cell the card says to run next (the model made anew from the fixed
    class), and then the failing cell runs clean: no error, no card."""
    before = len(displayed(shell))
    assert run(shell, inserted).success
    assert run(shell, MAKE).success
    result = run(shell, TRAIN)
    assert result.success, result.error_in_exec
    assert not any(MIME in b for b in displayed(shell)[before:]), "no card on a clean run"


def test_classic_notebook_inserts_the_fixed_earlier_cell_below_the_failing_cell(earlier_card, page_for, shell):
    from playwright.sync_api import expect

    d, fixed, k, open_page = earlier_card
    page = open_page(page_for, "classic")
    block = page.locator(f".gm-fixcell[data-target='{k}']")
    assert page.locator(".gm-fixcell").count() == 1
    assert block.get_attribute("data-fixed-source") == fixed["source"]
    insert = block.locator(".gm-insert")
    expect(insert).to_have_text(f"Insert fixed copy of In [{k}] below")
    expect(block.locator(".gm-place")).to_have_text(f"In [{k}]")
    insert.click()
    # NB: below the cell whose output holds the card (index 1), selected; not run
    assert page.evaluate("window.inserted.map(c => [c.type, c.index, c.text])") == [["code", 1, fixed["source"]]]
    assert page.evaluate("window.selected") == 2
    expect(block.locator(".gm-status")).to_have_text(block.get_attribute("data-say-inserted"))
    assert "re-run" in block.get_attribute("data-say-inserted")
    assert f"then In [{k + 1}], then re-run" in block.get_attribute("data-say-inserted")
    page.locator(".gm-card").screenshot(path=str(screenshot_path("html_card_classic_earlier_cell_inserted.png")))
    check_runs_clean(shell, page.evaluate("window.inserted[0].text"))


def test_colab_adds_the_fixed_earlier_cell(earlier_card, page_for, shell):
    from playwright.sync_api import expect

    d, fixed, k, open_page = earlier_card
    page = open_page(page_for, "colab")
    block = page.locator(f".gm-fixcell[data-target='{k}']")
    block.locator(".gm-insert").click()
    assert page.evaluate("window.colabCalls") == [{"code": fixed["source"], "type": "code"}]
    status = block.locator(".gm-status")
    expect(status).to_have_text("")  # NB: said once Colab's promise has resolved
    page.evaluate("window.colabSettle()")
    expect(status).to_have_text(block.get_attribute("data-say-inserted"))
    check_runs_clean(shell, page.evaluate("window.colabCalls[0].code"))
