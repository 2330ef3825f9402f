"""The HTML card (text/html, issue 5) in a real browser.

In JupyterLab with the grad-magic extension disabled, the HTML card is what shows: its buttons' static
inline handlers must copy the fixed cell (JupyterLab has no classic `Jupyter.notebook` to insert into).
And with JavaScript off, the card must still read: title, explanation and fixed cell, styled.
"""
from __future__ import annotations

import pytest

from browser_support import screenshot_path
from notebook_page import NotebookPage

pytestmark = pytest.mark.browser

FIXED = ("%%gradcheck\nimport torch\nx = torch.tensor([2.0], requires_grad=True)\nloss = (x * 3).sum()\n"
         "loss.backward()\nprint('grad', x.grad.tolist())")


def test_html_card_copies_the_fixed_cell_in_jupyterlab(lab_server_html_only, page_for):
    from playwright.sync_api import expect

    nb = NotebookPage(page_for(lab_server_html_only), lab_server_html_only)
    page = nb.page
    nb.open()
    nb.run_all()
    card = page.locator(".jp-OutputArea-output .gm-card")
    expect(card).to_be_visible()
    assert page.locator(".jp-RenderedGradMagic").count() == 0, "the extension should be disabled"
    assert page.locator(".gm-card").count() == 1
    d = nb.diagnosis()
    expect(card.locator("h3")).to_have_text(d["title"])
    fixed = card.get_attribute("data-fixed-source")
    assert fixed == d["fix"]["source"] and fixed.rstrip("\n") == FIXED
    block = card.locator(".gm-fixcell")  # NB: each fixed cell has its own text, buttons and status
    assert block.get_attribute("data-target") == "this" and block.get_attribute("data-fixed-source") == fixed
    status = block.locator(".gm-status")

    card.locator(".gm-copy").click()
    expect(status).to_have_text(block.get_attribute("data-say-copied"))
    assert page.evaluate("() => navigator.clipboard.readText()") == fixed
    nb.cell(1).screenshot(path=str(screenshot_path("html_card_jupyterlab_copied.png")))

    # Insert: not the classic Notebook nor Colab, so it copies (and says so)
    page.evaluate("() => navigator.clipboard.writeText('')")
    status.evaluate("node => { node.textContent = ''; }")
    card.locator(".gm-insert").click()
    expect(status).to_have_text(block.get_attribute("data-say-copied"))
    assert page.evaluate("() => navigator.clipboard.readText()") == fixed
    assert len(nb.state()["sources"]) == 3, "the HTML card never edits a JupyterLab notebook"


def _card_html() -> str:
    from grad_magic.edits import make_fix
    from grad_magic.model import Diagnosis, SourceLine, TensorFact, TextEdit
    from grad_magic.render import html

    source = ("%%gradcheck\nimport torch\nw = torch.tensor([1.0])\nx = torch.tensor([2.0], requires_grad=True)\n"
              "with torch.no_grad():\n    y = w * x\ny.sum().backward()\n")
    start = source.index("with torch.no_grad():")
    end = source.index("y.sum()")
    fix = make_fix(source, [TextEdit(start, end, "y = w * x\n")], "compute y outside torch.no_grad()")
    assert fix is not None
    d = Diagnosis(
        kind="backward_under_no_grad", severity="error", title="y was computed under torch.no_grad()",
        summary="backward() needs a graph, and no_grad() records none.",
        what="y.sum().backward() failed: y has no grad_fn.",
        why="Operations under torch.no_grad() are not recorded for autograd.",
        where="line 6 of the cell", source=source, lines=(SourceLine(6, "    y = w * x"),),
        tensors=(TensorFact("y", shape="(1,)", dtype="float32", device="cpu", requires_grad=False),),
        error_type="RuntimeError", error_message="element 0 of tensors does not require grad",
        fix=fix, versions=(("torch", "2.13.0"),))
    return ("<!doctype html><html><head><meta charset='utf-8'><title>grad_magic card</title></head>"
            f"<body>{html.render(d)}</body></html>"), d


def test_html_card_reads_without_javascript(page_for, tmp_path):
    from playwright.sync_api import expect

    text, d = _card_html()
    path = tmp_path / "card.html"
    path.write_text(text, encoding="utf-8")
    page = page_for(None, java_script_enabled=False)
    page.goto(path.as_uri())
    card = page.locator(".gm-card")
    expect(card).to_be_visible()
    expect(card).to_have_css("border-left-width", "4px")  # NB: the inline <style> applies without JS
    expect(card.get_by_text(d.title, exact=True)).to_be_visible()
    expect(card.locator(".gm-insert")).to_be_visible()
    # NB: first the title, the cause, the lines, the diff and the buttons; the rest is collapsed (native
    # <details>: no script needed to open it)
    for line in (d.what, d.why):
        expect(card.get_by_text(line, exact=True)).to_be_hidden()
    card.locator(".gm-more > summary").click()
    for line in (d.what, d.why):
        expect(card.get_by_text(line, exact=True)).to_be_visible()
    fixed = card.locator(".gm-fixed")
    expect(fixed).to_be_hidden()
    card.locator(".gm-fixed-cell > summary").click()
    expect(fixed).to_be_visible()
    assert fixed.inner_text().rstrip("\n") == d.fix.source.rstrip("\n")
    card.screenshot(path=str(screenshot_path("html_card_no_javascript.png")))
