"""Execute every notebook in demo_notebooks/ through a real Jupyter kernel and keep what it showed.

Writes, for each notebook, the executed notebook and its cards and %grad_device reports (HTML and text) to the output folder
(default: out/demos), and prints where they are. Cells tagged `raises-exception` are expected to fail;
any other failing cell fails the run.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jinja2
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
# NB: the cards are grad_magic's own rendered (and escaped) HTML, hence `safe`; the rest is autoescaped.
_PAGE = jinja2.Environment(autoescape=True).from_string(
    "<!doctype html><meta charset=utf-8><title>{{ title }}</title>\n"
    "{% for index, card in cards %}<h4>cell {{ index }}</h4>\n{{ card|safe }}\n{% endfor %}")


def run_notebook(path: Path, out_dir: Path, timeout: int) -> int:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    nbformat.write(nb, out_dir / path.name)
    cards_html, cards_text = [], []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text/html" in data and ("gm-card" in data["text/html"] or "gd-report" in data["text/html"]):
                cards_html.append((index, data["text/html"]))
                cards_text.append(f"--- cell {index} ---\n{data.get('text/plain', '')}")
    page = _PAGE.render(title=path.stem, cards=cards_html)
    (out_dir / f"{path.stem}.cards.html").write_text(page, encoding="utf-8")
    (out_dir / f"{path.stem}.cards.txt").write_text("\n\n".join(cards_text), encoding="utf-8")
    return len(cards_html)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=str(ROOT / "out" / "demos"))
    parser.add_argument("--timeout", type=int, default=300)
    args = parser.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    notebooks = sorted((ROOT / "demo_notebooks").glob("*.ipynb"))
    for path in notebooks:
        cards = run_notebook(path, out_dir, args.timeout)
        print(f"{path.name}: executed, {cards} card(s)")
    print(f"Executed notebooks and their cards are in {out_dir}")
    return 0 if notebooks else 1


if __name__ == "__main__":
    sys.exit(main())
