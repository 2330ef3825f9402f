"""What the real-browser tests share: Chromium's settings, Jupyter servers of our own, screenshots.

Each server runs on 127.0.0.1 on a free port with a token, from a temporary root holding a copy of
the test notebooks (`card_fix.ipynb`, `earlier_cell_fix.ipynb`), with temporary config / data / runtime / IPython folders so nothing leaks in or out,
and is shut down (kernels included) when its test is done. Screenshots go to artifacts/screenshots/.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pytest

HERE = Path(__file__).parent
REPO = HERE.parent.parent
NOTEBOOK = "card_fix.ipynb"
NOTEBOOKS = (NOTEBOOK, "earlier_cell_fix.ipynb")  # copied into every server's root
SCREENSHOTS = REPO / "artifacts" / "screenshots"
CHROMIUM = os.environ.get("GRAD_MAGIC_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]
EXTENSION = "grad-magic"  # the JupyterLab extension's name (labextension/package.json)
# NB: the announcements plugin asks about news in a toast that can cover the notebook.
QUIET_PLUGINS = {"@jupyterlab/apputils-extension:announcements": True}
START_TIMEOUT = 90  # seconds for a server to answer; 2-core CI machines are slow


def in_ci() -> bool:
    """CI=true (or 1, yes), as CI services and .ci/run set it; CI=false or unset is a person's machine."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def require(ok: bool, what: str) -> None:
    """Skip when a prerequisite is missing, saying what and how to get it (the summary lists skips);
    under CI=true a missing prerequisite fails instead: CI must run every test it can."""
    if ok:
        return
    if in_ci():
        pytest.fail(f"{what} -- CI=true: scripts/setup.sh installs it", pytrace=False)
    pytest.skip(f"{what}; bash scripts/setup.sh installs it (as root on Debian) or says how")


def extension_installed() -> bool:
    from jupyter_core.paths import jupyter_path

    return any((Path(p) / EXTENSION / "package.json").is_file() for p in jupyter_path("labextensions"))


def screenshot_path(name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / name


# -- Jupyter servers --

@dataclass
class JupyterServer:
    app: str  # "lab" or "notebook"
    url: str  # http://127.0.0.1:PORT/
    token: str
    root: Path
    process: subprocess.Popen
    log: Path

    def page_url(self, path: str) -> str:
        return f"{self.url}{path}?token={self.token}"

    def notebook_url(self, path: str = NOTEBOOK) -> str:
        return self.page_url(("lab/tree/" if self.app == "lab" else "notebooks/") + path)

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _environment(tmp: Path) -> dict:
    env = dict(os.environ)
    for name in ("config", "data", "runtime", "ipython"):
        (tmp / name).mkdir()
    env.update(JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_DATA_DIR=str(tmp / "data"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), IPYTHONDIR=str(tmp / "ipython"),
               JUPYTER_PLATFORM_DIRS="0", PYTHONUNBUFFERED="1")
    # NB: the kernel is the Python running the tests, whatever PATH says
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("JUPYTER_PATH", None)
    return env


def _write_page_config(config_dir: Path, disabled: Sequence[str]) -> None:
    labconfig = config_dir / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)
    disabled_extensions = dict(QUIET_PLUGINS, **{name: True for name in disabled})
    (labconfig / "page_config.json").write_text(json.dumps({"disabledExtensions": disabled_extensions}))


def start_server(app: str, tmp: Path, disabled: Sequence[str] = ()) -> JupyterServer:
    """`jupyter lab` or `jupyter notebook` on a free port of 127.0.0.1, answering before this returns."""
    root = tmp / "root"
    root.mkdir()
    for name in NOTEBOOKS:
        shutil.copy(HERE / name, root / name)
    env = _environment(tmp)
    _write_page_config(tmp / "config", disabled)
    port, token = free_port(), secrets.token_hex(16)
    app_class = "LabApp" if app == "lab" else "JupyterNotebookApp"
    # NB: CI runs as root; the app is exposed as window.jupyterapp so tests can read the notebook model.
    command = [sys.executable, "-m", "jupyter", app, "--no-browser", f"--IdentityProvider.token={token}",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               f"--ServerApp.root_dir={root}", "--ServerApp.allow_root=True",
               f"--{app_class}.expose_app_in_browser=True"]
    if app == "lab":  # nothing from the network
        command += ["--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                    "--LabApp.news_url=None", "--LabApp.extension_manager=readonly"]
    log = tmp / f"jupyter-{app}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    server = JupyterServer(app, f"http://127.0.0.1:{port}/", token, root, process, log)
    try:
        _wait_until_up(server)
    except BaseException:
        stop_server(server)
        raise
    return server


def _wait_until_up(server: JupyterServer) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"jupyter {server.app} exited ({server.process.returncode}):\n"
                               f"{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.page_url("api/status"), timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"jupyter {server.app} did not answer in {START_TIMEOUT}s:\n{server.log_tail()}")


def stop_server(server: JupyterServer) -> None:
    """Ask the server to shut down (it stops its kernels), then make sure nothing of it is left."""
    if server.process.poll() is None:
        request = urllib.request.Request(server.page_url("api/shutdown"), method="POST")
        try:
            urllib.request.urlopen(request, timeout=10).close()
        except OSError:
            pass
        try:
            server.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
    # NB: the server's own session: kernels it started and did not stop go with it
    _signal_group(server.process, signal.SIGTERM)
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        _signal_group(server.process, signal.SIGKILL)
        server.process.wait(timeout=10)


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
