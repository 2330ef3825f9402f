#!/usr/bin/env bash
# Create .venv (if missing) and install grad_magic with everything the demos and tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
# NB: torch is pinned in requirements-dev.txt: a bare `torch` would pull a CUDA build of several GB.
.venv/bin/python -m pip install --quiet -r requirements-dev.txt
