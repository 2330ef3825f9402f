#!/usr/bin/env bash
# Create .venv (if missing), build the JupyterLab extension, and install grad_magic (editable) with everything
# the demos and tests need.
#
# Besides Python 3.9+, the tests need Node.js 18+ with npm (the extension's build and its jest tests) and
# Chromium (the real-browser tests; Debian's /usr/bin/chromium, or GRAD_MAGIC_CHROMIUM=/path/to/chrome), and
# tmux (the terminal test that reads a 120x40 pane).
# Run as root on Debian/Ubuntu, this installs what is missing with apt-get; anywhere else it says what to
# install and carries on: the demos need none of them, and the tests that do are skipped, each with its
# reason in the summary (under CI=true they fail instead).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "setup.sh: $*" >&2; }

node_ok() { command -v node >/dev/null && command -v npm >/dev/null \
    && node -e 'process.exit(+process.versions.node.split(".")[0] < 18 ? 1 : 0)'; }
CHROMIUM=${GRAD_MAGIC_CHROMIUM:-/usr/bin/chromium}
need=()
node_ok || need+=(nodejs npm)
[ -x "$CHROMIUM" ] || [ -n "${GRAD_MAGIC_CHROMIUM:-}" ] || need+=(chromium)
command -v tmux >/dev/null || need+=(tmux)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing ${need[*]} with apt-get"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; } \
        || say "apt-get could not install ${need[*]}"
fi
missing=()
node_ok || missing+=("Node.js 18 or newer with npm (Debian: apt-get install nodejs npm; else https://nodejs.org)")
[ -x "$CHROMIUM" ] || missing+=("Chromium at $CHROMIUM (Debian: apt-get install chromium; else Chrome and GRAD_MAGIC_CHROMIUM=its path)")
command -v tmux >/dev/null || missing+=("tmux (Debian: apt-get install tmux)")
# NB: ${a[@]+...}: an empty array under `set -u` in macOS's bash 3.2
for what in ${missing[@]+"${missing[@]}"}; do say "missing: $what"; done
if [ ${#missing[@]} -gt 0 ]; then
    say "the demos need neither; without them the JupyterLab extension is not built (the HTML card works) and the" \
        "tests that need them are skipped, each with its reason in the summary (under CI=true they fail)"
fi

python3 -m venv .venv
# The JupyterLab 4 / Notebook 7 extension, built from source (packages from the npm registry) before
# grad_magic is installed. NB: the package's own build (setup.py) would build it too, but inside pip,
# which hides npm's messages.
if node_ok; then
    (cd labextension && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build:prod >/dev/null)
fi
# NB: torch is pinned in requirements-dev.txt: a bare `torch` would pull a CUDA build of several GB.
.venv/bin/python -m pip install --quiet -r requirements-dev.txt
# NB: the editable install ships no data files (setup.py), so the built extension is linked where Jupyter
# looks for it, and a rebuild shows at once; `pip install .` installs a copy instead.
if [ -f labextension/dist/package.json ]; then
    rm -rf .venv/share/jupyter/labextensions/grad-magic
    mkdir -p .venv/share/jupyter/labextensions
    ln -s "$PWD/labextension/dist" .venv/share/jupyter/labextensions/grad-magic
fi
