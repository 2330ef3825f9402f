"""Messages of the training rules."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "training.joiner": {"en": " and ", "zh": "；"},
    # -- graph-kept-alive --
    "training.graph.title": {
        "en": "`{name}` keeps every iteration's autograd graph alive",
        "zh": "`{name}` 让每一轮迭代的计算图都无法释放",
    },
    "training.graph.summary_sum": {
        "en": "Line {lineno} adds `{operand}` to `{name}` as a tensor with its graph, so `{name}` holds on "
              "to the graph of every iteration: memory grows with each one.",
        "zh": "第 {lineno} 行把带着计算图的张量 `{operand}` 累加到 `{name}` 上，于是 `{name}` 抓住了"
              "每一轮迭代的计算图：内存随迭代次数不断增长。",
    },
    "training.graph.summary_list": {
        "en": "Line {lineno} appends `{operand}` to `{name}` as a tensor with its graph: the {count} "
              "tensors in `{name}` keep {count} iterations' graphs alive, and memory grows with each one.",
        "zh": "第 {lineno} 行把带着计算图的张量 `{operand}` 追加到 `{name}` 中：`{name}` 里的 {count} "
              "个张量让 {count} 轮迭代的计算图都无法释放，内存随迭代次数不断增长。",
    },
    "training.graph.what_sum": {
        "en": "After the loop on line {loop}, `{name}` is still a tensor with a grad_fn ({grad_fn}). The sum "
              "is part of the autograd graph, linked to the loss of every iteration it added up. No error "
              "is raised: memory just keeps growing, until a long run is out of memory.",
        "zh": "第 {loop} 行的循环结束后，`{name}` 仍是一个带 grad_fn（{grad_fn}）的张量。这个和本身就是"
              "计算图的一部分，连着它累加过的每一轮的 loss。不会报错：只是内存持续增长，"
              "直到长时间训练时内存耗尽。",
    },
    "training.graph.what_list": {
        "en": "After the loop on line {loop}, the tensors in `{name}` still have a grad_fn ({grad_fn}): each "
              "one keeps the autograd graph of its iteration. No error is raised: memory just keeps "
              "growing, until a long run is out of memory.",
        "zh": "第 {loop} 行的循环结束后，`{name}` 里的张量仍带着 grad_fn（{grad_fn}）：每一个都抓住了"
              "它那一轮的计算图。不会报错：只是内存持续增长，直到长时间训练时内存耗尽。",
    },
    "training.graph.summary_sum_steps": {
        "en": "The loop in `{function}` adds `{operand}` to `{name}` on line {lineno} as a tensor with its graph, so "
              "`{name}` holds on to the graph of every iteration: memory grows with each one.",
        "zh": "`{function}` 中的循环在第 {lineno} 行把带着计算图的张量 `{operand}` 累加到 `{name}` 上，于是 `{name}` "
              "抓住了每一轮迭代的计算图：内存随迭代次数不断增长。",
    },
    "training.graph.summary_list_steps": {
        "en": "The loop in `{function}` appends `{operand}` to `{name}` on line {lineno} with its graph: the {count} "
              "items in `{name}` keep {count} iterations' graphs alive, and memory grows with each one.",
        "zh": "`{function}` 中的循环在第 {lineno} 行把带着计算图的 `{operand}` 追加到 `{name}` 中：`{name}` 里的 "
              "{count} 项让 {count} 轮迭代的计算图都无法释放，内存随迭代次数不断增长。",
    },
    "training.graph.what_sum_steps": {
        "en": "At each optimizer step `{name}` in `{function}` was a tensor with a grad_fn ({grad_fn}) whose graph "
              "held the one of the step before: the sum is part of the autograd graph, linked to the loss of every "
              "iteration it added up. No error is raised: memory just keeps growing, until a long run is out of "
              "memory.",
        "zh": "每次优化器 step 时，`{function}` 中的 `{name}` 都是一个带 grad_fn（{grad_fn}）的张量，它的计算图"
              "包含了上一步的计算图：这个和本身就是计算图的一部分，连着它累加过的每一轮的 loss。不会报错：只是"
              "内存持续增长，直到长时间训练时内存耗尽。",
    },
    "training.graph.what_list_steps": {
        "en": "At each optimizer step the list `{name}` in `{function}` was longer ({count} items at the last "
              "one), and its newest item still had a grad_fn ({grad_fn}): each one keeps the autograd graph of its "
              "iteration. No error is raised: memory just keeps growing, until a long run is out of memory.",
        "zh": "每次优化器 step 时，`{function}` 中的列表 `{name}` 都更长了（最后一次有 {count} 项），而且最新的一项"
              "仍带着 grad_fn（{grad_fn}）：每一项都抓住了它那一轮的计算图。不会报错：只是内存持续增长，直到长时间"
              "训练时内存耗尽。",
    },
    "training.graph.fix_part_dict": {
        "en": "`.detach()` on each value of `{operand}` on line {lineno}",
        "zh": "在第 {lineno} 行对 `{operand}` 的每个值调用 `.detach()`",
    },
    "training.graph.why": {
        "en": "A tensor that requires grad carries its whole graph (the activations saved for backward) "
              "with it. Adding it to a running total or keeping it in a list links the graphs together, "
              "so none of them can be freed. To record the value, keep a Python number (`.item()`) or "
              "a tensor cut from the graph (`.detach()`).",
        "zh": "需要梯度的张量会带着它的整张计算图（为 backward 保存的中间结果）。把它累加到一个总和里"
              "或存进列表，会把这些计算图串在一起，谁都无法被释放。只想记录数值时，请保存 Python "
              "数字（`.item()`）或从计算图上断开的张量（`.detach()`）。",
    },
    "training.graph.why_no_backward_sum": {
        "en": "Nothing in this cell calls backward() on `{name}`; if you mean to backpropagate through "
              "the sum later, keep it as it is.",
        "zh": "本单元格中没有对 `{name}` 调用 backward()；如果你打算之后对这个和做反向传播，"
              "就保持原样即可。",
    },
    "training.graph.why_no_backward_list": {
        "en": "Nothing in this cell calls backward() through `{name}`; if you mean to backpropagate "
              "through these tensors later, keep them as they are.",
        "zh": "本单元格中没有通过 `{name}` 调用 backward()；如果你打算之后对这些张量做反向传播，"
              "就保持原样即可。",
    },
    "training.graph.why_no_fix": {
        "en": "No automatic fix: grad_magic could not tell where to cut the graph in this expression.",
        "zh": "没有自动修复：grad_magic 无法判断应该在这个表达式的哪里断开计算图。",
    },
    "training.graph.fix": {
        "en": "accumulate plain values: {parts}",
        "zh": "只累加数值：{parts}",
    },
    "training.graph.fix_part": {
        "en": "`{how}` on line {lineno}",
        "zh": "在第 {lineno} 行加上 `{how}`",
    },
    # -- frozen-by-no-grad --
    "training.frozen.title": {
        "en": "`{optimizer}` stepped, but none of its parameters had a gradient",
        "zh": "`{optimizer}` 执行了 step，但它的参数没有一个有梯度",
    },
    "training.frozen.summary": {
        "en": "`{optimizer}.step()` on line {lineno} ran {total} times and found .grad empty on every "
              "parameter each time: nothing was trained.",
        "zh": "第 {lineno} 行的 `{optimizer}.step()` 执行了 {total} 次，每次所有参数的 .grad 都是空的："
              "什么都没有被训练。",
    },
    "training.frozen.what": {
        "en": "During this cell `{optimizer}` ({cls}) stepped {total} times, and every time all of its "
              "parameters had .grad = None, so step() left them unchanged. No error is raised: the "
              "loss just never improves.",
        "zh": "本单元格运行期间 `{optimizer}`（{cls}）执行了 {total} 次 step，每次它的所有参数的 .grad "
              "都是 None，所以 step() 没有改变任何参数。不会报错：只是 loss 一直不下降。",
    },
    "training.frozen.why_no_grad": {
        "en": "The forward pass runs under the `with` block on line {block}, where autograd records "
              "nothing: the loss is not connected to the parameters, so backward() cannot reach them.",
        "zh": "前向计算在第 {block} 行的 `with` 块中执行，那里 autograd 什么都不记录：loss 与参数"
              "之间没有连接，backward() 到达不了它们。",
    },
    "training.frozen.why_hack": {
        "en": "Setting requires_grad on `{loss}` only silences the error that says so.",
        "zh": "给 `{loss}` 设置 requires_grad 只是让本该出现的报错消失了。",
    },
    "training.frozen.why_no_backward": {
        "en": "Nothing in this cell calls backward(): gradients are only computed by backward() (or "
              "torch.autograd.grad), so `{optimizer}` has nothing to step on.",
        "zh": "本单元格中没有调用 backward()：梯度只由 backward()（或 torch.autograd.grad）计算，"
              "所以 `{optimizer}` 没有可用来更新的梯度。",
    },
    "training.frozen.why_detached": {
        "en": "backward() ran on `{loss}`, but `{loss}` has no grad_fn. It was rebuilt from a detached "
              "value (.detach(), .item(), torch.tensor(...)) and marked requires_grad. So backward() "
              "stops at `{loss}` itself and never reaches the parameters. Compute the loss from the "
              "model's output directly.",
        "zh": "backward() 是在 `{loss}` 上执行的，但 `{loss}` 没有 grad_fn。它是从已断开的值"
              "（.detach()、.item()、torch.tensor(...)）重新构造并设置了 requires_grad 的。所以 "
              "backward() 在 `{loss}` 处就停止了，到达不了参数。请直接用模型的输出计算 loss。",
    },
    "training.frozen.why_other": {
        "en": "None of the parameters given to `{optimizer}` were part of the graph that backward() "
              "ran through. Check that the optimizer got the parameters of the model you train, and "
              "that gradients from torch.autograd.grad are stored in .grad.",
        "zh": "传给 `{optimizer}` 的参数都不在 backward() 经过的计算图中。请检查优化器拿到的是否是"
              "你正在训练的模型的参数，以及 torch.autograd.grad 得到的梯度是否写回了 .grad。",
    },
    "training.frozen.why_no_fix": {
        "en": "No automatic fix: grad_magic could not pin down the one change that connects the loss "
              "to the parameters here.",
        "zh": "没有自动修复：grad_magic 无法确定这里需要哪一处改动才能把 loss 与参数连接起来。",
    },
    "training.frozen.summary_at": {
        "en": "`{optimizer}.step()` {at} ran {total} times and found .grad empty on every parameter each time: "
              "nothing was trained.",
        "zh": "{at} 的 `{optimizer}.step()` 执行了 {total} 次，每次所有参数的 .grad 都是空的：什么都没有被训练。",
    },
    "training.frozen.why_decorated": {
        "en": "`{function}` is decorated with `{decorator}` on line {lineno}: everything it runs, the forward pass "
              "included, records no graph, so the loss is not connected to the parameters and backward() cannot "
              "reach them.",
        "zh": "`{function}` 在第 {lineno} 行被 `{decorator}` 装饰：它运行的一切（包括前向计算）都不记录计算图，"
              "所以 loss 与参数之间没有连接，backward() 到达不了它们。",
    },
    "training.frozen.why_rebuilt": {
        "en": "`{call}` on line {lineno} builds a new leaf tensor out of the losses' values: their graphs are cut "
              "there, so backward() stops at it and never reaches the parameters. `torch.stack(...)` keeps them "
              "in the graph.",
        "zh": "第 {lineno} 行的 `{call}` 用各个 loss 的数值新建了一个叶子张量：它们的计算图在这里被切断，"
              "backward() 停在它这里，到达不了参数。`torch.stack(...)` 能把它们保留在计算图中。",
    },
    "training.frozen.fix_decorator": {
        "en": "remove `{decorator}` on line {lineno}, so autograd records the forward pass",
        "zh": "删除第 {lineno} 行的 `{decorator}`，让 autograd 记录前向计算",
    },
    "training.frozen.fix_stack": {
        "en": "build the loss with `torch.stack(...)` instead of `torch.tensor(..., requires_grad=True)` from line "
              "{lineno} on, so it stays connected to the parameters",
        "zh": "从第 {lineno} 行起用 `torch.stack(...)` 代替 `torch.tensor(..., requires_grad=True)` 构造 loss，"
              "让它与参数保持连接",
    },
    "training.at": {"en": "on line {lineno}", "zh": "第 {lineno} 行"},
    "training.at_here": {"en": "on line {lineno} of this cell", "zh": "本单元格第 {lineno} 行"},
    "training.frozen.why_cleared": {
        "en": "`{call}` runs after backward() and before the step: it clears the gradients backward() just made, "
              "so step() finds none. Clear them before backward() instead.",
        "zh": "`{call}` 在 backward() 之后、step 之前执行：它清掉了 backward() 刚算出的梯度，所以 step() 一个"
              "梯度也找不到。请改为在 backward() 之前清零梯度。",
    },
    "training.frozen.fix_cleared": {
        "en": "move the zero_grad() of line {lineno} before the backward() on line {backward}",
        "zh": "把第 {lineno} 行的 zero_grad() 移到第 {backward} 行的 backward() 之前",
    },
    "training.frozen.fix_dedent": {
        "en": "move the forward pass out of the `with` block on line {lineno}, so autograd records it",
        "zh": "把前向计算移出第 {lineno} 行的 `with` 块，让 autograd 记录它",
    },
    "training.frozen.fix_backward": {
        "en": "call `{call}` before the step on line {lineno}",
        "zh": "在第 {lineno} 行的 step 之前调用 `{call}`",
    },
    # -- train-eval-mode --
    "training.mode.title_train": {
        "en": "`{name}` was trained in eval() mode",
        "zh": "`{name}` 在 eval() 模式下被训练",
    },
    "training.mode.title_eval": {
        "en": "`{name}` was evaluated in train() mode",
        "zh": "`{name}` 在 train() 模式下被评估",
    },
    "training.mode.summary_train": {
        "en": "The optimizer stepped on line {lineno} while `{name}` was in eval() mode: its "
              "Dropout/BatchNorm layers behaved as at inference time.",
        "zh": "第 {lineno} 行的优化器执行 step 时 `{name}` 处于 eval() 模式：它的 "
              "Dropout/BatchNorm 层按推理方式工作。",
    },
    "training.mode.summary_eval": {
        "en": "The evaluation under `with` on line {lineno} ran `{name}` in train() mode: its "
              "Dropout/BatchNorm layers behaved as in training.",
        "zh": "第 {lineno} 行 `with` 块中的评估以 train() 模式运行了 `{name}`：它的 "
              "Dropout/BatchNorm 层按训练方式工作。",
    },
    "training.mode.what_train": {
        "en": "`{name}` ends this cell with training = False, and nothing in the cell switched it back "
              "to train() before the steps. Affected layers: {layers}. No error is raised: the model "
              "just trains differently.",
        "zh": "本单元格结束时 `{name}` 的 training = False，而单元格中没有任何代码在 step 之前把它切回 "
              "train()。受影响的层：{layers}。不会报错：只是模型的训练方式不对。",
    },
    "training.mode.what_train_loop": {
        "en": "`{name}.eval()` on line {lineno} runs inside the training loop, and nothing in the loop "
              "switches `{name}` back to train(). Every pass after the first one trains in eval() mode. "
              "Affected layers: {layers}. No error is raised: the model just trains differently.",
        "zh": "第 {lineno} 行的 `{name}.eval()` 在训练循环内部执行，而循环中没有任何代码把 `{name}` "
              "切回 train()。第一轮之后的每一轮都在 eval() 模式下训练。受影响的层：{layers}。"
              "不会报错：只是模型的训练方式不对。",
    },
    "training.mode.why_came_in_eval": {
        "en": "`{name}` was already in eval() mode when this cell started (an earlier cell put it there).",
        "zh": "本单元格开始运行时 `{name}` 就已经处于 eval() 模式（是之前的单元格切换的）。",
    },
    "training.mode.what_eval": {
        "en": "`{name}` is in train() mode (training = True) and nothing in the cell calls "
              "`{name}.eval()`. Affected layers: {layers}. No error is raised: the numbers are just off.",
        "zh": "`{name}` 处于 train() 模式（training = True），单元格中也没有调用 `{name}.eval()`。"
              "受影响的层：{layers}。不会报错：只是得到的数字不对。",
    },
    "training.mode.why_train": {
        "en": "In eval() mode Dropout stops dropping, and BatchNorm uses its running statistics instead "
              "of the batch's and stops updating them. So {layers} cannot regularise or normalise as "
              "the model expects while it learns. Call `{name}.train()` before training.",
        "zh": "在 eval() 模式下 Dropout 不再丢弃，BatchNorm 使用累计的统计量而不是当前 batch 的，"
              "也不再更新它们。所以 {layers} 在学习过程中无法按模型预期进行正则化或归一化。"
              "请在训练前调用 `{name}.train()`。",
    },
    "training.mode.why_eval": {
        "en": "In train() mode Dropout randomly zeroes activations, and BatchNorm normalises with each "
              "batch's statistics and overwrites its running statistics with the evaluation data. With "
              "{layers} in train() mode the results are random and the model changes. Call `{name}.eval()` "
              "before evaluating (turning gradients off does not switch the mode).",
        "zh": "在 train() 模式下 Dropout 会随机置零激活值，BatchNorm 用每个 batch 的统计量做归一化，"
              "还会用评估数据覆盖它的累计统计量。所以 {layers} 会让结果带有随机性并改变模型。"
              "请在评估前调用 `{name}.eval()`（关闭梯度不会切换模式）。",
    },
    "training.mode.why_eval_call": {
        "en": "`{name}` was put in eval() mode on line {lineno}, and nothing switched it back.",
        "zh": "`{name}` 在第 {lineno} 行被切换到 eval() 模式，之后没有任何代码把它切回来。",
    },
    "training.mode.summary_steps": {
        "en": "The optimizer step on line {lineno} ran {in_eval} of {total} times with `{name}` in eval() mode: "
              "its Dropout/BatchNorm layers behaved as at inference time.",
        "zh": "第 {lineno} 行的优化器 step 共执行 {total} 次，其中 {in_eval} 次执行时 `{name}` 处于 eval() 模式："
              "它的 Dropout/BatchNorm 层按推理方式工作。",
    },
    "training.mode.what_steps": {
        "en": "At {in_eval} of the {total} optimizer steps `{name}` had training = False, so the forward passes "
              "they learned from ran in eval() mode. Affected layers: {layers}. No error is raised: the model "
              "just trains differently.",
        "zh": "在 {total} 次优化器 step 中，有 {in_eval} 次 `{name}` 的 training = False，所以它们所依据的前向"
              "传播都在 eval() 模式下运行。受影响的层：{layers}。不会报错：只是模型的训练方式不对。",
    },
    "training.mode.why_train_once": {
        "en": "`{call}` on line {lineno} runs once, before the loop: an evaluation inside the loop leaves "
              "`{name}` in eval() mode for every pass after it.",
        "zh": "第 {lineno} 行的 `{call}` 只在循环开始前执行一次：循环中的一次评估会让 `{name}` 在之后的每一轮都"
              "停留在 eval() 模式。",
    },
    "training.mode.why_no_fix_steps": {
        "en": "No automatic fix: the forward pass of the loop could not be found; call `{call}` before it.",
        "zh": "没有自动修复：找不到循环中的前向传播；请在它之前调用 `{call}`。",
    },
    "training.mode.fix_train": {
        "en": "call `{call}` before line {lineno}",
        "zh": "在第 {lineno} 行之前调用 `{call}`",
    },
    "training.mode.fix_train_loop": {
        "en": "call `{call}` at the start of each pass of the loop, before line {lineno}",
        "zh": "在循环每一轮开始时（第 {lineno} 行之前）调用 `{call}`",
    },
    "training.mode.fix_eval": {
        "en": "call `{call}` before the evaluation on line {lineno}",
        "zh": "在第 {lineno} 行的评估之前调用 `{call}`",
    },
}
