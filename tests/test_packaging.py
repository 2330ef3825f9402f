"""The package as people install it: every wheel carries the built JupyterLab extension, or the build stops.

setup.py's build step decides (`plan`): use the built extension, build it with npm, or fail saying what to
install. These tests hold that decision on folders made for the purpose, build real wheels from a copy of
the clone (with and without npm on PATH), and check .ci/check_dist.py, which CI and RELEASING.md use to
check the wheel and sdist of a release. The fresh-environment install lives in .ci/check_wheel.sh.
"""
from __future__ import annotations

import configparser
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXTENSION_DATA = "share/jupyter/labextensions/grad-magic/"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)  # NB: dataclasses look it up
    spec.loader.exec_module(module)
    return module


SETUP = _load("grad_magic_setup", ROOT / "setup.py")  # NB: setup() runs only as __main__
CHECK_DIST = _load("check_dist", ROOT / ".ci" / "check_dist.py")
# NB: its require() skips when something is missing, and fails under CI=true
BROWSER_SUPPORT = _load("packaging_browser_support", ROOT / "tests" / "browser" / "browser_support.py")


def _built(labextension: Path, *, sources_after: bool = False) -> Path:
    """A labextension folder with sources and a complete build; `sources_after`: a source edited since."""
    (labextension / "src").mkdir(parents=True)
    (labextension / "src" / "index.ts").write_text("export {};\n")
    static = labextension / "dist" / "static"
    static.mkdir(parents=True)
    for name in ("package.json", "install.json"):
        (labextension / "dist" / name).write_text("{}")
    for name in ("style.js", "remoteEntry.0123abcd.js", "346.0123.js"):
        (static / name).write_text("//")
    past = time.time() - 60
    for path in (labextension / "src" / "index.ts", *labextension.joinpath("dist").rglob("*")):
        os.utime(path, (past, past))
    if sources_after:
        os.utime(labextension / "src" / "index.ts")
    return labextension


# -- the build step's decision --

def test_a_complete_build_is_used_as_it_is(tmp_path):
    labextension = _built(tmp_path / "labextension")
    assert SETUP.plan(labextension, npm=None)[0] == "use"
    assert SETUP.plan(labextension, npm="/usr/bin/npm")[0] == "use"


def test_no_build_is_built_with_npm(tmp_path):
    (tmp_path / "labextension" / "src").mkdir(parents=True)
    assert SETUP.plan(tmp_path / "labextension", npm="/usr/bin/npm")[0] == "build"


def test_no_build_and_no_npm_stops_the_build_saying_what_to_install(tmp_path):
    labextension = _built(tmp_path / "labextension")
    (labextension / "dist" / "static" / "style.js").unlink()  # NB: an incomplete build is no build
    with pytest.raises(SETUP.LabextensionMissing) as error:
        SETUP.plan(labextension, npm=None)
    message = str(error.value)
    assert "static/style.js" in message and "npm" in message and "Node.js" in message
    assert "GRAD_MAGIC_SKIP_LABEXTENSION=1" in message


def test_an_editable_install_without_npm_warns_and_goes_on(tmp_path):
    (tmp_path / "labextension").mkdir()
    action, why = SETUP.plan(tmp_path / "labextension", npm=None, editable=True)
    assert action == "skip" and why.startswith("WARNING") and "npm" in why


def test_sources_edited_since_the_build_are_rebuilt_or_warned_about(tmp_path):
    labextension = _built(tmp_path / "labextension", sources_after=True)
    assert SETUP.stale_sources(labextension) == ["src/index.ts"]
    assert SETUP.plan(labextension, npm="/usr/bin/npm")[0] == "build"
    action, why = SETUP.plan(labextension, npm=None)
    assert action == "use" and why.startswith("WARNING") and "src/index.ts" in why


def test_skipping_the_extension_is_said_out_loud(tmp_path):
    (tmp_path / "labextension").mkdir()
    action, why = SETUP.plan(tmp_path / "labextension", npm=None, skip=True)
    assert action == "skip" and "WITHOUT the JupyterLab extension" in why


def test_the_data_files_are_every_built_file_where_jupyter_looks():
    if SETUP.missing_targets():
        pytest.skip("labextension/dist is not built here (scripts/setup.sh builds it)")
    placed = {Path(target, Path(source).name).as_posix() for target, sources in SETUP.data_files()
              for source in sources}
    built = {(Path(SETUP.INSTALLED_AS) / p.relative_to(SETUP.BUILT)).as_posix()
             for p in SETUP.BUILT.rglob("*") if p.is_file()}
    assert placed == built and f"{EXTENSION_DATA}package.json" in placed


def test_the_extension_and_the_package_carry_one_version():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    package = json.loads((ROOT / "labextension" / "package.json").read_text())
    assert package["version"] == config["metadata"]["version"], "RELEASING.md: bump both"
    assert package["name"] + "/" == EXTENSION_DATA.split("/")[-2] + "/"


# -- .ci/check_dist.py --

def _wheel(path: Path, names) -> Path:
    with zipfile.ZipFile(path, "w") as wheel:
        for name in names:
            wheel.writestr(name, "x")
    return path


def test_check_dist_refuses_a_wheel_without_the_extension(tmp_path):
    package = list(CHECK_DIST.PACKAGE_FILES)
    data = "grad_magic-9.9.9.data/data/" + EXTENSION_DATA
    built = [data + name for name in ("package.json", "install.json", "static/style.js",
                                      "static/remoteEntry.ab12.js")]
    name = "grad_magic-9.9.9-py3-none-any.whl"
    for folder, names, problem in (("bare", package, "lacks the built extension's"),
                                   ("bytecode", package + built + ["grad_magic/__pycache__/m.pyc"], "should not hold"),
                                   ("whole", package + built, None)):
        (tmp_path / folder).mkdir()
        problems = CHECK_DIST.check_wheel(_wheel(tmp_path / folder / name, names))
        assert (problems == []) if problem is None else any(problem in p for p in problems), (folder, problems)


# -- the package's imports --

NO_NUMPY = """
import importlib, pkgutil, sys, traceback
sys.modules["numpy"] = None  # NB: any import of numpy now raises ImportError
import grad_magic
failed = set()
for module in pkgutil.walk_packages(grad_magic.__path__, "grad_magic."):
    try:
        importlib.import_module(module.name)
    except ImportError as error:
        ours = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(grad_magic.__path__[0])]
        failed.add(f"{ours[-1].filename}:{ours[-1].lineno}: {ours[-1].line}" if ours else f"{module.name}: {error}")
from IPython.core.interactiveshell import InteractiveShell
if not failed:
    InteractiveShell.instance().run_line_magic("load_ext", "grad_magic")
print("\\n".join(sorted(failed)))
"""


def test_every_module_imports_with_only_the_declared_dependencies():
    """numpy is optional for torch, so for grad_magic too (setup.cfg does not declare it): with numpy
    unavailable every module still imports and %load_ext works, as in a fresh `pip install`."""
    done = subprocess.run([sys.executable, "-c", NO_NUMPY], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "", f"imports of numpy, which grad_magic does not declare:\n{done.stdout}"


# -- real wheels, from a copy of the clone --

def _clone(tmp_path: Path) -> Path:
    """What `git clone` gives of the build's inputs: no labextension/dist, no node_modules."""
    copy = tmp_path / "clone"
    ignore = shutil.ignore_patterns("__pycache__", "node_modules", "dist", "lib", "*.tsbuildinfo", "coverage")
    shutil.copytree(ROOT / "grad_magic", copy / "grad_magic", ignore=ignore)
    shutil.copytree(ROOT / "labextension", copy / "labextension", ignore=ignore)
    for name in ("setup.py", "setup.cfg", "pyproject.toml", "MANIFEST.in", "README.md", "CHANGELOG.md", "LICENSE",
                 "RELEASING.md"):
        shutil.copy2(ROOT / name, copy / name)
    return copy


def _pip_wheel(clone: Path, out: Path, path_variable: str, **variables: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=path_variable)
    env.pop("GRAD_MAGIC_SKIP_LABEXTENSION", None)
    env.update(variables)
    # NB: --no-build-isolation: the environment's own setuptools, nothing from the network
    return subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v",
                           "-w", str(out), str(clone)], capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.slow
def test_a_wheel_without_npm_and_without_a_build_fails_saying_what_to_install(tmp_path):
    clone = _clone(tmp_path)
    done = _pip_wheel(clone, tmp_path / "out", str(Path(sys.executable).parent))  # NB: no node, no npm
    assert done.returncode != 0, "the build made a wheel without the extension"
    assert "the JupyterLab extension is not built" in done.stdout + done.stderr
    assert not list(tmp_path.glob("out/*.whl"))


@pytest.mark.slow
def test_building_without_the_extension_on_purpose_needs_no_node_and_says_so(tmp_path):
    """The Colab install line (docs/FRONTENDS.md): GRAD_MAGIC_SKIP_LABEXTENSION=1, and no node on the machine."""
    clone = _clone(tmp_path)
    done = _pip_wheel(clone, tmp_path / "out", str(Path(sys.executable).parent),
                      GRAD_MAGIC_SKIP_LABEXTENSION="1")
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert "building WITHOUT the JupyterLab extension" in done.stdout + done.stderr
    wheel = next((tmp_path / "out").glob("grad_magic-*.whl"))
    problems = CHECK_DIST.check_wheel(wheel)
    assert problems and all("lacks the built extension" in p for p in problems), problems


@pytest.mark.slow
def test_pip_install_from_a_clone_builds_the_extension_into_the_wheel(tmp_path):
    npm = shutil.which("npm")
    BROWSER_SUPPORT.require(npm is not None and (ROOT / "labextension" / "node_modules").is_dir(),
            "npm and labextension/node_modules are needed to build the extension")
    clone = _clone(tmp_path)
    # NB: the clone's `npm ci` would fetch the same packages again: the checkout's are linked instead
    (clone / "labextension" / "node_modules").symlink_to(ROOT / "labextension" / "node_modules")
    done = _pip_wheel(clone, tmp_path / "out", os.environ["PATH"])
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert "grad_magic: building the JupyterLab extension" in done.stdout + done.stderr
    wheel = next((tmp_path / "out").glob("grad_magic-*.whl"))
    assert CHECK_DIST.check_wheel(wheel) == []
