#!/usr/bin/env bash
# Colab's stack: the magic and kernel tests again under IPython 7.34 and ipykernel 5.5.6 (what Google Colab
# has shipped), in a virtual environment of their own, .venv-colab.
#
# NB: jupyter_client 6.1.12 is the one Colab paired with ipykernel 5.5.6. torch is pinned: a bare `torch`
# pulls a CUDA build of several GB.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
VENV=.venv-colab
python3 -m venv "$VENV"
echo '*' > "$VENV/.gitignore"  # NB: the repository's .gitignore lists .venv/ only
"$VENV/bin/python" -m pip install --quiet "torch==2.13.0" "ipython==7.34.0" "ipykernel==5.5.6" \
    "jupyter_client==6.1.12" nbclient nbformat pytest jinja2 pygments numpy
# NB: Colab never loads the JupyterLab extension: the editable install skips its build (setup.py)
GRAD_MAGIC_SKIP_LABEXTENSION=1 "$VENV/bin/python" -m pip install --quiet --no-deps -e .
installed=$SECONDS

# The kernel the notebook tests start must be this environment's, on this stack.
JUPYTER_PATH="$PWD/$VENV/share/jupyter" "$VENV/bin/python" - <<'PY'
import sys

import nbformat
from nbclient import NotebookClient

nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
    "import sys, IPython, ipykernel, grad_magic\nprint(IPython.__version__, ipykernel.__version__, sys.prefix)")])
NotebookClient(nb, timeout=120, kernel_name="python3").execute()
ipython, ipykernel, prefix = nb.cells[0].outputs[0].text.split()
print(f"colab stack: kernel on IPython {ipython}, ipykernel {ipykernel}, python {sys.version.split()[0]}")
assert (ipython, ipykernel) == ("7.34.0", "5.5.6"), (ipython, ipykernel)
assert prefix == sys.prefix, f"the kernel runs in {prefix}, not in {sys.prefix}"
PY

# NB: a time limit: a test that hangs fails here instead of using up CI's time.
JUPYTER_PATH="$PWD/$VENV/share/jupyter" timeout 900 "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
    tests/test_cell_semantics.py tests/test_capture.py tests/test_kernel.py tests/test_rules_and_render.py \
    tests/test_always_on.py
echo "colab stack: install $((installed - start)) s, tests $((SECONDS - installed)) s"
