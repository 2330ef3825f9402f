"""Messages of the collate family (collate-unequal-sizes)."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "collate.title": {
        "en": "{loader} cannot stack {field} into a batch: shapes {a} and {b}",
        "zh": "{loader} 无法把{field}堆叠成一个批次：形状分别是 {a} 和 {b}",
    },
    "collate.summary": {
        "en": "A DataLoader stacks the samples of a batch into one tensor, so every sample must have the same shape.",
        "zh": "DataLoader 会把一个批次的样本堆叠成一个张量，所以每个样本的形状必须相同。",
    },
    "collate.what": {
        "en": "Line {lineno} asked {loader} for a batch. Sample {i} had shape {a} and sample {j} had shape {b}.",
        "zh": "第 {lineno} 行向 {loader} 取一个批次。样本 {i} 的形状是 {a}，样本 {j} 的形状是 {b}。",
    },
    "collate.the_samples": {"en": "the samples", "zh": "样本"},
    "collate.field": {"en": "field `{field}` of the samples", "zh": "样本的字段 `{field}`"},
    "collate.why": {
        "en": "The default collate function stacks {field} with `torch.stack`, which takes tensors of one shape.",
        "zh": "默认的 collate 函数用 `torch.stack` 堆叠{field}，它只接受形状相同的张量。",
    },
    "collate.why_sequences": {
        "en": "They differ in their first dimension alone: sequences of different lengths. "
              "Padding them to the longest with zeros makes them stack.",
        "zh": "它们只在第一维上不同：是长度不同的序列。用 0 把它们补到最长的长度就能堆叠。",
    },
    "collate.why_images": {
        "en": "Shapes {a} and {b} differ in more than their length: images of different sizes, usually. "
              "The Dataset's transform can give them one size, for example with a Resize.",
        "zh": "形状 {a} 和 {b} 的差别不只是长度：通常是尺寸不同的图像。"
              "可以在 Dataset 的 transform 里把它们变成同一尺寸，例如用 Resize。",
    },
    "collate.no_fix": {
        "en": "The size to give them is yours to say, so no fix is proposed.",
        "zh": "该用什么尺寸需要你来决定，因此不提供修复。",
    },
    "collate.no_fix_worker": {
        "en": "A worker process made the batch and kept no sample to read, so no fix is proposed. "
              "With `num_workers=0` the card can name the field and pad it.",
        "zh": "这个批次是在工作进程中做成的，没有留下可读的样本，因此不提供修复。"
              "设置 `num_workers=0` 后，卡片可以指出是哪个字段并补齐它。",
    },
    "collate.fix": {
        "en": "Pad the sequences of each batch of `{loader}` with a `collate_fn` on line {lineno}",
        "zh": "在第 {lineno} 行给 `{loader}` 加上 `collate_fn`，把每个批次的序列补齐",
    },
    "collate.why_theirs": {
        "en": "You wrote `{function}` to make such batches, and this DataLoader does not use it.",
        "zh": "你写了 `{function}` 来组成这样的批次，但这个 DataLoader 没有使用它。",
    },
    "collate.fix_theirs": {
        "en": "Make the batches of `{loader}` with your `{function}`: `collate_fn={function}` on line {lineno}",
        "zh": "用你的 `{function}` 组成 `{loader}` 的批次：在第 {lineno} 行加上 `collate_fn={function}`",
    },
}
