"""The HTML card's Insert button in Colab, against a stand-in for Colab's API in a real browser.

Colab's own outputs call `google.colab.notebook.addCell(code, 'code')` and await the promise it returns.
The card must call it the same way, say "inserted" only once the promise has resolved, and copy the cell
instead (and say "copied") when it rejects or throws. Nothing here is Colab itself: the stand-in has
Colab's signature and lets the test decide when and how the promise settles.
"""
from __future__ import annotations

import pytest

from browser_support import screenshot_path
from gm_shell import displayed, run

pytestmark = pytest.mark.browser

# The README's first example (the card proposes requires_grad=True)
CELL = ("%%gradcheck\nw = torch.tensor([1.0])          # no requires_grad\nx = torch.tensor([2.0])\n"
        "loss = (w * x).sum()\nloss.backward()\n")
# NB: runs before the card's page: Colab's API as a stand-in, and a clipboard the test can read
COLAB = """
window.colabCalls = [];
window.google = {colab: {notebook: {addCell: function (code, type) {
  window.colabCalls.push({code: code, type: type, count: arguments.length});
  if (window.colabMode === 'throw') { throw new Error('no notebook here'); }
  return new Promise(function (resolve, reject) { window.colabSettle = {resolve: resolve, reject: reject}; });
}}}};
window.copied = [];
Object.defineProperty(navigator, 'clipboard', {configurable: true, value: {
  writeText: function (text) { window.copied.push(text); return Promise.resolve(); }}});
"""


@pytest.fixture
def card_page(shell, page_for, tmp_path):
    """A page holding the README example's HTML card, with the Colab stand-in; `mode`: 'promise' or 'throw'."""
    shell.run_cell("import torch")
    run(shell, CELL)
    html = next(bundle["text/html"] for bundle in displayed(shell) if "gm-card" in bundle.get("text/html", ""))
    path = tmp_path / "colab_card.html"
    path.write_text(f"<!doctype html><html><head><meta charset='utf-8'></head><body>{html}</body></html>",
                    encoding="utf-8")

    def open_card(mode: str):
        page = page_for(None)
        page.add_init_script(COLAB + f"window.colabMode = {mode!r};")
        page.goto(path.as_uri())
        return page

    return open_card


def _said(page, key: str) -> str:
    return page.locator(".gm-card .gm-fixcell").get_attribute(f"data-say-{key}")


def test_insert_calls_add_cell_as_colab_does_and_says_inserted_once_it_resolved(card_page):
    from playwright.sync_api import expect

    page = card_page("promise")
    card = page.locator(".gm-card")
    fixed = card.get_attribute("data-fixed-source")
    assert "requires_grad=True" in fixed
    card.locator(".gm-insert").click()
    calls = page.evaluate("window.colabCalls")
    assert calls == [{"code": fixed, "type": "code", "count": 2}]
    status = card.locator(".gm-status")
    page.wait_for_timeout(200)
    expect(status).to_have_text("")  # NB: the promise has not settled: nothing is claimed yet
    page.evaluate("window.colabSettle.resolve()")
    expect(status).to_have_text(_said(page, "inserted"))
    assert page.evaluate("window.copied") == []
    card.screenshot(path=str(screenshot_path("html_card_colab_inserted.png")))


def test_a_rejected_add_cell_copies_the_cell_and_says_so(card_page):
    from playwright.sync_api import expect

    page = card_page("promise")
    card = page.locator(".gm-card")
    card.locator(".gm-insert").click()
    page.evaluate("window.colabSettle.reject(new Error('the notebook is read-only'))")
    expect(card.locator(".gm-status")).to_have_text(_said(page, "copied"))
    assert page.evaluate("window.copied") == [card.get_attribute("data-fixed-source")]


def test_an_add_cell_that_throws_copies_the_cell_and_says_so(card_page):
    from playwright.sync_api import expect

    page = card_page("throw")
    card = page.locator(".gm-card")
    card.locator(".gm-insert").click()
    expect(card.locator(".gm-status")).to_have_text(_said(page, "copied"))
    assert page.evaluate("window.colabCalls")[0]["type"] == "code"
    assert page.evaluate("window.copied") == [card.get_attribute("data-fixed-source")]
