"""End to end through a real ipykernel (nbclient): what a notebook user gets."""
from __future__ import annotations

import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat.v4 import new_code_cell, new_notebook

pytestmark = pytest.mark.kernel

FAILING = ("%%gradcheck\nimport torch\nw = torch.tensor([1.0])\nassigned_before = 41\n"
           "loss = (w * 2).sum()\nloss.backward()\n")


def execute(cells, allow_errors):
    nb = new_notebook(cells=[new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=allow_errors).execute()
    return nb


def test_failing_cell_errors_with_the_original_exception_and_shows_a_card():
    nb = execute(["%load_ext grad_magic", FAILING, "assigned_before + 1",
                  "import grad_magic; grad_magic.last_diagnosis().kind"], allow_errors=True)
    outputs = nb.cells[1].outputs
    errors = [o for o in outputs if o.output_type == "error"]
    assert len(errors) == 1
    assert errors[0].ename == "RuntimeError"
    assert "does not require grad" in errors[0].evalue
    cards = [o for o in outputs if o.output_type == "display_data"]
    assert cards and "gm-card" in cards[0].data["text/html"]
    assert outputs.index(cards[0]) < outputs.index(errors[0])  # the card comes first
    assert nb.cells[2].outputs[0].data["text/plain"] == "42"  # the next cell sees the variables


def test_run_all_stops_at_the_failing_cell():
    with pytest.raises(CellExecutionError) as info:
        execute(["%load_ext grad_magic", FAILING, "never_runs = 1"], allow_errors=False)
    assert "RuntimeError" in str(info.value) and "does not require grad" in str(info.value)


def test_healthy_cell_result_is_out_n():
    nb = execute(["%load_ext grad_magic", "%%gradcheck\nx = 20\nx + 22"], allow_errors=False)
    result = [o for o in nb.cells[1].outputs if o.output_type == "execute_result"]
    assert result and result[0].data["text/plain"] == "42"
    assert result[0].execution_count == 2


def test_top_level_await_runs_in_the_kernels_loop_as_in_a_plain_cell():
    nb = execute(["%load_ext grad_magic", "import asyncio\nawait asyncio.sleep(0.01)\n7",
                  "%%gradcheck\nimport asyncio\nawait asyncio.sleep(0.01)\n7",
                  "%%gradcheck\nimport asyncio, torch\nbefore = await asyncio.sleep(0, result=41)\n"
                  "w = torch.tensor([1.0])\n(w * 2).sum().backward()", "before + 1",
                  "%%gradcheck\nsyntax error here"], allow_errors=True)
    plain, magic = ([o for o in nb.cells[i].outputs if o.output_type == "execute_result"] for i in (1, 2))
    assert plain[0].data["text/plain"] == magic[0].data["text/plain"] == "7"
    failed = nb.cells[3].outputs
    assert [o.ename for o in failed if o.output_type == "error"] == ["RuntimeError"]
    assert any("gm-card" in o.data.get("text/html", "") for o in failed if o.output_type == "display_data")
    assert nb.cells[4].outputs[0].data["text/plain"] == "42"
    errors = [o for o in nb.cells[5].outputs if o.output_type == "error"]
    assert [o.ename for o in errors] == ["SyntaxError"]  # NB: the cell failed, as a plain cell does


def test_a_culprit_in_an_earlier_cell_is_named_with_its_cell_and_fixed_there():
    """Through a real kernel (also Colab's IPython 7, whose cells are `<ipython-input-N-…>`): the card names
    the method of an earlier cell and proposes a fixed copy of that cell, which runs clean."""
    model = ("import torch, torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
             "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n    def forward(self, x):\n"
             "        pad = torch.zeros(x.shape[0], 2)\n        return torch.cat([self.fc(x), pad], dim=1)")
    train = ("%%gradcheck --no-nan-check\nnet = Net().to('meta')\nx = torch.randn(3, 4, device='meta')\n"
             "out = net(x)")
    nb = execute(["%load_ext grad_magic", model, train], allow_errors=True)
    card = next(o.data["application/vnd.grad-magic.diagnosis+json"] for o in nb.cells[2].outputs
                if o.output_type == "display_data")
    assert card["schema_version"] == 2 and card["cell"] == 3
    assert {(ln["cell"], ln["lineno"], ln["function"]) for ln in card["lines"] if not ln["this"]} >= {
        (2, 8, "Net.forward")}
    [fixed] = card["fix"]["cells"]
    assert fixed["target"] == {"execution_count": 2} and fixed["original"] == model
    again = execute(["%load_ext grad_magic", fixed["source"], train], allow_errors=True)
    assert not [o for c in again.cells for o in c.outputs if o.output_type == "error"]


def test_always_on_watches_every_cell_in_a_kernel():
    """`%gradcheck on` in a real kernel (ipykernel names cells by their text, not IPython's way): a failing cell
    without the magic keeps its error and gets its card below it, naming the cell's own line; await and values
    as in a plain cell; `%gradcheck off` stops."""
    body = "import torch\na = torch.randn(2, 3, requires_grad=True)\nx = torch.tanh(a)\nx *= 2\nx.sum().backward()"
    nb = execute(["%load_ext grad_magic", "%gradcheck on", body,
                  "import asyncio\nawait asyncio.sleep(0, result=7)", "%gradcheck off", body], allow_errors=True)
    outputs = nb.cells[2].outputs
    errors = [o for o in outputs if o.output_type == "error"]
    cards = [o for o in outputs if o.output_type == "display_data"]
    assert [e.ename for e in errors] == ["RuntimeError"] and len(cards) == 1
    assert outputs.index(errors[0]) < outputs.index(cards[0])  # NB: IPython shows the traceback first
    text = cards[0].data["text/plain"]
    assert "saved-tensor-modified-in-place" in text and "`x *= 2` on line 4" in text, text
    assert not any("lighttrack" in line or "tracker.py" in line for line in errors[0].traceback)
    assert [o.data["text/plain"] for o in nb.cells[3].outputs if o.output_type == "execute_result"] == ["7"]
    assert not [o for o in nb.cells[5].outputs if o.output_type == "display_data"]


def test_a_live_card_stays_when_the_loop_clears_its_output():
    """A training loop that redraws its progress with `clear_output(wait=True)` (the usual notebook idiom)
    keeps the live card: shown again after each clear, above what the loop prints next. nbclient applies
    `clear_output` as a notebook frontend does (with `wait`, at the next output)."""
    loop = ("%%gradcheck\nimport torch\nfrom IPython.display import clear_output\n"
            "model = torch.nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
            "x, y = torch.randn(8, 4), torch.randn(8, 1)\nfor step in range(12):\n"
            "    loss = ((model(x) - y) ** 2).mean()\n    loss.backward()\n    opt.step()\n"
            "    clear_output(wait=True)\n    print('step', step)\n")
    nb = execute(["%load_ext grad_magic", loop, "import IPython; 'clear_output' in vars(get_ipython().display_pub)"],
                 allow_errors=False)
    outputs = nb.cells[1].outputs
    cards = [o for o in outputs if o.output_type == "display_data"
             and (o.data.get("application/vnd.grad-magic.diagnosis+json") or {}).get("kind") == "grads-not-zeroed"]
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert cards and cards[0].data["application/vnd.grad-magic.diagnosis+json"]["live"]["step"] == 2, outputs
    assert printed.strip() == "step 11"  # NB: the loop's own clearing still works
    assert outputs.index(cards[0]) < next(i for i, o in enumerate(outputs) if o.output_type == "stream")
    assert nb.cells[2].outputs[0].data["text/plain"] == "False"  # NB: the publisher is IPython's own again
