"""Messages of the device-assert rule (cuda-device-assert)."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "assert.title": {
        "en": "A {device} kernel stopped on a device-side assert",
        "zh": "{device} 内核触发了设备端断言（device-side assert）",
    },
    "assert.summary": {
        "en": "A GPU kernel found a value out of its range (most often a class label or an index) and stopped. "
              "The GPU can no longer be used in this session.",
        "zh": "某个 GPU 内核发现一个超出范围的值（最常见的是类别标签或索引）并停止了。本次会话中 GPU 已无法再使用。",
    },
    "assert.what": {
        "en": "Line {lineno} reported it, but {device} runs kernels asynchronously: the kernel that failed may "
              "have been launched by an earlier line (or an earlier turn of a loop). After a device-side assert "
              "the process's {device} context is broken: every later GPU call, in any cell, raises this same "
              "error until you restart the kernel.",
        "zh": "错误在第 {lineno} 行被报告，但 {device} 的内核是异步执行的：出错的内核可能是更早的某一行（或循环的"
              "上一轮）启动的。设备端断言之后，本进程的 {device} 上下文已经损坏：之后任何单元格里的任何 GPU 调用都会"
              "抛出同样的错误，直到重启内核。",
    },
    "assert.why": {
        "en": "GPU kernels check their own inputs and stop on a value out of range; on the CPU the same call "
              "raises a clear error instead (`Target 3 is out of bounds.`, `index out of range in self`).",
        "zh": "GPU 内核会自行检查输入，遇到超出范围的值就停止；同样的调用在 CPU 上会给出清楚的错误"
              "（`Target 3 is out of bounds.`、`index out of range in self`）。",
    },
    "assert.checks": {
        "en": "Kernels that check values run in these calls of this cell. {checks}.",
        "zh": "本单元格中以下调用的内核会检查数值。{checks}。",
    },
    "assert.sep": {"en": ". ", "zh": "。"},
    "assert.check.classes": {
        "en": "`{call}` on line {lineno}: every label in `{target}` must be a class index in 0..{last}",
        "zh": "第 {lineno} 行的 `{call}`：`{target}` 中的每个标签都必须是 0..{last} 之间的类别索引",
    },
    "assert.check.classes_unknown": {
        "en": "`{call}` on line {lineno}: every label in `{target}` must be a class index in 0..C-1, C the number "
              "of classes the model outputs. Labels numbered from 1, or a label the model has no output for, "
              "break it",
        "zh": "第 {lineno} 行的 `{call}`：`{target}` 中的每个标签都必须是 0..C-1 之间的类别索引，C 是模型输出的类别数。"
              "标签从 1 开始编号，或者模型没有对应输出的标签，都会触发断言",
    },
    "assert.check.embedding": {
        "en": "`{call}` on line {lineno}: `{table}` (nn.Embedding, {rows} rows) needs every index in its input in "
              "0..{last}",
        "zh": "第 {lineno} 行的 `{call}`：`{table}`（nn.Embedding，{rows} 行）要求输入中的每个索引都在 0..{last} 之间",
    },
    "assert.check.embedding_unknown": {
        "en": "`{call}` on line {lineno}: every index in its input must be below the embedding table's row count",
        "zh": "第 {lineno} 行的 `{call}`：输入中的每个索引都必须小于嵌入表的行数",
    },
    "assert.check.index": {
        "en": "`{call}` on line {lineno}: every index must be within the size of the dimension it indexes",
        "zh": "第 {lineno} 行的 `{call}`：每个索引都必须在它所索引的维度大小之内",
    },
    "assert.check.unit": {
        "en": "`{call}` on line {lineno}: its input and target must lie in [0, 1] (a sigmoid first, or "
              "`binary_cross_entropy_with_logits` on raw scores)",
        "zh": "第 {lineno} 行的 `{call}`：输入和目标都必须在 [0, 1] 之内（先做 sigmoid，或者对原始分数使用 "
              "`binary_cross_entropy_with_logits`）",
    },
    "assert.check.multinomial": {
        "en": "`{call}` on line {lineno}: its probabilities must be finite and non-negative, and not all zero",
        "zh": "第 {lineno} 行的 `{call}`：概率必须是有限的非负数，且不能全为零",
    },
    "assert.common": {
        "en": "The usual causes: class labels outside 0..C-1 in cross_entropy / nll_loss (labels numbered from 1, "
              "or more classes in the data than outputs in the model); token ids not below num_embeddings in "
              "nn.Embedding; out-of-range indices in gather / index_select / indexing; inputs outside [0, 1] in "
              "binary_cross_entropy.",
        "zh": "常见原因：cross_entropy / nll_loss 的类别标签不在 0..C-1 之内（标签从 1 开始编号，或数据中的类别比模型"
              "的输出多）；nn.Embedding 的 token id 不小于 num_embeddings；gather / index_select / 索引操作的索引越界；"
              "binary_cross_entropy 的输入不在 [0, 1] 之内。",
    },
    "assert.why_no_fix": {
        "en": "No fixed cell is proposed: the values that broke the check can no longer be read (the GPU refuses "
              "every call after the assert). Restart the kernel, then run this cell once with its tensors on the "
              "CPU: its error names the value. Or set `os.environ[\"CUDA_LAUNCH_BLOCKING\"] = \"1\"` in the first "
              "cell, before `import torch`, so that the error is reported at the line that launched the kernel.",
        "zh": "这里不提供修正后的单元格：触发检查的那些值已经无法读取（断言之后 GPU 拒绝所有调用）。请重启内核，然后把"
              "这个单元格的张量放到 CPU 上运行一次，它的错误会指出具体的值。或者在第一个单元格、`import torch` 之前"
              "设置 `os.environ[\"CUDA_LAUNCH_BLOCKING\"] = \"1\"`，让错误在启动该内核的那一行报告。",
    },
}
