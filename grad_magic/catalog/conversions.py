"""Messages of the conversions rules."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "conversions.a_tensor": {"en": "a tensor", "zh": "一个张量"},
    "conversions.via_library": {
        "en": "The conversion happens inside `{call}`, which turns the tensors it is given into NumPy arrays: "
              "give it a detached tensor.",
        "zh": "转换发生在 `{call}` 内部，它会把传入的张量转成 NumPy 数组：请传给它分离（detach）后的张量。",
    },
    "conversions.no_parse": {
        "en": "The edited cell would not parse, so no fix is proposed.",
        "zh": "修改后的单元格无法解析，因此不提供修复。",
    },
    # -- numpy-on-grad-tensor --
    "conversions.grad.title": {
        "en": "{expr} still requires grad, so it cannot become a NumPy array",
        "zh": "{expr} 仍然需要梯度（requires_grad），因此不能转换成 NumPy 数组",
    },
    "conversions.grad.summary": {
        "en": "A NumPy array cannot carry autograd's history: detach the tensor first.",
        "zh": "NumPy 数组无法携带 autograd 的计算历史：请先把张量 detach。",
    },
    "conversions.grad.what": {
        "en": "`{call}` on line {lineno} was given {expr}, a tensor autograd is still tracking.",
        "zh": "第 {lineno} 行的 `{call}` 收到的是 {expr}，一个 autograd 仍在跟踪的张量。",
    },
    "conversions.grad.why": {
        "en": "A tensor that requires grad is part of autograd's graph. The NumPy array would share its memory "
              "but nothing backward() could follow, so torch refuses rather than silently cut the graph. "
              "`.detach()` says you want the values only: it returns a tensor on the same memory, outside "
              "the graph, and `.numpy()` works on it. Gradients of the original are unaffected.",
        "zh": "需要梯度的张量是 autograd 计算图的一部分。转成的 NumPy 数组会共享它的内存，却无法让 backward() "
              "继续追踪，所以 torch 宁可报错也不悄悄切断计算图。`.detach()` 表示你只要数值：它返回一个共享同一块"
              "内存、但不在计算图中的张量，在它上面 `.numpy()` 就能工作。原张量的梯度不受影响。",
    },
    "conversions.grad.fix": {
        "en": "Detach before converting: `.detach()` on {names} on line {lineno}",
        "zh": "转换前先分离：在第 {lineno} 行的 {names} 后加上 `.detach()`",
    },
    "conversions.grad.fix_lines": {
        "en": "Detach before converting: `.detach()` on {names} on lines {lines}",
        "zh": "转换前先分离：在第 {lines} 行的 {names} 后加上 `.detach()`",
    },
    "conversions.grad.no_fix": {
        "en": "The tensor converted could not be found on the cell's line, so no fix is proposed: add "
              "`.detach()` to it where it is converted.",
        "zh": "在单元格的这一行上找不到被转换的张量，因此不提供修复：请在转换它的地方加上 `.detach()`。",
    },
    "conversions.grad.what_list": {
        "en": "Line {lineno} handed NumPy the list `{name}`, whose items are tensors autograd is still tracking.",
        "zh": "第 {lineno} 行把列表 `{name}` 交给了 NumPy，而列表里的元素是 autograd 仍在跟踪的张量。",
    },
    "conversions.grad.why_list": {
        "en": "NumPy converts the list item by item, and each item still holds its graph (kept alive by the "
              "list, too). Put plain values into the list where it is filled (line {fill}): `{suffix}` there "
              "keeps the numbers and lets the graph go.",
        "zh": "NumPy 会逐个转换列表里的元素，而每个元素仍带着它的计算图（列表也让这些图一直占着内存）。"
              "请在填充列表的地方（第 {fill} 行）放入普通数值：在那里加上 `{suffix}`，保留数值并释放计算图。",
    },
    "conversions.grad.list_items": {
        "en": "a tensor in `{name}`",
        "zh": "`{name}` 中的张量",
    },
    "conversions.grad.fix_list": {
        "en": "Plain values in the list: `{suffix}` on {items} on line {lines}",
        "zh": "列表里放普通数值：在第 {lines} 行的 {items} 后加上 `{suffix}`",
    },
    # -- numpy-on-device-tensor --
    "conversions.device.title": {
        "en": "{expr} is on {device}, and NumPy arrays live in CPU memory",
        "zh": "{expr} 在 {device} 上，而 NumPy 数组只能在 CPU 内存中",
    },
    "conversions.device.summary": {
        "en": "Copy the tensor to the CPU with `.cpu()` before turning it into a NumPy array.",
        "zh": "转换成 NumPy 数组之前，请先用 `.cpu()` 把张量复制到 CPU。",
    },
    "conversions.device.summary_meta": {
        "en": "A tensor on the \"meta\" device has no values, so it cannot become a NumPy array at all.",
        "zh": "\"meta\" 设备上的张量没有数值，因此根本无法转换成 NumPy 数组。",
    },
    "conversions.device.what": {
        "en": "`{call}` on line {lineno} was given {expr}, a tensor on {device}.",
        "zh": "第 {lineno} 行的 `{call}` 收到的是 {expr}，一个在 {device} 上的张量。",
    },
    "conversions.device.why": {
        "en": "A NumPy array is a view of CPU memory, and the data of a tensor on {device} is in that "
              "device's memory. `.numpy()` never copies, so torch asks you to copy it to the host yourself "
              "with `.cpu()`.",
        "zh": "NumPy 数组是 CPU 内存的视图，而 {device} 上张量的数据在该设备的内存里。`.numpy()` 从不复制数据，"
              "所以 torch 要求你自己先用 `.cpu()` 把它复制到主机内存。",
    },
    "conversions.device.why_detach": {
        "en": "`.detach()` comes first as well: torch checks the device before requires_grad, so a tensor "
              "that also requires grad would fail next with \"Can't call numpy() on Tensor that requires "
              "grad\" (`.detach()` costs nothing on one that does not).",
        "zh": "同时先加上 `.detach()`：torch 先检查设备、再检查 requires_grad，如果张量同时需要梯度，下一步会报 "
              "\"Can't call numpy() on Tensor that requires grad\"（对不需要梯度的张量，`.detach()` 没有任何代价）。",
    },
    "conversions.device.why_detach_known": {
        "en": "{names} also requires grad, so `.detach()` comes first. torch checks the device before "
              "requires_grad, and `.cpu()` alone would fail next with \"Can't call numpy() on Tensor that "
              "requires grad\".",
        "zh": "{names} 同时需要梯度，所以要先 `.detach()`。torch 先检查设备、再检查 requires_grad，只加 `.cpu()` "
              "的话下一步会报 \"Can't call numpy() on Tensor that requires grad\"。",
    },
    "conversions.device.meta": {
        "en": "NumPy arrays live in CPU memory, and `.cpu()` copies a tensor there. But a tensor on the "
              "\"meta\" device has a shape and a dtype but no data at all, so there is nothing to "
              "copy: `.cpu()` would fail too. Create the tensor on a real device to get its values.",
        "zh": "NumPy 数组位于 CPU 内存中，`.cpu()` 会把张量复制过去。但 \"meta\" 设备上的张量只有形状和"
              "数据类型，根本没有数据，所以无从复制：`.cpu()` 同样会失败。"
              "请在真实设备上创建这个张量才能得到它的数值。",
    },
    "conversions.device.no_fix": {
        "en": "The tensor converted could not be found on the cell's line, so no fix is proposed: add "
              "`.detach().cpu()` to it where it is converted.",
        "zh": "在单元格的这一行上找不到被转换的张量，因此不提供修复：请在转换它的地方加上 `.detach().cpu()`。",
    },
    "conversions.device.fix": {
        "en": "Copy to the CPU first: `.cpu()` on {names} on line {lineno}",
        "zh": "先复制到 CPU：在第 {lineno} 行的 {names} 后加上 `.cpu()`",
    },
    "conversions.device.fix_detach": {
        "en": "Detach and copy to the CPU first: `.detach().cpu()` on {names} on line {lineno}",
        "zh": "先分离并复制到 CPU：在第 {lineno} 行的 {names} 后加上 `.detach().cpu()`",
    },
    # -- bool-ambiguous --
    "conversions.bool.title": {
        "en": "{expr} holds several True/False values where Python needs one",
        "zh": "{expr} 含有多个 True/False 值，而 Python 在这里只需要一个",
    },
    "conversions.bool.title_empty": {
        "en": "{expr} is an empty tensor where Python needs one True or False",
        "zh": "{expr} 是一个空张量，而 Python 在这里需要一个 True 或 False",
    },
    "conversions.bool.summary": {
        "en": "Say which you mean: `.all()` (every element) or `.any()` (at least one).",
        "zh": "请说明你的意思：`.all()`（每个元素都满足）还是 `.any()`（至少一个满足）。",
    },
    "conversions.bool.summary_empty": {
        "en": "An empty tensor is neither true nor false: test its size, or find out why it is empty.",
        "zh": "空张量既不是真也不是假：请判断它的大小，或查明它为什么是空的。",
    },
    "conversions.bool.what": {
        "en": "On line {lineno}, the `{statement}` statement needed one True or False from {expr}{shape} "
              "and got a tensor of several values instead.",
        "zh": "在第 {lineno} 行，`{statement}` 语句需要 {expr}{shape}给出单个 True 或 False，"
              "得到的却是一个含有多个值的张量。",
    },
    "conversions.bool.what_unknown": {
        "en": "On line {lineno}, Python needed one True or False from a tensor, and the tensor held several "
              "values or none.",
        "zh": "在第 {lineno} 行，Python 需要从一个张量得到单个 True 或 False，而这个张量含有多个值或没有值。",
    },
    "conversions.bool.what_empty": {
        "en": "On line {lineno}, the `{statement}` statement needed one True or False from {expr}{shape} "
              "and got a tensor with no values at all.",
        "zh": "在第 {lineno} 行，`{statement}` 语句需要 {expr}{shape}给出单个 True 或 False，"
              "得到的却是一个没有任何值的张量。",
    },
    "conversions.bool.shape": {"en": ", of shape {shape},", "zh": "（形状为 {shape}）"},
    "conversions.bool.why": {
        "en": "Comparing tensors compares element by element and gives a tensor of booleans, one per "
              "element. Python's `if`, `while`, `assert`, `and`, `or` and `not` need a single True or False. "
              "torch will not guess whether you mean \"all of them\" or \"any of them\".",
        "zh": "张量之间的比较是逐元素进行的，结果是一个布尔张量，每个元素一个值。Python 的 `if`、`while`、"
              "`assert`、`and`、`or` 和 `not` 需要单个 True 或 False。torch 不会替你猜测你指的是"
              "“全部满足”还是“任意一个满足”。",
    },
    "conversions.bool.why_empty": {
        "en": "The tensor has no elements at all, so it has no truth value. To ask whether it is empty, "
              "test `{name}.numel() == 0`; to test its contents, find out why it came out empty.",
        "zh": "这个张量一个元素都没有，因此没有真值。要判断它是否为空，请用 `{name}.numel() == 0`；"
              "要判断它的内容，请先查明它为什么是空的。",
    },
    "conversions.bool.why_all": {
        "en": "The fix reads the test as \"for every element\": `({expr}).all()`. If you meant \"for at "
              "least one element\", use `.any()` instead.",
        "zh": "修复把条件理解为“每个元素都满足”：`({expr}).all()`。如果你的意思是“至少一个元素满足”，"
              "请改用 `.any()`。",
    },
    "conversions.bool.why_any": {
        "en": "`!=` reads as \"not equal\", which for tensors is \"some element differs\": `({expr}).any()`. "
              "If you meant \"every element differs\", use `.all()` instead.",
        "zh": "`!=` 表示“不相等”，对张量而言就是“有元素不同”：`({expr}).any()`。如果你的意思是"
              "“每个元素都不同”，请改用 `.all()`。",
    },
    "conversions.bool.why_while_any": {
        "en": "A `while` loop usually runs until every element is done, that is while any element still "
              "meets the test: `({expr}).any()`. If the loop should stop as soon as one element is done, use "
              "`.all()`. If the tensor compared should have been one number (a loss averaged over the batch), "
              "reduce it instead, e.g. with `.mean()`.",
        "zh": "`while` 循环通常要一直运行到每个元素都完成，也就是只要还有任意一个元素满足条件就继续："
              "`({expr}).any()`。如果一旦有一个元素完成就应停止，请用 `.all()`。如果被比较的张量本该是一个数"
              "（例如对整个批次取平均的损失），请改为先做归约，例如 `.mean()`。",
    },
    "conversions.bool.why_equal": {
        "en": "For an `assert`, `torch.equal(a, b)` is True when both tensors have the same shape and every "
              "element is equal. For floating-point results that may differ by rounding, "
              "`torch.allclose(a, b)` is the usual test instead of `{expr}`.",
        "zh": "在 `assert` 中，`torch.equal(a, b)` 在两个张量形状相同且每个元素都相等时为 True。"
              "对于可能有舍入误差的浮点结果，通常用 `torch.allclose(a, b)` 代替 `{expr}`。",
    },
    "conversions.bool.no_fix_shape": {
        "en": "{expr} is not a single comparison, so whether you mean `.all()` or `.any()` is not evident: "
              "no fix is proposed.",
        "zh": "{expr} 不是单个比较，无法判断你指的是 `.all()` 还是 `.any()`：因此不提供修复。",
    },
    "conversions.bool.unsure": {
        "en": "Which test on the line holds several values could not be told without running code, so no fix "
              "is proposed: add `.all()` or `.any()` to it.",
        "zh": "不运行代码就无法判断这一行中哪个条件含有多个值，因此不提供修复：请给它加上 `.all()` 或 `.any()`。",
    },
    "conversions.bool.built_title": {
        "en": "`{cls}(...)` was given the tensors: it builds the module, whose arguments are options",
        "zh": "`{cls}(...)` 收到了张量：这一步是在创建模块，它的参数是选项而不是数据",
    },
    "conversions.bool.built_summary": {
        "en": "Make the module first, then call it on the tensors.",
        "zh": "先创建模块，再用它处理张量。",
    },
    "conversions.bool.built_what": {
        "en": "Line {lineno} calls `{code}`: `{cls}` is a class, so the call builds a new module and passes the "
              "tensors as its options, and torch tests one of them for True/False while building it.",
        "zh": "第 {lineno} 行调用了 `{code}`：`{cls}` 是一个类，这个调用会新建一个模块，并把张量当作它的选项传入；"
              "torch 在创建模块时对其中一个做了真假判断。",
    },
    "conversions.bool.built_why": {
        "en": "A loss or layer class takes its settings when it is built (`weight`, `reduction`, ...) and the "
              "tensors when the built module is called: `{cls}()(a, b)`, or `criterion = {cls}()` once and "
              "`criterion(a, b)` in the loop.",
        "zh": "损失函数或层的类在创建时接收设置（`weight`、`reduction` 等），在调用创建好的模块时才接收张量："
              "`{cls}()(a, b)`，或者先写一次 `criterion = {cls}()`，在循环里用 `criterion(a, b)`。",
    },
    "conversions.bool.built_fix": {
        "en": "Build the module, then call it: `{cls}()(...)` on line {lineno}",
        "zh": "先创建模块再调用它：第 {lineno} 行改为 `{cls}()(...)`",
    },
    "conversions.bool.not_on_line": {
        "en": "The truth test is inside a function the line calls, not on the line itself, so no fix is "
              "proposed: look for an `if`, `and` or `or` on a tensor there (often a tensor passed where a "
              "number or a flag was expected).",
        "zh": "这个真值判断发生在这一行调用的函数内部，而不在这一行本身，因此不提供修复：请在那里查找对张量"
              "使用的 `if`、`and` 或 `or`（常见原因是在需要数字或开关的地方传入了张量）。",
    },
    "conversions.bool.fix_all": {
        "en": "Test every element: `({expr}).all()` on line {lineno}",
        "zh": "判断每个元素：第 {lineno} 行改为 `({expr}).all()`",
    },
    "conversions.bool.fix_any": {
        "en": "Test whether any element does: `({expr}).any()` on line {lineno}",
        "zh": "判断是否有任意元素满足：第 {lineno} 行改为 `({expr}).any()`",
    },
    "conversions.bool.fix_equal": {
        "en": "Compare whole tensors: `torch.equal(...)` instead of `{expr}` on line {lineno}",
        "zh": "比较整个张量：第 {lineno} 行用 `torch.equal(...)` 代替 `{expr}`",
    },
}
