"""Messages of the dtypes rules."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- shared pieces --
    "dtypes.the_loss": {"en": "the loss", "zh": "损失函数"},
    "dtypes.the_target": {"en": "the target", "zh": "目标张量"},
    "dtypes.the_weights": {"en": "the layer's float32 weights", "zh": "层的 float32 权重"},
    "dtypes.operand": {"en": "`{name}` ({dtype})", "zh": "`{name}`（{dtype}）"},
    "dtypes.sep": {"en": ", ", "zh": "、"},
    "dtypes.two_types": {"en": "two dtypes", "zh": "两种 dtype"},
    # where the odd tensor was made
    "dtypes.made.numpy": {
        "en": "`{name}` was made on line {lineno} (`{code}`) from a numpy array: numpy makes float64 arrays by "
              "default, and torch keeps the array's dtype.",
        "zh": "`{name}` 是在第 {lineno} 行（`{code}`）由 numpy 数组生成的：numpy 数组默认是 float64，"
              "而 torch 会保留数组的 dtype。",
    },
    "dtypes.made.numpy_kept": {
        "en": "`{name}` was made on line {lineno} (`{code}`) from a numpy array of {dtype}: torch keeps the array's "
              "dtype.",
        "zh": "`{name}` 是在第 {lineno} 行（`{code}`）由 {dtype} 的 numpy 数组生成的：torch 会保留数组的 dtype。",
    },
    "dtypes.made.numpy_tensor": {
        "en": "`{name}` was made on line {lineno} (`{code}`) from a numpy array: numpy makes float64 arrays by "
              "default, and torch.tensor keeps the array's dtype.",
        "zh": "`{name}` 是在第 {lineno} 行（`{code}`）由 numpy 数组生成的：numpy 数组默认是 float64，"
              "而 torch.tensor 会保留数组的 dtype。",
    },
    "dtypes.made.tensor": {
        "en": "`{name}` was made on line {lineno} (`{code}`), and torch.tensor takes its dtype from the data. "
              "Whole numbers give int64, numbers with a decimal point float32, a numpy array keeps its own.",
        "zh": "`{name}` 是在第 {lineno} 行（`{code}`）生成的，而 torch.tensor 的 dtype 取决于数据。"
              "整数得到 int64，带小数点的数得到 float32，numpy 数组保留它自己的 dtype。",
    },
    "dtypes.made.cast": {
        "en": "`{name}` was made {dtype} on line {lineno} (`{code}`), which asks for that type explicitly.",
        "zh": "`{name}` 在第 {lineno} 行（`{code}`）被显式地设为 {dtype}。",
    },
    "dtypes.made.loop": {
        "en": "`{name}` comes from the loop on line {lineno} (`{code}`): the data it iterates over holds {dtype} "
              "tensors.",
        "zh": "`{name}` 来自第 {lineno} 行的循环（`{code}`）：它遍历的数据里是 {dtype} 张量。",
    },
    "dtypes.made.loader": {
        "en": "`{name}` comes from the loop on line {lineno} over `{loader}`, which batches what "
              "`{getitem}` returns.",
        "zh": "`{name}` 来自第 {lineno} 行对 `{loader}` 的循环，它把 `{getitem}` 返回的数据拼成批次。",
    },
    "dtypes.made.int_fill": {
        "en": "`{name}` is the int {value} (line {lineno}), so the tensor filled with it is int64.",
        "zh": "`{name}` 是整数 {value}（第 {lineno} 行），因此用它填充的张量是 int64。",
    },
    "dtypes.made.other": {
        "en": "`{name}` ({dtype}) was last assigned on line {lineno} (`{code}`).",
        "zh": "`{name}`（{dtype}）最后一次赋值是在第 {lineno} 行（`{code}`）。",
    },
    "dtypes.made.nameless": {
        "en": "The {dtype} tensor was made by what line {lineno} ran (`{code}`).",
        "zh": "这个 {dtype} 张量是第 {lineno} 行（`{code}`）运行的代码生成的。",
    },
    "dtypes.made.append": {
        "en": "`{name}` ({dtype}) was made on line {lineno} (`{code}`).",
        "zh": "`{name}`（{dtype}）是在第 {lineno} 行（`{code}`）生成的。",
    },
    "dtypes.made.unknown": {
        "en": "`{name}` ({dtype}) was made outside this cell, or in a way grad_magic cannot follow.",
        "zh": "`{name}`（{dtype}）是在这个单元格之外生成的，或者生成方式 grad_magic 无法追踪。",
    },
    "dtypes.target.not_probabilities": {
        "en": "Its values run from {low} to {high}, and the loss wants targets between 0 and 1: a cast to {want} "
              "would keep them out of range. Scale them where they are made (pixel values 0-255: divide by 255).",
        "zh": "它的值在 {low} 到 {high} 之间，而损失函数要的目标值在 0 到 1 之间：转换为 {want} 后仍然越界。"
              "请在生成它们的地方缩放（0-255 的像素值：除以 255）。",
    },
    "dtypes.target.not_classes": {
        "en": "Its values are not whole numbers: they are scores, not class numbers, so casting them to {want} "
              "would change them. The loss is the one to change: a regression loss, or a model set up for "
              "regression.",
        "zh": "它的值不是整数：这些是分数而不是类别编号，转换为 {want} 会改变它们。需要改的是损失函数："
              "换成回归损失，或把模型设置为回归任务。",
    },
    "dtypes.alias": {
        "en": "`{name}` is the same tensor as `{alias}`.",
        "zh": "`{name}` 和 `{alias}` 是同一个张量。",
    },
    # the fixes
    "dtypes.fix.numpy": {
        "en": "Convert where `{name}` is made: `.{method}()` after the conversion from numpy on line {lineno}",
        "zh": "在生成 `{name}` 的地方转换：在第 {lineno} 行从 numpy 转换之后加上 `.{method}()`",
    },
    "dtypes.fix.numpy_tensor": {
        "en": "Make `{name}` {dtype} where it is made: `dtype={written}` in torch.tensor on line {lineno}",
        "zh": "在生成 `{name}` 的地方设为 {dtype}：在第 {lineno} 行的 torch.tensor 中加上 `dtype={written}`",
    },
    "dtypes.fix.tensor": {
        "en": "Make `{name}` {dtype} where it is made: `dtype={written}` in torch.tensor on line {lineno}",
        "zh": "在生成 `{name}` 的地方设为 {dtype}：在第 {lineno} 行的 torch.tensor 中加上 `dtype={written}`",
    },
    "dtypes.fix.cast": {
        "en": "Make `{name}` {dtype} where it is made: ask for {dtype} on line {lineno}",
        "zh": "在生成 `{name}` 的地方设为 {dtype}：在第 {lineno} 行改为 {dtype}",
    },
    "dtypes.fix.append": {
        "en": "Make `{name}` {dtype} where it is made: `.{method}()` at the end of line {lineno}",
        "zh": "在生成 `{name}` 的地方设为 {dtype}：在第 {lineno} 行末尾加上 `.{method}()`",
    },
    "dtypes.fix.sibling": {
        "en": "; the same for {names}, made the same way on line {lines}",
        "zh": "；第 {lines} 行以同样方式生成的 {names} 也一样处理",
    },
    "dtypes.fix.siblings": {
        "en": "; the same for {names}, made the same way on lines {lines}",
        "zh": "；第 {lines} 行以同样方式生成的 {names} 也一样处理",
    },
    "dtypes.fix.drop_cast": {
        "en": "Give the loss the scores as they are: `{inner}` instead of `{cast}` on line {lineno}",
        "zh": "把分数原样交给损失函数：第 {lineno} 行用 `{inner}` 代替 `{cast}`",
    },
    "dtypes.fix.use": {
        "en": "Convert `{name}` where it is used: `.{method}()` on line {lineno}",
        "zh": "在使用 `{name}` 的地方转换：在第 {lineno} 行加上 `.{method}()`",
    },
    # -- target-dtype --
    "dtypes.target.title.class": {
        "en": "{loss} wants class numbers as int64, and the target is {found}",
        "zh": "{loss} 需要 int64 类型的类别编号，而目标张量是 {found}",
    },
    "dtypes.target.title.binary": {
        "en": "{loss} wants float targets, and the target is {found}",
        "zh": "{loss} 需要浮点类型的目标，而目标张量是 {found}",
    },
    "dtypes.target.title.regression": {
        "en": "{loss} wants float targets, and the target is {found}",
        "zh": "{loss} 需要浮点类型的目标，而目标张量是 {found}",
    },
    "dtypes.target.summary.regression": {
        "en": "Regression losses (mse, l1, smooth_l1, huber) subtract the target from the prediction: both must "
              "be float tensors.",
        "zh": "回归损失（mse、l1、smooth_l1、huber）用预测减去目标：两者都必须是浮点张量。",
    },
    "dtypes.target.why.regression": {
        "en": "{loss} computes in the dtype of what it is given, and has no integer version: {found} targets "
              "(whole-number scores, or labels read as int) must become float, which keeps their values.",
        "zh": "{loss} 按输入的 dtype 计算，而且没有整数版本：{found} 类型的目标（整数分数，或按 int 读入的标签）"
              "必须转换为浮点数，这不会改变它们的值。",
    },
    "dtypes.target.summary.class": {
        "en": "Class-index losses (cross_entropy, nll_loss) use the target to pick a column: it must be an "
              "integer tensor (int64).",
        "zh": "按类别编号计算的损失（cross_entropy、nll_loss）要用目标去选取一列：目标必须是整数张量（int64）。",
    },
    "dtypes.target.summary.binary": {
        "en": "Binary cross-entropy computes with the target as a probability: it must be a float tensor of the "
              "same dtype as the input.",
        "zh": "二元交叉熵把目标当作概率来计算：它必须是与输入 dtype 相同的浮点张量。",
    },
    "dtypes.target.what": {
        "en": "{loss} on line {lineno} got the target {target} of dtype {found}; it needs {want}.",
        "zh": "第 {lineno} 行的 {loss} 收到的目标 {target} 的 dtype 是 {found}；它需要 {want}。",
    },
    "dtypes.target.why.class": {
        "en": "{loss} reads each target as the number of the right class and uses it as an index, so it accepts "
              "only integers (int64; uint8 also works). A {found} label such as 2.0 is refused even when it is "
              "a whole number.",
        "zh": "{loss} 把每个目标读作正确类别的编号并当作下标使用，所以只接受整数（int64，uint8 也可以）。"
              "{found} 的标签（例如 2.0）即使是整数值也会被拒绝。",
    },
    "dtypes.target.why.binary": {
        "en": "{loss} multiplies the target with log-probabilities, so the target must be a float tensor like the "
              "input; {found} labels of 0 and 1 are refused, not converted.",
        "zh": "{loss} 会把目标与对数概率相乘，所以目标必须像输入一样是浮点张量；{found} 类型的 0/1 标签"
              "会被拒绝，而不会被自动转换。",
    },
    # -- dtype-mismatch --
    "dtypes.mismatch.summary": {
        "en": "Matrix multiplications, convolutions and losses take tensors of one dtype: torch does not convert "
              "float64 to float32 (or integers to floats) for them.",
        "zh": "矩阵乘法、卷积和损失函数要求张量的 dtype 一致：torch 不会替它们把 float64 转成 float32"
              "（也不会把整数转成浮点数）。",
    },
    "dtypes.mismatch.title.float": {
        "en": "`{name}` is {dtype}, and the tensors it meets are not",
        "zh": "`{name}` 是 {dtype}，而与它运算的张量不是",
    },
    "dtypes.mismatch.title.int": {
        "en": "`{name}` holds integers ({dtype}), and softmax and the losses need floating-point scores",
        "zh": "`{name}` 是整数（{dtype}），而 softmax 和损失函数需要浮点数分数",
    },
    "dtypes.mismatch.title_unnamed": {
        "en": "One op got tensors of two dtypes ({pair})",
        "zh": "一个运算收到了两种 dtype 的张量（{pair}）",
    },
    "dtypes.mismatch.what.float": {
        "en": "Line {lineno} (`{code}`) combines `{name}` ({dtype}) with {others}.",
        "zh": "第 {lineno} 行（`{code}`）把 `{name}`（{dtype}）和 {others} 放在一起运算。",
    },
    "dtypes.mismatch.what.int": {
        "en": "Line {lineno} (`{code}`) passes `{name}` ({dtype}) as scores; scores must be floating point.",
        "zh": "第 {lineno} 行（`{code}`）把 `{name}`（{dtype}）当作分数传入；分数必须是浮点数。",
    },
    "dtypes.mismatch.what_unnamed": {
        "en": "Line {lineno} (`{code}`) combines tensors of {pair}.",
        "zh": "第 {lineno} 行（`{code}`）把 {pair} 的张量放在一起运算。",
    },
    "dtypes.mismatch.why": {
        "en": "The kernel is written for one dtype at a time, and torch does not pick one for you here.",
        "zh": "这个内核一次只处理一种 dtype，而 torch 在这里不会替你选择。",
    },
    "dtypes.mismatch.why.float": {
        "en": "What torch makes (layer weights, torch.randn, ...) is float32 unless you ask otherwise, and this "
              "kernel takes one dtype at a time. torch does not convert the other operand for you.",
        "zh": "torch 生成的张量（层的权重、torch.randn 等）默认是 float32，而这个内核一次只处理一种 dtype。"
              "torch 不会替你转换另一个操作数。",
    },
    "dtypes.mismatch.why.int": {
        "en": "softmax and log_softmax (which cross_entropy starts with) are defined only for floating-point "
              "tensors, and torch does not convert integers for them.",
        "zh": "softmax 和 log_softmax（cross_entropy 的第一步）只对浮点张量有定义，torch 不会替它们转换整数。",
    },
    "dtypes.mismatch.no_culprit": {
        "en": "grad_magic could not tell which tensor on this line has the odd dtype, so no fix is proposed: "
              "convert it with `.float()` (or the model with `.double()`).",
        "zh": "grad_magic 无法判断这一行里哪个张量的 dtype 不一致，因此不提供修复：请用 `.float()` 转换它"
              "（或用 `.double()` 转换模型）。",
    },
    "dtypes.mismatch.in_backward": {
        "en": "The op that failed ran in the backward pass, so no tensor on this line is the odd one: one of the "
              "tensors the loss was computed from has another dtype (in torch 1.x, often a float64 target from "
              "numpy given to mse_loss). Make it float32 where it is made; no fix is proposed.",
        "zh": "出错的运算发生在反向传播中，所以这一行上没有哪个张量是“异类”：计算损失所用的某个张量的 dtype "
              "不同（在 torch 1.x 中，常见的是把来自 numpy 的 float64 目标传给 mse_loss）。请在生成它的地方把它"
              "设为 float32；这里不提供修复。",
    },
    "dtypes.mismatch.numpy_note": {
        "en": "The classic cause: numpy arrays are float64 by default, torch layers float32; float32 is the "
              "usual choice for training.",
        "zh": "最常见的原因：numpy 数组默认是 float64，而 torch 的层是 float32；训练时通常用 float32。",
    },
}
