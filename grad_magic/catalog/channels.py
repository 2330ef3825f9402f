"""Messages of the channels family (conv-channels)."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "channels.title": {
        "en": "{layer} has `in_channels={expected}`, and dimension 1 of {input} is {got}",
        "zh": "{layer} 的 `in_channels={expected}`，而 {input} 的第 1 维是 {got}",
    },
    "channels.summary": {
        "en": "A convolution reads the channels from dimension 1 of its input, laid out (N, C, H, W). "
              "This input has another size there.",
        "zh": "卷积层从输入的第 1 维读取通道数，布局为 (N, C, H, W)。这个输入在那一维的大小不对。",
    },
    "channels.what": {
        "en": "Line {lineno} gave {layer} (weight {weight}) an input of shape {shape}. Its dimension 1 is {got}.",
        "zh": "第 {lineno} 行把形状为 {shape} 的输入交给了 {layer}（权重 {weight}）。它的第 1 维是 {got}。",
    },
    "channels.the_input": {"en": "the input", "zh": "输入"},
    "channels.the_layer": {"en": "the convolution", "zh": "卷积层"},
    "channels.why.channels_last": {
        "en": "The {expected} channels of {input} are in its last dimension: the images are laid out "
              "channels-last, as PIL, NumPy and OpenCV give them. `{calls}` moves them to dimension 1 and "
              "changes no value.",
        "zh": "{input} 的 {expected} 个通道在最后一维：图像是通道在后的布局，PIL、NumPy 和 OpenCV 都这样给出。"
              "`{calls}` 把通道移到第 1 维，数值不变。",
    },
    "channels.why.one_image": {
        "en": "{input} is one image of shape {shape}, channels last and without a batch dimension. "
              "`{calls}` puts its {expected} channels first and makes it a batch of one.",
        "zh": "{input} 是一张形状为 {shape} 的图像，通道在后，也没有批次维。`{calls}` 把它的 {expected} 个通道放到前面，"
              "并把它变成只有一张图像的批次。",
    },
    "channels.why.no_channel_dim": {
        "en": "{input} has shape {shape}: a batch of one-channel images without their channel dimension. "
              "torch took it for one image of {got} channels. `{calls}` adds the channel dimension.",
        "zh": "{input} 的形状是 {shape}：一批单通道图像，缺了通道维。torch 把它当成了一张 {got} 通道的图像。"
              "`{calls}` 加上通道维。",
    },
    "channels.why.other_images": {
        "en": "Dimension 1 of {input} is {got}, and {layer} was built with `in_channels={expected}`: grayscale "
              "images for a color model, or the other way round. Convert the images or build the layer with "
              "`in_channels={got}`. Which one is yours to say, so no fix is proposed.",
        "zh": "{input} 的第 1 维是 {got}，而 {layer} 构建时 `in_channels={expected}`：灰度图配了彩色模型，或者反过来。"
              "请转换图像，或者用 `in_channels={got}` 构建这一层。选哪个要由你决定，因此不提供修复。",
    },
    "channels.why.layer": {
        "en": "{layer} was built with `in_channels={expected}`, and the tensor it gets has {got} channels. "
              "The layer before it gives {got}, or the data does.",
        "zh": "{layer} 构建时 `in_channels={expected}`，而它收到的张量有 {got} 个通道。"
              "是前一层输出了 {got} 个通道，或者数据本身如此。",
    },
    "channels.why.no_fix_layer": {
        "en": "Whether the layer or what feeds it is wrong is yours to say, so no fix is proposed.",
        "zh": "是这一层还是给它输入的部分有误，需要你来判断，因此不提供修复。",
    },
    "channels.why.no_name": {
        "en": "The line does not pass the tensor by a name, so no fix is proposed: call `{calls}` on it where "
              "you make it.",
        "zh": "这一行没有用名字传入这个张量，因此不提供修复：请在生成它的地方调用 `{calls}`。",
    },
    "channels.origin": {
        "en": "Line {lineno} gave it the shape {shape}: `{code}`.",
        "zh": "第 {lineno} 行给了它形状 {shape}：`{code}`。",
    },
    "channels.built_at": {
        "en": "Line {lineno} built {layer}: `{code}`.",
        "zh": "第 {lineno} 行构建了 {layer}：`{code}`。",
    },
    "channels.why.in_channels": {
        "en": "The layer before it is a convolution that gives {got} channels, so {layer} takes `in_channels={got}`.",
        "zh": "它前面的一层是输出 {got} 个通道的卷积，所以 {layer} 应取 `in_channels={got}`。",
    },
    "channels.fix.in_channels": {
        "en": "Build `{layer}` with `in_channels={got}` on line {lineno}",
        "zh": "在第 {lineno} 行用 `in_channels={got}` 构建 `{layer}`",
    },
    "channels.fix.channels_last": {
        "en": "Move the channels of `{name}` to dimension 1 on line {lineno}",
        "zh": "在第 {lineno} 行把 `{name}` 的通道移到第 1 维",
    },
    "channels.fix.one_image": {
        "en": "Put the channels of `{name}` first and add a batch dimension on line {lineno}",
        "zh": "在第 {lineno} 行把 `{name}` 的通道放到前面并加上批次维",
    },
    "channels.fix.no_channel_dim": {
        "en": "Add the channel dimension to `{name}` on line {lineno}",
        "zh": "在第 {lineno} 行给 `{name}` 加上通道维",
    },
    "channels.fix.keep_dim": {
        "en": "Keep the channel dimension where the input is made: `{kept}` for `{code}` on line {lineno}",
        "zh": "在生成输入的地方保留通道维：第 {lineno} 行把 `{code}` 改为 `{kept}`",
    },
}
