"""The line that handed a Dataset the transform that made its samples (grad_magic/rules/configured.py): found
from the frames of the op that made a sample, never from the attribute's or the class's name."""
from __future__ import annotations

from earlier_cells import card_of, lines_of

CLASSES = """\
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

class Gray:
    def __call__(self, arr):
        return torch.from_numpy(arr[None].copy()).div(255)

class Chain:
    def __init__(self, steps):
        self.steps = steps

    def __call__(self, x):
        for step in self.steps:
            x = step(x)
        return x

def to_tensor(arr):
    return torch.from_numpy(arr[None].copy()).div(255)

class Digits(Dataset):
    def __init__(self, train=True, transform=None):
        self.images = np.zeros((8, 6, 6), dtype=np.float32)
        self.transform = transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        x = self.images[i]
        if self.transform is not None:
            x = self.transform(x)
        return x, 0

class Renamed(Dataset):
    def __init__(self, fn, n=8):
        self.images = np.zeros((n, 6, 6), dtype=np.float32)
        self.prep = fn

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.prep(self.images[i]), 0

conv = torch.nn.Conv2d(3, 4, 3)
"""

LOOP = "%%gradcheck\nfor images, labels in loader:\n    out = conv(images)\n"


def test_the_transform_keyword_is_named_where_the_dataset_is_built(shell):
    cells = [CLASSES, "trainset = Digits(train=True,\n                  transform=Gray())\n"
                      "loader = DataLoader(trainset, batch_size=4)\n", LOOP]
    d = card_of(shell, cells, "conv-channels", raises=RuntimeError)
    assert (2, 2) in lines_of(d), lines_of(d)
    assert "`trainset` makes each sample with the transform it was given on line 2 of In [2]: " \
           "`transform=Gray()`" in d.why, d.why


def test_a_function_held_in_a_list_passed_by_position_under_another_name_through_a_split(shell):
    """`Renamed` stores its first parameter as `self.prep`; the function that made the sample sits in a
    `Chain`'s list; the loader reads a `random_split` Subset of the Dataset."""
    cells = [CLASSES, "data = Renamed(\n    Chain([to_tensor]), n=8)\n"
                      "part, _ = torch.utils.data.random_split(data, [4, 4])\n"
                      "loader = DataLoader(part, batch_size=4)\n", LOOP]
    d = card_of(shell, cells, "conv-channels", raises=RuntimeError)
    assert (2, 2) in lines_of(d), lines_of(d)
    assert "`data` makes each sample with the prep it was given on line 2 of In [2]: `Chain([to_tensor])`" in d.why


def test_a_sample_made_outside_the_transform_names_no_transform(shell):
    """The transform the Dataset holds ran, but `__getitem__` itself made the tensor: no transform line."""
    classes = CLASSES.replace("        return x, 0\n", "        return torch.tensor(x)[None], 0\n")
    cells = [classes, "trainset = Digits(transform=lambda a: a * 1)\nloader = DataLoader(trainset, batch_size=4)\n",
             LOOP]
    d = card_of(shell, cells, "conv-channels", raises=RuntimeError)
    assert (2, 1) not in lines_of(d), lines_of(d)
    assert "makes each sample with" not in d.why, d.why


# NB: compiled under a file name that is no cell and no file of the user's: grad_magic reads it as a library's
LIBRARY = '''\
exec(compile("""
import numpy as np
import torch

class ToTensor:
    def __call__(self, pic):
        return torch.from_numpy(np.asarray(pic)[None].copy()).div(255)

class StandardTransform:
    def __init__(self, transform=None, target_transform=None):
        self.transform, self.target_transform = transform, target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

class MNIST(torch.utils.data.Dataset):
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root, self.train = root, train
        self.transform, self.target_transform = transform, target_transform
        self.transforms = StandardTransform(transform, target_transform)
        self.data = np.zeros((8, 6, 6), dtype=np.uint8)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return self.transforms(self.data[index], 3)
""", "<a library>", "exec"))
conv = torch.nn.Conv2d(3, 4, 3)
'''


def test_a_librarys_dataset_names_the_one_callable_it_was_handed(shell):
    """No user code ran while the sample was made: the library's Dataset was handed one callable, `transform`
    (its `transforms` wrapper it made itself; `root` is data)."""
    cells = ["import torch\n" + LIBRARY, "trainset = MNIST(root='data', train=True,\n"
                                         "                 transform=ToTensor(), download=True)\n"
                                         "loader = torch.utils.data.DataLoader(trainset, batch_size=4)\n", LOOP]
    d = card_of(shell, cells, "conv-channels", raises=RuntimeError)
    assert (2, 2) in lines_of(d), lines_of(d)
    assert "`trainset` makes each sample with the transform it was given on line 2 of In [2]: " \
           "`transform=ToTensor()`" in d.why, d.why


def test_a_librarys_dataset_handed_two_callables_names_neither(shell):
    cells = ["import torch\n" + LIBRARY, "trainset = MNIST(root='data', transform=ToTensor(),\n"
                                         "                 target_transform=lambda y: y)\n"
                                         "loader = torch.utils.data.DataLoader(trainset, batch_size=4)\n", LOOP]
    d = card_of(shell, cells, "conv-channels", raises=RuntimeError)
    assert "makes each sample with" not in d.why, d.why


def test_the_same_with_other_names_and_the_loop_in_a_helper_of_another_cell(shell):
    cells = [CLASSES.replace("class Gray:", "class OneChannel:").replace("class Digits(", "class Scans("),
             "scans = Scans(train=False,\n              transform=OneChannel())\n"
             "batches = DataLoader(scans, batch_size=4)\n",
             "def fit(data, layer):\n    for imgs, ys in data:\n        y = layer(imgs)\n",
             "%%gradcheck\nfit(batches, conv)\n"]
    d = card_of(shell, cells, "conv-channels", raises=RuntimeError)
    assert (2, 2) in lines_of(d), lines_of(d)
    assert "`scans` makes each sample with the transform it was given on line 2 of In [2]: " \
           "`transform=OneChannel()`" in d.why, d.why
