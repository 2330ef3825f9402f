"""collate-unequal-sizes (rules/collate.py): torch's messages in the loop's process and from a worker, the field
read from default_collate's frames, the padding collate_fn, and cards through a real shell whose fixes run again
in a fresh session."""
from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader

from grad_magic.rules.collate import Field, Unequal, collate_text, field_of, parse_unequal
from earlier_cells import card_of, fix_runs_clean, lines_of


def _raised(samples, **loader):
    with pytest.raises(RuntimeError) as info:
        next(iter(DataLoader(samples, batch_size=2, **loader)))
    return info.value


def test_the_messages_of_this_torch_are_the_ones_keyed_on():
    err = parse_unequal(str(_raised([torch.zeros(3, 10, 10), torch.zeros(3, 11, 11)])))
    assert err == Unequal((3, 10, 10), 0, (3, 11, 11), 1, False, False) and not err.sequences
    assert parse_unequal(str(_raised([torch.zeros(5), torch.zeros(8)]))).sequences
    assert parse_unequal(str(_raised([torch.zeros(5, 4), torch.zeros(8, 4)]))).sequences
    worker = parse_unequal(str(_raised([torch.zeros(5), torch.zeros(8)], num_workers=1)))
    assert worker is not None and worker.in_worker and worker.collate_in_text
    assert parse_unequal("Sizes of tensors must match except in dimension 1") is None


@pytest.mark.parametrize("samples,field", [
    ([torch.zeros(5), torch.zeros(8)], Field((), "tensor")),
    ([(torch.zeros(5), 0), (torch.zeros(8), 1)], Field((0,), "sequence")),
    ([(1, torch.zeros(5)), (0, torch.zeros(8))], Field((1,), "sequence")),
    ([{"ids": torch.zeros(5), "y": 0}, {"ids": torch.zeros(8), "y": 1}], Field(("ids",), "mapping")),
    ([{"x": (torch.zeros(2), torch.zeros(5))}, {"x": (torch.zeros(2), torch.zeros(8))}], Field(("x", 1), "mapping")),
])
def test_the_field_is_read_from_default_collates_frames(samples, field):
    assert field_of(_raised(samples)) == field


@pytest.mark.parametrize("samples,field", [
    ([torch.arange(5), torch.arange(8)], Field((), "tensor")),
    ([(torch.arange(5), 0), (torch.arange(8), 1)], Field((0,), "sequence")),
    ([(1, torch.ones(5, 2)), (0, torch.ones(8, 2))], Field((1,), "sequence")),
    ([{"ids": torch.arange(5), "y": 0}, {"ids": torch.arange(8), "y": 1}], Field(("ids",), "mapping")),
])
def test_the_padding_collate_fn_pads_the_field_and_collates_the_rest(samples, field):
    collate = eval(collate_text("torch", field), {"torch": torch})
    batch = next(iter(DataLoader(samples, batch_size=2, collate_fn=collate)))
    padded = batch if field.kind == "tensor" else batch[field.path[0]]
    assert padded.shape[:2] == (2, 8) and padded[0, 5:].abs().sum() == 0
    assert collate_text("torch", Field(("x", 1), "mapping")) is None  # nested: no fix


# -- through the shell --

def test_sequences_in_dicts_from_an_earlier_cells_loader_are_padded_there(shell):
    cells = ["import torch\nfrom torch.utils.data import DataLoader\n"
             "items = [{'ids': torch.randint(0, 9, (n,)), 'label': n % 2} for n in (3, 7, 4, 6)]\n"
             "train_loader = DataLoader(items, batch_size=2)\n",
             "%%gradcheck\nfor batch in train_loader:\n    total = batch['ids'].sum()\n"]
    d = card_of(shell, cells, "collate-unequal-sizes", raises=RuntimeError)
    assert "`['ids']`" in d.title and (1, 4) in [(sl.cell, sl.lineno) for sl in d.lines]
    fixed = fix_runs_clean(shell, cells, d)
    assert "batch_size=2, collate_fn=lambda batch: {k: torch.nn.utils.rnn.pad_sequence(" in fixed[0]


def test_a_worker_process_batch_is_explained_without_a_fix(shell):
    cells = ["%%gradcheck\nimport torch\nfrom torch.utils.data import DataLoader\n"
             "loader = DataLoader([torch.zeros(5), torch.zeros(8)], batch_size=2, num_workers=1)\n"
             "for x in loader:\n    pass\n"]
    d = card_of(shell, cells, "collate-unequal-sizes", raises=RuntimeError)
    assert d.fix is None and "num_workers=0" in d.why


def test_a_stack_of_the_users_own_is_not_a_collate_card(shell):
    cells = ["%%gradcheck\nimport torch\nparts = [torch.zeros(5), torch.zeros(8)]\nbatch = torch.stack(parts)\n"]
    card_of(shell, cells, "generic", raises=RuntimeError)


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    cells = ["%%gradcheck\nimport torch\nfrom torch.utils.data import DataLoader\n"
             "loader = DataLoader([torch.zeros(3, 4, 4), torch.zeros(3, 5, 5)], batch_size=2)\n"
             "x = next(iter(loader))\n"]
    d = card_of(shell, cells, "collate-unequal-sizes", raises=RuntimeError)
    assert d.language == "zh" and "Resize" in d.why and d.fix is None


def test_a_loaders_iterator_on_the_line_and_the_users_own_collate_function(shell):
    # NB: boxes per image differ: padding them with zeros would add boxes of class 0, so the collate
    # function the user wrote for them is the fix, on the loader the iterator came from (by its dataset)
    cells = ["import torch\nfrom torch.utils.data import DataLoader\n\n"
             "def detection_collate(batch):\n"
             "    return torch.stack([s[0] for s in batch]), [s[1] for s in batch]\n",
             "samples = [(torch.rand(3, 8, 8), torch.rand(n, 5)) for n in (2, 1, 3, 1)]\n"
             "data_loader = DataLoader(samples, batch_size=2,\n"
             "                         shuffle=False)\n",
             "%%gradcheck\nbatch_iterator = iter(data_loader)\nimages, targets = next(batch_iterator)\n"]
    d = card_of(shell, cells, "collate-unequal-sizes", raises=RuntimeError)
    assert {(2, 2), (2, 3)} <= set(lines_of(d)) and "detection_collate" in d.why
    fixed = fix_runs_clean(shell, cells, d)
    assert "                         shuffle=False, collate_fn=detection_collate)" in fixed[1]


def test_lists_of_token_ids_of_different_lengths(shell):
    """default_collate's other message (no sizes in it): the lengths read from its batch; pad_sequence takes
    tensors, so only the user's own collate function is proposed."""
    from torch.utils.data import DataLoader as _DataLoader
    with pytest.raises(RuntimeError) as info:
        next(iter(_DataLoader([[1, 2, 3], [4, 5]], batch_size=2)))
    assert parse_unequal(str(info.value)) is not None
    data = "import torch\nfrom torch.utils.data import DataLoader\nitems = [{'tokens': [1, 2, 3, 4, 5]}, {'tokens': [6, 7]}]\n"
    mine = ("def pad_collate(batch):\n    n = max(len(b['tokens']) for b in batch)\n"
            "    return {'tokens': torch.tensor([b['tokens'] + [0] * (n - len(b['tokens'])) for b in batch])}\n")
    loop = "%%gradcheck\nfor batch in loader:\n    print(batch['tokens'].shape)\n"
    cells = [data + mine, "loader = DataLoader(items, batch_size=2)\n", loop]
    d = card_of(shell, cells, "collate-unequal-sizes", raises=RuntimeError)
    assert "(5,) and (2,)" in d.title and (2, 1) in lines_of(d)
    fixed = fix_runs_clean(shell, cells, d)
    assert fixed[1].strip() == "loader = DataLoader(items, batch_size=2, collate_fn=pad_collate)"
    d = card_of(shell, [data, "loader = DataLoader(items, batch_size=2)\n", loop], "collate-unequal-sizes",
                raises=RuntimeError)
    assert d.fix is None


def test_the_datasets_line_that_made_the_unequal_field_is_marked(shell):
    """default_collate's frames say which field it was stacking (item 1 of the samples); the Dataset's
    `__getitem__` makes that field on one line, marked before its return."""
    cells = ["import torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\nclass Crops(Dataset):\n"
             "    def __len__(self):\n        return 4\n\n    def __getitem__(self, i):\n"
             "        label = i % 2\n        image = torch.zeros(3, 8 + i, 8)\n        return label, image\n\n\n"
             "loader = DataLoader(Crops(), batch_size=2)\n",
             "%%gradcheck\nfor labels, images in loader:\n    print(images.shape)\n"]
    d = card_of(shell, cells, "collate-unequal-sizes", raises=RuntimeError)
    marked = [(sl.cell, sl.lineno) for sl in d.lines if sl.cell == 1]
    assert marked == [(1, 15), (1, 11), (1, 12)], lines_of(d)  # NB: the loader, the field, the return
