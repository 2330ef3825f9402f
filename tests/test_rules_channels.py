"""The channels family (conv-channels): torch's messages, the layout plans, and cards through a real shell whose
fixes are run again in a fresh session."""
from __future__ import annotations

import pytest
import torch

from grad_magic.rules.channels.culprit import Layout, layout_of
from grad_magic.rules.channels.message import ChannelError, parse_channel_error
from earlier_cells import card_of, fix_runs_clean, lines_of


def _message(layer: torch.nn.Module, x: torch.Tensor) -> str:
    with pytest.raises(RuntimeError) as info:
        layer(x)
    return str(info.value)


@pytest.mark.parametrize("layer,shape,expected", [
    (torch.nn.Conv2d(3, 40, 3), (3, 196, 196, 3),
     ChannelError((40, 3, 3, 3), (3, 196, 196, 3), 3, 196, False)),
    (torch.nn.Conv2d(3, 40, 3), (196, 196, 3),  # NB: torch shows an unbatched input with a 1 in front
     ChannelError((40, 3, 3, 3), (1, 196, 196, 3), 3, 196, False)),
    (torch.nn.Conv1d(4, 8, 3), (2, 10, 4), ChannelError((8, 4, 3), (2, 10, 4), 4, 10, False)),
    (torch.nn.Conv3d(1, 2, 3), (2, 3, 5, 5, 5), ChannelError((2, 1, 3, 3, 3), (2, 3, 5, 5, 5), 1, 3, False)),
    (torch.nn.Conv2d(4, 8, 3, groups=2), (2, 3, 5, 5), ChannelError((8, 2, 3, 3), (2, 3, 5, 5), 4, 3, False)),
    (torch.nn.ConvTranspose2d(4, 8, 3), (2, 3, 5, 5), ChannelError((4, 8, 3, 3), (2, 3, 5, 5), 4, 3, True)),
])
def test_the_messages_of_this_torch_are_the_ones_keyed_on(layer, shape, expected):
    assert parse_channel_error(_message(layer, torch.randn(*shape))) == expected


def test_older_wording_and_other_messages():
    old = "Given groups=1, weight of size 64 3 3 3, expected input[16, 1, 28, 28] to have 3 channels, but got 1 " \
          "channels instead"
    assert parse_channel_error(old) == ChannelError((64, 3, 3, 3), (16, 1, 28, 28), 3, 1, False)
    assert parse_channel_error("mat1 and mat2 shapes cannot be multiplied (4x256 and 400x120)") is None
    assert parse_channel_error(_message(torch.nn.BatchNorm2d(3), torch.randn(2, 4, 5, 5))) is None


def _err(weight, expected, got, transposed=False):
    return ChannelError(weight, (), expected, got, transposed)


@pytest.mark.parametrize("shape,err,from_layer,layout,calls", [
    ((8, 32, 32, 3), _err((16, 3, 3, 3), 3, 32), False, Layout.CHANNELS_LAST, ".permute(0, 3, 1, 2)"),
    ((2, 50, 128), _err((64, 128, 3), 128, 50), False, Layout.CHANNELS_LAST, ".permute(0, 2, 1)"),
    ((2, 4, 8, 8, 3), _err((2, 3, 3, 3, 3), 3, 4), False, Layout.CHANNELS_LAST, ".permute(0, 4, 1, 2, 3)"),
    ((64, 64, 3), _err((8, 3, 3, 3), 3, 64), False, Layout.ONE_IMAGE_CHANNELS_LAST, ".permute(2, 0, 1).unsqueeze(0)"),
    ((16, 28, 28), _err((6, 1, 5, 5), 1, 16), False, Layout.NO_CHANNEL_DIM, ".unsqueeze(1)"),
    ((4, 1, 64, 64), _err((16, 3, 3, 3), 3, 1), False, Layout.OTHER_IMAGES, ""),
    # an activation whose last size happens to be the channel count: made by a layer, not an image layout
    ((4, 32, 16, 16), _err((64, 16, 3, 3), 16, 32), True, Layout.LAYER, ""),
    # 16 channels last in an image is no image layout: not moved
    ((4, 32, 16, 16), _err((64, 16, 3, 3), 16, 32), False, Layout.LAYER, ""),
    ((2, 5, 5, 4), _err((4, 8, 3, 3), 4, 5, transposed=True), False, Layout.LAYER, ""),
])
def test_layouts(shape, err, from_layer, layout, calls):
    found = layout_of(shape, err, from_layer)
    assert found is layout and found.calls(len(shape)) == calls


def test_the_planned_calls_put_the_channels_in_dimension_1():
    conv = torch.nn.Conv2d(3, 8, 3)
    for shape, layout in (((2, 9, 9, 3), Layout.CHANNELS_LAST), ((9, 9, 3), Layout.ONE_IMAGE_CHANNELS_LAST)):
        x = torch.rand(*shape)  # noqa: F841 -- read by the eval below
        out = conv(eval("x" + layout.calls(len(shape))))
        assert out.shape[:2] == (shape[0] if len(shape) == 4 else 1, 8)


# -- through the shell: the fix runs clean in a fresh session --

def test_channels_last_images_of_an_earlier_cells_loader_are_permuted_where_the_model_gets_them(shell):
    cells = ["import torch\nimport torch.nn as nn\n\n"
             "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.conv = nn.Conv2d(3, 4, 3)\n\n    def forward(self, x):\n"
             "        return self.conv(x).mean(dim=(1, 2, 3))\n\nnet = Net()\n",
             "%%gradcheck\nbatch = torch.rand(2, 12, 12, 3)\nscore = net(batch)\n"]
    d = card_of(shell, cells, "conv-channels", raises=RuntimeError)
    assert (2, 3) in lines_of(d) and d.names == ("batch",)
    fixed = fix_runs_clean(shell, cells, d)
    assert "score = net(batch.permute(0, 3, 1, 2))" in fixed[-1]


def test_word_embeddings_into_a_conv1d_are_permuted(shell):
    cells = ["%%gradcheck\nimport torch\nemb = torch.nn.Embedding(100, 32)\nconv = torch.nn.Conv1d(32, 8, 3)\n"
             "tokens = torch.randint(0, 100, (4, 20))\nvectors = emb(tokens)\nfeatures = conv(vectors)\n"]
    d = card_of(shell, cells, "conv-channels", raises=RuntimeError)
    assert "`in_channels=32`" in d.title and "(4, 20, 32)" in d.what
    fixed = fix_runs_clean(shell, cells, d)
    assert "features = conv(vectors.permute(0, 2, 1))" in fixed[-1]


def test_an_unnamed_input_gets_no_fix(shell):
    cells = ["%%gradcheck\nimport torch\nconv = torch.nn.Conv2d(3, 8, 3)\nout = conv(torch.rand(2, 10, 10, 3))\n"]
    d = card_of(shell, cells, "conv-channels", raises=RuntimeError)
    assert d.fix is None and "`.permute(0, 3, 1, 2)`" in d.why


def test_a_layer_fed_by_data_of_another_channel_count_gets_no_fix(shell):
    cells = ["%%gradcheck\nimport torch\nconv = torch.nn.Conv2d(5, 8, 3)\nx = torch.rand(2, 7, 10, 10)\n"
             "out = conv(x)\n"]
    d = card_of(shell, cells, "conv-channels", raises=RuntimeError)
    assert d.fix is None and "yours to say" in d.why


def test_chinese_card(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    cells = ["%%gradcheck\nimport torch\nconv = torch.nn.Conv2d(1, 6, 5)\ndigits = torch.rand(16, 28, 28)\n"
             "out = conv(digits)\n"]
    d = card_of(shell, cells, "conv-channels", raises=RuntimeError)
    assert "通道维" in d.why and d.fix is not None and "digits.unsqueeze(1)" in d.fix.source


def test_a_channel_taken_with_one_index_keeps_its_dimension_where_it_is_taken(shell):
    """The run made the input by indexing dimension 1 with a number (`lab[:, 0, :, :]`), through an alias an unseen
    op made (`Variable`): fixed there (`0:1`), since the concatenation further down needs the dimension too."""
    cells = ["import torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\n"
             "gen = nn.Conv2d(1, 2, 3, padding=1)\nlab = torch.rand(4, 3, 8, 8)\n",
             "%%gradcheck\nl_images = lab[:, 0, :, :]  # luminance\nl_images = 2 * l_images\n"
             "l_images = Variable(l_images)\nfake = gen(l_images)\nboth = torch.cat([l_images, fake], 1)\n"]
    d = card_of(shell, cells, "conv-channels", raises=RuntimeError)
    assert (d.cell, 2) in lines_of(d) and (d.cell, 5) in lines_of(d)
    fixed = fix_runs_clean(shell, cells, d)
    assert "l_images = lab[:, 0:1, :, :]  # luminance\n" in fixed[1]
