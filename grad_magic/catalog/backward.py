"""Messages of the backward rules."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- backward-non-scalar --
    "backward.scalar.title": {
        "en": "{tensor} has shape {shape}: backward() needs a single number",
        "zh": "{tensor} 的形状是 {shape}：backward() 需要一个标量",
    },
    "backward.scalar.title_complex": {
        "en": "{tensor} is a complex number: backward() needs a real scalar",
        "zh": "{tensor} 是复数：backward() 需要一个实数标量",
    },
    "backward.scalar.title_unknown": {
        "en": "{tensor} is not a single number: backward() needs one",
        "zh": "{tensor} 不是单个数：backward() 需要一个标量",
    },
    "backward.scalar.unnamed": {"en": "the output", "zh": "输出"},
    "backward.scalar.summary": {
        "en": "{call} without `gradient=` differentiates a single number; a tensor with several elements "
              "must be reduced to one first (or given the gradient to start from).",
        "zh": "不带 `gradient=` 的 {call} 只能对单个数求导；有多个元素的张量要先归约成一个数（或者给出起始梯度）。",
    },
    "backward.scalar.what": {
        "en": "`{code}` on line {lineno} stopped: {tensor} has shape {shape}, not a single element.",
        "zh": "第 {lineno} 行的 `{code}` 中止了：{tensor} 的形状是 {shape}，不是单个元素。",
    },
    "backward.scalar.what_unknown": {
        "en": "`{code}` on line {lineno} stopped: {tensor} has more than one element.",
        "zh": "第 {lineno} 行的 `{code}` 中止了：{tensor} 不止一个元素。",
    },
    "backward.scalar.what_complex": {
        "en": "`{code}` on line {lineno} stopped: {tensor} is a single {dtype} number, and backward() starts "
              "only from a real one.",
        "zh": "第 {lineno} 行的 `{code}` 中止了：{tensor} 是一个 {dtype} 数，而 backward() 只能从实数开始。",
    },
    "backward.scalar.summary_complex": {
        "en": "{call} without `gradient=` differentiates a real number; a complex result must be turned into "
              "the real quantity you want to minimise first.",
        "zh": "不带 `gradient=` 的 {call} 只能对实数求导；复数结果要先变成你想最小化的实数量。",
    },
    "backward.scalar.shape": {"en": " (shape {shape})", "zh": "（形状 {shape}）"},
    "backward.scalar.why": {
        "en": "Gradients are derivatives of one number. For {tensor}{shaped} {call} would need d(output)/d(output) "
              "for every element, and torch only creates that implicitly (a 1) for a single-element output. "
              "Usually the loss was meant to be averaged or summed over the batch; passing "
              "`gradient=torch.ones_like(...)` instead gives the same gradients as `.sum()`.",
        "zh": "梯度是对单个数求的导数。对 {tensor}{shaped}，{call} 需要每个元素的 d(输出)/d(输出)，而 torch 只会为"
              "单元素输出隐式地创建它（即 1）。通常损失本应在批次上取平均或求和；改为传入 "
              "`gradient=torch.ones_like(...)` 得到的梯度与 `.sum()` 相同。",
    },
    "backward.scalar.why_mean": {
        "en": "{tensor} is a loss, so the fix averages it with `.mean()`, as the loss functions' default "
              "reduction='mean' does; use `.sum()` if you want per-element gradients added up.",
        "zh": "{tensor} 是损失，所以修复用 `.mean()` 取平均，与损失函数默认的 reduction='mean' 一致；"
              "如果想把每个元素的梯度加起来，请用 `.sum()`。",
    },
    "backward.scalar.why_sum": {
        "en": "The fix sums {tensor} with `.sum()`: for an elementwise computation that gives each input "
              "element its own derivative. Use `.mean()` instead if {tensor} is a loss to average.",
        "zh": "修复用 `.sum()` 对 {tensor} 求和：对逐元素的计算，这会给每个输入元素各自的导数。"
              "如果 {tensor} 是需要取平均的损失，请改用 `.mean()`。",
    },
    "backward.scalar.why_reduction_none": {
        "en": "{tensor} comes from a loss computed with reduction='none', which keeps one loss per element on "
              "purpose (for weights or a mask, say). Reduce it the way you intended, e.g. `.mean()` as "
              "reduction='mean' would; no fix is proposed.",
        "zh": "{tensor} 来自 reduction='none' 的损失，它特意为每个元素保留一个损失值（例如用于加权或掩码）。"
              "请按你的意图归约它，例如像 reduction='mean' 那样用 `.mean()`；这里不提供修复。",
    },
    "backward.scalar.why_no_fix": {
        "en": "The cell does not show which tensor backward() was called on, so no fix is proposed: reduce it "
              "with `.mean()` or `.sum()`.",
        "zh": "单元格里看不出 backward() 是在哪个张量上调用的，因此不提供修复：请用 `.mean()` 或 `.sum()` 归约它。",
    },
    "backward.scalar.why_complex": {
        "en": "{tensor} is a single {dtype} number, and a gradient is only defined for a real-valued function. "
              "Choose the real quantity you want to minimise, e.g. `.abs()`, `.real` or `.abs().pow(2)`; "
              "which one is yours to decide, so no fix is proposed.",
        "zh": "{tensor} 是一个 {dtype} 数，而梯度只对实值函数有定义。请选择你想最小化的实数量，例如 "
              "`.abs()`、`.real` 或 `.abs().pow(2)`；选哪一个由你决定，因此不提供修复。",
    },
    "backward.scalar.fix": {
        "en": "Reduce `{old}` to a single number: `{new}` (line {lineno})",
        "zh": "把 `{old}` 归约成一个数：`{new}`（第 {lineno} 行）",
    },
    # -- backward-twice --
    "backward.twice.title": {
        "en": "backward() on {tensor} ran into a graph an earlier backward() already freed",
        "zh": "{tensor} 上的 backward() 碰到了一个已被先前的 backward() 释放的计算图",
    },
    "backward.twice.unnamed": {"en": "the output", "zh": "输出"},
    "backward.twice.summary": {
        "en": "Each backward() frees the values its graph saved; a second backward() through any part of "
              "that graph finds them gone.",
        "zh": "每次 backward() 都会释放计算图保存的中间值；再次对该图的任何部分调用 backward() 时，它们已经不在了。",
    },
    "backward.twice.what": {
        "en": "`{code}` on line {lineno} stopped: part of the graph behind {tensor} was already used by an "
              "earlier backward(), which freed its saved tensors.",
        "zh": "第 {lineno} 行的 `{code}` 中止了：{tensor} 背后的计算图有一部分已经被先前的 backward() 用过，"
              "它保存的张量已被释放。",
    },
    "backward.twice.why": {
        "en": "Autograd keeps the intermediate values a graph needs only until the first backward() through "
              "them, to save memory.",
        "zh": "为了节省内存，autograd 只把计算图需要的中间值保留到第一次经过它们的 backward() 为止。",
    },
    "backward.twice.why_carried_title": {
        "en": "The loop state {state} carries the previous iteration's graph into the next backward()",
        "zh": "{state} 把上一次迭代的计算图带进了下一次 backward()",
    },
    "backward.twice.why_carried": {
        "en": "The loop state {state}, set on line {lineno}, passes from one iteration of the loop on line {loop} to "
              "the next. It is still attached to the graph that made it. So the second iteration's backward() "
              "on {tensor} reaches back into the first iteration's graph, which that iteration's backward() "
              "already freed. Detaching the state at the top of each iteration keeps its values and cuts the "
              "old graph off (truncated backpropagation through time).",
        "zh": "第 {lineno} 行赋值的 {state} 从第 {loop} 行循环的一次迭代传到下一次迭代。它仍然连着生成它的计算图。"
              "于是第二次迭代在 {tensor} 上的 backward() 会一直回溯到第一次迭代的计算图，而那次迭代的 backward() "
              "已经把它释放了。在每次迭代开头对状态调用 detach()，可以保留它的值并切断旧的计算图"
              "（截断的随时间反向传播）。",
    },
    "backward.twice.fix_detach": {
        "en": "Cut the previous iteration's graph off: `{code}` at the top of the loop on line {lineno}",
        "zh": "切断上一次迭代的计算图：在第 {lineno} 行循环体的开头加上 `{code}`",
    },
    "backward.twice.why_before_loop_title": {
        "en": "{graph} is computed once, before the loop, and backpropagated in every iteration",
        "zh": "{graph} 只在循环之前计算了一次，却在每次迭代中反向传播",
    },
    "backward.twice.why_before_loop": {
        "en": "{graph} is computed on line {lineno}, before the loop on line {loop}, and never recomputed "
              "inside it. The first iteration's backward() frees its graph, and the second one has nothing "
              "to go through. Each iteration needs its own forward pass (the parameters change every step).",
        "zh": "{graph} 在第 {lineno} 行、第 {loop} 行的循环之前计算，循环里从未重新计算。第一次迭代的 backward() "
              "释放了它的计算图，第二次就没有可以经过的图了。每次迭代都需要自己的前向计算（参数每一步都会变）。",
    },
    "backward.twice.why_part_before_loop_title": {
        "en": "{graph} is computed once, before the loop, and every iteration backpropagates through it",
        "zh": "{graph} 只在循环之前计算了一次，而每次迭代都要经过它反向传播",
    },
    "backward.twice.why_part_before_loop": {
        "en": "{graph} is computed on line {lineno}, before the loop on line {loop}, from tensors that require "
              "grad, and {tensor} is built on it in every iteration. The first iteration's backward() goes "
              "through {graph}'s part of the graph and frees it; the second finds it gone. Compute {graph} "
              "inside the loop, so each iteration has its own graph (the parameters change every step).",
        "zh": "{graph} 在第 {lineno} 行、第 {loop} 行的循环之前由需要梯度的张量计算得到，而每次迭代的 {tensor} "
              "都建立在它之上。第一次迭代的 backward() 经过 {graph} 那部分计算图并释放了它；第二次就找不到了。"
              "请在循环里计算 {graph}，让每次迭代都有自己的计算图（参数每一步都会变）。",
    },
    "backward.twice.fix_move": {
        "en": "Compute the forward pass in every iteration: move line(s) {lines} into the loop on line {loop}",
        "zh": "每次迭代都做前向计算：把第 {lines} 行移到第 {loop} 行的循环里",
    },
    "backward.twice.why_second_title": {
        "en": "{tensor} shares its graph with `{first}`, which was backpropagated on line {lineno}",
        "zh": "{tensor} 与第 {lineno} 行已经反向传播过的 `{first}` 共用计算图",
    },
    "backward.twice.why_second": {
        "en": "`{first}.backward()` on line {lineno} already went through the graph {tensor} needs and freed "
              "it. If both backward passes are meant, keep the graph for the second one with "
              "`retain_graph=True` on the first (or add the losses and call backward() once).",
        "zh": "第 {lineno} 行的 `{first}.backward()` 已经经过了 {tensor} 需要的计算图并释放了它。如果两次反向传播"
              "都是有意的，请在第一次调用中加上 `retain_graph=True` 为第二次保留计算图（或者把损失相加后只调用一次 "
              "backward()）。",
    },
    "backward.twice.why_same_title": {
        "en": "{tensor} is backpropagated a second time (the first was on line {lineno})",
        "zh": "{tensor} 第二次反向传播（第一次在第 {lineno} 行）",
    },
    "backward.twice.why_same": {
        "en": "`{first}.backward()` on line {lineno} already went through this graph and freed it. To "
              "backpropagate the same graph again on purpose (to accumulate its gradient twice, say), keep it "
              "with `retain_graph=True` on the first call; otherwise drop the second call.",
        "zh": "第 {lineno} 行的 `{first}.backward()` 已经经过了这个计算图并释放了它。如果有意再次对同一个计算图"
              "反向传播（例如把梯度累加两次），请在第一次调用中用 `retain_graph=True` 保留它；否则去掉第二次调用。",
    },
    "backward.twice.why_no_edit": {
        "en": "The cell's text does not allow that edit safely here, so no fix is proposed.",
        "zh": "这里单元格的文本无法安全地做这个修改，因此不提供修复。",
    },
    "backward.twice.why_stepped_title": {
        "en": "{tensor} shares its graph with `{first}`, which was backpropagated on line {lineno}",
        "zh": "{tensor} 与第 {lineno} 行已经反向传播过的 `{first}` 共用计算图",
    },
    "backward.twice.why_stepped": {
        "en": "`{first}.backward()` on line {lineno} already went through part of the graph {tensor} needs "
              "and freed it, and an optimizer step runs in between: these are two training steps, not one "
              "loss split in two. Usually one network's output feeds the other's loss (a GAN, say): pass it "
              "`.detach()`ed to the loss that must not reach back into it, or compute it again. "
              "`retain_graph=True` would only hide this: the first backward would still send gradients where "
              "they do not belong. Which tensor to detach is your call, so no fix is proposed.",
        "zh": "第 {lineno} 行的 `{first}.backward()` 已经经过了 {tensor} 需要的部分计算图并释放了它，而且中间还有一次"
              "优化器 step：这是两个训练步骤，而不是拆成两半的一个损失。通常是一个网络的输出进入了另一个网络的损失"
              "（例如 GAN）：在不应回溯到它的那个损失里使用它的 `.detach()`，或者重新计算它。"
              "`retain_graph=True` 只会掩盖问题：第一次 backward 仍会把梯度送到不该去的地方。"
              "要对哪个张量 detach 由你决定，因此不提供修复。",
    },
    "backward.twice.why_recompute_title": {
        "en": "{tensor} goes through the graph of {name}, which `{first}.backward()` on line {lineno} freed, and "
              "the weights changed since",
        "zh": "{tensor} 经过 {name} 的计算图，而第 {lineno} 行的 `{first}.backward()` 已释放它，且权重在此之后已改变",
    },
    "backward.twice.why_recompute": {
        "en": "{name} was made on line {made} (`{value}`) and `{first}.backward()` on line {lineno} went through "
              "its graph and freed it. Then the run changed the weights that graph used, in place (an "
              "optimizer's step, or `p.add_(...)` under no_grad): `retain_graph=True` would only trade this "
              "error for \"modified by an inplace operation\", and its gradients would be for the old weights. "
              "The second backward needs a new forward pass: `{value}` computed again where it is read.",
        "zh": "{name} 在第 {made} 行生成（`{value}`），第 {lineno} 行的 `{first}.backward()` 经过并释放了它的计算图。"
              "之后运行中又原地修改了这张图用到的权重（优化器的 step，或在 no_grad 下的 `p.add_(...)`）："
              "`retain_graph=True` 只会把这个错误换成 \"modified by an inplace operation\"，而且梯度对应的是旧权重。"
              "第二次 backward 需要重新做一次前向：在读取它的地方重新计算 `{value}`。",
    },
    "backward.twice.fix_recompute": {
        "en": "Run the forward pass again for the second backward: `{value}` in place of `{name}` on line {lineno}",
        "zh": "为第二次 backward 重新做前向：在第 {lineno} 行用 `{value}` 代替 `{name}`",
    },
    "backward.twice.fix_retain": {
        "en": "Keep the graph for the second backward: `retain_graph=True` in `{first}.backward()` on line "
              "{lineno}",
        "zh": "为第二次 backward 保留计算图：在第 {lineno} 行的 `{first}.backward()` 中加上 `retain_graph=True`",
    },
    "backward.twice.why_no_fix": {
        "en": "Which earlier backward() freed this graph is not clear from the cell, so no fix is proposed: "
              "recompute the forward pass before each backward(), `.detach()` tensors carried from one step "
              "to the next, or pass `retain_graph=True` to the first backward() if both are meant.",
        "zh": "从单元格里看不出是哪一次先前的 backward() 释放了这个计算图，因此不提供修复：在每次 backward() 之前"
              "重新做前向计算，对从一步带到下一步的张量调用 `.detach()`，或者在两次都有意时给第一次 backward() "
              "传入 `retain_graph=True`。",
    },
    # -- out-with-grad --
    "backward.out.title": {
        "en": "{op}(..., out=...) cannot be differentiated, and {grads} requires grad",
        "zh": "{op}(..., out=...) 无法求导，而 {grads} 需要梯度",
    },
    "backward.out.an_input": {"en": "an input", "zh": "某个输入"},
    "backward.out.summary": {
        "en": "Autograd cannot record a result written into a tensor you pass as `out=`; use the function's "
              "return value instead.",
        "zh": "autograd 无法记录写入你通过 `out=` 传入的张量中的结果；请改用函数的返回值。",
    },
    "backward.out.what": {
        "en": "`{code}` on line {lineno} stopped: it writes into {out}, and {grads} requires grad.",
        "zh": "第 {lineno} 行的 `{code}` 中止了：它写入 {out}，而 {grads} 需要梯度。",
    },
    "backward.out.why": {
        "en": "`out=` writes the result of {op}() into an existing tensor. Autograd cannot attach a graph to a "
              "tensor written that way, so torch refuses whenever an input requires grad. The out-of-place "
              "call returns a new tensor that carries the graph.",
        "zh": "`out=` 把 {op}() 的结果写入一个已有的张量。autograd 无法给这样写入的张量附加计算图，所以只要有输入"
              "需要梯度，torch 就会拒绝。非原地的调用会返回一个带计算图的新张量。",
    },
    "backward.out.why_no_fix": {
        "en": "The call is part of a larger expression, so no fix is proposed: drop `out=` and assign the "
              "result.",
        "zh": "这个调用是一个更大的表达式的一部分，因此不提供修复：去掉 `out=`，把结果赋值给变量。",
    },
    "backward.out.fix": {
        "en": "Use the out-of-place form: assign the result to `{out}` instead of passing `out={out}` (line "
              "{lineno})",
        "zh": "使用非原地的形式：把结果赋值给 `{out}`，而不是传入 `out={out}`（第 {lineno} 行）",
    },
    # -- inference-tensor-backward --
    "backward.inference.unnamed": {"en": "a tensor", "zh": "某个张量"},
    "backward.inference.title_saved": {
        "en": "{tensor} was made under torch.inference_mode() and cannot enter a graph",
        "zh": "{tensor} 是在 torch.inference_mode() 下创建的，不能进入计算图",
    },
    "backward.inference.title_inplace": {
        "en": "{tensor} was made under torch.inference_mode() and cannot be changed in place outside it",
        "zh": "{tensor} 是在 torch.inference_mode() 下创建的，不能在它之外被原地修改",
    },
    "backward.inference.title_requires": {
        "en": "{tensor} was made under torch.inference_mode() and cannot require grad",
        "zh": "{tensor} 是在 torch.inference_mode() 下创建的，不能设置为需要梯度",
    },
    "backward.inference.summary": {
        "en": "Tensors made under torch.inference_mode() are inference tensors: autograd can never use them. "
              "torch.no_grad() only stops recording and makes ordinary tensors.",
        "zh": "在 torch.inference_mode() 下创建的张量是推理张量：autograd 永远不能使用它们。torch.no_grad() "
              "只是停止记录，创建的仍是普通张量。",
    },
    "backward.inference.what_saved": {
        "en": "Line {lineno} (`{code}`) stopped: an operation that autograd records needed to save {tensor} "
              "for backward, and inference tensors cannot be saved.",
        "zh": "第 {lineno} 行（`{code}`）中止了：一个被 autograd 记录的运算需要为反向传播保存 {tensor}，"
              "而推理张量不能被保存。",
    },
    "backward.inference.what_inplace": {
        "en": "Line {lineno} (`{code}`) stopped: it changes {tensor} in place outside inference mode, and "
              "{tensor} is an inference tensor.",
        "zh": "第 {lineno} 行（`{code}`）中止了：它在推理模式之外原地修改 {tensor}，而 {tensor} 是推理张量。",
    },
    "backward.inference.what_requires": {
        "en": "Line {lineno} (`{code}`) stopped: it sets requires_grad on {tensor}, an inference tensor.",
        "zh": "第 {lineno} 行（`{code}`）中止了：它给推理张量 {tensor} 设置 requires_grad。",
    },
    "backward.inference.why": {
        "en": "torch.inference_mode() is a faster torch.no_grad(): besides recording no graph, the tensors it "
              "makes have no version counter and are marked as inference tensors for good.",
        "zh": "torch.inference_mode() 是更快的 torch.no_grad()：除了不记录计算图，它创建的张量没有版本计数器，"
              "并被永久标记为推理张量。",
    },
    "backward.inference.why_saved": {
        "en": "Autograd must save some inputs for backward and check later that they did not change; it cannot "
              "do that for {tensor}.",
        "zh": "autograd 需要为反向传播保存某些输入，并在之后检查它们没有被修改；对 {tensor} 它做不到这一点。",
    },
    "backward.inference.why_inplace": {
        "en": "Outside inference mode every in-place change must bump a version counter, and {tensor} has none.",
        "zh": "在推理模式之外，每次原地修改都必须增加版本计数器，而 {tensor} 没有版本计数器。",
    },
    "backward.inference.why_requires": {
        "en": "An inference tensor can never join a graph, so {tensor} cannot require grad.",
        "zh": "推理张量永远不能加入计算图，所以 {tensor} 不能需要梯度。",
    },
    "backward.inference.why_block": {
        "en": "The torch.inference_mode() on line {lineno} made {tensor}. Under torch.no_grad() ordinary tensors "
              "are made instead: still without a graph, but autograd can use them and they can be changed in "
              "place.",
        "zh": "{tensor} 是第 {lineno} 行的 torch.inference_mode() 创建的。在 torch.no_grad() 下创建的是普通张量："
              "仍然没有计算图，但 autograd 可以使用它们，也可以原地修改它们。",
    },
    "backward.inference.title_nograd": {
        "en": "{tensor} was computed under torch.inference_mode(): autograd has no graph for it",
        "zh": "{tensor} 是在 torch.inference_mode() 下计算的：autograd 没有它的计算图",
    },
    "backward.inference.what_nograd": {
        "en": "Line {lineno} (`{code}`) asked autograd for the graph of {tensor}, an inference tensor, and torch "
              "answered that it does not require grad.",
        "zh": "第 {lineno} 行（`{code}`）要求 autograd 使用推理张量 {tensor} 的计算图，torch 回答说它不需要梯度。",
    },
    "backward.inference.why_nograd": {
        "en": "Inside torch.inference_mode(), `torch.set_grad_enabled(True)`, `torch.enable_grad()` and "
              "`requires_grad_()` turn nothing back on: whatever is computed there has no graph.",
        "zh": "在 torch.inference_mode() 内部，`torch.set_grad_enabled(True)`、`torch.enable_grad()` 和 "
              "`requires_grad_()` 都无法重新开启记录：在其中计算的一切都没有计算图。",
    },
    "backward.inference.why_lightning": {
        "en": "Lightning's `trainer.{method}()` runs your step under torch.inference_mode() unless the Trainer is made "
              "with `inference_mode=False`; then it runs it under torch.no_grad(), where the step can turn grad back "
              "on.",
        "zh": "Lightning 的 `trainer.{method}()` 会在 torch.inference_mode() 下运行你的 step，除非创建 Trainer 时传入 "
              "`inference_mode=False`；那样它会改在 torch.no_grad() 下运行，step 内部就可以重新开启梯度。",
    },
    "backward.inference.why_lightning_grad": {
        "en": "With `inference_mode=False`, also turn grad on in the step around what needs the graph "
              "(`with torch.enable_grad():`): the run did not show that the step does so.",
        "zh": "传入 `inference_mode=False` 之后，还需要在 step 中需要计算图的部分开启梯度（`with torch.enable_grad():`）："
              "本次运行没有显示 step 已经这样做了。",
    },
    "backward.inference.fix_lightning": {
        "en": "Make the Trainer with `inference_mode=False` on line {lineno}",
        "zh": "在第 {lineno} 行创建 Trainer 时传入 `inference_mode=False`",
    },
    "backward.inference.title_module": {
        "en": "{module} was built under torch.inference_mode(): its parameters cannot enter a graph",
        "zh": "{module} 是在 torch.inference_mode() 下构建的：它的参数不能进入计算图",
    },
    "backward.inference.parameters": {"en": "the parameters of {module}", "zh": "{module} 的参数"},
    "backward.inference.alias": {"en": "{name} (`{alias}` on this line)", "zh": "{name}（这一行里的 `{alias}`）"},
    "backward.inference.why_no_fix": {
        "en": "The cell does not show where the inference tensor was made, so no fix is proposed: make it "
              "under torch.no_grad() instead, or use a `.clone()` of it made outside inference mode.",
        "zh": "单元格里看不出推理张量是在哪里创建的，因此不提供修复：改为在 torch.no_grad() 下创建它，"
              "或者使用在推理模式之外对它做的 `.clone()`。",
    },
    "backward.inference.fix_swap": {
        "en": "Make an ordinary tensor: `{new}` instead of `{old}` on line {lineno}",
        "zh": "创建普通张量：把第 {lineno} 行的 `{old}` 改为 `{new}`",
    },
    "backward.inference.fix_clone": {
        "en": "Use an ordinary copy: `{code}` before line {lineno}",
        "zh": "使用普通的副本：在第 {lineno} 行之前加上 `{code}`",
    },
}
