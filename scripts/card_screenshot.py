"""Take the README's screenshot: the README's own first example run in JupyterLab 4 with the extension.

    .venv/bin/python scripts/card_screenshot.py [--out docs/card.png]

The notebook is the README's first two `python` blocks (`%load_ext grad_magic` + `import torch`, then the
failing `%%gradcheck` cell), run in a JupyterLab of its own (tests/browser/browser_support.py: a free port,
temporary Jupyter folders) and shown in Debian's headless Chromium through Playwright, as the browser tests
do; the failing cell with its card is saved as a PNG. Needs what the browser tests need: Chromium
(`GRAD_MAGIC_CHROMIUM`), Playwright, and the extension built in labextension/dist (scripts/setup.sh).
"""
from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))

import browser_support as support  # noqa: E402
from notebook_page import NotebookPage  # noqa: E402

PATH = "card.ipynb"
VIEWPORT = {"width": 960, "height": 1000}


def readme_example() -> list:
    """The README's first two python blocks: the set-up cell and the failing cell."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```$", text, re.M | re.S)
    return [b.rstrip("\n") for b in blocks[:2]]


def main(argv: list) -> int:
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else ROOT / "docs" / "card.png"
    dist = ROOT / "labextension" / "dist"
    if not (dist / "package.json").is_file():
        print("card_screenshot.py: the extension is not built (labextension/dist); run scripts/setup.sh",
              file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        server = support.start_server("lab", Path(tmp))
        try:
            # NB: the server's own data folder: the extension is found there, nothing changes in .venv
            (Path(tmp) / "data" / "labextensions").mkdir(parents=True, exist_ok=True)
            (Path(tmp) / "data" / "labextensions" / support.EXTENSION).symlink_to(dist)
            notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in readme_example()])
            notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
            nbformat.write(notebook, server.root / PATH)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=support.CHROMIUM, args=support.CHROMIUM_ARGS)
                try:
                    page = browser.new_context(viewport=VIEWPORT).new_page()
                    page.set_default_timeout(60_000)
                    nb = NotebookPage(page, server, PATH)
                    nb.open()
                    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
                    nb.run_all()
                    card = page.locator(".jp-RenderedGradMagic .gm-card")
                    card.wait_for(state="visible", timeout=30_000)
                    out.parent.mkdir(parents=True, exist_ok=True)
                    # NB: the cell and its card, not the traceback below (it names this machine's paths)
                    cell, shown = nb.cell(1).bounding_box(), card.bounding_box()
                    bottom = shown["y"] + shown["height"] + 8
                    page.screenshot(path=str(out), clip={"x": cell["x"], "y": cell["y"], "width": cell["width"],
                                                         "height": bottom - cell["y"]})
                finally:
                    browser.close()
        finally:
            support.stop_server(server)
    print(f"card_screenshot.py: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
