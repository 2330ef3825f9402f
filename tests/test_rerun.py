"""Which cells a re-run of a fixed earlier cell must run again before the failing one (issue 31, item 3)."""
from __future__ import annotations

from types import SimpleNamespace

from grad_magic.record import RunRecord
from grad_magic.rules.elsewhere import cells_to_rerun

CLASS = "import torch.nn as nn\nclass Net(nn.Module):\n    pass\n"


def record_of(cells: dict, running: int) -> RunRecord:
    sources = SimpleNamespace(typed=lambda n: cells.get(n))
    return RunRecord(filename="<cell>", source=cells[running], exception=None, cell=running, sources=sources)


def test_the_cell_that_makes_the_model_from_the_fixed_class_runs_again():
    cells = {2: CLASS, 3: "model = Net()\nopt = make(model.parameters())", 4: "x = torch.ones(3)",
             5: "import torch\nprint(torch.ones(1))", 6: "loss = model(x)"}
    assert cells_to_rerun(record_of(cells, 6), 2) == (3,)


def test_what_reads_a_cell_that_runs_again_runs_again_too_in_the_order_they_ran():
    cells = {1: CLASS, 2: "model = Net()", 3: "wrapped = Wrapper(model)", 4: "unrelated = 1", 5: "train(wrapped)"}
    assert cells_to_rerun(record_of(cells, 5), 1) == (2, 3)


def test_a_name_made_anew_without_the_fixed_one_ends_its_reach():
    cells = {1: CLASS, 2: "model = OtherNet()", 3: "print(model)", 4: "train(model)"}
    assert cells_to_rerun(record_of(cells, 4), 1) == ()


def test_an_import_in_the_fixed_cell_does_not_make_every_later_cell_stale():
    cells = {1: "import torch\n" + CLASS, 2: "x = torch.ones(2)", 3: "y = x * 2"}
    assert cells_to_rerun(record_of(cells, 3), 1) == ()


def test_cells_it_cannot_read_are_skipped():
    cells = {1: CLASS, 3: "model = Net()", 4: "model(x)"}
    assert cells_to_rerun(record_of(cells, 4), 1) == (3,)
