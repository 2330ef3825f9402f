"""A fix of an earlier cell, in JupyterLab 4 and Notebook 7 with the grad-magic extension (issue 14).

`earlier_cell_fix.ipynb`, the common layout of a notebook: the model class lives in In [3] and its `forward`
makes a tensor without `device=`; In [4] builds the model on the `meta` device (a stand-in for CUDA on a
CPU-only machine); the `%%gradcheck` cell (In [5]) trains it, so torch raises a real device mismatch inside
`Net.forward`. The card must name In [3], and its buttons must do what they say: Apply to In [3] puts
exactly the fixed text of `fix.cells` into that cell and runs nothing; Re-run, a click of its own, names and
runs In [3], then In [4] (the model made from the old class would fail again: issue 31), then the training
cell, which runs clean. When In [3] was edited after it ran, Apply replaces nothing.
"""
from __future__ import annotations

import json

import pytest

from browser_support import HERE, screenshot_path
from notebook_page import NotebookPage

pytestmark = pytest.mark.browser

PATH = "earlier_cell_fix.ipynb"
MODEL, MAKE, TRAIN = 2, 3, 4  # cell indexes: In [3], In [4] and In [5] after Run All


def saved_sources() -> list:
    return ["".join(c["source"]) for c in json.loads((HERE / PATH).read_text())["cells"]]


def errors(outputs: list) -> list:
    return [o for o in outputs if o.get("output_type") == "error"]


def run_to_the_card(nb: NotebookPage):
    """Open the notebook, Run All, and check the card names In [3] and fixes only that cell."""
    from playwright.sync_api import expect

    nb.open()
    state = nb.run_all(failing=TRAIN)
    assert state["counts"] == [1, 2, 3, 4, 5]
    assert [e["ename"] for e in errors(state["outputs"][TRAIN])] == ["RuntimeError"]
    d = nb.diagnosis(TRAIN)
    assert d["schema_version"] == 2 and d["kind"] == "device-mismatch" and d["cell"] == 5
    assert {(line["cell"], line["function"]) for line in d["lines"] if line["elsewhere"]} == {(3, "Net.forward")}
    [fixed] = d["fix"]["cells"]
    assert fixed["target"] == {"execution_count": 3} and d["fix"]["source"] is None
    assert fixed["rerun"] == [4]  # NB: In [4] made the model from In [3]'s class
    assert fixed["original"] == saved_sources()[MODEL]
    assert "torch.randn(x.shape, device=" in fixed["source"]
    card = nb.page.locator(".jp-RenderedGradMagic .gm-card")
    expect(card).to_be_visible()
    expect(card.locator(".gm-place").first).to_have_text("In [3] · Net.forward")
    expect(card.locator(".gm-fixcell")).to_have_count(1)
    expect(card.locator(".gm-fixcell .gm-fixed")).to_have_text(fixed["source"])
    expect(card.locator(".gm-apply")).to_have_text("Apply to In [3]")
    expect(card.locator(".gm-rerun")).to_have_count(0)  # NB: offered only once the fix is in
    return card, d, fixed


def check_apply_and_rerun(nb: NotebookPage, name: str) -> None:
    from playwright.sync_api import expect

    card, d, fixed = run_to_the_card(nb)
    before = nb.state()
    nb.cell(TRAIN).screenshot(path=str(screenshot_path(f"{name}_earlier_cell_card.png")))

    # Apply to In [3]: exactly fix.cells[0].source in In [3], nothing else changed, nothing run
    card.locator(".gm-apply").click()
    state = nb.wait_for(f"s.sources[{MODEL}].includes('device=')", timeout=20_000)
    assert state["sources"][MODEL] == fixed["source"]
    assert state["sources"][:MODEL] == before["sources"][:MODEL]
    assert state["sources"][MODEL + 1:] == before["sources"][MODEL + 1:]
    assert state["counts"] == [1, 2, 3, 4, 5], "Apply must run nothing"
    assert state["outputs"][TRAIN] == before["outputs"][TRAIN]
    rerun = card.locator(".gm-rerun")
    expect(rerun).to_have_text("Re-run In [3], In [4] and this cell")
    nb.page.wait_for_timeout(1000)
    assert nb.state()["counts"] == [1, 2, 3, 4, 5], "nothing runs without a click"
    nb.cell(TRAIN).screenshot(path=str(screenshot_path(f"{name}_earlier_cell_applied.png")))

    # Re-run In [3], In [4] and this cell: all three run, in that order, and the training cell is clean
    rerun.click()
    state = nb.wait_for(f"s.counts[{TRAIN}] === 8 && s.kernel === 'idle'")
    assert state["counts"] == [1, 2, 6, 7, 8]
    assert errors(state["outputs"][MODEL]) == [] and errors(state["outputs"][TRAIN]) == []
    printed = "".join(o.get("text", "") for o in state["outputs"][TRAIN] if o["output_type"] == "stream")
    assert "trained 2 steps" in printed
    assert not any("application/vnd.grad-magic.diagnosis+json" in o.get("data", {})
                   for o in state["outputs"][TRAIN]), "no card on a clean run"
    assert state["sources"][MODEL] == fixed["source"]
    nb.page.screenshot(path=str(screenshot_path(f"{name}_earlier_cell_rerun.png")))


def test_jupyterlab_applies_the_fix_to_the_earlier_cell_and_reruns_clean(lab_server, page_for):
    check_apply_and_rerun(NotebookPage(page_for(lab_server), lab_server, PATH), "jupyterlab")


def test_notebook7_applies_the_fix_to_the_earlier_cell_and_reruns_clean(notebook_server, page_for):
    check_apply_and_rerun(NotebookPage(page_for(notebook_server), notebook_server, PATH), "notebook7")


def test_jupyterlab_leaves_an_earlier_cell_edited_since_it_ran(lab_server, page_for):
    from playwright.sync_api import expect

    nb = NotebookPage(page_for(lab_server), lab_server, PATH)
    card, d, fixed = run_to_the_card(nb)

    # The user edits In [3] after it ran (typing in its editor), then clicks Apply on the card
    nb.cell(MODEL).locator(".cm-content").click()
    nb.page.keyboard.press("Control+End")
    nb.page.keyboard.type("\n# my own change")
    state = nb.wait_for(f"s.sources[{MODEL}].endsWith('# my own change')", timeout=20_000)
    edited = state["sources"][MODEL]
    nb.page.keyboard.press("Escape")
    card.locator(".gm-apply").click()
    status = card.locator(".gm-fixcell .gm-status")
    expect(status).to_contain_text("has changed since it ran")
    nb.page.wait_for_timeout(500)
    state = nb.state()
    assert state["sources"][MODEL] == edited, "an edited cell is never replaced"
    assert state["counts"] == [1, 2, 3, 4, 5]
    expect(card.locator(".gm-rerun")).to_have_count(0)
    expect(card.locator(".gm-fixcell .gm-copy")).to_have_class("gm-button gm-copy gm-offer")

    # ... and Copy gives the fixed text to paste by hand
    card.locator(".gm-fixcell .gm-copy").click()
    expect(status).to_have_text(d["labels"]["copied"])
    assert nb.page.evaluate("() => navigator.clipboard.readText()") == fixed["source"]
    nb.cell(TRAIN).screenshot(path=str(screenshot_path("jupyterlab_earlier_cell_changed.png")))
