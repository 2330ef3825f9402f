"""Real-browser fixtures: headless Chromium (Debian's, driven by Playwright) and Jupyter servers."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, Optional, Sequence

import pytest

from browser_support import (CHROMIUM, CHROMIUM_ARGS, EXTENSION, JupyterServer, extension_installed,
                             require, start_server, stop_server)


# NB: one browser per test file, stopped at its end: a test file of another kind that the same xdist worker runs
# next (`-n 2 --dist loadfile`) must not run under Playwright's event loop and child watcher (a DataLoader with
# worker processes hung there in CI)
@pytest.fixture(scope="module")
def chromium():
    require(Path(CHROMIUM).exists(), f"Chromium not found at {CHROMIUM} (GRAD_MAGIC_CHROMIUM=path for another)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "Playwright for Python is not installed (requirements-dev.txt has it)")
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


def _server_fixture(app: str, tmp_path_factory: pytest.TempPathFactory,
                    disabled: Sequence[str] = (), need_extension: bool = True
                    ) -> Iterator[JupyterServer]:
    if need_extension:
        require(extension_installed(), f"the JupyterLab extension {EXTENSION!r} is not built and linked "
                                       "(building it needs Node.js 18+ and npm)")
    server = start_server(app, tmp_path_factory.mktemp(f"jupyter-{app}"), disabled)
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture
def lab_server(tmp_path_factory) -> Iterator[JupyterServer]:
    """JupyterLab 4 with the grad-magic extension."""
    yield from _server_fixture("lab", tmp_path_factory)


@pytest.fixture
def notebook_server(tmp_path_factory) -> Iterator[JupyterServer]:
    """Notebook 7 with the grad-magic extension."""
    yield from _server_fixture("notebook", tmp_path_factory)


@pytest.fixture
def lab_server_html_only(tmp_path_factory) -> Iterator[JupyterServer]:
    """JupyterLab 4 with the grad-magic extension disabled: the text/html card is what shows."""
    yield from _server_fixture("lab", tmp_path_factory, disabled=[EXTENSION], need_extension=False)


@pytest.fixture
def page_for(chromium):
    """`page_for(server)`: a fresh browser context and page on a server, closed after the test."""
    contexts = []

    def open_page(server: Optional[JupyterServer] = None, **context_options):
        context = chromium.new_context(viewport={"width": 1280, "height": 1000}, **context_options)
        contexts.append(context)
        if server is not None:
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url[:-1])
        page = context.new_page()
        page.set_default_timeout(60_000)
        return page

    yield open_page
    for context in contexts:
        context.close()
