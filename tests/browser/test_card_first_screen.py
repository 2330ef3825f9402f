"""The card's first screen, measured in a real browser (issue 32, item 5).

In JupyterLab 4 with the grad-magic extension, at 1280x800: every golden kind's cell is run with
Shift+Enter, its input is then scrolled to the top of the notebook panel (as Shift+Enter leaves a cell
that was at the top), and the card's title (`h3`) and its primary button must both be on screen,
measured from their bounding boxes: inside the 1280x800 viewport and inside the notebook panel's
visible part of it (NB: JupyterLab's status bar covers the viewport's bottom rows, its menus the top
ones). The primary button is Insert fixed cell below for a fix of the cell itself, Apply to In [k] for
a fix of an earlier cell, as the kind's golden files say (`<case>.fixed.py`, `<case>.fixed.setup.py`);
a kind whose golden case proposes no fix has no button and is measured on its title only. The same holds
for the earlier-cell card of `earlier_cell_fix.ipynb` (Apply) and for the live card of
`test_live_stop.py` while its cell runs (Stop). And again in JupyterLab without the extension: the HTML
card (what the classic Notebook, Colab and VS Code show), whose primary button is Insert (for an earlier
cell too) and whose live card says how to interrupt where the extension has Stop.

One notebook, one kernel: one cell per kind (its golden case's setup, if any, as the cell before it),
run one by one, the user's names cleared in between; a failing cell does not stop the next. The case
of each kind is the first of `tests/cases/<kind>/` in sorted order: every golden case runs on a CPU
(the golden suite runs them there). The test prints a table (each box's top and bottom, OFF when off
screen) and fails listing every card that does not fit; screenshots of the viewport go to
artifacts/screenshots/first_screen_*.png.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import List, Optional, Tuple

import nbformat
import pytest

from browser_support import HERE, screenshot_path
from notebook_page import KERNEL_TIMEOUT, MIME, NotebookPage
from test_live_stop import TRAIN_SOURCE as LIVE_SOURCE

pytestmark = pytest.mark.browser

PATH = "card_first_screen.ipynb"
WIDTH, HEIGHT = 1280, 800
CASES = HERE.parent / "cases"
GOLDEN = HERE.parent / "golden"
SCREENSHOT_KINDS = ("shape-mismatch", "empty-parameter-list", "nan-in-backward")  # Insert, Apply, no fix
CARD_TIMEOUT = 20_000  # ms for the card to show once the cell is done

# NB: `silent`: no execution count, no history, no output: the next cell starts from a namespace of its own
CLEAR_NAMES = ("(lambda ip: [ip.user_ns.pop(n) for n in list(ip.user_ns) "
               "if not n.startswith('_') and n not in ip.user_ns_hidden])(get_ipython())")


@dataclass(frozen=True)
class Scene:
    """One card to measure: the cells to run first, the cell that shows it, and its primary button."""
    name: str  # what the table calls it
    kind: str  # the card's data-kind
    setup: Tuple[str, ...]
    source: str
    button: Optional[str]  # CSS class of the primary button; None: no fix, no button
    live: bool = False  # measured while the cell runs, then interrupted
    screenshot: str = ""  # the viewport is saved as first_screen_<this>.png


def golden_scenes() -> List[Scene]:
    scenes = []
    for folder in sorted(p for p in CASES.iterdir() if p.is_dir()):
        case = sorted(p for p in folder.glob("*.py") if not p.name.endswith(".setup.py"))[0]
        setup = case.with_name(case.stem + ".setup.py")
        golden = GOLDEN / folder.name / case.stem
        button = ("gm-insert" if golden.with_suffix(".fixed.py").exists()
                  else "gm-apply" if golden.with_suffix(".fixed.setup.py").exists() else None)
        scenes.append(Scene(f"{folder.name}/{case.stem}", folder.name,
                            (setup.read_text(),) if setup.exists() else (), case.read_text(), button,
                            screenshot=folder.name if folder.name in SCREENSHOT_KINDS else ""))
    return scenes


def earlier_cell_scene() -> Scene:
    """`earlier_cell_fix.ipynb` after its `%load_ext`: the fix is in the model's cell, Apply to In [k]."""
    cells = ["".join(c["source"]) for c in json.loads((HERE / "earlier_cell_fix.ipynb").read_text())["cells"]]
    return Scene("earlier cell (Apply)", "device-mismatch", tuple(cells[1:-1]), cells[-1], "gm-apply",
                 screenshot="earlier_cell")


def live_scene() -> Scene:
    return Scene("live card (Stop)", "grads-not-zeroed", ("import time\nimport torch",), LIVE_SOURCE,
                 "gm-stop", live=True, screenshot="live")


@dataclass(frozen=True)
class Box:
    """A rectangle in page pixels (what Playwright's bounding_box() gives)."""
    top: float
    bottom: float
    left: float
    right: float

    def within(self, frame: "Box") -> bool:
        return (self.top >= frame.top and self.bottom <= frame.bottom
                and self.left >= frame.left and self.right <= frame.right)


@dataclass(frozen=True)
class Measure:
    scene: Scene
    frame: Optional[Box] = None  # what a person sees of the notebook: its panel, inside the page
    input_top: Optional[float] = None
    title: Optional[Box] = None
    button: Optional[Box] = None
    problem: str = ""  # why nothing (or not everything) could be measured

    def seen(self, b: Optional[Box]) -> bool:
        return b is not None and self.frame is not None and b.within(self.frame)

    @property
    def fits(self) -> bool:
        return (not self.problem and self.seen(self.title)
                and (self.scene.button is None or self.seen(self.button)))

    def show(self, b: Optional[Box]) -> str:
        return "missing" if b is None else f"y {b.top:.0f}..{b.bottom:.0f}{'' if self.seen(b) else ' OFF'}"

    def row(self) -> str:
        button = "(no fix)" if self.scene.button is None else f"{self.scene.button[3:]} {self.show(self.button)}"
        top = "-" if self.input_top is None else f"{self.input_top:.0f}"
        return (f"{'ok' if self.fits else 'FAIL':4} {self.scene.name:50} input y {top:>4}  "
                f"title {self.show(self.title):18} {button:22} {self.problem}")


def write_notebook(nb: NotebookPage, scenes: List[Scene]) -> List[int]:
    """The notebook: `%load_ext`, then each scene's cells; the index of each scene's measured cell."""
    sources = ["%env GRAD_MAGIC_LANG=en\n%load_ext grad_magic"]
    measured = []
    for scene in scenes:
        sources += list(scene.setup) + [scene.source]
        measured.append(len(sources) - 1)
    sources.append("")  # NB: Shift+Enter on the last cell would add a cell below it
    kernelspec = {"display_name": "Python 3", "language": "python", "name": "python3"}
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources],
                                        metadata={"kernelspec": kernelspec})
    nbformat.write(notebook, str(nb.server.root / PATH))
    return measured


def shift_enter(nb: NotebookPage, index: int, wait: bool = True) -> None:
    """Select cell `index` alone in command mode and press Shift+Enter, as a person would."""
    nb.page.evaluate("""([path, index]) => {
      const notebook = window.gmTest.panel(path).content;
      notebook.mode = 'command';
      notebook.activeCellIndex = index;
      notebook.deselectAll();
      notebook.activeCell.node.focus();
    }""", [nb.path, index])
    nb.page.keyboard.press("Shift+Enter")
    if wait:
        nb.wait_for(f"s.counts[{index}] !== null && s.kernel === 'idle'")


def kernel_call(nb: NotebookPage, call: str) -> None:
    """`call` on the kernel (JavaScript over `kernel`), awaited."""
    nb.page.evaluate(f"""async path => {{
      const kernel = window.gmTest.panel(path).sessionContext.session.kernel;
      await {call};
    }}""", nb.path)


def scroll_input_to_top(nb: NotebookPage, index: int) -> float:
    """Scroll so that the cell's input is at the top of the notebook panel; its top then, in page pixels."""
    area = nb.cell(index).locator(".jp-Cell-inputWrapper")
    area.evaluate("node => node.scrollIntoView({block: 'start'})")
    nb.page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return area.bounding_box()["y"]


def box(locator) -> Optional[Box]:
    if locator.count() == 0:
        return None
    b = locator.first.bounding_box()  # NB: None when not displayed (a hidden button)
    return None if b is None else Box(b["y"], b["y"] + b["height"], b["x"], b["x"] + b["width"])


def kinds_shown(nb: NotebookPage, index: int) -> List[str]:
    kinds = []
    for output in nb.state()["outputs"][index]:
        data = output.get("data", {}).get(MIME)
        if data:
            kinds.append((json.loads(data) if isinstance(data, str) else data).get("kind"))
    return kinds


# NB: the HTML card (JupyterLab without the extension, classic Notebook, Colab, VS Code): Insert is its one
# primary button, also for a fix of an earlier cell; a live card there says how to interrupt, in its place
HTML_BUTTONS = {"gm-insert": "gm-insert", "gm-apply": "gm-insert", "gm-stop": "gm-interrupt"}


def measure(nb: NotebookPage, scene: Scene, index: int, html_only: bool = False) -> Measure:
    """Run the scene's cells, scroll its cell's input to the top, and measure title and button."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    kernel_call(nb, f"kernel.requestExecute({{code: {json.dumps(CLEAR_NAMES)}, silent: true, "
                    "store_history: false}).done")
    for setup in range(index - len(scene.setup), index):
        shift_enter(nb, setup)
    if html_only:
        scene = dataclasses.replace(scene, button=HTML_BUTTONS.get(scene.button) if scene.button else None)
    card = nb.cell(index).locator(f"{'' if html_only else '.jp-RenderedGradMagic '}.gm-card[data-kind='{scene.kind}']")
    # NB: a live card is measured while its cell runs, once its Stop button (or its interrupt hint) shows
    shown = card.locator(f".{scene.button}" if scene.live else "h3").first
    try:
        shift_enter(nb, index, wait=not scene.live)
        shown.wait_for(state="visible", timeout=KERNEL_TIMEOUT if scene.live else CARD_TIMEOUT)
    except PlaywrightTimeout:
        if scene.live:
            kernel_call(nb, "kernel.interrupt()")
        nb.wait_for(f"s.counts[{index}] !== null && s.kernel === 'idle'")
        return Measure(scene, problem=f"no card of its kind shown (cards: {kinds_shown(nb, index)})")
    top = scroll_input_to_top(nb, index)
    frame = Box(**nb.page.evaluate("""([path, width, height]) => {
      const r = window.gmTest.panel(path).content.node.getBoundingClientRect();
      return {top: Math.max(r.top, 0), bottom: Math.min(r.bottom, height),
              left: Math.max(r.left, 0), right: Math.min(r.right, width)};
    }""", [nb.path, WIDTH, HEIGHT]))
    # NB: the measurement means what it says only with the input at the top (the notebook's end can stop it)
    problem = "" if abs(top - frame.top) <= 2 else f"input not at the panel's top (y {frame.top:.0f})"
    result = Measure(scene, frame, top, box(card.locator("h3")),
                     box(card.locator(f".{scene.button}")) if scene.button else None, problem)
    if scene.screenshot:
        shot = f"first_screen{'_html' if html_only else ''}_{scene.screenshot}.png"
        nb.page.screenshot(path=str(screenshot_path(shot)))
    if scene.live:
        kernel_call(nb, "kernel.interrupt()")
        nb.wait_for(f"s.counts[{index}] !== null && s.kernel === 'idle'", timeout=60_000)
    return result


def test_jupyterlab_card_title_and_primary_button_on_the_first_screen(lab_server, page_for):
    first_screen(lab_server, page_for, html_only=False)


def test_html_card_title_and_primary_button_on_the_first_screen(lab_server_html_only, page_for):
    """The same cells in JupyterLab without the extension: the HTML card (what the classic Notebook, Colab
    and VS Code show) leads with the same things in the same order."""
    first_screen(lab_server_html_only, page_for, html_only=True)


def first_screen(server, page_for, html_only: bool) -> None:
    scenes = golden_scenes() + [earlier_cell_scene(), live_scene()]
    page = page_for(server)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    nb = NotebookPage(page, server, PATH)
    measured = write_notebook(nb, scenes)
    nb.open()
    shift_enter(nb, 0)
    assert [o for o in nb.state()["outputs"][0] if o["output_type"] == "error"] == []
    results = [measure(nb, scene, index, html_only) for scene, index in zip(scenes, measured)]
    kinds = results[:-2]
    with_button = [r for r in kinds if r.scene.button]
    table = "\n".join(r.row() for r in results)
    frame = next((r.frame for r in results if r.frame), None)
    seen = f"notebook panel y {frame.top:.0f}..{frame.bottom:.0f}" if frame else "no card measured"
    summary = (f"{len(kinds)} kinds at {WIDTH}x{HEIGHT} ({seen}): {sum(r.fits for r in with_button)} of "
               f"{len(with_button)} with a fix fit (title and button), "
               f"{sum(r.fits for r in kinds if not r.scene.button)} of {len(kinds) - len(with_button)} "
               f"without a fix fit (title); earlier cell (Apply): {'ok' if results[-2].fits else 'FAIL'}; "
               f"live ({'interrupt hint' if html_only else 'Stop'}): {'ok' if results[-1].fits else 'FAIL'}")
    print(f"\n{table}\n{summary}")
    failing = [r.scene.name for r in results if not r.fits]
    assert not failing, f"off the first screen: {', '.join(failing)}\n{table}\n{summary}"
