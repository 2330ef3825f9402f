"""Messages of the requires_grad rules (missing-requires-grad, integer-requires-grad)."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- missing-requires-grad: shared --
    "missing_rg.what": {
        "en": "`{call}` on line {lineno} stopped: `{loss}` does not require grad and has no grad_fn, so there is "
              "no graph to compute gradients through.",
        "zh": "第 {lineno} 行的 `{call}` 中止：`{loss}` 不需要梯度（requires_grad=False），也没有 grad_fn，"
              "因此没有可以反向求导的计算图。",
    },
    "missing_rg.what_unseen": {
        "en": "backward() called from line {lineno} stopped: the tensor it was given does not require grad and "
              "has no grad_fn, so there is no graph to compute gradients through.",
        "zh": "从第 {lineno} 行调用的 backward() 中止：传给它的张量不需要梯度，也没有 grad_fn，因此没有可以"
              "反向求导的计算图。",
    },
    "missing_rg.why_graph": {
        "en": "Autograd records a graph only for operations on tensors that require grad; a result requires grad "
              "when at least one of its inputs does.",
        "zh": "autograd 只为需要梯度的张量上的运算记录计算图；只要某个运算的输入中有一个需要梯度，其结果就需要梯度。",
    },
    "missing_rg.on_line": {"en": "line {lines}", "zh": "第 {lines} 行"},
    "missing_rg.on_lines": {"en": "lines {lines}", "zh": "第 {lines} 行"},
    # -- a leaf created without requires_grad=True --
    "missing_rg.title_leaf": {
        "en": "`{loss}` has no graph: {names} never required grad",
        "zh": "`{loss}` 没有计算图：{names} 从未设置 requires_grad",
    },
    "missing_rg.summary_leaf": {
        "en": "Every tensor `{loss}` was computed from was created without requires_grad=True ({names}), so "
              "backward() has nothing to differentiate.",
        "zh": "计算 `{loss}` 所用的张量（{names}）在创建时都没有设置 requires_grad=True，所以 backward() "
              "没有可以求导的对象。",
    },
    "missing_rg.why_leaf": {
        "en": "{name} is made on line {lineno} (`{code}`) without requires_grad=True, so it is a leaf that "
              "autograd does not track.",
        "zh": "{name} 在第 {lineno} 行（`{code}`）创建时没有设置 requires_grad=True，因此它是一个 autograd "
              "不会追踪的叶子张量。",
    },
    "missing_rg.why_outside": {
        "en": "{name} comes from outside this cell and does not require grad.",
        "zh": "{name} 来自本单元格之外，并且不需要梯度。",
    },
    "missing_rg.why_evidence": {
        "en": "The cell asks for the gradient of {names} (reads `.grad`, or hands it to an optimizer or to "
              "autograd.grad), so that is what needs requires_grad=True.",
        "zh": "单元格中需要 {names} 的梯度（读取了 `.grad`，或把它交给了优化器或 autograd.grad），所以需要设置 "
              "requires_grad=True 的就是它。",
    },
    "missing_rg.why_no_evidence": {
        "en": "Nothing in the cell says which of them you want gradients for, so the fix marks each of them. "
              "Leave requires_grad off for tensors that are plain input data.",
        "zh": "单元格中看不出你需要其中哪些张量的梯度，因此修复会把它们都标记上。对于只是输入数据的张量，"
              "可以不设置 requires_grad。",
    },
    "missing_rg.why_no_evidence_no_fix": {
        "en": "Nothing in the cell says which of them you want gradients for. Leave requires_grad off for "
              "tensors that are plain input data.",
        "zh": "单元格中看不出你需要其中哪些张量的梯度。对于只是输入数据的张量，不需要设置 requires_grad。",
    },
    "missing_rg.why_outside_fix": {
        "en": "Set requires_grad=True where that tensor is created, or call `.requires_grad_()` on it before the "
              "forward pass.",
        "zh": "请在创建该张量的地方设置 requires_grad=True，或在前向计算之前对它调用 `.requires_grad_()`。",
    },
    "missing_rg.fix_leaf": {
        "en": "create {names} with requires_grad=True ({where})",
        "zh": "创建 {names} 时设置 requires_grad=True（{where}）",
    },
    # -- forward computed with autograd off --
    "missing_rg.title_no_grad": {
        "en": "{name} was computed under `{header}`, so it has no graph",
        "zh": "{name} 是在 `{header}` 中计算的，因此没有计算图",
    },
    "missing_rg.summary_no_grad": {
        "en": "Line {lineno} computed {name} inside `{header}`: autograd recorded nothing, so `{loss}` cannot be "
              "backpropagated.",
        "zh": "第 {lineno} 行在 `{header}` 中计算了 {name}：autograd 没有记录任何运算，因此无法对 `{loss}` "
              "进行反向传播。",
    },
    "missing_rg.why_no_grad": {
        "en": "Inside `{header}` (line {block_line}) autograd is switched off: line {lineno} produced {name} "
              "without a grad_fn even though its inputs require grad. Such blocks are for evaluation and "
              "parameter updates, not for a forward pass you train on.",
        "zh": "在 `{header}`（第 {block_line} 行）中 autograd 是关闭的：第 {lineno} 行计算出的 {name} 没有 "
              "grad_fn，即使它的输入需要梯度。这类代码块用于评估和参数更新，而不是用于需要训练的前向计算。",
    },
    "missing_rg.why_no_grad_no_fix": {
        "en": "Move the forward pass out of `{header}` so that autograd records it.",
        "zh": "请把前向计算移出 `{header}`，让 autograd 能够记录它。",
    },
    "missing_rg.fix_no_grad": {
        "en": "move lines {start}-{end} out of `{header}`, so the forward pass is recorded",
        "zh": "把第 {start}-{end} 行移出 `{header}`，让前向计算被记录下来",
    },
    "missing_rg.why_no_grad_part": {
        "en": "The fix moves every line of that block the loss depends on. If part of it is meant to stay "
              "frozen (a pretrained feature extractor), keep only those lines under `{header}`.",
        "zh": "修复会把该代码块中损失所依赖的每一行都移出来。如果其中一部分本来就应保持冻结（例如预训练的"
              "特征提取器），请只把那几行留在 `{header}` 中。",
    },
    "missing_rg.fix_no_grad_line": {
        "en": "move line {start} out of `{header}`, so the forward pass is recorded",
        "zh": "把第 {start} 行移出 `{header}`，让前向计算被记录下来",
    },
    "missing_rg.fix_decorator": {
        "en": "remove the decorator on line {lineno}, so the training step records a graph",
        "zh": "删除第 {lineno} 行的装饰器，让训练步骤能够记录计算图",
    },
    # -- the chain cut --
    "missing_rg.title_cut": {
        "en": "`{cut}` on line {lineno} cut `{loss}` off from the graph",
        "zh": "第 {lineno} 行的 `{cut}` 把 `{loss}` 从计算图上切断了",
    },
    "missing_rg.summary_cut": {
        "en": "The values reaching `{loss}` pass through `{cut}` on line {lineno}, which drops their history: "
              "nothing before it can receive gradients.",
        "zh": "流向 `{loss}` 的数值经过了第 {lineno} 行的 `{cut}`，它丢弃了运算历史：它之前的任何张量都无法"
              "得到梯度。",
    },
    "missing_rg.why_cut_detach": {
        "en": "`{cut}` on line {lineno} (`{code}`) returns a tensor with the same values but no history, so {name} does "
              "not require grad.",
        "zh": "第 {lineno} 行（`{code}`）中的 `{cut}` 返回一个数值相同但没有运算历史的张量，因此 {name} 不需要梯度。",
    },
    "missing_rg.why_cut_data": {
        "en": "`{cut}` on line {lineno} (`{code}`) reads the raw values behind the tensor, outside autograd, so {name} "
              "does not require grad.",
        "zh": "第 {lineno} 行（`{code}`）中的 `{cut}` 直接读取张量底层的数值，绕过了 autograd，因此 {name} 不需要梯度。",
    },
    "missing_rg.why_cut_item": {
        "en": "`{cut}` on line {lineno} (`{code}`) turns the tensor into a Python number; a tensor made from that number "
              "again has no history, so {name} does not require grad.",
        "zh": "第 {lineno} 行（`{code}`）中的 `{cut}` 把张量变成了 Python 数字；再用这个数字创建的张量没有运算历史，因此 "
              "{name} 不需要梯度。",
    },
    "missing_rg.why_cut_tolist": {
        "en": "`{cut}` on line {lineno} (`{code}`) turns the tensor into Python numbers; a tensor made from them again has "
              "no history, so {name} does not require grad.",
        "zh": "第 {lineno} 行（`{code}`）中的 `{cut}` 把张量变成了 Python 数字；再用它们创建的张量没有运算历史，因此 {name} "
              "不需要梯度。",
    },
    "missing_rg.why_cut_numpy": {
        "en": "`{cut}` on line {lineno} (`{code}`) leaves PyTorch for NumPy, which autograd cannot follow; a tensor made "
              "from that array has no history, so {name} does not require grad.",
        "zh": "第 {lineno} 行（`{code}`）中的 `{cut}` 把数据转到了 NumPy，autograd 无法追踪；由该数组创建的张量没有运算历史，"
              "因此 {name} 不需要梯度。",
    },
    "missing_rg.why_cut_copy": {
        "en": "`{cut}` on line {lineno} (`{code}`) builds a new tensor from the values of one that has a graph. The copy "
              "has no history, so {name} does not require grad.",
        "zh": "第 {lineno} 行（`{code}`）中的 `{cut}` 用一个带计算图的张量的数值创建了新张量。这个副本没有运算历史，因此 "
              "{name} 不需要梯度。",
    },
    "missing_rg.why_cut_fix": {
        "en": "Nothing after it needs the values cut off, so removing it lets gradients flow again.",
        "zh": "之后的代码并不需要切断后的数值，因此去掉它即可让梯度重新流动。",
    },
    "missing_rg.why_cut_update": {
        "en": "This is a manual update that rebuilds {name} as a new leaf, but `.detach()` leaves it without "
              "requires_grad, so the next pass has nothing to differentiate. Ask for it again with "
              "`.requires_grad_()`.",
        "zh": "这是一次手动更新，把 {name} 重新生成为新的叶子张量，但 `.detach()` 之后它不再需要梯度，"
              "下一轮前向计算就没有可以求导的对象。需要用 `.requires_grad_()` 重新开启。",
    },
    "missing_rg.why_cut_no_fix": {
        "en": "Keep the computation in torch operations from the parameters to the loss (no Python numbers, "
              "no NumPy, no copies through torch.tensor) so that autograd can follow it.",
        "zh": "请让从参数到损失的整个计算都使用 torch 运算（不要经过 Python 数字、NumPy，也不要用 torch.tensor "
              "复制），这样 autograd 才能追踪。",
    },
    "missing_rg.why_cut_copy_fix": {
        "en": "To build the tensor from ones that have a graph, use `torch.stack` (several tensors) or "
              "`.clone()` (one tensor): both keep the history.",
        "zh": "要用带计算图的张量构建新张量，请使用 `torch.stack`（多个张量）或 `.clone()`（单个张量）："
              "它们都会保留运算历史。",
    },
    "missing_rg.why_cut_round_trip_fix": {
        "en": "NumPy keeps no graph: give the loss the tensor itself instead of a copy rebuilt from its values.",
        "zh": "NumPy 不保留计算图：把张量本身交给损失，而不是用它的数值重建的副本。",
    },
    "missing_rg.fix_round_trip": {
        "en": "use `{code}` itself instead of its NumPy round trip on line {lineno}, which keeps the graph",
        "zh": "在第 {lineno} 行直接使用 `{code}`，不经 NumPy 来回转换，保留计算图",
    },
    "missing_rg.why_nondiff_threshold": {
        "en": "A 0/1 mask says nothing about how far each prediction is from the threshold: compute the loss "
              "from the probabilities themselves (a soft Dice, a BCE on probabilities).",
        "zh": "0/1 掩码无法反映每个预测离阈值有多远：请直接用概率计算损失（软 Dice、基于概率的 BCE）。",
    },
    "missing_rg.fix_soft_threshold": {
        "en": "compute the loss from the probabilities `{code}`, not from the thresholded mask (line {lineno})",
        "zh": "用概率 `{code}` 计算损失，而不是用阈值化后的掩码（第 {lineno} 行）",
    },
    "missing_rg.fix_copy": {
        "en": "build it with `{code}` on line {lineno}, which keeps the graph",
        "zh": "在第 {lineno} 行改用 `{code}` 构建，保留计算图",
    },
    "missing_rg.fix_cut": {
        "en": "remove `{cut}` on line {lineno}, so gradients reach the tensors before it",
        "zh": "删除第 {lineno} 行的 `{cut}`，让梯度能够传到它之前的张量",
    },
    "missing_rg.fix_update_leaf": {
        "en": "make {name} require grad again after the update on line {lineno}",
        "zh": "在第 {lineno} 行更新之后让 {name} 重新需要梯度",
    },
    # -- every parameter frozen --
    "missing_rg.title_frozen": {
        "en": "Every parameter of {name} is frozen (requires_grad=False)",
        "zh": "{name} 的所有参数都被冻结了（requires_grad=False）",
    },
    "missing_rg.summary_frozen": {
        "en": "`{loss}` depends on trainable values only through {name}, and none of its parameters requires "
              "grad, so there is nothing to backpropagate into.",
        "zh": "`{loss}` 只通过 {name} 依赖可训练的数值，而它的参数都不需要梯度，因此没有可以反向传播的目标。",
    },
    "missing_rg.why_frozen": {
        "en": "{name}, called on line {lineno}, has {count} parameter tensors and every one has "
              "requires_grad=False.",
        "zh": "第 {lineno} 行调用的 {name} 有 {count} 个参数张量，且全部为 requires_grad=False。",
    },
    "missing_rg.why_frozen_here": {
        "en": "Line {lineno} (`{code}`) turned requires_grad off.",
        "zh": "第 {lineno} 行（`{code}`）关闭了 requires_grad。",
    },
    "missing_rg.why_frozen_before": {
        "en": "They were frozen before this cell ran.",
        "zh": "它们在本单元格运行之前就已被冻结。",
    },
    "missing_rg.why_frozen_no_fix": {
        "en": "Which layers to train is your choice, so no fix is proposed: unfreeze the ones to train, e.g. "
              "`{head}.requires_grad_(True)` for the last layer or `{name}.requires_grad_(True)` for all.",
        "zh": "训练哪些层由你决定，因此不提供自动修复：请解冻需要训练的层，例如对最后一层使用 "
              "`{head}.requires_grad_(True)`，或对全部参数使用 `{name}.requires_grad_(True)`。",
    },
    "missing_rg.why_frozen_fix": {
        "en": "The freezing reached the head too, `{head}` (the last layer of `{name}`), which is what fine-tuning "
              "trains: the fix freezes the rest and leaves it trainable.",
        "zh": "冻结也波及了头部 `{head}`（`{name}` 的最后一层），而微调训练的正是它：修复只冻结其余部分，让它保持可训练。",
    },
    "missing_rg.fix_frozen_listed": {
        "en": "leave `{head}` out of the modules frozen on line {lineno}, so the head trains",
        "zh": "第 {lineno} 行冻结的模块中去掉 `{head}`，让头部参与训练",
    },
    "missing_rg.fix_frozen_helper": {
        "en": "freeze `{name}` only (line {lineno}), so `{head}` still trains",
        "zh": "只冻结 `{name}`（第 {lineno} 行），让 `{head}` 仍然参与训练",
    },
    "missing_rg.why_frozen_no_fix_all": {
        "en": "Whether to train it is your choice, so no fix is proposed: `{name}.requires_grad_(True)` "
              "unfreezes it.",
        "zh": "是否训练它由你决定，因此不提供自动修复：`{name}.requires_grad_(True)` 可以解冻它。",
    },
    # -- cause not found --
    "missing_rg.title_unknown": {
        "en": "backward() was called on `{loss}`, which does not require grad",
        "zh": "对不需要梯度的 `{loss}` 调用了 backward()",
    },
    "missing_rg.summary_unknown": {
        "en": "`{loss}` has no graph behind it; grad_magic could not tell from this cell where the graph was "
              "lost.",
        "zh": "`{loss}` 背后没有计算图；grad_magic 无法从本单元格判断计算图在哪里丢失了。",
    },
    "missing_rg.title_unseen": {
        "en": "backward() was called on a tensor that does not require grad",
        "zh": "对不需要梯度的张量调用了 backward()",
    },
    "missing_rg.summary_unseen": {
        "en": "backward() ran in code called from line {lineno}, outside this cell, on a tensor with no graph "
              "behind it.",
        "zh": "backward() 在第 {lineno} 行调用的、本单元格之外的代码中运行，而它处理的张量背后没有计算图。",
    },
    "missing_rg.summary_unread": {
        "en": "backward() on line {lineno} got a tensor with no graph behind it; grad_magic could not read the "
              "cell's code to tell where the graph was lost.",
        "zh": "第 {lineno} 行的 backward() 收到的张量背后没有计算图；grad_magic 无法解析本单元格的代码，"
              "因此无法判断计算图在哪里丢失了。",
    },
    "missing_rg.why_unseen": {
        "en": "backward() ran inside code that line {lineno} calls (`{code}`), which is not in this cell, so "
              "grad_magic cannot see which tensor it was given.",
        "zh": "backward() 是在第 {lineno} 行（`{code}`）所调用的代码中执行的，这部分代码不在本单元格中，"
              "因此 grad_magic 看不到传给它的是哪个张量。",
    },
    "missing_rg.why_unknown": {
        "en": "Check the tensors below: a leaf created without requires_grad=True, a forward pass under "
              "torch.no_grad(), `.detach()` / `.item()` / NumPy on the way to the loss, or frozen parameters "
              "are the usual causes.",
        "zh": "请检查下方的张量：常见原因有叶子张量创建时未设置 requires_grad=True、前向计算处于 "
              "torch.no_grad() 中、计算损失的路径上用了 `.detach()` / `.item()` / NumPy，或参数被冻结。",
    },
    "missing_rg.why_inference": {
        "en": "It is an inference tensor: it was computed under torch.inference_mode(), where autograd records "
              "nothing. Run the forward pass outside that block.",
        "zh": "它是一个推理张量：它是在 torch.inference_mode() 中计算的，autograd 在其中不记录任何运算。"
              "请在该代码块之外进行前向计算。",
    },
    "missing_rg.why_grad_mode_off": {
        "en": "Autograd is switched off for the whole session (`torch.set_grad_enabled(False)` ran and was not "
              "undone): call `torch.set_grad_enabled(True)` before the forward pass.",
        "zh": "autograd 在整个会话中都被关闭了（执行过 `torch.set_grad_enabled(False)` 且没有恢复）："
              "请在前向计算之前调用 `torch.set_grad_enabled(True)`。",
    },
    "missing_rg.title_nondiff": {
        "en": "`{op}` on line {lineno} has no gradient, so `{loss}` has no graph",
        "zh": "第 {lineno} 行的 `{op}` 没有梯度，因此 `{loss}` 没有计算图",
    },
    "missing_rg.summary_nondiff": {
        "en": "`{loss}` is computed through `{op}` (line {lineno}), which returns indices, integers or booleans: "
              "no gradient flows back through it.",
        "zh": "`{loss}` 的计算经过了 `{op}`（第 {lineno} 行），它返回的是索引、整数或布尔值：梯度无法从它反向传回。",
    },
    "missing_rg.why_nondiff": {
        "en": "On line {lineno} (`{code}`), {name} is made with `{op}`: its result has no grad_fn, so nothing "
              "before it gets a gradient, and `requires_grad=True` anywhere would run but train nothing.",
        "zh": "第 {lineno} 行（`{code}`）用 `{op}` 得到 {name}：它的结果没有 grad_fn，之前的一切都得不到梯度；"
              "在任何地方加 `requires_grad=True` 虽然能运行，却什么也训练不了。",
    },
    "missing_rg.why_nondiff_soft": {
        "en": "Its value is used as a number (a coordinate, a count): the softmax-weighted average of the indices "
              "is the differentiable version of `{op}`, computed from the scores themselves.",
        "zh": "它的值被当作数值使用（坐标、计数）：按 softmax 加权的索引平均值就是 `{op}` 的可微版本，"
              "直接由分数计算得到。",
    },
    "missing_rg.why_nondiff_no_fix": {
        "en": "Compute the loss from the scores themselves instead (cross_entropy on the logits rather than on "
              "`{op}`'s result, a soft version of a threshold): which one fits is the model's choice, so no fix "
              "is proposed.",
        "zh": "请改为直接由分数计算损失（对 logits 而不是 `{op}` 的结果求 cross_entropy，或把阈值换成软的版本）："
              "哪种合适取决于模型本身，因此不提供修复。",
    },
    "missing_rg.fix_soft_argmax": {
        "en": "compute {name} from the scores: a softmax-weighted average of the indices, the differentiable "
              "argmax (line {lineno})",
        "zh": "由分数计算 {name}：按 softmax 加权的索引平均值，即可微的 argmax（第 {lineno} 行）",
    },
    # -- integer-requires-grad --
    "int_rg.title": {
        "en": "{name} has dtype {dtype} and cannot require grad",
        "zh": "{name} 的数据类型是 {dtype}，不能设置 requires_grad",
    },
    "int_rg.summary": {
        "en": "Only floating-point and complex tensors can have gradients: make {name} floating point where it "
              "is created.",
        "zh": "只有浮点和复数张量才能有梯度：请在创建 {name} 的地方把它改为浮点类型。",
    },
    "int_rg.what": {
        "en": "Line {lineno} asked for requires_grad on {name}, whose dtype ({dtype}) is neither floating point "
              "nor complex.",
        "zh": "第 {lineno} 行对 {name} 设置了 requires_grad，而它的数据类型（{dtype}）既不是浮点也不是复数。",
    },
    "int_rg.why": {
        "en": "A gradient is a rate of change, defined only for continuous values, and {name} holds {dtype} "
              "values.",
        "zh": "梯度是变化率，只对连续取值有定义，而 {name} 存放的是 {dtype} 数值。",
    },
    "int_rg.why_literal": {
        "en": "`torch.{call}(...)` with whole-number arguments and no dtype makes an int64 tensor.",
        "zh": "`torch.{call}(...)` 的参数都是整数且未指定 dtype 时，会创建 int64 张量。",
    },
    "int_rg.why_fix": {
        "en": "Create it as floating point ({default}, the default float dtype) instead.",
        "zh": "改为以浮点类型（默认浮点类型 {default}）创建它即可。",
    },
    "int_rg.why_no_fix": {
        "en": "Make it floating point where it is created (e.g. `dtype=torch.{default}`), or convert it with "
              "`.float()` before asking for gradients.",
        "zh": "请在创建处把它改为浮点类型（例如 `dtype=torch.{default}`），或在设置梯度之前用 `.float()` 转换。",
    },
    "int_rg.the_tensor": {"en": "the tensor", "zh": "该张量"},
    "int_rg.an_integer": {"en": "an integer type", "zh": "整数类型"},
    "int_rg.fix": {
        "en": "create {name} as {dtype} (line {lineno})",
        "zh": "以 {dtype} 类型创建 {name}（第 {lineno} 行）",
    },
    "int_rg.fix_all": {
        "en": "create {name} and the integer tensors after it that require grad too as {dtype} (lines {lineno})",
        "zh": "以 {dtype} 类型创建 {name} 及其后同样要求梯度的整数张量（第 {lineno} 行）",
    },
    "int_rg.summary_constant": {
        "en": "Only floating-point and complex tensors can have gradients: keep {name} as data that asks for none.",
        "zh": "只有浮点和复数张量才能有梯度：把 {name} 作为不要求梯度的数据保留。",
    },
    "int_rg.why_constant": {
        "en": "The class only compares, masks or indexes with `{attr}`: it holds data, not a weight to train.",
        "zh": "这个类对 `{attr}` 只做比较、掩码或索引：它存放的是数据，而不是要训练的权重。",
    },
    "int_rg.why_fix_constant": {
        "en": "Keep it as it is and ask for no gradient: `requires_grad=False` on the `nn.Parameter`.",
        "zh": "保持其数值不变、不要求梯度即可：在 `nn.Parameter` 中加上 `requires_grad=False`。",
    },
    "int_rg.fix_constant": {
        "en": "keep {name} as a parameter that is not trained: `requires_grad=False` (line {lineno})",
        "zh": "把 {name} 保留为不训练的参数：加上 `requires_grad=False`（第 {lineno} 行）",
    },
}
