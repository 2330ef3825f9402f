#!/usr/bin/env bash
# The release path, as RELEASING.md runs it: `python -m build` makes an sdist and a wheel that both carry the
# built JupyterLab extension (.ci/check_dist.py lists and checks them; twine checks their metadata); the
# wheel installs, not editable, into a fresh virtual environment where `jupyter labextension list` shows the
# extension enabled and a failing %%gradcheck cell shows its card from the installed package.
#
# Needs .venv (scripts/setup.sh: build and twine come with the dev extra). Writes build/release-check/.
# NB: torch is pinned: a bare `torch` pulls a CUDA build of several GB (the CPU wheel is on CI's disk).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
OUT=build/release-check
rm -rf "$OUT"
mkdir -p "$OUT"

if ! .venv/bin/python -m build --outdir "$OUT/dist" . >"$OUT/build.log" 2>&1; then
    tail -n 40 "$OUT/build.log"
    echo "check_wheel: python -m build failed (whole log: $OUT/build.log)" >&2
    exit 1
fi
grep '^grad_magic: ' "$OUT/build.log"  # what the build did with the extension
.venv/bin/python .ci/check_dist.py "$OUT"/dist/*.whl "$OUT"/dist/*.tar.gz
.venv/bin/python -m twine check --strict "$OUT"/dist/*
built=$SECONDS

python3 -m venv "$OUT/venv"
"$OUT/venv/bin/python" -m pip install --quiet "$OUT"/dist/*.whl "torch==2.13.0" jupyterlab
installed=$SECONDS

# NB: run outside the clone, with Jupyter's user folders emptied, so only the fresh environment counts
cd "$OUT"
export JUPYTER_DATA_DIR="$PWD/jupyter-data" JUPYTER_CONFIG_DIR="$PWD/jupyter-config"
unset JUPYTER_PATH JUPYTER_CONFIG_PATH
listing=$(venv/bin/jupyter labextension list 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
echo "$listing"
venv/bin/python - "$listing" <<'PY'
import sys
from pathlib import Path

# The extension must be listed under the fresh environment's own share/jupyter/labextensions.
listing, where = sys.argv[1], str(Path(sys.prefix) / "share" / "jupyter" / "labextensions")
section = listing.split(where, 1)[1].split("\n/", 1)[0] if where in listing else ""
line = next((ln.split() for ln in section.splitlines() if ln.split()[:1] == ["grad-magic"]), None)
assert line and line[2:4] == ["enabled", "OK"] and "grad_magic)" in line, \
    f"grad-magic is not listed enabled under {where}:\n{listing}"
print(f"check_wheel: {' '.join(line)} -- under {where}")
PY
venv/bin/python - <<'PY'
import sys

from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell

import grad_magic

assert grad_magic.__file__.startswith(sys.prefix), f"not the installed package: {grad_magic.__file__}"
shell = InteractiveShell.instance()
shell.display_pub = CapturingDisplayPublisher()
shell.run_line_magic("xmode", "Minimal")  # NB: the error's traceback is not what is checked here
shell.run_cell("%load_ext grad_magic\nimport torch")
result = shell.run_cell("%%gradcheck\nw = torch.tensor([1.0])\nx = torch.tensor([2.0])\n"
                        "loss = (w * x).sum()\nloss.backward()\n")
cards = [out["data"]["application/vnd.grad-magic.diagnosis+json"] for out in shell.display_pub.outputs
         if "application/vnd.grad-magic.diagnosis+json" in out["data"]]
assert isinstance(result.error_in_exec, RuntimeError), result
assert [card["kind"] for card in cards] == ["missing-requires-grad"], cards
print(f"check_wheel: the installed package shows the {cards[0]['kind']!r} card, fixed cell included: "
      f"{cards[0]['fix'] is not None}")
PY
echo "check_wheel: build and checks $((built - start)) s, fresh install $((installed - built)) s," \
     "listing and card $((SECONDS - installed)) s"
