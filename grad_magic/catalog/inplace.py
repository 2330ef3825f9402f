"""Messages of the inplace rules."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- saved-tensor-modified-in-place: titles and summaries --
    "inplace.saved.title": {
        "en": "{name} was changed in place after autograd saved it for backward",
        "zh": "{name} 在被 autograd 保存用于反向传播之后，又被原地修改了",
    },
    "inplace.saved.title_update": {
        "en": "{name} was updated in place before the backward that still needed its old value",
        "zh": "{name} 在仍需要其旧值的反向传播之前就被原地更新了",
    },
    "inplace.saved.title_step": {
        "en": "`{optimizer}.step()` changed {name} before a backward that still needed its old value",
        "zh": "`{optimizer}.step()` 在仍需要旧值的反向传播之前修改了 {name}",
    },
    "inplace.saved.title_module": {
        "en": "`{path}` changed a tensor in place after autograd saved it for backward",
        "zh": "`{path}` 在 autograd 保存某个张量用于反向传播之后，又原地修改了它",
    },
    "inplace.saved.summary_module": {
        "en": "`{path}` is built to work in place (`{code}` on line {lineno}): it wrote its result over a value "
              "backward() still needs.",
        "zh": "`{path}` 被构造为原地运算（第 {lineno} 行的 `{code}`）：它把结果写在了 backward() 仍然需要的值上。",
    },
    "inplace.saved.summary": {
        "en": "backward() needs the value {name} had in the forward pass, but `{op}` on line {lineno} "
              "overwrote it.",
        "zh": "backward() 需要 {name} 在前向传播时的值，但第 {lineno} 行的 `{op}` 把它覆盖了。",
    },
    "inplace.saved.summary_step": {
        "en": "`{optimizer}.step()` on line {lineno} updated {name} in place while a graph built with its "
              "old value was still waiting for its backward().",
        "zh": "第 {lineno} 行的 `{optimizer}.step()` 原地更新了 {name}，而用它旧值构建的计算图还在等待 "
              "backward()。",
    },
    "inplace.saved.summary_unseen": {
        "en": "backward() needs the value {name} had in the forward pass, but something changed it in "
              "place afterwards.",
        "zh": "backward() 需要 {name} 在前向传播时的值，但它之后被某个操作原地修改了。",
    },
    # -- what --
    "inplace.saved.what": {
        "en": "backward() stopped: a tensor it saved during the forward pass ({name}: {tensor}) is now at "
              "version {version}, but it was saved at version {expected}.",
        "zh": "backward() 中止：前向传播时保存的一个张量（{name}：{tensor}）当前版本号为 {version}，"
              "而保存时的版本号是 {expected}。",
    },
    "inplace.saved.what_bare": {
        "en": "backward() stopped: a tensor it saved during the forward pass ({name}) was modified by an "
              "in-place operation.",
        "zh": "backward() 中止：前向传播时保存的一个张量（{name}）被原地操作修改了。",
    },
    "inplace.saved.what_unnamed": {
        "en": "backward() stopped: a tensor it saved during the forward pass ({tensor}) is now at version "
              "{version}, but it was saved at version {expected}.",
        "zh": "backward() 中止：前向传播时保存的一个张量（{tensor}）当前版本号为 {version}，而保存时的版本号是 "
              "{expected}。",
    },
    "inplace.saved.what_bare_unnamed": {
        "en": "backward() stopped: a tensor it saved during the forward pass was modified by an in-place "
              "operation.",
        "zh": "backward() 中止：前向传播时保存的一个张量被原地操作修改了。",
    },
    "inplace.saved.tensor": {"en": "{dtype}, shape {shape}", "zh": "{dtype}，形状 {shape}"},
    # NB: an unnamed tensor is called so in sentences ("line 7 saved an unnamed tensor"), never "the saved
    # tensor", which reads "saved the saved tensor"; its row in the tensor table is just marked unnamed
    "inplace.saved.unnamed": {"en": "an unnamed tensor", "zh": "一个无名张量"},
    "inplace.saved.unnamed_row": {"en": "(unnamed)", "zh": "（未命名）"},
    "inplace.saved.a_parameter": {
        "en": "a parameter of {optimizer}",
        "zh": "{optimizer} 的一个参数",
    },
    # -- why: who saved it --
    "inplace.saved.why_saved": {
        "en": "To compute gradients, autograd keeps some tensors from the forward pass: line {lineno} "
              "(`{code}`) saved {name} because its backward ({node}) needs that value.",
        "zh": "为了计算梯度，autograd 会保留前向传播中的一些张量：第 {lineno} 行（`{code}`）保存了 "
              "{name}，因为它的反向函数 {node} 需要用到这个值。",
    },
    "inplace.saved.why_saved_at": {
        "en": "To compute gradients, autograd keeps some tensors from the forward pass: `{code}` ({where}) saved "
              "{name} because its backward ({node}) needs that value.",
        "zh": "为了计算梯度，autograd 会保留前向传播中的一些张量：{where}的 `{code}` 保存了 {name}，因为它的"
              "反向函数 {node} 需要用到这个值。",
    },
    "inplace.saved.why_saved_elsewhere": {
        "en": "To compute gradients, autograd keeps some tensors from the forward pass: {name} was saved "
              "for {node} by code outside this cell (an earlier cell or a library).",
        "zh": "为了计算梯度，autograd 会保留前向传播中的一些张量：{name} 是在本单元格之外的代码"
              "（之前的单元格或某个库）中为 {node} 保存的。",
    },
    "inplace.saved.why_saved_unwatched": {
        "en": "To compute gradients, autograd keeps some tensors from the forward pass: {name} was saved "
              "for {node}. The forward pass that saved it ran without anomaly detection (outside %%gradcheck, "
              "e.g. in an earlier cell), so its line is not known. Run that forward pass under %%gradcheck to "
              "see it.",
        "zh": "为了计算梯度，autograd 会保留前向传播中的一些张量：{name} 是为 {node} 保存的。但那次前向传播"
              "没有开启异常检测（在 %%gradcheck 之外运行，例如在之前的单元格中），所以不知道是哪一行。"
              "把那段前向传播放到 %%gradcheck 下运行即可看到。",
    },
    "inplace.saved.why_saved_fast": {
        "en": "To compute gradients, autograd keeps some tensors from the forward pass, and {name} is one "
              "of them{producer}. Which forward line saved it is not known: this run had no anomaly "
              "detection (--fast or %gradcheck on); run the cell with %%gradcheck (full mode, without --fast) to "
              "see that line.",
        "zh": "为了计算梯度，autograd 会保留前向传播中的一些张量，{name} 就是其中之一{producer}。"
              "无法得知是哪一行前向代码保存了它：本次运行没有开启异常检测（--fast 或 %gradcheck on）；用 "
              "%%gradcheck（完整模式，不带 --fast）重新运行该单元格即可看到这一行。",
    },
    "inplace.saved.why_saved_node_fast": {
        "en": "To compute gradients, autograd keeps some tensors from the forward pass: {name} was saved for "
              "{node}. Which forward line made that node is not known: this run had no anomaly detection "
              "(--fast or %gradcheck on), and no line of the code that ran could be tied to it; run the cell with "
              "%%gradcheck (full mode, without --fast) to see that line.",
        "zh": "为了计算梯度，autograd 会保留前向传播中的一些张量：{name} 是为 {node} 保存的。无法得知是哪一行"
              "前向代码创建了这个节点：本次运行没有开启异常检测（--fast 或 %gradcheck on），运行过的代码中也没有哪一行能"
              "与它对应上；用 %%gradcheck（完整模式，不带 --fast）重新运行该单元格即可看到这一行。",
    },
    "inplace.saved.why_saved_unknown": {
        "en": "To compute gradients, autograd keeps some tensors from the forward pass, and {name} is one "
              "of them{producer}. Which forward line saved it is not known: torch's anomaly-mode report "
              "did not arrive (are warnings filtered?).",
        "zh": "为了计算梯度，autograd 会保留前向传播中的一些张量，{name} 就是其中之一{producer}。"
              "无法得知是哪一行前向代码保存了它：没有收到 torch 异常检测模式的报告（警告是否被过滤了？）。",
    },
    "inplace.saved.producer": {
        "en": " (torch says: output {output} of {grad_fn})",
        "zh": "（torch 的说法：{grad_fn} 的第 {output} 个输出）",
    },
    # -- why: who changed it --
    "inplace.saved.why_changed": {
        "en": "Afterwards `{op}` on line {lineno} changed {name} in place, which raised its version "
              "counter to {version}. Then {backward} found the saved value overwritten and refused to compute "
              "a wrong gradient.",
        "zh": "之后第 {lineno} 行的 `{op}` 原地修改了 {name}，使它的版本计数器变为 {version}。"
              "随后{backward}发现保存的值已被覆盖，于是拒绝计算错误的梯度。",
    },
    "inplace.saved.why_changed_view": {
        "en": "Afterwards `{op}` on line {lineno} changed {name} in place through its view {view}, which "
              "raised its version counter to {version}. Then {backward} found the saved value overwritten and "
              "refused to compute a wrong gradient.",
        "zh": "之后第 {lineno} 行的 `{op}` 通过视图 {view} 原地修改了 {name}，使它的版本计数器变为 "
              "{version}。随后{backward}发现保存的值已被覆盖，于是拒绝计算错误的梯度。",
    },
    "inplace.saved.why_changed_module": {
        "en": "Afterwards `{path}`, a {cls} built with the in-place flag on line {lineno}, wrote its result over "
              "its input, which raised that tensor's version counter to {version}. Then {backward} found the saved "
              "value overwritten and refused to compute a wrong gradient.",
        "zh": "之后 `{path}`（第 {lineno} 行以原地方式构造的 {cls}）把结果写回了它的输入，使该张量的版本计数器"
              "变为 {version}。随后{backward}发现保存的值已被覆盖，于是拒绝计算错误的梯度。",
    },
    "inplace.saved.why_module_ran": {
        "en": "It ran inside the call on line {lineno} (`{code}`).",
        "zh": "它在第 {lineno} 行的调用（`{code}`）中运行。",
    },
    "inplace.saved.why_no_fix_module": {
        "en": "No automatic fix: the in-place flag on line {lineno} could not be rewritten safely; build "
              "`{path}` with inplace=False there.",
        "zh": "没有自动修复：无法安全地改写第 {lineno} 行的原地标志；请在那里用 inplace=False 构造 `{path}`。",
    },
    "inplace.saved.why_more": {
        "en": "Other in-place writes spoiled saved tensors of the same graph too ({places}): a fix of this one "
              "alone would fail the same way, so there is no automatic fix; make each of them out of place.",
        "zh": "同一计算图中还有其他原地写入破坏了被保存的张量（{places}）：只修复这一处仍会以同样的方式失败，"
              "因此不提供自动修复；请把它们都改为非原地运算。",
    },
    "inplace.saved.why_more_unseen": {
        "en": "Other saved tensors of the same graph were changed in place too, by writes grad_magic did not see: "
              "a fix of this one alone would fail the same way, so there is no automatic fix.",
        "zh": "同一计算图中还有其他被保存的张量也被原地修改了，而 grad_magic 没有观察到是哪些写入：只修复这一处"
              "仍会以同样的方式失败，因此不提供自动修复。",
    },
    "inplace.saved.why_keyword": {
        "en": "The in-place write happens inside that call: it runs {op}(inplace=True), set on line "
              "{lineno}.",
        "zh": "原地写入发生在这个调用内部：它执行的是 {op}(inplace=True)，该参数设置在第 {lineno} 行。",
    },
    "inplace.saved.backward_at": {
        "en": "the backward() on line {lineno}",
        "zh": "第 {lineno} 行的 backward() ",
    },
    "inplace.saved.backward": {"en": "backward()", "zh": "反向传播 backward() "},
    "inplace.saved.why_update": {
        "en": "{name} is a leaf that requires grad, so line {lineno} looks like a parameter update. Run "
              "every backward() that needs the graph built before the update first, then update; or "
              "compute the forward pass again after the update (e.g. inside the loop). No automatic fix: "
              "the intended order cannot be read from the code.",
        "zh": "{name} 是需要梯度的叶子张量，所以第 {lineno} 行看起来是一次参数更新。请先执行所有需要"
              "更新前计算图的 backward()，再更新参数；或者在更新之后重新做一次前向传播（例如放进循环里）。"
              "没有自动修复：无法从代码中看出你想要的执行顺序。",
    },
    "inplace.saved.why_step": {
        "en": "Afterwards `{optimizer}.step()` on line {lineno} updated {name} in place (optimizers always "
              "do), and {backward} still ran on the graph built with the old value.",
        "zh": "之后第 {lineno} 行的 `{optimizer}.step()` 原地更新了 {name}（优化器总是原地更新参数），"
              "而{backward}仍然在用旧值构建的计算图上运行。",
    },
    "inplace.saved.why_step_fix": {
        "en": "Run every backward() that needs the old parameters before `{optimizer}.step()` (for a GAN: "
              "the generator's backward before the discriminator's step), or compute the forward pass "
              "again after the step (e.g. D(fake) once more). No automatic fix: which order you mean "
              "cannot be read from the code.",
        "zh": "请在 `{optimizer}.step()` 之前执行所有需要旧参数的 backward()（对 GAN 来说：先做生成器的 "
              "backward，再做判别器的 step），或者在 step 之后重新做一次前向传播（例如再算一次 "
              "D(fake)）。没有自动修复：无法从代码中看出你想要的顺序。",
    },
    "inplace.saved.why_step_recompute": {
        "en": "The fix computes that loss again after `{optimizer}.step()`, from a fresh forward pass through "
              "the updated model. This is the order of PyTorch's own GAN example: the discriminator steps, then "
              "the generator's loss is computed on D(fake) once more. Each backward() gets the graph of the "
              "parameters it updates.",
        "zh": "修复会在 `{optimizer}.step()` 之后，用更新后的模型重新做一次前向传播来计算这个损失。这正是 "
              "PyTorch 官方 GAN 示例的顺序：先更新判别器，再对 D(fake) 重新计算生成器的损失。每个 "
              "backward() 都得到它所更新参数的计算图。",
    },
    "inplace.saved.why_unseen_fast": {
        "en": "grad_magic did not see which in-place operation changed {name}: without anomaly mode (--fast or "
              "%gradcheck on) a function's `out=` argument is not tracked, and the write may also have run inside "
              "a library function, in an earlier cell, or through an alias. Look for `out=`, `x += ...`, "
              "`x[...] = ...`, methods ending in `_` and `inplace=True` applied to it after it was computed.",
        "zh": "grad_magic 没有观察到是哪个原地操作修改了 {name}：不开启异常检测时（--fast 或 %gradcheck on）不会"
              "追踪函数的 `out=` 参数，写入也可能发生在库函数内部、之前的单元格中，或通过别名完成。请检查它被计算"
              "出来之后，是否对它用了 `out=`、`x += ...`、`x[...] = ...`、以 `_` 结尾的方法或 `inplace=True`。",
    },
    "inplace.saved.why_unseen": {
        "en": "grad_magic did not see which in-place operation changed {name}: it ran inside a library "
              "function, in an earlier cell, or through an alias it could not follow. Look for `x += ...`, "
              "`x[...] = ...`, methods ending in `_` and `inplace=True` applied to it after it was "
              "computed.",
        "zh": "grad_magic 没有观察到是哪个原地操作修改了 {name}：它可能发生在库函数内部、之前的单元格中，"
              "或通过无法追踪的别名完成。请检查它被计算出来之后，是否对它做了 `x += ...`、"
              "`x[...] = ...`、以 `_` 结尾的方法或 `inplace=True`。",
    },
    "inplace.saved.why_no_fix": {
        "en": "No automatic fix. The in-place write on line {lineno} is not in a form grad_magic can rewrite "
              "safely. It may write through a view, or happen inside a function. Compute {name} out of "
              "place there, or `.clone()` it before the write.",
        "zh": "没有自动修复。第 {lineno} 行的原地写入形式无法被安全地改写（可能是通过视图写入，或发生在某个"
              "函数内部）。请在那里改用非原地运算计算 {name}，或在写入之前先 `.clone()`。",
    },
    "inplace.saved.where_saved": {
        "en": " (the in-place op); the tensor was saved on line {lineno}",
        "zh": "（原地操作）；该张量在第 {lineno} 行被保存",
    },
    "inplace.saved.where_saved_module": {
        "en": " (where the in-place module is built); the tensor was saved on line {lineno}",
        "zh": "（原地模块的构造处）；该张量在第 {lineno} 行被保存",
    },
    "inplace.saved.where_saved_step": {
        "en": " (the optimizer step); the tensor was saved on line {lineno}",
        "zh": "（优化器的 step）；该张量在第 {lineno} 行被保存",
    },
    # -- fixes --
    "inplace.saved.fix_rebind": {
        "en": "compute it out of place on line {lineno}: `{code}`",
        "zh": "在第 {lineno} 行改为非原地运算：`{code}`",
    },
    "inplace.saved.fix_clone_input": {
        "en": "give `{module}` a copy of its input on line {lineno} (`.clone()`): it overwrites the copy, and the "
              "tensor autograd saved stays as it was",
        "zh": "在第 {lineno} 行给 `{module}` 传入输入的副本（`.clone()`）：它改写的是副本，autograd 保存的张量保持不变",
    },
    "inplace.saved.fix_keyword": {
        "en": "use inplace=False on line {lineno}, so it returns a new tensor and leaves its input as autograd "
              "saved it",
        "zh": "在第 {lineno} 行改用 inplace=False，让它返回一个新张量，不再改动 autograd 保存的输入",
    },
    "inplace.saved.fix_recompute": {
        "en": "compute {loss} after `{optimizer}.step()` on line {lineno}, from a fresh forward pass through the "
              "updated model",
        "zh": "在第 {lineno} 行的 `{optimizer}.step()` 之后，用更新后的模型重新前向传播来计算 {loss}",
    },
    "inplace.saved.fix_flag_dropped": {
        "en": "drop the positional in-place flag `True` on line {lineno}, so it returns a new tensor and leaves "
              "its input as autograd saved it",
        "zh": "去掉第 {lineno} 行按位置传入的原地标志 `True`，让它返回一个新张量，不再改动 autograd 保存的输入",
    },
    "inplace.saved.fix_also": {
        "en": " (the same for {items}, which also wrote over a saved tensor)",
        "zh": "（{items}也写入了被保存的张量，同样修改）",
    },
    "inplace.saved.also_line": {"en": "line {lineno}", "zh": "第 {lineno} 行"},
    "inplace.saved.also_module": {"en": "`{path}` on line {lineno}", "zh": "第 {lineno} 行的 `{path}`"},
    "inplace.saved.fix_out": {
        "en": "assign the result on line {lineno} instead of writing it into {name} with out=",
        "zh": "在第 {lineno} 行直接赋值结果，而不是用 out= 写入 {name}",
    },
    "inplace.saved.fix_clone": {
        "en": "copy {name} with .clone() before the in-place write (inserted before line {lineno}), so the "
              "saved tensor keeps its value",
        "zh": "在原地写入之前用 .clone() 复制 {name}（插入在第 {lineno} 行之前），使被保存的张量保持原值",
    },
}
