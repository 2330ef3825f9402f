"""Write the demo notebooks from the cell lists below (run once after editing; the .ipynb are committed)."""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
FAILS = {"tags": ["raises-exception"]}

TOUR = [
    new_markdown_cell("# grad_magic — a tour\n\n`%%gradcheck` runs a cell exactly as usual, under "
                      "torch anomaly detection and tracking hooks, and explains what goes wrong."),
    new_code_cell("%load_ext grad_magic\nimport torch"),
    new_markdown_cell("## A healthy cell\nNothing to say: the value is shown as usual."),
    new_code_cell("%%gradcheck\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                  "loss = (w * w).sum()\nloss.backward()\nw.grad"),
    new_markdown_cell("## A failing cell\nThe card explains the error; the cell still fails "
                      "(Run All stops), and names assigned before the error stay assigned."),
    new_code_cell("%%gradcheck\nw = torch.tensor([1.0])  # no requires_grad\nx = torch.tensor([2.0])\n"
                  "y = w * x\nloss = y.sum()\nloss.backward()", metadata=FAILS),
    new_code_cell("y  # assigned before the failure"),
    new_markdown_cell("## Devices\nMixing devices fails; on a CPU-only machine the `meta` device "
                      "stands in for a GPU."),
    new_code_cell("%%gradcheck\na = torch.randn(2, 3)\nb = torch.randn(2, 3, device='meta')\n"
                  "torch.cat([a, b])", metadata=FAILS),
    new_code_cell("%gradfix"),
]


def main() -> None:
    out = ROOT / "demo_notebooks"
    out.mkdir(exist_ok=True)
    nb = new_notebook(cells=TOUR, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nbformat.write(nb, out / "01_tour.ipynb")


if __name__ == "__main__":
    main()
