"""The grad-magic JupyterLab extension in a real browser: JupyterLab 4 and Notebook 7.

The test notebook registers a test-only rule with a fix, runs a failing `%%gradcheck` cell, and the
card's buttons must do what they say: Insert puts exactly the fixed cell below (selected, not run; it
then runs without error), Replace swaps the cell's source, and the editor's undo brings it back.
"""
from __future__ import annotations

import json

import pytest

from browser_support import HERE, NOTEBOOK, screenshot_path
from notebook_page import NotebookPage

pytestmark = pytest.mark.browser

FIXED = ("%%gradcheck\nimport torch\nx = torch.tensor([2.0], requires_grad=True)\nloss = (x * 3).sum()\n"
         "loss.backward()\nprint('grad', x.grad.tolist())")


def original_source() -> str:
    cells = json.loads((HERE / NOTEBOOK).read_text())["cells"]
    return "".join(cells[1]["source"])


def errors(outputs: list) -> list:
    return [o for o in outputs if o.get("output_type") == "error"]


def check_one_click_fix(nb: NotebookPage, name: str) -> None:
    from playwright.sync_api import expect

    page = nb.page
    nb.open()
    assert page.evaluate("() => window.jupyterapp.isPluginActivated('grad-magic:renderer')"), \
        "the grad-magic plugin did not activate"
    state = nb.run_all()
    assert [e["ename"] for e in errors(state["outputs"][1])] == ["NotReadyError"], \
        "the cell must still fail with the user's own error"

    # The card: rendered once, by our renderer, not also as the HTML card
    card = page.locator(".jp-RenderedGradMagic .gm-card")
    expect(card).to_be_visible()
    assert page.locator(".gm-card").count() == 1
    d = nb.diagnosis()
    assert d["kind"] == "browser_test" and d["fix"]["source"].rstrip("\n") == FIXED
    expect(card.locator("h3")).to_have_text(d["title"])
    expect(card.locator(".gm-fixed")).to_have_text(d["fix"]["source"].rstrip("\n"))
    nb.cell(1).screenshot(path=str(screenshot_path(f"{name}_card.png")))

    # Insert fixed cell below: exactly fix.source, right below, selected, not run
    card.locator(".gm-insert").click()
    state = nb.wait_for("s.sources.length === 4")
    assert state["sources"][2] == d["fix"]["source"]
    assert state["sources"][:2] == [state["sources"][0], original_source()]
    assert state["types"] == ["code", "code", "code", "markdown"]
    assert state["active"] == 2 and state["counts"][2] is None and state["outputs"][2] == []
    expect(card.locator(".gm-status")).to_have_text(d["labels"]["inserted"])

    # ... and it runs without error (the notebook has the keyboard focus on it: Shift+Enter)
    page.keyboard.press("Shift+Enter")
    state = nb.wait_for("s.counts[2] !== null && s.kernel === 'idle'")
    assert errors(state["outputs"][2]) == []
    printed = "".join(o.get("text", "") for o in state["outputs"][2] if o["output_type"] == "stream")
    assert "grad [3.0]" in printed
    page.screenshot(path=str(screenshot_path(f"{name}_inserted_and_run.png")))

    # Replace this cell, then the editor's undo (Ctrl+Z) restores it
    card.locator(".gm-replace").click()
    state = nb.wait_for("s.sources[1] !== s.sources[0] && s.sources[1].startsWith('%%gradcheck') "
                        "&& s.sources[1].includes('loss.backward()')")
    assert state["sources"][1] == d["fix"]["source"] and len(state["sources"]) == 4
    expect(card.locator(".gm-status")).to_have_text(d["labels"]["replaced"])
    nb.cell(1).screenshot(path=str(screenshot_path(f"{name}_replaced.png")))
    nb.cell(1).locator(".cm-content").click()
    page.keyboard.press("Control+z")
    state = nb.wait_for("s.sources[1].includes('raise NotReadyError')", timeout=20_000)
    assert state["sources"][1] == original_source()
    nb.cell(1).locator(".jp-Cell-inputWrapper").screenshot(path=str(screenshot_path(f"{name}_undone.png")))


def test_jupyterlab_card_inserts_and_replaces_the_fixed_cell(lab_server, page_for):
    check_one_click_fix(NotebookPage(page_for(lab_server), lab_server), "jupyterlab")


def test_notebook7_card_inserts_and_replaces_the_fixed_cell(notebook_server, page_for):
    check_one_click_fix(NotebookPage(page_for(notebook_server), notebook_server), "notebook7")
