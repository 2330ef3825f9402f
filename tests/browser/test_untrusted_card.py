"""A card saved in a notebook from someone else arms no button; a live card in the same session does.

The saved card is forged as an attacker would: its `fix.source` hides code far to the right of a harmless
line, its stored `fix.diff` shows a harmless change. The notebook is unsigned (not trusted), as a download
is. In JupyterLab with the extension, the card shows the diff of the text it would write (the hidden code
in view) and offers no Insert / Replace / Apply / Copy; with the extension disabled, the sanitised HTML
card keeps its buttons hidden. Running the cell then gives a live card whose buttons are there.
"""
from __future__ import annotations

import json

import pytest

from browser_support import HERE, NOTEBOOK
from notebook_page import MIME, NotebookPage

pytestmark = pytest.mark.browser

UNTRUSTED = "untrusted_card.ipynb"
HIDDEN = "__import__('os').system('echo pwned')"


def forged_card() -> dict:
    """A card of the notebook's failing cell whose fixed cell carries HIDDEN, and whose stored diff does not."""
    from grad_magic.model import ERROR, Diagnosis, Fix, SourceLine
    from grad_magic.render import html, json as json_card

    cells = json.loads((HERE / NOTEBOOK).read_text())["cells"]
    source = "".join(cells[1]["source"])
    line = "x = torch.tensor([2.0], requires_grad=True)"
    fixed = source.replace(line, line + " " * 400 + "; " + HIDDEN)
    d = Diagnosis("browser_test", ERROR, "NotReadyError was raised", "A card from someone else.", "It raised.",
                  "On purpose.", "line 5", source=source, lines=(SourceLine(5, "raise NotReadyError"),),
                  fix=Fix("call backward() instead", fixed, ()), language="en")
    data = json_card.render(d)
    data["fix"]["diff"] = [{"sign": "@", "text": "@@ -5 +5 @@"}, {"sign": "-", "text": "raise NotReadyError"},
                           {"sign": "+", "text": "loss.backward()"}]
    data["fix"]["cells"][0]["diff"] = data["fix"]["diff"]
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/plain": "grad_magic card", "text/html": html.render(d), MIME: data}}


def run_for_a_live_card(nb: NotebookPage) -> None:
    """Run every cell; wait until the failing cell shows the card its run made (the forged one gone)."""
    nb.page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    nb.wait_for("s.outputs[1].length > 0 && !JSON.stringify(s.outputs[1]).includes('pwned') "
                "&& s.kernel === 'idle'")


def write_untrusted(root) -> None:
    nb = json.loads((HERE / NOTEBOOK).read_text())
    nb["cells"][1]["outputs"] = [forged_card()]
    nb["cells"][1]["execution_count"] = 2
    nb["metadata"].pop("signature", None)  # NB: unsigned: the server marks every code cell untrusted
    (root / UNTRUSTED).write_text(json.dumps(nb))


def test_lab_untrusted_card_offers_no_button_and_a_live_card_does(lab_server, page_for):
    from playwright.sync_api import expect

    write_untrusted(lab_server.root)
    nb = NotebookPage(page_for(lab_server), lab_server, UNTRUSTED)
    nb.open()
    card = nb.cell(1).locator(".jp-RenderedGradMagic .gm-card")
    expect(card).to_be_visible()
    assert card.locator("button").count() == 0
    expect(card.locator(".gm-unarmed")).to_be_visible()
    diff = card.locator(".gm-diff").inner_text()
    assert HIDDEN in diff and "loss.backward()" not in diff, diff  # the text it would write, not the stored diff
    hidden = card.locator(".gm-diff .gm-add")
    box, pre = hidden.bounding_box(), card.locator(".gm-diff").bounding_box()
    assert box["x"] + box["width"] <= pre["x"] + pre["width"] + 1, "the added line runs out of view"

    run_for_a_live_card(nb)
    live = nb.cell(1).locator(".jp-RenderedGradMagic .gm-card")
    for selector in (".gm-insert", ".gm-replace", ".gm-copy"):
        expect(live.locator(selector)).to_be_visible()
    assert nb.diagnosis()["fix"]["source"].count(HIDDEN) == 0


def test_html_card_of_an_untrusted_notebook_hides_its_inert_buttons(lab_server_html_only, page_for):
    from playwright.sync_api import expect

    write_untrusted(lab_server_html_only.root)
    nb = NotebookPage(page_for(lab_server_html_only), lab_server_html_only, UNTRUSTED)
    nb.open()
    card = nb.cell(1).locator(".gm-card")
    expect(card).to_be_visible()
    assert card.locator(".gm-insert").count() == 1  # NB: there, sanitised (no handler) and hidden
    expect(card.locator(".gm-insert")).to_be_hidden()
    assert card.locator(".gm-insert").get_attribute("onclick") is None

    run_for_a_live_card(nb)
    expect(nb.cell(1).locator(".gm-card .gm-insert")).to_be_visible()
