"""An error a DataLoader worker raises (issue 31): the worker's own line is named, and nothing of grad_magic's
shows in the worker's traceback.

torch re-raises a worker's error in the main process as "Caught X in DataLoader worker process N.\\nOriginal
Traceback ..." with the worker's traceback as text: the card reads the worker's user frames from that text
(`__getitem__`, the collate function) and keys on the original error. Workers are forked while the capture's
hooks are on: grad_magic takes its trackers off in the child, so the worker's traceback is a plain cell's.
"""
from __future__ import annotations

import sys

import pytest

import grad_magic
from gm_shell import run
from package_paths import shows_package_frames

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forked DataLoader workers: Linux's default start")

DATASET = """import torch
from torch.utils.data import Dataset, DataLoader


class Pairs(Dataset):
    def __init__(self):
        self.w = torch.ones(3, requires_grad=True)

    def __len__(self):
        return 8

    def __getitem__(self, i):
        x = self.w * i
        return {body}
"""


# NB: full mode's tracker is a torch function mode, fast mode's wrappers patch the in-place entry points: each
# must come off in the worker (an in-place op under --fast, a conversion under the mode)
@pytest.mark.parametrize("options, body, kind, line", [
    ("", "x.numpy()", "numpy-on-grad-tensor", "return x.numpy()"),
    (" --fast", "self.w.add_(1)", "leaf-modified-in-place", "return self.w.add_(1)"),
])
def test_a_workers_error_names_the_workers_line_and_shows_no_frame_of_ours(shell, options, body, kind, line):
    run(shell, DATASET.format(body=body))
    dataset_cell = shell.execution_count - 1
    result = run(shell, f"%%gradcheck{options}\ndl = DataLoader(Pairs(), batch_size=2, num_workers=2)\n"
                        "for b in dl:\n    print(b)\n")
    message = str(result.error_in_exec)
    assert "in DataLoader worker process" in message and line in message
    assert not shows_package_frames(message), message  # NB: no tracker or wrapper frame in the worker's traceback
    d = grad_magic.last_diagnosis()
    assert d.kind == kind
    assert any(sl.cell == dataset_cell and sl.text.strip() == line and sl.function == "Pairs.__getitem__"
               for sl in d.lines), d.lines
