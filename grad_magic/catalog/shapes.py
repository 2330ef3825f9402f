"""Messages of the shapes rules."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "shapes.the_input": {"en": "the input", "zh": "输入"},
    "shapes.the_target": {"en": "the target", "zh": "目标"},
    "shapes.origin": {
        "en": "`{name}` was last set on line {lineno}: `{code}`.",
        "zh": "`{name}` 最后一次赋值在第 {lineno} 行：`{code}`。",
    },
    # -- shape-mismatch --
    "shapes.linear.title": {
        "en": "{layer} expects {expected} input features, and its input has {got}",
        "zh": "{layer} 需要 {expected} 个输入特征，而它的输入有 {got} 个",
    },
    "shapes.linear.summary": {
        "en": "A Linear layer multiplies the last dimension of its input by its weight: that dimension must "
              "equal the layer's in_features.",
        "zh": "Linear 层用它的权重去乘输入的最后一维：这一维的大小必须等于该层的 in_features。",
    },
    "shapes.linear.what": {
        "en": "On line {lineno}, {input} of shape {shape} went into {layer} = nn.Linear({expected}, {out}). Its "
              "last dimension is {got}, and the layer takes {expected}.",
        "zh": "第 {lineno} 行把形状为 {shape} 的 {input} 送进了 {layer} = nn.Linear({expected}, {out})。"
              "它的最后一维是 {got}，而这一层需要 {expected}。",
    },
    "shapes.linear.functional": {"en": "F.linear with `{weight}`", "zh": "使用 `{weight}` 的 F.linear"},
    "shapes.linear.what_functional": {
        "en": "On line {lineno}, {input} of shape {shape} went into {layer}, a weight of shape ({out}, {expected}). "
              "The input's last dimension is {got}, and the weight takes {expected}.",
        "zh": "第 {lineno} 行把形状为 {shape} 的 {input} 送进了 {layer}，权重形状为 ({out}, {expected})。"
              "输入的最后一维是 {got}，而权重需要 {expected}。",
    },
    "shapes.linear.why_flatten_4d": {
        "en": "{input} is still 4-D, {shape}: (batch, channels, height, width), as a convolution or pooling "
              "layer returns it. A Linear layer works on the last dimension only, so it sees rows of {got} "
              "values. Flattened from dimension 1, each sample has {flat} values, exactly the {expected} that "
              "{layer} expects. The flatten between the conv/pool stack and the Linear layer is missing.",
        "zh": "{input} 仍然是 4 维的 {shape}：（批大小, 通道, 高, 宽），也就是卷积层或池化层输出的样子。"
              "Linear 层只作用于最后一维，所以它看到的是每行 {got} 个值。从第 1 维展平后，每个样本有 {flat} "
              "个值，正好是 {layer} 需要的 {expected} 个。卷积/池化部分和 Linear 层之间少了一次展平。",
    },
    "shapes.linear.why_flatten": {
        "en": "{input} is still {ndim}-D, {shape}. A Linear layer works on the last dimension only, so it sees "
              "rows of {got} values. Flattened from dimension 1, each sample has {flat} values, exactly the "
              "{expected} that {layer} expects: a flatten before the layer is missing.",
        "zh": "{input} 仍然是 {ndim} 维的 {shape}。Linear 层只作用于最后一维，所以它看到的是每行 {got} 个值。"
              "从第 1 维展平后，每个样本有 {flat} 个值，正好是 {layer} 需要的 {expected} 个："
              "这一层之前少了一次展平。",
    },
    "shapes.linear.why_both": {
        "en": "{input} is {ndim}-D, {shape}, and a Linear layer works on its last dimension only ({got} values). "
              "Flattened from dimension 1 it would have {flat} values per sample, which is not {expected} "
              "either: {layer}'s in_features was worked out for a different input (another image size, "
              "another conv/pool stack).",
        "zh": "{input} 是 {ndim} 维的 {shape}，而 Linear 层只作用于最后一维（{got} 个值）。即使从第 1 维展平，"
              "每个样本也有 {flat} 个值，同样不是 {expected}：{layer} 的 in_features 是按另一种输入"
              "（别的图像尺寸、别的卷积/池化结构）算出来的。",
    },
    "shapes.linear.why_in_features": {
        "en": "Each sample of {input} has {got} features, but {layer} was built for {expected}. Its in_features "
              "was worked out for a different input (another image size after the conv/pool stack, another "
              "number of columns in the data).",
        "zh": "{input} 的每个样本有 {got} 个特征，但 {layer} 是按 {expected} 个特征建的。它的 in_features "
              "是按另一种输入算出来的（卷积/池化之后的图像尺寸不同，或数据的列数不同）。",
    },
    "shapes.linear.origin": {
        "en": "`{input}` comes from line {lineno}: `{code}`.",
        "zh": "`{input}` 来自第 {lineno} 行：`{code}`。",
    },
    "shapes.linear.fix_flatten": {
        "en": "Flatten the input from dimension 1 before {layer}: `{code}` on line {lineno}",
        "zh": "在 {layer} 之前把输入从第 1 维展平：第 {lineno} 行改用 `{code}`",
    },
    "shapes.linear.fix_flatten_sequential": {
        "en": "Flatten before the Linear layer: add `{code}` in the nn.Sequential on line {lineno}",
        "zh": "在 Linear 层之前展平：在第 {lineno} 行的 nn.Sequential 中加上 `{code}`",
    },
    "shapes.linear.fix_in_features": {
        "en": "Build {layer} for the {got} features it gets: in_features {got} instead of `{old}` on line "
              "{lineno}",
        "zh": "按实际得到的 {got} 个特征来建 {layer}：把第 {lineno} 行的 in_features 从 `{old}` 改为 {got}",
    },
    "shapes.linear.no_fix_parse": {
        "en": "The edited cell would not parse, so no fix is proposed.",
        "zh": "修改后的单元格无法解析，因此不提供修复。",
    },
    "shapes.linear.no_fix_flatten_elsewhere": {
        "en": "The layer is called outside this cell's code: add `x = x.flatten(1)` (or nn.Flatten()) just "
              "before {layer} where it is called.",
        "zh": "这一层是在本单元格的代码之外被调用的：请在调用 {layer} 的地方之前加上 `x = x.flatten(1)`"
              "（或 nn.Flatten()）。",
    },
    "shapes.linear.no_fix_both": {
        "en": "Both the flatten and the in_features ({flat}) would have to change, and which input size was meant "
              "is not known here, so no fix is proposed.",
        "zh": "展平和 in_features（{flat}）都需要修改，而这里无法确定原本想要的输入尺寸，因此不提供修复。",
    },
    "shapes.linear.made_at": {
        "en": "{layer} is made on line {lineno} (`{code}`).",
        "zh": "{layer} 是在第 {lineno} 行创建的（`{code}`）。",
    },
    "shapes.linear.fix_in_features_expr": {
        "en": "Build {layer} for the {got} features it gets: in_features `{new}` instead of `{old}` on line "
              "{lineno}",
        "zh": "按实际得到的 {got} 个特征来建 {layer}：把第 {lineno} 行的 in_features 从 `{old}` 改为 `{new}`",
    },
    "shapes.linear.no_fix_ctor": {
        "en": "{layer}'s in_features is not a number written in this cell, so no fix is proposed: give it "
              "in_features={got} where it is set (or use nn.LazyLinear, which infers it).",
        "zh": "{layer} 的 in_features 不是在本单元格中直接写出的数字，因此不提供修复：请在设置它的地方把 "
              "in_features 改为 {got}（或使用能自动推断的 nn.LazyLinear）。",
    },
    "shapes.linear.no_fix_several": {
        "en": "Several Linear layers in this cell could be {layer}, so no fix is proposed: give it "
              "in_features={got}.",
        "zh": "本单元格中有好几个 Linear 层都可能是 {layer}，因此不提供修复：请把它的 in_features 设为 {got}。",
    },
    "shapes.product.operands": {"en": "the two matrices", "zh": "两个矩阵"},
    "shapes.product.title": {
        "en": "A {a}x{b} matrix cannot be multiplied by a {c}x{d} one",
        "zh": "{a}x{b} 的矩阵不能乘以 {c}x{d} 的矩阵",
    },
    "shapes.product.summary": {
        "en": "In a matrix product the first operand's columns are matched with the second one's rows: the two "
              "numbers must be equal.",
        "zh": "矩阵乘法中，第一个矩阵的列数要和第二个矩阵的行数对应：两者必须相等。",
    },
    "shapes.product.what": {
        "en": "On line {lineno}, {operands} were multiplied: {a}x{b} times {c}x{d}.",
        "zh": "第 {lineno} 行把 {operands} 相乘：{a}x{b} 乘以 {c}x{d}。",
    },
    "shapes.product.why": {
        "en": "The first has {b} columns and the second {c} rows. Which one has the wrong shape is not known "
              "here, so no fix is proposed; a transposed operand (`.T`) is a common cause.",
        "zh": "第一个矩阵有 {b} 列，第二个有 {c} 行。这里无法判断是哪一个形状不对，因此不提供修复；"
              "常见原因是某个操作数需要转置（`.T`）。",
    },
    # -- batch-size-mismatch --
    "shapes.batch.title": {
        "en": "The loss got {n_in} predictions in {input} and {n_target} labels in {target}",
        "zh": "损失函数在 {input} 中得到 {n_in} 个预测，而在 {target} 中得到 {n_target} 个标签",
    },
    "shapes.batch.summary": {
        "en": "A classification loss pairs row i of its input with label i of its target: both must have the "
              "same batch size.",
        "zh": "分类损失把输入的第 i 行和目标的第 i 个标签配对：两者的批大小必须相同。",
    },
    "shapes.batch.what": {
        "en": "The loss on line {lineno} was given {input} of shape {in_shape} ({n_in} rows) and {target} of "
              "shape {target_shape} ({n_target} labels).",
        "zh": "第 {lineno} 行的损失函数得到了形状为 {in_shape} 的 {input}（{n_in} 行）和形状为 "
              "{target_shape} 的 {target}（{n_target} 个标签）。",
    },
    "shapes.batch.why": {
        "en": "The first dimension of both is the batch, and they must agree.",
        "zh": "两者的第一维都是批大小，必须一致。",
    },
    "shapes.batch.target_not_flat": {
        "en": "{target} has shape {shape}: one label per position, {n_in} in all, while {input} was flattened "
              "to one row per position. The target must be flattened the same way.",
        "zh": "{target} 的形状是 {shape}：每个位置一个标签，共 {n_in} 个，而 {input} 已经展平成每个位置一行。"
              "目标也必须以同样的方式展平。",
    },
    "shapes.batch.fix_target": {
        "en": "Flatten the labels like the predictions: `{code}` on line {lineno}",
        "zh": "像预测那样展平标签：第 {lineno} 行改用 `{code}`",
    },
    "shapes.batch.input_not_flat": {
        "en": "{input} has shape {shape}: (batch, positions, classes), and the loss reads its first dimension "
              "as the batch, while the {n_target} labels are one per position. The predictions must be "
              "flattened to one row per position.",
        "zh": "{input} 的形状是 {shape}：（批大小, 位置, 类别），损失函数把第一维当作批大小，而 {n_target} "
              "个标签是每个位置一个。预测必须展平成每个位置一行。",
    },
    "shapes.batch.fix_input": {
        "en": "Flatten the predictions to one row per label: `{code}` on line {lineno}",
        "zh": "把预测展平成每个标签一行：第 {lineno} 行改用 `{code}`",
    },
    "shapes.batch.view": {
        "en": "`{code}` on line {lineno} reshapes to rows of {n}, but each sample has {per_sample} values. The -1 "
              "then makes {n_in} rows out of {n_target} samples, and the batch size is lost.",
        "zh": "第 {lineno} 行的 `{code}` 把张量变形为每行 {n} 个值，但每个样本有 {per_sample} 个值。于是 -1 "
              "把 {n_target} 个样本变成了 {n_in} 行，批大小就此丢失。",
    },
    "shapes.batch.fix_view": {
        "en": "Keep the batch dimension: `{receiver}.size(0), -1` in the reshape on line {lineno}",
        "zh": "保留批大小这一维：第 {lineno} 行的变形改用 `{receiver}.size(0), -1`",
    },
    "shapes.batch.fix_view_linear": {
        "en": "; in_features {per_sample} instead of `{old}` on line {lineno}",
        "zh": "；并把第 {lineno} 行的 in_features 从 `{old}` 改为 {per_sample}",
    },
    "shapes.batch.model_built": {
        "en": "The predictions come from the model built on line {lineno} (`{code}`): {n_in} rows, one per example its "
              "head scores; the {n_target} labels are more than one per example (labels for another task, such "
              "as one per token). Either the labels or the model class is the wrong one for the task.",
        "zh": "预测来自第 {lineno} 行构建的模型（`{code}`）：{n_in} 行，每个样本一行；而 {n_target} 个标签"
              "每个样本不止一个（为另一种任务准备的标签，例如每个词元一个）。要么标签不对，要么模型类别选错了任务。",
    },
    "shapes.batch.unknown": {
        "en": "{input} and {target} were cut or reshaped differently: slice the labels like the inputs (same "
              "indices, same batch), and keep the batch dimension in every reshape (`x.view(x.size(0), -1)`).",
        "zh": "{input} 和 {target} 的切片或变形方式不一致：请用和输入相同的下标切标签（同一批），"
              "并在每次变形时保留批大小这一维（`x.view(x.size(0), -1)`）。",
    },
    "shapes.batch.no_fix": {
        "en": "Where the two parted ways is not pinned down by the shapes, so no fix is proposed.",
        "zh": "仅凭形状无法确定两者是在哪里出现分歧的，因此不提供修复。",
    },
    "shapes.batch.no_fix_view": {
        "en": "Keeping the batch there (`.view(x.size(0), -1)`) would hand the next layer {per_sample} values "
              "per sample where it takes {n}, and no single Linear taking {n} was found to change with it, so no "
              "fix is proposed: keep the batch and make the layers agree (pool to the size they expect, or "
              "their in_features).",
        "zh": "在那里保留批次维（`.view(x.size(0), -1)`）会让下一层每个样本得到 {per_sample} 个值，而它只接受 "
              "{n} 个，又没有找到唯一一个接受 {n} 的 Linear 可以一起修改，因此不提供修复：请保留批次维，并让"
              "前后各层一致（池化到它们期望的大小，或修改其 in_features）。",
    },
    # -- target-out-of-range --
    "shapes.target.title": {
        "en": "Label {label} in {target} is out of range for {classes} classes",
        "zh": "{target} 中的标签 {label} 超出了 {classes} 个类别的范围",
    },
    "shapes.target.title_device": {
        "en": "A label in {target} is most likely out of range for {classes} classes",
        "zh": "{target} 中很可能有标签超出了 {classes} 个类别的范围",
    },
    "shapes.target.summary": {
        "en": "Class labels index the classifier's outputs: with C outputs, every label must be one of 0 ... C-1.",
        "zh": "类别标签是分类器输出的下标：有 C 个输出时，每个标签都必须在 0 ... C-1 之中。",
    },
    "shapes.target.what": {
        "en": "The loss on line {lineno} got {input} with {classes} classes{origin} and a label {label} in "
              "{target}.",
        "zh": "第 {lineno} 行的损失函数得到的 {input} 有 {classes} 个类别{origin}，而 {target} 中有"
              "标签 {label}。",
    },
    "shapes.target.what_device": {
        "en": "The loss on line {lineno} got {input} with {classes} classes{origin} and the labels "
              "{target}; a CUDA kernel's assertion failed.",
        "zh": "第 {lineno} 行的损失函数得到的 {input} 有 {classes} 个类别{origin}，标签为 {target}；"
              "一个 CUDA 核函数的断言失败了。",
    },
    "shapes.target.from_layer": {"en": " (from {layer})", "zh": "（来自 {layer}）"},
    "shapes.target.the_classifier": {"en": "the classifier", "zh": "分类器"},
    "shapes.target.why": {
        "en": "With {classes} outputs the labels must be 0 ... {last}.",
        "zh": "有 {classes} 个输出时，标签必须在 0 ... {last} 之中。",
    },
    "shapes.target.why_device": {
        "en": "On a GPU the check is an assertion inside the kernel (`t >= 0 && t < n_classes`): the message "
              "cannot say which label failed, and the error may surface at a later line. Run once on the CPU, "
              "or with CUDA_LAUNCH_BLOCKING=1, to see the label.",
        "zh": "在 GPU 上，这个检查是核函数内部的断言（`t >= 0 && t < n_classes`）：错误信息说不出是哪个标签，"
              "而且错误可能在后面的某一行才报出来。在 CPU 上运行一次，或设置 CUDA_LAUNCH_BLOCKING=1，"
              "就能看到是哪个标签。",
    },
    "shapes.target.labels_from_code": {
        "en": "The labels come from `{code}` on line {lineno}: they run from {low} to {high}, but {layer} has "
              "only {classes} outputs.",
        "zh": "标签来自第 {lineno} 行的 `{code}`：取值从 {low} 到 {high}，但 {layer} 只有 {classes} 个输出。",
    },
    "shapes.target.labels_from_name": {
        "en": "`{name}` says there are {count} classes, but {layer} has only {classes} outputs.",
        "zh": "`{name}` 表明共有 {count} 个类别，但 {layer} 只有 {classes} 个输出。",
    },
    "shapes.target.negative": {
        "en": "A negative label ({label}) is no class: if it marks unlabelled samples, pass `ignore_index={label}` "
              "to the loss.",
        "zh": "负数标签（{label}）不是任何类别：如果它表示没有标注的样本，请给损失函数传入 "
              "`ignore_index={label}`。",
    },
    "shapes.target.from_dataset": {
        "en": "The labels are what `{getitem}` returns, made on line {lineno}: that is where their values must "
              "become 0 to {last}.",
        "zh": "这些标签是 `{getitem}` 返回的，在第 {lineno} 行生成：应当在那里让它们的取值落在 0 到 {last} 之间。",
    },
    "shapes.target.one_based": {
        "en": "Label {label} equals the number of outputs. Either the labels start at 1 (then use `y - 1`), or "
              "there are more classes than {layer}'s {classes} outputs (then raise its out_features).",
        "zh": "标签 {label} 正好等于输出个数。要么标签是从 1 开始编号的（那就用 `y - 1`），要么类别比 "
              "{layer} 的 {classes} 个输出多（那就增大它的 out_features）。",
    },
    "shapes.target.no_fix_range": {
        "en": "The labels' range is not known without reading them, so no fix is proposed: check "
              "`{target}.min()` and `{target}.max()` and size {layer}'s out_features to max + 1.",
        "zh": "不读取标签就无法知道它们的取值范围，因此不提供修复：请检查 `{target}.min()` 和 "
              "`{target}.max()`，并把 {layer} 的 out_features 设为 max + 1。",
    },
    "shapes.target.no_fix_ctor": {
        "en": "{layer}'s out_features is not a number written once in this cell, so no fix is proposed.",
        "zh": "{layer} 的 out_features 不是在本单元格中唯一一处直接写出的数字，因此不提供修复。",
    },
    "shapes.target.no_fix_parse": {
        "en": "The edited cell would not parse, so no fix is proposed.",
        "zh": "修改后的单元格无法解析，因此不提供修复。",
    },
    "shapes.target.fix_out_features": {
        "en": "Give {layer} one output per class: out_features {count} instead of `{old}` on line {lineno}",
        "zh": "让 {layer} 每个类别一个输出：把第 {lineno} 行的 out_features 从 `{old}` 改为 {count}",
    },
    "shapes.target.fix_shift": {
        "en": "Count the labels from 0: `{code}` on line {lineno}",
        "zh": "让标签从 0 开始计数：第 {lineno} 行改用 `{code}`",
    },
    "shapes.onehot.title": {
        "en": "The loss takes one class index per sample, and {target} has shape {shape}",
        "zh": "损失要求每个样本一个类别索引，而 {target} 的形状是 {shape}",
    },
    "shapes.onehot.summary": {
        "en": "cross_entropy and nll_loss take the target as class indices of shape (N,), one integer a sample.",
        "zh": "cross_entropy 和 nll_loss 要求目标是形状为 (N,) 的类别索引，每个样本一个整数。",
    },
    "shapes.onehot.what": {
        "en": "The loss on line {lineno} got an input of shape {in_shape} and a target of shape {target_shape} "
              "({dtype}).",
        "zh": "第 {lineno} 行的损失收到的输入形状是 {in_shape}，目标是形状为 {target_shape} 的 {dtype} 张量。",
    },
    "shapes.onehot.why_one_hot": {
        "en": "Each row of {target} is one-hot: 0s and one 1 for the sample's class, over {classes} classes. "
              "`{call}` turns each row into the index of its 1, and the loss comes out the same.",
        "zh": "{target} 的每一行都是 one-hot：只有样本所属类别处为 1，其余为 0，共 {classes} 类。"
              "`{call}` 把每行变成其中 1 的位置，损失的值不变。",
    },
    "shapes.onehot.why_column": {
        "en": "{target} holds one class index a sample, in a column of shape {shape}. `{call}` makes it the "
              "(N,) the loss takes, with the same values.",
        "zh": "{target} 每个样本存一个类别索引，但放在形状为 {shape} 的一列里。`{call}` 把它变成损失要求的 (N,)，数值不变。",
    },
    "shapes.onehot.why_one_hot_width": {
        "en": "Each row of {target} is one-hot, but over another number of classes than the {classes} outputs "
              "of the input.",
        "zh": "{target} 的每一行都是 one-hot，但类别数与输入的 {classes} 个输出不同。",
    },
    "shapes.onehot.why_other": {
        "en": "{target} has shape {shape}, and its rows are not one-hot: several labels a sample, or scores.",
        "zh": "{target} 的形状是 {shape}，它的行不是 one-hot：每个样本有多个标签，或者是分数。",
    },
    "shapes.onehot.no_fix": {
        "en": "For several labels a sample, `BCEWithLogitsLoss` takes a float target of the input's shape. "
              "What the labels mean is yours to say, so no fix is proposed.",
        "zh": "每个样本有多个标签时，`BCEWithLogitsLoss` 接受与输入同形状的浮点目标。"
              "标签的含义需要你来判断，因此不提供修复。",
    },
    "shapes.onehot.no_fix_call": {
        "en": "The loss call could not be found on the line, so no fix is proposed: call `{call}` on the target.",
        "zh": "在该行中没有找到这个损失调用，因此不提供修复：请对目标调用 `{call}`。",
    },
    "shapes.onehot.made_at": {
        "en": "Line {lineno} made it so: `{code}`.",
        "zh": "第 {lineno} 行把它做成了这样：`{code}`。",
    },
    "shapes.onehot.fix_one_hot": {
        "en": "Turn the one-hot rows of `{name}` into class indices on line {lineno}",
        "zh": "在第 {lineno} 行把 `{name}` 的 one-hot 行变成类别索引",
    },
    "shapes.onehot.fix_column": {
        "en": "Squeeze the label column `{name}` to shape (N,) on line {lineno}",
        "zh": "在第 {lineno} 行把标签列 `{name}` 压成形状 (N,)",
    },
}
