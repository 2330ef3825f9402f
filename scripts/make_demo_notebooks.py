"""Write the demo notebooks from the cell lists below (run once after editing; the .ipynb are committed)."""
from __future__ import annotations

import re
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
    new_markdown_cell("## The bug is in an earlier cell\nReal notebooks define the model in one cell and train in "
                      "another. The card follows the error into the method where it happened (`In [k], line L, in "
                      "Net.forward`), shows that cell, and fixes *that* cell: the JupyterLab extension's **Apply to "
                      "In [k]** replaces it (and offers to re-run it and this cell); elsewhere, insert or copy the "
                      "fixed copy, run it, then re-run the training cell."),
    new_code_cell("import torch.nn as nn\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                  "        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n"
                  "        bias = torch.zeros(x.shape[0], 2)  # made on the CPU, whatever device x is on\n"
                  "        return torch.cat([self.fc(x), bias], dim=1)"),
    new_code_cell("%%gradcheck --no-nan-check\ndevice = torch.device('meta')  # a stand-in for 'cuda'\n"
                  "net = Net().to(device)\nx = torch.randn(8, 4, device=device)\nout = net(x)", metadata=FAILS),
    new_code_cell("%gradfix"),
    new_markdown_cell("## A silent bug\nNo exception, but the optimizer steps on gradients that were never "
                      "zeroed: a warning card, and the cell is not marked failed."),
    new_code_cell("%%gradcheck\nmodel = torch.nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                  "x, y = torch.randn(8, 3), torch.randn(8, 1)\nfor step in range(3):\n"
                  "    loss = torch.nn.functional.mse_loss(model(x), y)\n    loss.backward()\n    opt.step()"),
    new_markdown_cell("## 中文\n`%config GradMagic.language = \"zh\"` switches every card to Simplified Chinese."),
    new_code_cell('%config GradMagic.language = "zh"'),
    new_code_cell("%%gradcheck\nw = torch.ones(3, requires_grad=True)\nw += 1  # in place, on a leaf", metadata=FAILS),
    new_code_cell('%config GradMagic.language = "en"'),
    new_markdown_cell("## Where every tensor lives\n`%grad_device` lists every tensor in the namespace — inside "
                      "models, optimizers and containers — with its device, and warns about mixtures that will "
                      "fail. Here half of a model is on the `meta` device (a stand-in for a GPU)."),
    new_code_cell("net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))\n"
                  "net[2].to('meta')\nadam = torch.optim.Adam(net[0].parameters())\n"
                  "batch = {'x': torch.randn(16, 4), 'y': torch.randint(0, 2, (16,))}\n"
                  "net[0](batch['x']).sum().backward(); adam.step()"),
    new_code_cell("%grad_device"),
    new_code_cell("report = %grad_device meta\n[(r.path, r.device) for r in report.rows]"),
    new_markdown_cell("## Always on\nYou rarely know which cell will fail. `%gradcheck on` watches every following "
                      "cell at `--fast` cost, without any magic on the cells: a failing cell keeps its traceback "
                      "and gets its card below it; `%gradcheck off` stops."),
    new_code_cell("%gradcheck on"),
    new_code_cell("class Scaler(torch.nn.Module):\n    def forward(self, x):\n        y = torch.sigmoid(x)\n"
                  "        y *= 2  # in place, on the value sigmoid saved for backward\n        return y"),
    new_code_cell("x = torch.randn(4, requires_grad=True)\nScaler()(x).sum().backward()", metadata=FAILS),
    new_markdown_cell("## Live: a silent bug shown while the cell runs\nThe card of gradients never zeroed comes at "
                      "step 2 of this loop, not when it ends (JupyterLab 4 / Notebook 7 add **Stop the cell**)."),
    new_code_cell("import time\nmodel = torch.nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
                  "for step in range(50):\n    loss = model(torch.randn(8, 3)).pow(2).mean()\n    loss.backward()\n"
                  "    opt.step()\n    time.sleep(0.02)"),
    new_code_cell("%gradcheck off"),
]


CASES = ROOT / "tests" / "cases"
GOLDEN = ROOT / "tests" / "golden"
# The case shown per kind in the failure-gallery notebook (else the first English case of the kind). The
# gallery is English: a case whose text holds Chinese (the seed articles' comments) is never shown there.
DEMO_CASE = {"missing-requires-grad": "manual_sgd", "grads-not-zeroed": "accumulation_forgot_zero",
             "leaf-modified-in-place": "manual_sgd", "saved-tensor-modified-in-place": "manual_sgd",
             "device-mismatch": "model_not_moved", "non-leaf-grad": "manual_sgd",
             "integer-requires-grad": "manual_sgd", "load-needs-map-location": "seed_article",
             "argument-type": "size_not_called"}
_CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def english(case: Path) -> bool:
    """The case and its setup hold no Chinese."""
    setup = case.with_name(case.stem + ".setup.py")
    return not any(_CHINESE.search(p.read_text(encoding="utf-8")) for p in (case, setup) if p.exists())


def gallery() -> list:
    """One section per kind: the failing cell (its card appears when run) and the proposed fixed cell."""
    cells = [new_markdown_cell("# The failures grad_magic explains\n\nEach section: a failing cell, "
                               "its card, and the fixed cell the card proposes (run it: it works)."),
             new_code_cell("%load_ext grad_magic")]
    for kind_dir in sorted(p for p in CASES.iterdir() if p.is_dir()) if CASES.exists() else []:
        kind = kind_dir.name
        chosen = kind_dir / f"{DEMO_CASE.get(kind, '')}.py"
        if not chosen.exists() or not english(chosen):
            chosen = next(p for p in sorted(kind_dir.glob("*.py")) if not p.name.endswith(".setup.py")
                          and english(p))
        card = (GOLDEN / kind / f"{chosen.stem}.card.txt").read_text(encoding="utf-8")
        fixed = GOLDEN / kind / f"{chosen.stem}.fixed.py"
        cells.append(new_markdown_cell(f"## `{kind}`"))
        setup = chosen.with_name(chosen.stem + ".setup.py")
        if setup.exists():
            cells.append(new_code_cell(setup.read_text(encoding="utf-8").rstrip()))
        failing = card.startswith("✖") or "\nOriginal error: " in card  # NB: a warning card may come with an error
        cells.append(new_code_cell(chosen.read_text(encoding="utf-8").rstrip(),
                                   metadata=FAILS if failing else {}))
        if fixed.exists():
            cells.append(new_markdown_cell("The fixed cell the card proposes:"))
            cells.append(new_code_cell(fixed.read_text(encoding="utf-8").rstrip()))
    return cells


def write(cells: list, path: Path) -> None:
    """Write the notebook; a cell that was there already (same kind, same text) keeps its id, so a run
    changes only the cells whose text changed."""
    old = {}
    if path.exists():
        for cell in nbformat.read(path, as_version=4).cells:
            old.setdefault((cell.cell_type, cell.source), []).append(cell.get("id"))
    for cell in cells:
        ids = old.get((cell.cell_type, cell.source))
        if ids:
            cell["id"] = ids.pop(0)
    meta = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    nbformat.write(new_notebook(cells=cells, metadata=meta), path)


def main() -> None:
    out = ROOT / "demo_notebooks"
    out.mkdir(exist_ok=True)
    write(TOUR, out / "01_tour.ipynb")
    write(gallery(), out / "02_failure_gallery.ipynb")


if __name__ == "__main__":
    main()
