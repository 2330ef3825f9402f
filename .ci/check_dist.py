"""List a built wheel and sdist and check that both carry what an install needs, the built extension above all.

    python .ci/check_dist.py dist/grad_magic-X-py3-none-any.whl dist/grad_magic-X.tar.gz

Exits non-zero, naming what is missing or what should not be there. Used by .ci/check_wheel.sh and
RELEASING.md; tests/test_packaging.py checks it against wheels that lack the extension.
"""
from __future__ import annotations

import fnmatch
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import List, Sequence

EXTENSION = "share/jupyter/labextensions/grad-magic/"
# The built extension: what `jupyter labextension list` reads (package.json, install.json) and loads.
EXTENSION_FILES = ("package.json", "install.json", "static/style.js", "static/remoteEntry.*.js")
PACKAGE_FILES = ("grad_magic/__init__.py", "grad_magic/magics.py", "grad_magic/templates/card.html.j2",
                 "grad_magic/render/html.py")
SDIST_FILES = ("setup.py", "setup.cfg", "pyproject.toml", "MANIFEST.in", "README.md", "CHANGELOG.md",
               "labextension/package.json", "labextension/package-lock.json", "labextension/src/index.ts",
               "labextension/style/index.css") + tuple("labextension/dist/" + f for f in EXTENSION_FILES)
NEVER = ("*node_modules/*", "*.pyc", "*__pycache__/*", "tests/*", ".venv/*")  # NB: fnmatch's * spans "/"


def missing(names: Sequence[str], wanted: Sequence[str]) -> List[str]:
    return [pattern for pattern in wanted if not fnmatch.filter(names, pattern)]


def unwanted(names: Sequence[str]) -> List[str]:
    return sorted(name for name in names if any(fnmatch.fnmatch(name, pattern) for pattern in NEVER))


def check_wheel(path: Path) -> List[str]:
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
    version = path.name.split("-")[1]
    data = f"grad_magic-{version}.data/data/{EXTENSION}"
    problems = [f"{path.name} lacks {name}" for name in missing(names, PACKAGE_FILES)]
    problems += [f"{path.name} lacks the built extension's {data}{name}"
                 for name in missing(names, [data + f for f in EXTENSION_FILES])]
    return problems + [f"{path.name} should not hold {name}" for name in unwanted(names)]


def check_sdist(path: Path) -> List[str]:
    with tarfile.open(path) as sdist:
        top = path.name[:-len(".tar.gz")] + "/"
        names = [m.name[len(top):] for m in sdist.getmembers() if m.isfile() and m.name.startswith(top)]
    problems = [f"{path.name} lacks {name}" for name in missing(names, SDIST_FILES)]
    problems += [f"{path.name} lacks {name}" for name in missing(names, PACKAGE_FILES)]
    return problems + [f"{path.name} should not hold {name}" for name in unwanted(names)]


def listing(path: Path) -> str:
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as wheel:
            rows = [(i.filename, i.file_size) for i in wheel.infolist()]
    else:
        with tarfile.open(path) as sdist:
            rows = [(m.name, m.size) for m in sdist.getmembers() if m.isfile()]
    # NB: the package's own modules are many and dull; the extension and the top level are what matter
    shown = [f"  {size:>8}  {name}" for name, size in rows if "/rules/" not in name and "/catalog/" not in name]
    return f"{path.name}: {len(rows)} files ({len(rows) - len(shown)} under rules/ and catalog/ not listed)\n" \
        + "\n".join(shown)


def main(paths: Sequence[str]) -> int:
    problems = []
    kinds = set()
    for name in paths:
        path = Path(name)
        print(listing(path))
        kind = "wheel" if path.suffix == ".whl" else "sdist"
        kinds.add(kind)
        problems += check_wheel(path) if kind == "wheel" else check_sdist(path)
    problems += [f"no {kind} given" for kind in ("wheel", "sdist") if kind not in kinds]
    for problem in problems:
        print(f"check_dist: {problem}", file=sys.stderr)
    if not problems:
        print(f"check_dist: {', '.join(Path(p).name for p in paths)}: the package and the built extension")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
