"""grad_magic's build: setup.cfg holds the metadata; this file adds one step, the JupyterLab extension.

Every wheel and sdist carries the built extension: labextension/dist, installed from the wheel as
share/jupyter/labextensions/grad-magic, where JupyterLab 4 and Notebook 7 find it and enable it.

- Built files in labextension/dist, not older than the extension's sources: used as they are. An sdist
  holds them, so installing from one needs no node.
- Else node and npm on PATH: `npm ci` (when labextension/node_modules is missing), `npm run build:prod`.
- Else the build stops, saying what to install. GRAD_MAGIC_SKIP_LABEXTENSION=1 builds without the
  extension on purpose (the HTML card still works; Colab, VS Code and terminal IPython never load the
  extension), and says so.

An editable install (scripts/setup.sh) ships no data files: setup.sh links labextension/dist into the
environment instead, so a rebuild shows at once. There a missing build is a warning, not an error.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, List, Optional, Tuple

from setuptools import Command, setup
from setuptools.command.build import build
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent
LABEXTENSION = ROOT / "labextension"
BUILT = LABEXTENSION / "dist"
INSTALLED_AS = "share/jupyter/labextensions/grad-magic"  # NB: the name in labextension/package.json
SOURCES = ("src", "style", "package.json", "package-lock.json", "tsconfig.json", "install.json")
SKIP_VARIABLE = "GRAD_MAGIC_SKIP_LABEXTENSION"


class LabextensionMissing(Exception):
    """The extension can neither be built here nor found built: a message for the person building."""


def missing_targets(built: Path = BUILT) -> List[str]:
    """What a built extension must hold, that `built` lacks (relative paths; empty when complete)."""
    wanted = {"package.json": built / "package.json", "install.json": built / "install.json",
              "static/style.js": built / "static" / "style.js"}
    missing = [name for name, path in wanted.items() if not path.is_file()]
    if not list((built / "static").glob("remoteEntry.*.js")):
        missing.append("static/remoteEntry.*.js")
    return missing


def stale_sources(labextension: Path = LABEXTENSION) -> List[str]:
    """The extension's sources newer than its build (relative paths); the jest tests do not count."""
    built = labextension / "dist" / "package.json"
    if not built.is_file():
        return []
    since = built.stat().st_mtime
    newer = []
    for name in SOURCES:
        path = labextension / name
        files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
        newer += [str(p.relative_to(labextension)) for p in files
                  if p.exists() and "__tests__" not in p.parts and p.stat().st_mtime > since]
    return sorted(newer)


def plan(labextension: Path = LABEXTENSION, npm: Optional[str] = None, skip: bool = False,
         editable: bool = False) -> Tuple[str, str]:
    """What to do: ("use" | "build" | "skip", why). Raises LabextensionMissing when nothing will do."""
    built = labextension / "dist"
    missing = missing_targets(built)
    if skip:
        return "skip", f"{SKIP_VARIABLE} is set: building WITHOUT the JupyterLab extension"
    if not missing:
        stale = stale_sources(labextension)
        if not stale:
            return "use", f"using the built extension in {built}"
        if npm:
            return "build", f"rebuilding the extension: {', '.join(stale[:3])} changed since it was built"
        return "use", (f"WARNING: {', '.join(stale[:3])} changed since {built} was built, and npm is not "
                       "on PATH to rebuild it: the wheel carries the older build")
    if npm:
        return "build", "building the JupyterLab extension (npm run build:prod)"
    what = (f"the JupyterLab extension is not built ({built} lacks {', '.join(missing)}) and npm is not on "
            f"PATH to build it. Install Node.js 18 or newer with npm (Debian/Ubuntu: apt-get install nodejs "
            f"npm; elsewhere https://nodejs.org), or build without the extension on purpose: "
            f"{SKIP_VARIABLE}=1 (the HTML card still works; JupyterLab's buttons need the extension)")
    if editable:
        return "skip", "WARNING: " + what
    raise LabextensionMissing(what)


def run_npm(npm: str, labextension: Path = LABEXTENSION) -> None:
    if not (labextension / "node_modules").is_dir():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=labextension, check=True)
    subprocess.run([npm, "run", "build:prod"], cwd=labextension, check=True)
    missing = missing_targets(labextension / "dist")
    if missing:
        raise LabextensionMissing(f"npm run build:prod finished, but {labextension / 'dist'} lacks "
                                  f"{', '.join(missing)}")


def data_files(built: Path = BUILT) -> List[Tuple[str, List[str]]]:
    """Every file of the built extension, placed where Jupyter looks (paths relative to this folder)."""
    folders: dict = {}
    for path in sorted(p for p in built.rglob("*") if p.is_file()):
        target = Path(INSTALLED_AS, path.parent.relative_to(built)).as_posix()
        folders.setdefault(target, []).append(path.relative_to(ROOT).as_posix())
    return sorted(folders.items())


def ensure_labextension(distribution: Any, editable: bool = False) -> None:
    """Build the extension if needed (or stop), then add it to the distribution's data files."""
    action, why = plan(npm=shutil.which("npm"), skip=os.environ.get(SKIP_VARIABLE, "") not in ("", "0"),
                       editable=editable)
    print(f"grad_magic: {why}", file=sys.stderr)
    if action == "build":
        run_npm(shutil.which("npm"))
    if action != "skip" and not editable:
        distribution.data_files = data_files()


class BuildLabextension(Command):
    """`build` step: the JupyterLab extension, built or found, into the wheel's data files."""

    description = "build the JupyterLab extension (npm) or use the built one"
    user_options: list = []
    editable_mode = False  # NB: set by setuptools' editable_wheel

    def initialize_options(self) -> None:
        pass

    def finalize_options(self) -> None:
        pass

    def run(self) -> None:
        try:
            ensure_labextension(self.distribution, editable=self.editable_mode)
        except LabextensionMissing as error:
            sys.exit(f"grad_magic: {error}")


class BuildWithLabextension(build):
    sub_commands = build.sub_commands + [("build_labextension", None)]


class SdistWithLabextension(sdist):
    """The sdist carries the built extension (MANIFEST.in grafts labextension/dist): built first."""

    def run(self) -> None:
        self.run_command("build_labextension")
        super().run()


if __name__ == "__main__":
    setup(cmdclass={"build": BuildWithLabextension, "build_labextension": BuildLabextension,
                    "sdist": SdistWithLabextension})
