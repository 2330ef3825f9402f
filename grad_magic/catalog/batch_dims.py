"""Messages of the shapes rules about the batch dimension: one sample given without it (shapes.unbatched.*), a
view that writes the batch size as a number (shapes.view.*)."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "shapes.unbatched.why": {
        "en": "A convolution before {layer} ran on one sample without its batch dimension, shape {sample}: "
              "torch accepts that, so its {rows} channels became the rows {layer} got, each with {got} pixels. "
              "The layer is right for a batch; the model needs a batch of one.",
        "zh": "{layer} 之前的卷积在一个没有批次维度的样本上运行，形状为 {sample}：torch 接受这种输入，"
              "于是它的 {rows} 个通道变成了 {layer} 收到的行，每行 {got} 个像素。"
              "这个层对批次输入是正确的；模型需要的是一个大小为 1 的批次。",
    },
    "shapes.unbatched.no_fix": {
        "en": "Give the model a batch of one, for example with `.unsqueeze(0)` where the sample is passed.",
        "zh": "给模型一个大小为 1 的批次，例如在传入样本的地方加上 `.unsqueeze(0)`。",
    },
    "shapes.unbatched.fix": {
        "en": "Give the model a batch of one: `{name}.unsqueeze(0)` on line {lineno}",
        "zh": "给模型一个大小为 1 的批次：在第 {lineno} 行使用 `{name}.unsqueeze(0)`",
    },
    "shapes.view.title": {
        "en": "`{receiver}` is reshaped with the batch size written as {first}, and this batch has {batch}",
        "zh": "`{receiver}` 在变形时把批次大小写成了 {first}，而这个批次只有 {batch}",
    },
    "shapes.view.summary": {
        "en": "A view or reshape keeps the number of elements, so its sizes must multiply to the tensor's size.",
        "zh": "view 或 reshape 不改变元素个数，所以给出的各维大小相乘必须等于张量的大小。",
    },
    "shapes.view.what": {
        "en": "Line {lineno} reshaped `{receiver}`, which holds {size} values (a batch of {batch}), to [{dims}].",
        "zh": "第 {lineno} 行把 `{receiver}`（共 {size} 个值，批次大小为 {batch}）变形为 [{dims}]。",
    },
    "shapes.view.why": {
        "en": "The first size, {first}, is the batch size written as a number. A DataLoader's last batch is "
              "smaller when the dataset's length is not a multiple of it ({batch} here), and the rest of the sizes "
              "fit this batch: -1 lets torch work the batch size out.",
        "zh": "第一个大小 {first} 是写成数字的批次大小。当数据集长度不是它的整数倍时，DataLoader 的最后一个批次会更小"
              "（这里是 {batch}），而其余各维的大小都符合这个批次：用 -1 让 torch 自己算出批次大小。",
    },
    "shapes.view.fix": {
        "en": "Let torch work the batch size out: `-1` for `{code}` on line {lineno}",
        "zh": "让 torch 自己算出批次大小：在第 {lineno} 行把 `{code}` 改为 `-1`",
    },
    "shapes.onehot_flat.what": {
        "en": "The loss on line {lineno} got {input} predictions and {target} labels.",
        "zh": "第 {lineno} 行的损失收到了 {input} 个预测和 {target} 个标签。",
    },
    "shapes.onehot_flat.why": {
        "en": "The library's loss flattens the labels it is given into one label a sample, and {target} has shape "
              "{shape}: flattened, that is {n} labels.",
        "zh": "库里的损失函数会把收到的标签展平成每个样本一个标签，而 {target} 的形状是 {shape}：展平后是 {n} 个标签。",
    },
    "shapes.unpacked.title": {
        "en": "{callee} unpacks {want} sizes from the shape of {name}, which is {shape}",
        "zh": "{callee} 要从 {name} 的形状中解包出 {want} 个大小，而它的形状是 {shape}",
    },
    "shapes.unpacked.summary": {
        "en": "A library reads its input's dimensions one by one (`batch_size, seq_length = input_ids.shape`); this "
              "input has fewer dimensions than it reads.",
        "zh": "库代码逐个读取输入的各维（`batch_size, seq_length = input_ids.shape`）；这个输入的维数比它读取的少。",
    },
    "shapes.unpacked.what": {
        "en": "Line {lineno} passed {name} (shape {shape}) to {callee}, whose code ({where}) unpacks {want} sizes "
              "from its shape and found {got}.",
        "zh": "第 {lineno} 行把 {name}（形状 {shape}）传给了 {callee}，其代码（{where}）要从形状中解包出 {want} 个大小，"
              "却只有 {got} 个。",
    },
    "shapes.unpacked.why_batch": {
        "en": "{name} is one sample without its batch dimension: `.unsqueeze(0)` makes it a batch of one.",
        "zh": "{name} 是缺少批次维的单个样本：`.unsqueeze(0)` 把它变成大小为 1 的批次。",
    },
    "shapes.unpacked.why": {
        "en": "{name} has {got} dimensions where {want} are read: see where it is made (marked).",
        "zh": "{name} 只有 {got} 维，而代码读取 {want} 维：请查看它生成的地方（已标出）。",
    },
    "shapes.unpacked.fix": {
        "en": "Add the batch dimension to `{name}` where line {lineno} passes it",
        "zh": "在第 {lineno} 行传入 `{name}` 的地方加上批次维",
    },
}
