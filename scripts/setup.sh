#!/usr/bin/env bash
# Create .venv (if missing), build the JupyterLab extension, and install grad_magic with everything the
# demos and tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
# The JupyterLab 4 / Notebook 7 extension, built from source (node and npm, packages from the npm
# registry) before grad_magic is installed, since the package ships the built extension.
if command -v npm >/dev/null; then
    (cd labextension && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build:prod >/dev/null)
else
    echo "setup.sh: npm not found: the JupyterLab extension is not built (the HTML card still works)" >&2
fi
# NB: torch is pinned in requirements-dev.txt: a bare `torch` would pull a CUDA build of several GB.
.venv/bin/python -m pip install --quiet -r requirements-dev.txt
# NB: an editable install skips data_files (setuptools), so the built extension is linked where
# Jupyter looks for it; `pip install .` installs it as data files instead.
if [ -f labextension/dist/package.json ]; then
    rm -rf .venv/share/jupyter/labextensions/grad-magic
    mkdir -p .venv/share/jupyter/labextensions
    ln -s "$PWD/labextension/dist" .venv/share/jupyter/labextensions/grad-magic
fi
