"""Messages of the optimizer rules."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- grads-not-zeroed --
    "optimizer.zero.title": {
        "en": "`{optimizer}` stepped on gradients that were never zeroed",
        "zh": "`{optimizer}` 在从未清零的梯度上执行了 step",
    },
    "optimizer.zero.summary": {
        "en": "`{call}` on line {lineno} ran {stale} of {total} times with .grad still holding "
              "the gradients of earlier steps: nothing cleared them in between.",
        "zh": "第 {lineno} 行的 `{call}` 共执行 {total} 次，其中 {stale} 次执行时 .grad "
              "中仍残留着之前各步的梯度：两次 step 之间没有任何代码清零梯度。",
    },
    "optimizer.zero.what": {
        "en": "During this cell `{optimizer}` ({cls}) stepped {total} times. {stale} of those steps found "
              "the previous step's gradients still in .grad, with the new ones added on top ({params} of "
              "{with_grad} parameters). No error is raised: the training just goes wrong.",
        "zh": "本单元格运行期间 `{optimizer}`（{cls}）共执行了 {total} 次 step。其中 {stale} 次 step 时，"
              "上一步的梯度仍留在 .grad 中，新的梯度被累加在上面（{with_grad} 个参数中有 {params} 个）。"
              "不会报错：只是训练会悄悄出问题。",
    },
    "optimizer.zero.why": {
        "en": "PyTorch adds each backward()'s gradients into .grad instead of replacing them. Without "
              "`{optimizer}.zero_grad()` between steps, every step uses the sum of all gradients so far, so "
              "the updates keep growing and training becomes unstable. To accumulate on purpose (a larger "
              "effective batch), still clear the gradients after each step.",
        "zh": "PyTorch 会把每次 backward() 得到的梯度累加到 .grad 上，而不是替换它。如果两次 step 之间"
              "没有调用 `{optimizer}.zero_grad()`，每一步用的都是到目前为止所有梯度之和，更新量会越来越大，"
              "训练变得不稳定。即使是有意做梯度累加（模拟更大的 batch），也要在每次 step 之后清零梯度。",
    },
    "optimizer.zero.why_others": {
        "en": "The same happened to {others}.",
        "zh": "{others} 也出现了同样的问题。",
    },
    "optimizer.zero.why_no_fix": {
        "en": "No automatic fix: grad_magic could not tell where each step's gradients start in this "
              "code; call `{optimizer}.zero_grad()` before the backward() that feeds each step.",
        "zh": "没有自动修复：grad_magic 无法从这段代码中判断每一步的梯度从哪里开始计算；请在为每次 "
              "step 提供梯度的 backward() 之前调用 `{optimizer}.zero_grad()`。",
    },
    "optimizer.zero.fix": {
        "en": "call {parts}, so each step uses only its own gradients",
        "zh": "{parts}，让每一步只使用本步的梯度",
    },
    "optimizer.zero.fix_before": {
        "en": "`{call}` before line {lineno}",
        "zh": "在第 {lineno} 行之前调用 `{call}`",
    },
    "optimizer.zero.fix_after": {
        "en": "`{call}` right after the step on line {lineno}",
        "zh": "在第 {lineno} 行的 step 之后立即调用 `{call}`",
    },
    "optimizer.zero.joiner": {"en": " and ", "zh": "；"},
    "optimizer.zero.why_once": {
        "en": "`{call}` on line {lineno} runs once, before the loop: not once per step.",
        "zh": "第 {lineno} 行的 `{call}` 只在循环开始前执行一次，而不是每一步执行一次。",
    },
    "optimizer.zero.title_manual": {
        "en": "The gradients of {params} were never cleared between updates",
        "zh": "{params} 的梯度在两次更新之间从未清零",
    },
    "optimizer.zero.summary_manual": {
        "en": "The update on line {lineno} ran {updates} times, each time on .grad holding the sum of every "
              "backward() so far: nothing cleared it in between.",
        "zh": "第 {lineno} 行的更新执行了 {updates} 次，每次用到的 .grad 都是到目前为止所有 backward() "
              "的总和：中间没有任何代码清零梯度。",
    },
    "optimizer.zero.what_manual": {
        "en": "{params} were updated by hand {updates} times. Their .grad was never reset, so each "
              "backward() added onto the gradients of all earlier passes. No error is raised: the training "
              "just goes wrong.",
        "zh": "{params} 被手动更新了 {updates} 次。它们的 .grad 从未被重置，每次 backward() 都把梯度累加到"
              "之前所有轮次的梯度上。不会报错：只是训练会悄悄出问题。",
    },
    "optimizer.zero.why_manual": {
        "en": "PyTorch adds each backward()'s gradients into .grad instead of replacing them. An update by "
              "hand must clear {params}'s .grad after using it (`.grad.zero_()` or `.grad = None`), as an "
              "optimizer's zero_grad() would; otherwise every update uses the sum of all gradients so far.",
        "zh": "PyTorch 会把每次 backward() 得到的梯度累加到 .grad 上，而不是替换它。手动更新在用完 {params} "
              "的 .grad 之后必须清零它（`.grad.zero_()` 或 `.grad = None`），就像优化器的 zero_grad() 那样；"
              "否则每次更新用的都是到目前为止所有梯度之和。",
    },
    "optimizer.zero.why_no_fix_manual": {
        "en": "No automatic fix: the update is not written as one statement grad_magic can follow; clear "
              "{params}'s .grad right after each update.",
        "zh": "没有自动修复：这个更新不是 grad_magic 能够跟随的单条语句；请在每次更新之后立即清零 {params} "
              "的 .grad。",
    },
    "optimizer.zero.fix_manual": {
        "en": "call {parts}, so each update uses only the latest gradients",
        "zh": "{parts}，让每次更新只使用最新的梯度",
    },
    "optimizer.zero.fix_after_update": {
        "en": "`{call}` right after the update on line {lineno}",
        "zh": "在第 {lineno} 行的更新之后立即调用 `{call}`",
    },
    # -- empty-parameter-list --
    "optimizer.empty.title": {
        "en": "The optimizer was given no parameters",
        "zh": "优化器没有拿到任何参数",
    },
    "optimizer.empty.summary": {
        "en": "The optimizer's parameter list was empty, so there would be nothing for it to train.",
        "zh": "优化器的参数列表是空的，它将没有任何东西可以训练。",
    },
    "optimizer.empty.what": {
        "en": "`{arg}` on line {lineno} yielded no parameters at all, and an optimizer refuses to be built "
              "on nothing.",
        "zh": "第 {lineno} 行的 `{arg}` 一个参数也没有给出，而优化器拒绝在空列表上创建。",
    },
    "optimizer.empty.what_unknown": {
        "en": "The optimizer built on line {lineno} received no parameters at all.",
        "zh": "第 {lineno} 行创建的优化器没有收到任何参数。",
    },
    "optimizer.empty.why_plain_list": {
        "en": "`{model}` ({cls}) keeps its layers in `self.{attr}`, a plain Python {container}. PyTorch "
              "registers only submodules assigned as attributes or held in nn.ModuleList / nn.ModuleDict: "
              "layers in a plain {container} are invisible to `{model}.parameters()`, to `.to(device)` and "
              "to `state_dict()`.",
        "zh": "`{model}`（{cls}）把它的层放在 `self.{attr}` 里，而这是一个普通的 Python {container}。PyTorch "
              "只会注册直接赋值为属性、或放在 nn.ModuleList / nn.ModuleDict 中的子模块：普通 {container} 里的层"
              "对 `{model}.parameters()`、`.to(device)` 和 `state_dict()` 都是不可见的。",
    },
    "optimizer.empty.why_plain_list_fix": {
        "en": "The line that sets `self.{attr}` is not a list or dict written in this cell, so the edit is "
              "yours: wrap it in `nn.{wrapper}(...)` where {cls} is defined.",
        "zh": "给 `self.{attr}` 赋值的那一行不是本单元格中写出的列表或字典，所以需要你自己修改：在定义 {cls} 的地方"
              "用 `nn.{wrapper}(...)` 包住它。",
    },
    "optimizer.empty.why_no_parameters": {
        "en": "`{model}` ({cls}) has no parameters: it has no layer with weights, or keeps its layers "
              "somewhere PyTorch does not look.",
        "zh": "`{model}`（{cls}）没有任何参数：它没有带权重的层，或者把层放在了 PyTorch 不会查找的地方。",
    },
    "optimizer.empty.why_no_parameters_fix": {
        "en": "Pass the parameters of the model you mean to train; if {cls} should have weights, register "
              "its layers as attributes or in nn.ModuleList / nn.ModuleDict.",
        "zh": "请传入你真正要训练的模型的参数；如果 {cls} 应该有权重，请把它的层作为属性注册，或放进 "
              "nn.ModuleList / nn.ModuleDict。",
    },
    "optimizer.empty.why_generator": {
        "en": "`{name}` is a generator (what `.parameters()` returns): it can be iterated only once. "
              "Something already went through it, an earlier optimizer or loop, so it is now empty.",
        "zh": "`{name}` 是一个生成器（`.parameters()` 返回的就是生成器）：它只能被遍历一次。之前已经有代码"
              "（更早的优化器或循环）遍历过它，所以现在它是空的。",
    },
    "optimizer.empty.why_generator_fix": {
        "en": "`{name}` was not made by one `.parameters()` call in this cell, so the edit is yours: make it "
              "a list with `list(...)` where it is created.",
        "zh": "`{name}` 不是在本单元格中由一次 `.parameters()` 调用得到的，所以需要你自己修改：在创建它的地方"
              "用 `list(...)` 把它变成列表。",
    },
    "optimizer.empty.why_unknown": {
        "en": "An optimizer needs at least one tensor to update: check that the model really has "
              "parameters (layers in a plain list or dict are not registered: use nn.ModuleList / "
              "nn.ModuleDict) and that a `.parameters()` generator was not used up before.",
        "zh": "优化器至少需要一个要更新的张量：请检查模型是否真的有参数（放在普通列表或字典中的层不会被注册："
              "请使用 nn.ModuleList / nn.ModuleDict），以及 `.parameters()` 生成器是否之前已被用完。",
    },
    "optimizer.empty.fix_module_list": {
        "en": "`{new}` around `self.{attr}` on line {lineno}, so its layers are registered",
        "zh": "在第 {lineno} 行用 `{new}` 包住 `self.{attr}` 的值，让其中的层被注册",
    },
    "optimizer.empty.fix_list": {
        "en": "`{new}` on line {lineno}, a list that can be used more than once",
        "zh": "把第 {lineno} 行改为 `{new}`，得到可以多次使用的列表",
    },
    # -- optimizer-not-on-model --
    "optimizer.stray.title": {
        "en": "`{optimizer}` is not training `{model}`",
        "zh": "`{optimizer}` 并没有在训练 `{model}`",
    },
    "optimizer.stray.summary": {
        "en": "`{optimizer}.step()`, run from {step}, updated {count} parameters that belong to no model you "
              "still have. `{model}`, which the training uses, has parameters of the same shapes that it never "
              "touches.",
        "zh": "从 {step} 运行的 `{optimizer}.step()` 更新了 {count} 个参数，但它们不属于你现在持有的任何模型。"
              "训练所用的 `{model}` 有形状完全相同的参数，却从未被它更新。",
    },
    "optimizer.stray.summary_layers": {
        "en": "`{optimizer}.step()`, run from {step}, updated {count} parameters that belong to no model you still "
              "have. `{model}`, which the training uses, has parameters of the same kinds (its layers were made "
              "again) that it never touches.",
        "zh": "从 {step} 运行的 `{optimizer}.step()` 更新了 {count} 个参数，但它们不属于你现在持有的任何模型。训练所用的 "
              "`{model}` 有同类的参数（它的层被重新创建过），却从未被它更新。",
    },
    "optimizer.stray.at": {"en": "line {lineno}", "zh": "第 {lineno} 行"},
    "optimizer.stray.at_here": {"en": "line {lineno} of this cell", "zh": "本单元格第 {lineno} 行"},
    "optimizer.stray.why_remade": {
        "en": "`{optimizer}` was built on {built}, on the parameters `{model}` had then. {remade} made `{model}` "
              "again (or replaced its layers) afterwards, and `{optimizer}` kept the old ones. Build `{optimizer}` "
              "again from `{model}.parameters()` right after that.",
        "zh": "`{optimizer}` 是在 {built} 基于 `{model}` 当时的参数创建的。之后 {remade} 重新创建了 `{model}`（或替换了"
              "它的层），而 `{optimizer}` 仍持有旧的参数。请在那之后立即用 `{model}.parameters()` 重新创建 "
              "`{optimizer}`。",
    },
    "optimizer.stray.fix": {
        "en": "build `{optimizer}` again, as on {built}, right after {remade}, so that it steps `{model}`'s "
              "parameters",
        "zh": "在 {remade} 之后立即像 {built} 那样重新创建 `{optimizer}`，让它更新 `{model}` 的参数",
    },
    "optimizer.stray.what": {
        "en": "`{optimizer}` ({cls}) holds the parameters it was built with. None of them is a parameter of "
              "`{model}`. `{model}` runs forward and backward, its .grad fills up, but its weights never "
              "change. No error is raised: the loss just does not go down.",
        "zh": "`{optimizer}`（{cls}）持有的是创建它时传入的参数，其中没有一个属于 `{model}`。`{model}` 照常做"
              "前向和反向传播，它的 .grad 也被填充，但权重从不改变。不会报错：只是损失不会下降。",
    },
    "optimizer.stray.why": {
        "en": "This happens when `{model}` is created again (re-running the cell that builds it) after "
              "`{optimizer}` was built on the old one: the optimizer still points to the old model's "
              "parameters. Build `{optimizer}` again from `{model}.parameters()` right after `{model}` is "
              "created.",
        "zh": "这通常是因为在 `{optimizer}` 基于旧模型创建之后，`{model}` 又被重新创建了（例如重新运行了构建它的"
              "单元格）：优化器仍指向旧模型的参数。请在创建 `{model}` 之后，立即用 `{model}.parameters()` "
              "重新创建 `{optimizer}`。",
    },
}
