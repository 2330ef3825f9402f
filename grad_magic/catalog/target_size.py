"""Messages of target-size-mismatch (rules/shapes/target_size.py): keys `shapes.size.*`."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "shapes.size.title": {
        "en": "{input} has shape {in_shape} and {target} has shape {target_shape}: the loss compares them "
              "one to one",
        "zh": "{input} 的形状是 {in_shape}，{target} 的形状是 {target_shape}：损失要逐个元素比较它们",
    },
    "shapes.size.summary": {
        "en": "Binary cross-entropy compares each prediction with the label in the same position: the input and "
              "the target must have the same shape.",
        "zh": "二元交叉熵把每个预测与同一位置的标签比较：输入和目标的形状必须相同。",
    },
    "shapes.size.what": {
        "en": "The loss on line {lineno} got an input of shape {in_shape} and a target of shape {target_shape}.",
        "zh": "第 {lineno} 行的损失收到的输入形状是 {in_shape}，目标形状是 {target_shape}。",
    },
    "shapes.size.why": {
        "en": "{input} ({in_shape}) and {target} ({target_shape}) hold the same examples in different shapes; "
              "torch refuses to guess how to pair them up.",
        "zh": "{input}（{in_shape}）和 {target}（{target_shape}）以不同的形状存放同样的样本；torch 不会去猜怎样把它们配对。",
    },
    "shapes.size.unit_dim": {
        "en": "{side} has one more dimension, of size 1, at position {dim} (a model ending in "
              "`nn.Linear(..., 1)` gives one column). Squeezing it out pairs each prediction with its label and "
              "changes no value.",
        "zh": "{side} 多出一个大小为 1 的维度，位于第 {dim} 维（以 `nn.Linear(..., 1)` 结尾的模型会输出一列）。"
              "把它 squeeze 掉后每个预测就与自己的标签配对，数值不变。",
    },
    "shapes.size.float_classes": {
        "en": "The target holds whole class numbers below {classes} as {dtype}: the model takes float labels as "
              "several labels per sample. Line {lineno} (`{code}`) makes them {dtype}; made int64, each is one class.",
        "zh": "目标里是小于 {classes} 的整数类别编号，类型却是 {dtype}：拿到浮点标签时，模型会把它们当作每个样本的多个标签。"
              "第 {lineno} 行（`{code}`）把它们生成为 {dtype}；在那里改为 int64，就是每个样本一个类别。",
    },
    "shapes.size.no_fix": {
        "en": "The two shapes differ by more than a dimension of size 1, so which one is wrong is yours to say: "
              "no fix is proposed.",
        "zh": "两个形状的差别不止一个大小为 1 的维度，哪一个不对需要你来判断：因此不提供修复。",
    },
    "shapes.size.target_made": {
        "en": "The target's {size} values per sample are made on line {lineno}: `{code}`.",
        "zh": "目标张量每个样本的 {size} 个值是在第 {lineno} 行生成的：`{code}`。",
    },
    "shapes.size.fix": {
        "en": "Squeeze out the size-1 dimension {dim} of `{name}` on line {lineno}",
        "zh": "在第 {lineno} 行去掉 `{name}` 的第 {dim} 维（大小为 1）",
    },
    "shapes.size.fix_each": {
        "en": "Squeeze out the size-1 dimension {dim} of `{name}` on line {lineno}, and in the same loss call on "
              "line {others}",
        "zh": "在第 {lineno} 行去掉 `{name}` 的第 {dim} 维（大小为 1），并在第 {others} 行同样的损失调用中也去掉",
    },
    "shapes.size.fix_target": {
        "en": "Give `{name}` its size-1 dimension where it is made (line {lineno}), and the other targets of the "
              "same loss in this function theirs",
        "zh": "在生成 `{name}` 的地方（第 {lineno} 行）给它加上大小为 1 的维度，并给本函数中同一损失的其他目标也加上",
    },
}
