"""Real training libraries (transformers, lightning, accelerate): the card points into the user's code, not
into the library, and no silent rule fires on a library's own healthy loop. Dev/test dependencies only: the
package never imports them (tests/test_packaging.py checks what it imports)."""
from __future__ import annotations

import logging

import pytest

import grad_magic
from gm_shell import run

pytestmark = pytest.mark.slow  # NB: importing transformers and lightning alone takes seconds

transformers = pytest.importorskip("transformers", reason="needs transformers (requirements-dev.txt)")
lightning = pytest.importorskip("lightning", reason="needs lightning (requirements-dev.txt)")
accelerate = pytest.importorskip("accelerate", reason="needs accelerate (requirements-dev.txt)")

TINY_BERT = """\
import torch
from transformers import BertConfig, BertForSequenceClassification
config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64, num_labels=3)
torch.manual_seed(0)
model = BertForSequenceClassification(config)
batch = {"input_ids": torch.randint(0, 100, (4, 12)), "attention_mask": torch.ones(4, 12, dtype=torch.long)}
"""

LIT_MODULE = """\
import torch, lightning as L
from torch.utils.data import DataLoader, TensorDataset

class Lit(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Sigmoid(), torch.nn.Linear(16, 2))
    def training_step(self, batch, batch_idx):
        x, y = batch
        h = self.net[1](self.net[0](x))
        h += 1.0{bug}
        logits = self.net[2](h)
        return torch.nn.functional.cross_entropy(logits, y)
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

data = DataLoader(TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,))), batch_size=8)
"""
TRAINER = ("%%gradcheck\ntrainer = L.Trainer(fast_dev_run=True, accelerator='cpu', logger=False,\n"
           "                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)\n"
           "trainer.fit(Lit(), data)\n")


@pytest.fixture(autouse=True)
def quiet_libraries():
    for name in ("lightning", "lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _lines(d):
    return [(sl.cell, sl.lineno, sl.function, sl.elsewhere) for sl in d.lines]


def test_transformers_frozen_model_is_explained_at_the_users_lines_not_inside_bert(shell):
    run(shell, TINY_BERT)
    run(shell, "for p in model.parameters():\n    p.requires_grad = False\n")
    result = run(shell, "%%gradcheck\nlabels = torch.tensor([0, 1, 2, 1])\n"
                        "loss = model(**batch, labels=labels).loss\nloss.backward()\n")
    assert isinstance(result.error_in_exec, RuntimeError), result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert d.kind == "missing-requires-grad", d.kind
    assert any(not sl.elsewhere and sl.lineno == 4 for sl in d.lines), _lines(d)
    assert all("site-packages" not in sl.file for sl in d.lines), _lines(d)


def test_transformers_healthy_training_steps_get_no_card(shell):
    run(shell, TINY_BERT)
    result = run(shell, "%%gradcheck\nopt = torch.optim.AdamW(model.parameters(), lr=1e-3)\nmodel.train()\n"
                        "labels = torch.tensor([0, 1, 2, 1])\nfor _ in range(3):\n"
                        "    loss = model(**batch, labels=labels).loss\n    loss.backward()\n"
                        "    opt.step()\n    opt.zero_grad()\n")
    assert result.error_in_exec is None
    assert grad_magic.last_diagnoses() == []


def test_transformers_float_labels_make_a_shape_message_and_the_card_names_the_users_line(shell):
    run(shell, TINY_BERT)
    result = run(shell, "%%gradcheck\nlabels = torch.tensor([0., 1., 2., 1.])\n"
                        "loss = model(**batch, labels=labels).loss\n")
    assert isinstance(result.error_in_exec, ValueError), result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert "Target size" in d.error_message
    assert any(not sl.elsewhere and sl.lineno == 3 for sl in d.lines), _lines(d)


def test_transformers_one_hot_labels_flattened_by_the_model_get_their_class_indices(shell):
    # NB: BertForSequenceClassification flattens labels with view(-1): (4, 3) one-hot rows become 12 labels and
    # the loss speaks of batch sizes; the run shows the flattened (4, 3) table of 0/1 rows
    run(shell, TINY_BERT)
    cells = ["%%gradcheck\nlabels = torch.nn.functional.one_hot(torch.tensor([0, 2, 1, 1]), 3)\n"
             "loss = model(**batch, labels=labels).loss\nloss.backward()\n"]
    result = run(shell, cells[0])
    assert isinstance(result.error_in_exec, ValueError), result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert d.kind == "target-not-class-indices" and "labels=labels.argmax(dim=1)" in d.fix.source
    again = run(shell, d.fix.source)
    assert again.error_in_exec is None and grad_magic.last_diagnosis() is None


def test_lightning_inplace_error_in_training_step_points_into_the_module(shell):
    run(shell, LIT_MODULE.format(bug=""))
    result = run(shell, TRAINER)
    assert isinstance(result.error_in_exec, RuntimeError), result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert d.kind == "saved-tensor-modified-in-place", d.kind
    cell = next(sl.cell for sl in d.lines if sl.elsewhere)
    assert (cell, 11, "Lit.training_step") in [(sl.cell, sl.lineno, sl.function) for sl in d.lines], _lines(d)
    assert "SGD.step" not in d.where and "SGD.step" not in d.why


def test_lightning_healthy_fit_gets_no_silent_card(shell):
    run(shell, LIT_MODULE.format(bug="").replace("        h += 1.0\n", ""))
    result = run(shell, TRAINER)
    assert result.error_in_exec is None, result.error_in_exec
    assert [d.kind for d in grad_magic.last_diagnoses()] == []


def test_accelerate_healthy_loop_gets_no_card(shell):
    run(shell, "import torch\nfrom accelerate import Accelerator\naccelerator = Accelerator(cpu=True)\n"
               "model = torch.nn.Linear(4, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
               "model, opt = accelerator.prepare(model, opt)\n")
    result = run(shell, "%%gradcheck\nfor _ in range(3):\n    loss = model(torch.randn(8, 4)).pow(2).mean()\n"
                        "    accelerator.backward(loss)\n    opt.step()\n    opt.zero_grad()\n")
    assert result.error_in_exec is None, result.error_in_exec
    assert [d.kind for d in grad_magic.last_diagnoses()] == []


def _fixed_runs_clean(shell, cells, d):
    """The card's fix applied to the cells it changes, all run again: no error, no card of its kind."""
    from earlier_cells import fix_runs_clean
    return fix_runs_clean(shell, cells, d)


def test_lightning_training_step_that_calls_backward_itself_is_named_and_the_call_deleted(shell):
    module = LIT_MODULE.format(bug="").replace("        h += 1.0\n", "").replace(
        "        return torch.nn.functional.cross_entropy(logits, y)\n",
        "        loss = torch.nn.functional.cross_entropy(logits, y)\n        loss.backward()\n        return loss\n")
    cells = [module, TRAINER.replace("fast_dev_run=True", "max_steps=3")]
    run(shell, cells[0])
    result = run(shell, cells[1])
    assert isinstance(result.error_in_exec, RuntimeError), result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert d.kind == "backward-twice" and (1, 13) in [(sl.cell, sl.lineno) for sl in d.lines], _lines(d)
    fixed = _fixed_runs_clean(shell, cells, d)
    assert "loss.backward()" not in fixed[0]


def test_lightning_hidden_state_kept_on_the_module_is_detached_where_the_step_reads_it(shell):
    module = LIT_MODULE.format(bug="").replace("        h += 1.0\n", "").replace(
        "        h = self.net[1](self.net[0](x))\n",
        "        h = self.net[1](self.net[0](x) + self.state)\n        self.state = h.mean(0)\n").replace(
        "        super().__init__()\n", "        super().__init__()\n        self.state = torch.zeros(16)\n")
    cells = [module + "model = Lit()\n",
             TRAINER.replace("fast_dev_run=True", "max_steps=3").replace("trainer.fit(Lit(), data)", "trainer.fit(model, data)")]
    run(shell, cells[0])
    result = run(shell, cells[1])
    assert isinstance(result.error_in_exec, RuntimeError), result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert d.kind == "backward-twice" and (1, 12) in [(sl.cell, sl.lineno) for sl in d.lines], _lines(d)
    _fixed_runs_clean(shell, cells, d)


def test_transformers_int32_labels_from_numpy_are_fixed_in_the_cell_that_made_them(shell):
    run(shell, TINY_BERT.replace("num_labels=3", "num_labels=2"))
    run(shell, "import numpy as np\nraw = [0, 1, 1, 0]\nlabels = torch.from_numpy(np.array(raw, dtype=np.int32))\n")
    result = run(shell, "%%gradcheck\nloss = model(**batch, labels=labels[:4]).loss\nloss.backward()\n")
    assert isinstance(result.error_in_exec, RuntimeError), result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert d.kind == "target-dtype", d.kind
    assert (d.lines[0].lineno, d.lines[0].elsewhere) == (3, True), _lines(d)
    assert d.fix.source == "" and len(d.fix.elsewhere) == 1 and d.fix.elsewhere[0].cell == 2, d.fix
    fixed = d.fix.elsewhere[0].source
    assert fixed == shell.user_ns["In"][2] + ".long()"
    shell.user_ns.pop("labels")
    run(shell, fixed)
    assert run(shell, "loss = model(**batch, labels=labels[:4]).loss\nloss.backward()\n").error_in_exec is None


def test_transformers_float_scores_into_a_class_loss_get_no_cast_that_would_change_them(shell):
    run(shell, TINY_BERT.replace("num_labels=3", "num_labels=2"))
    run(shell, "scores = torch.rand(4) * 5\nmodel.config.problem_type = 'single_label_classification'\n")
    result = run(shell, "%%gradcheck\nloss = model(**batch, labels=scores).loss\n")
    assert isinstance(result.error_in_exec, RuntimeError), result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert d.kind == "target-dtype", d.kind
    assert d.fix is None  # NB: `.long()` would truncate 2.37 to 2: the loss is what is wrong
    assert any(sl.elsewhere and sl.lineno == 1 for sl in d.lines), _lines(d)
    assert "not whole numbers" in d.why


def test_transformers_sequence_classifier_given_token_labels_marks_where_the_model_was_built(shell):
    run(shell, TINY_BERT)
    result = run(shell, "%%gradcheck\ntoken_labels = torch.randint(0, 3, (4, 12))\n"
                        "loss = model(**batch, labels=token_labels).loss\n")
    assert isinstance(result.error_in_exec, ValueError), result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert d.kind == "batch-size-mismatch", d.kind
    assert any(sl.elsewhere and sl.lineno == 6 for sl in d.lines), _lines(d)  # `model = BertFor...(config)`
    assert "model built on line 6" in d.why


def test_transformers_regression_head_given_int_labels_is_target_dtype_not_generic(shell):
    # NB: with num_labels=1 the model casts its logits to the labels' dtype (deberta_v2), so mse_loss computes
    # in int64 and says only '"mse_cpu" not implemented for 'Long''
    run(shell, "import torch\nfrom transformers import DebertaV2Config, DebertaV2ForSequenceClassification\n"
               "model = DebertaV2ForSequenceClassification(DebertaV2Config(vocab_size=50, hidden_size=16,\n"
               "    num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, num_labels=1))\n")
    result = run(shell, "%%gradcheck\nscores = torch.tensor([0, 1, 1, 0])\n"
                        "loss = model(input_ids=torch.randint(1, 50, (4, 6)), labels=scores).loss\n")
    assert isinstance(result.error_in_exec, NotImplementedError), result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert d.kind == "target-dtype", d.kind
    assert "float targets" in d.title and "int64" in d.title
    assert any(not sl.elsewhere and sl.lineno == 3 for sl in d.lines), _lines(d)


PINN = """\
import torch, lightning as L
from torch.utils.data import DataLoader, TensorDataset

class Pinn(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(1, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    def residual(self, x):
        x.requires_grad_(True)
        u = self.net(x)
        du = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
        return (du - torch.cos(x)).pow(2).mean()
    def validation_step(self, batch, batch_idx):
        (x,) = batch
{enable}        loss = self.residual(x)
        self.log("val_loss", loss)

points = DataLoader(TensorDataset(torch.rand(8, 1)), batch_size=4)
"""
VALIDATE = ("trainer = L.Trainer(accelerator='cpu', logger=False, enable_checkpointing=False,\n"
            "                    enable_progress_bar=False, enable_model_summary=False)\n")


def test_lightning_validate_under_inference_mode_makes_the_trainer_with_inference_mode_false(shell):
    """A physics-informed net needs autograd.grad in its validation step; Lightning's validate runs the step under
    torch.inference_mode(), where the step's `set_grad_enabled(True)` turns nothing on: "element 0 of tensors does
    not require grad". The card is inference-tensor-backward (the line names an inference tensor), and its fix makes
    the Trainer with `inference_mode=False` where the cell made it (then the step runs under no_grad, where its
    `set_grad_enabled(True)` works): the run recorded the ops running with grad mode on."""
    cells = [PINN.format(enable="        torch.set_grad_enabled(True)\n"), VALIDATE,
             "%%gradcheck\ntrainer.validate(Pinn(), points, verbose=False)\n"]
    for cell in cells[:2]:
        assert run(shell, cell).success
    result = run(shell, cells[2])
    assert isinstance(result.error_in_exec, RuntimeError), result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert d.kind == "inference-tensor-backward" and "`u`" in d.title, (d.kind, d.title)
    assert (1, 11) in [(sl.cell, sl.lineno) for sl in d.lines] and (2, 2) in [(sl.cell, sl.lineno) for sl in d.lines]
    fixed = _fixed_runs_clean(shell, cells, d)
    assert "enable_model_summary=False, inference_mode=False)" in fixed[1]


def test_lightning_validate_whose_step_never_turns_grad_on_gets_the_card_without_a_fix(shell):
    """The same step without `set_grad_enabled(True)`: `inference_mode=False` alone would fail the same way under
    no_grad, so no fix; the card says to turn grad on in the step too."""
    cells = [PINN.format(enable=""), VALIDATE, "%%gradcheck\ntrainer.validate(Pinn(), points, verbose=False)\n"]
    for cell in cells[:2]:
        assert run(shell, cell).success
    assert isinstance(run(shell, cells[2]).error_in_exec, RuntimeError)
    d = grad_magic.last_diagnosis()
    assert d.kind == "inference-tensor-backward" and d.fix is None
    assert "torch.enable_grad()" in d.why


@pytest.mark.parametrize("returned,title,value", [
    ("{'train_loss': loss, 'log': {'train_loss': loss}}", "no 'loss' key", "`{'train_loss': ..., 'log': ...}`"),
    ("sum([])", "cannot train on", "`0`"),
])
def test_lightning_refusing_what_training_step_returned_marks_the_return(shell, returned, title, value):
    """Lightning's own words (not torch's): the generic card says them plainly, shows the value Lightning read in
    its frame, and marks the user's return line that gave it (the module found on the traceback by its class)."""
    module = LIT_MODULE.format(bug="").replace("        h += 1.0\n", "").replace(
        "        return torch.nn.functional.cross_entropy(logits, y)\n",
        f"        loss = torch.nn.functional.cross_entropy(logits, y)\n        return {returned}\n")
    run(shell, module)
    result = run(shell, TRAINER)
    assert type(result.error_in_exec).__name__ == "MisconfigurationException", result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert d.kind == "generic" and title in d.title, d.title
    assert value in d.why and "tensors named on the failing line" not in d.why, d.why
    assert [(sl.lineno, sl.function) for sl in d.lines if sl.elsewhere] == [(13, "Lit.training_step")], _lines(d)


def test_lightning_float64_samples_say_which_line_made_them_without_an_empty_name(shell):
    """The Dataset returns NumPy float64 arrays and Lightning's loop collates them: no name of the user's holds
    the batch, and the sentence about where it was made names the cell line that ran the loop (once `` ``)."""
    module = LIT_MODULE.format(bug="").replace("        h += 1.0\n", "").replace(
        "data = DataLoader(TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,))), batch_size=8)\n",
        "import numpy as np\n\nclass Rows(torch.utils.data.Dataset):\n    def __len__(self):\n        return 16\n"
        "    def __getitem__(self, i):\n        return np.zeros(8), i % 2\n\ndata = DataLoader(Rows(), batch_size=8)\n")
    run(shell, module)
    result = run(shell, TRAINER)
    assert isinstance(result.error_in_exec, RuntimeError), result.error_in_exec
    d = grad_magic.last_diagnosis()
    assert d.kind == "dtype-mismatch", d.kind
    assert "``" not in d.why and "The float64 tensor was made by what line 4 ran" in d.why, d.why
