"""Messages of backward-twice when its cause is across cells, calls or modules: a state carried by the caller
or kept on a module, a graph passed in or left by an earlier cell, each loss of a list, a GAN's shared output."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "backward.twice.what_inner": {
        "en": "`{code}` ({where}) stopped: part of the graph behind {tensor} was already used by an earlier "
              "backward(), which freed its saved tensors.",
        "zh": "`{code}`（{where}）中止了：{tensor} 背后的计算图有一部分已经被先前的 backward() 用过，它保存的张量已被释放。",
    },
    "backward.twice.what_library": {
        "en": "A backward() that `{code}` on line {lineno} ran stopped: part of the graph behind its loss was already "
              "used by an earlier backward(), which freed its saved tensors.",
        "zh": "第 {lineno} 行的 `{code}` 运行的一次 backward() 中止了：它的损失背后的计算图有一部分已经被先前的 backward() "
              "用过，它保存的张量已被释放。",
    },
    # -- each loss of a list --
    "backward.twice.why_each_title": {
        "en": "The losses in {losses} share one graph, and the loop on line {loop} backpropagates them one by one",
        "zh": "{losses} 里的各个损失共用一个计算图，而第 {loop} 行的循环逐个对它们反向传播",
    },
    "backward.twice.why_each": {
        "en": "The losses in {losses} come from the same forward pass, so they share its graph. The loop on line "
              "{loop} calls backward() on each: the first call frees the shared part of the graph, and the "
              "second finds it gone. One backward() of their sum gives every parameter the same gradient as "
              "the separate calls would.",
        "zh": "{losses} 里的损失来自同一次前向计算，因此共用它的计算图。第 {loop} 行的循环对每个损失调用 backward()："
              "第一次调用就释放了共用的那部分计算图，第二次就找不到了。对它们的和只调用一次 backward()，"
              "每个参数得到的梯度与分别调用时相同。",
    },
    "backward.twice.fix_sum": {
        "en": "Backpropagate the losses together: `{code}` instead of the loop on line {lineno}",
        "zh": "把损失合在一起反向传播：用 `{code}` 代替第 {lineno} 行的循环",
    },
    # -- a GAN: the generator's output seen undetached by the discriminator's loss --
    "backward.twice.why_stepped_shared_title": {
        "en": "`{first}.backward()` on line {lineno} also went through {shared}'s graph, which {tensor} needs",
        "zh": "第 {lineno} 行的 `{first}.backward()` 也经过了 {tensor} 需要的 {shared} 的计算图",
    },
    "backward.twice.why_stepped_shared": {
        "en": "{shared} feeds both losses. `{first}.backward()` on line {lineno} went through {shared} into the "
              "network that made it and freed that part of the graph. Yet {optimizer}, the optimizer that "
              "steps after it, holds none of that network's parameters. The backward() of {tensor} then finds "
              "it gone. Detached where `{first}` reads it, {shared} gives the first loss the same values and "
              "stops its backward() there (as a GAN's discriminator step does with `D(fake.detach())`).",
        "zh": "{shared} 同时进入了两个损失。第 {lineno} 行的 `{first}.backward()` 经过 {shared} 回溯到生成它的网络，"
              "并释放了那部分计算图。紧随其后 step 的优化器 {optimizer} 却并不持有那个网络的任何参数。于是 {tensor} 的 "
              "backward() 就找不到它了。在 `{first}` 读取 {shared} 的地方对它调用 detach()，第一个损失得到的值不变，"
              "它的 backward() 也会停在那里（就像 GAN 的判别器步骤用 `D(fake.detach())` 那样）。",
    },
    "backward.twice.fix_detach_reads": {
        "en": "Stop the first backward at `{name}`: `{name}.detach()` where the loss of line {lineno} reads it",
        "zh": "让第一次 backward 停在 `{name}`：在第 {lineno} 行的损失读取它的地方改为 `{name}.detach()`",
    },
    # -- a critic's loop over a generator's output made once, before it --
    "backward.twice.why_before_loop_detach_title": {
        "en": "{graph} is computed once, before the loop, and every iteration's backward() goes through its graph",
        "zh": "{graph} 只在循环之前计算了一次，而每次迭代的 backward() 都要经过它的计算图",
    },
    "backward.twice.why_before_loop_detach": {
        "en": "{graph} is computed on line {lineno}, before the loop on line {loop}, and {tensor} reads it in every "
              "iteration. The first iteration's backward() goes through {graph} into the network that made it and "
              "frees that part of the graph, so the second finds it gone. {optimizer}, the optimizer the loop "
              "steps, holds none of that network's parameters. Detached where the loss reads it, {graph} gives "
              "the same values and the backward() stops there (as a critic's loop does with `D(fake.detach())`).",
        "zh": "{graph} 在第 {lineno} 行、第 {loop} 行的循环之前计算，而 {tensor} 在每次迭代中都读取它。第一次迭代的 "
              "backward() 经过 {graph} 回溯到生成它的网络并释放了那部分计算图，第二次就找不到了。循环里 step 的优化器 "
              "{optimizer} 并不持有那个网络的任何参数。在损失读取 {graph} 的地方对它调用 detach()，值不变，backward() "
              "也会停在那里（就像判别器的循环用 `D(fake.detach())` 那样）。",
    },
    "backward.twice.fix_detach_reads_each": {
        "en": "Stop every iteration's backward at `{name}`: `{name}.detach()` where the loss backpropagated on "
              "line {lineno} reads it",
        "zh": "让每次迭代的 backward 停在 `{name}`：在第 {lineno} 行反向传播的损失读取它的地方改为 `{name}.detach()`",
    },
    # -- a graph the caller passed in --
    "backward.twice.why_passed_title": {
        "en": "{graph} is computed once and backpropagated again by {function}",
        "zh": "{graph} 只计算了一次，却又被 {function} 反向传播",
    },
    "backward.twice.why_passed": {
        "en": "{graph} is computed once, before it is passed to {function}, and {function} calls backward() on "
              "it after an earlier backward() already went through its graph and freed it. Compute the loss "
              "again (run the forward pass) before each backward(), or pass `retain_graph=True` to the first "
              "call if both are meant.",
        "zh": "{graph} 只计算了一次，然后传给了 {function}；而在先前的 backward() 已经经过并释放了它的计算图之后，"
              "{function} 又对它调用了 backward()。请在每次 backward() 之前重新计算损失（重新做前向计算），"
              "或者在两次都有意时给第一次调用传入 `retain_graph=True`。",
    },
    "backward.twice.why_passed_loop_title": {
        "en": "{graph} is computed once, and {function} backpropagates it in every iteration of its loop",
        "zh": "{graph} 只计算了一次，而 {function} 在它的循环里每次迭代都对它反向传播",
    },
    "backward.twice.why_passed_loop": {
        "en": "{graph} is computed once, before it is passed to {function}, whose loop calls backward() on it "
              "in every iteration: the first iteration frees its graph, and the second has nothing to go "
              "through. Each iteration needs its own forward pass (the parameters change every step): pass "
              "{function} what it needs to compute the loss (the model and the batch, or a function that "
              "returns the loss) and compute it inside the loop.",
        "zh": "{graph} 只计算了一次，然后传给了 {function}，而它的循环每次迭代都对它调用 backward()：第一次迭代就释放了"
              "它的计算图，第二次就没有可以经过的图了。每次迭代都需要自己的前向计算（参数每一步都会变）：请把计算损失"
              "所需的东西（模型和批次数据，或者一个返回损失的函数）传给 {function}，并在循环里计算损失。",
    },
    # -- a state or graph left by an earlier cell --
    "backward.twice.why_earlier_state_title": {
        "en": "{state} still carries the graph of an earlier cell into this backward()",
        "zh": "{state} 仍把先前单元格的计算图带进了这次 backward()",
    },
    "backward.twice.why_earlier_state": {
        "en": "{state}, read on line {lineno}, comes from an earlier run (a previous cell, or this cell run "
              "before) still attached to the graph that made it, and a backward() there already freed that "
              "graph. This cell continues it, so its backward() on {tensor} reaches back into the freed part. "
              "Detaching the state first keeps its values and cuts the old graph off.",
        "zh": "第 {lineno} 行读取的 {state} 来自之前的运行（先前的单元格，或者这个单元格上一次运行），仍然连着生成它的"
              "计算图，而那里的 backward() 已经释放了这个图。这个单元格接着它继续计算，所以在 {tensor} 上的 "
              "backward() 会回溯到已被释放的部分。先对状态调用 detach()，可以保留它的值并切断旧的计算图。",
    },
    "backward.twice.fix_detach_at": {
        "en": "Cut the old graph off: `{code}` before line {lineno}",
        "zh": "切断旧的计算图：在第 {lineno} 行之前加上 `{code}`",
    },
    "backward.twice.why_backward_before_title": {
        "en": "backward() ran twice on one graph: once by {code} in {function}, once by the library",
        "zh": "同一个计算图上 backward() 运行了两次：一次是 {function} 中的 {code}，一次是库自己调用的",
    },
    "backward.twice.why_backward_before": {
        "en": "{code} on line {lineno} (in {function}) already ran backward() through this graph and freed it. "
              "The library then called backward() on the same loss itself, as it does on what a training step "
              "returns (Lightning's automatic optimization): that second pass found the graph gone. Leave "
              "backward() to the library.",
        "zh": "第 {lineno} 行（{function} 中）的 {code} 已经对这个计算图执行过 backward() 并释放了它。"
              "随后库又对同一个损失调用了 backward()（例如 Lightning 的自动优化会对训练步骤返回的损失调用它），"
              "第二次时计算图已不存在。请把 backward() 交给库去做。",
    },
    "backward.twice.fix_drop": {
        "en": "Delete `{code}` on line {lineno}: the library calls backward() itself",
        "zh": "删除第 {lineno} 行的 `{code}`：库会自己调用 backward()",
    },
    "backward.twice.why_earlier_graph_title": {
        "en": "{graph} was computed by an earlier run, whose backward() already freed its graph",
        "zh": "{graph} 是之前的运行计算出来的，那次的 backward() 已经释放了它的计算图",
    },
    "backward.twice.why_earlier_graph": {
        "en": "{graph}, read on line {lineno}, is not computed in this cell: it comes from an earlier cell (or an "
              "earlier run of this one), and a backward() there already went through its graph and freed it. "
              "Compute it again in this cell (run its forward pass here), so that this backward() has a graph "
              "of its own.",
        "zh": "第 {lineno} 行读取的 {graph} 不是在这个单元格里计算的：它来自先前的单元格（或这个单元格之前的运行），"
              "那里的 backward() 已经经过并释放了它的计算图。请在这个单元格里重新计算它（在这里做前向计算），"
              "让这次 backward() 有自己的计算图。",
    },
    # -- a state a module keeps on itself --
    "backward.twice.why_module_state_title": {
        "en": "{state} carries the previous step's graph into the next forward pass",
        "zh": "{state} 把上一步的计算图带进了下一次前向计算",
    },
    "backward.twice.why_module_state": {
        "en": "{function} sets {state} on line {lineno} from its previous value, and the module keeps it between "
              "calls, still attached to the graph that made it. The next step's forward pass continues that "
              "graph, so its backward() on {tensor} reaches back into the previous step's graph, which that "
              "step's backward() already freed. Detaching the state before it is used keeps its values and "
              "cuts the old graph off (truncated backpropagation through time).",
        "zh": "{function} 在第 {lineno} 行用 {state} 之前的值给它重新赋值，而模块在两次调用之间保留着它，仍然连着生成它的"
              "计算图。下一步的前向计算接着这个图继续，所以在 {tensor} 上的 backward() 会回溯到上一步的计算图，而那一步的 "
              "backward() 已经把它释放了。在使用前对状态调用 detach()，可以保留它的值并切断旧的计算图（截断的时间反向传播）。",
    },
    # -- inference-tensor-backward: a decorated function made the tensor --
    "backward.inference.why_decorated": {
        "en": "{function} is decorated with torch.inference_mode() on line {lineno}, so every tensor it returns, "
              "{tensor} included, is an inference tensor. Decorated with torch.no_grad() instead, it makes "
              "ordinary tensors: still without a graph (its parameters get no gradient), but autograd can use "
              "them further on.",
        "zh": "{function} 在第 {lineno} 行用 torch.inference_mode() 装饰，所以它返回的每个张量（包括 {tensor}）都是推理"
              "张量。改用 torch.no_grad() 装饰，它创建的就是普通张量：仍然没有计算图（它的参数得不到梯度），但之后的"
              "计算可以让 autograd 使用它们。",
    },
    # -- out-with-grad: `out=` a helper's parameter --
    "backward.out.why_passed": {
        "en": "`{out}` is a parameter of the function: assigning the result to it would leave the caller's tensor "
              "unfilled, so no fix is proposed. Drop `out=`, return the result and use it where the caller used "
              "`{out}`.",
        "zh": "`{out}` 是这个函数的参数：把结果赋值给它不会填充调用者的张量，因此不提供修复。请去掉 `out=`，返回结果，"
              "并在调用者使用 `{out}` 的地方改用返回值。",
    },
}
