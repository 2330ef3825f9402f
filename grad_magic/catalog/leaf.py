"""Messages of the leaf rules (leaf-modified-in-place, non-leaf-grad)."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- leaf-modified-in-place --
    "leaf.a_leaf": {"en": "a tensor that requires grad", "zh": "一个需要梯度的张量"},
    "leaf.title": {
        "en": "{name} requires grad and was changed in place outside torch.no_grad()",
        "zh": "{name} 需要梯度，却在 torch.no_grad() 之外被原地修改了",
    },
    "leaf.title_view": {
        "en": "Part of {name} (which requires grad) was changed in place outside torch.no_grad()",
        "zh": "需要梯度的 {name} 的一部分在 torch.no_grad() 之外被原地修改了",
    },
    "leaf.summary": {
        "en": "Line {lineno} (`{code}`) writes into {name}, a leaf tensor autograd tracks; torch refuses "
              "because the change would be recorded as part of the graph.",
        "zh": "第 {lineno} 行（`{code}`）直接写入了 {name}，它是 autograd 追踪的叶子张量；torch 拒绝执行，"
              "因为这个修改会被当作计算图的一部分记录下来。",
    },
    "leaf.what": {
        "en": "Line {lineno} (`{code}`) stopped: {name} is a leaf that requires grad, and an in-place "
              "operation on it is not allowed while autograd is recording.",
        "zh": "第 {lineno} 行（`{code}`）中止：{name} 是需要梯度的叶子张量，autograd 记录期间不允许对它进行"
              "原地操作。",
    },
    "leaf.what_view": {
        "en": "Line {lineno} (`{code}`) stopped: it writes into a view of {name} (a slice, an index or a "
              "reshape of it), and {name} is a leaf that requires grad.",
        "zh": "第 {lineno} 行（`{code}`）中止：它写入的是 {name} 的一个视图（切片、索引或变形），而 {name} "
              "是需要梯度的叶子张量。",
    },
    "leaf.why": {
        "en": "A leaf that requires grad (a parameter, or a tensor made with requires_grad=True) is where "
              "gradients are collected. Changing its values in place while autograd records would hide the "
              "change from the gradients computed through {name}, so torch forbids it.",
        "zh": "需要梯度的叶子张量（参数，或以 requires_grad=True 创建的张量）是梯度汇集的地方。在 autograd "
              "记录时原地修改它的值，会让经过 {name} 计算的梯度无法反映这次修改，所以 torch 禁止这样做。",
    },
    "leaf.why_view": {
        "en": "Writing through an index, a slice or a view changes {name} itself. A leaf that requires grad is "
              "where gradients are collected; changing it in place while autograd records would hide the "
              "change from the gradients, so torch forbids it.",
        "zh": "通过索引、切片或视图写入，修改的就是 {name} 本身。需要梯度的叶子张量是梯度汇集的地方；"
              "在 autograd 记录时原地修改它会让梯度无法反映这次修改，所以 torch 禁止这样做。",
    },
    "leaf.why_wrap": {
        "en": "Updating or initialising a parameter is not part of the model's computation: do it inside "
              "`with torch.no_grad():`, where autograd does not record, as optimizers do.",
        "zh": "更新或初始化参数并不属于模型的计算：应当像优化器那样，把它放在 `with torch.no_grad():` 中进行，"
              "autograd 在其中不做记录。",
    },
    "leaf.why_pending": {
        "en": "Here {name} was already used on line {line} in a graph whose backward() comes later. That "
              "backward needs its old value, so no_grad would only trade this error for another. Compute a "
              "new tensor instead and leave {name} as it was.",
        "zh": "这里 {name} 已在第 {line} 行参与构建了计算图，而该图的 backward() 在后面才执行。它需要 {name} 的"
              "旧值，因此用 no_grad 只会换来另一个错误。应当计算一个新张量，保持 {name} 不变。",
    },
    "leaf.why_pending_no_fix": {
        "en": "Here {name} was already used on line {line} in a graph whose backward() comes later and needs "
              "its old value: change {name} only after that backward(), or compute a new tensor instead.",
        "zh": "这里 {name} 已在第 {line} 行参与构建了计算图，该图的 backward() 在后面执行并且需要它的旧值："
              "请在该 backward() 之后再修改 {name}，或者改为计算一个新张量。",
    },
    "leaf.why_not_update": {
        "en": "`{code}` looks like part of the computation rather than an update, so no fix is proposed. Use "
              "the out-of-place form on a copy (the result is no longer a leaf), or put the change under "
              "`with torch.no_grad():` if it is meant to set values.",
        "zh": "`{code}` 看起来是计算的一部分而不是参数更新，因此不提供自动修复。可以改用非原地的写法（结果将"
              "不再是叶子张量），如果只是想设置数值，则把它放到 `with torch.no_grad():` 中。",
    },
    "leaf.why_elsewhere": {
        "en": "The write happened inside code that line {lineno} (`{code}`) calls, outside this cell: put the "
              "update there under `with torch.no_grad():`.",
        "zh": "写入发生在第 {lineno} 行（`{code}`）所调用的、本单元格之外的代码中：请在那里把更新放到 "
              "`with torch.no_grad():` 中。",
    },
    "leaf.why_no_fix": {
        "en": "Put the change under `with torch.no_grad():` if it updates or initialises values.",
        "zh": "如果这是在更新或初始化数值，请把它放到 `with torch.no_grad():` 中。",
    },
    "leaf.fix_wrap": {
        "en": "run line {first} under `{header}:`",
        "zh": "把第 {first} 行放到 `{header}:` 中执行",
    },
    "leaf.fix_wrap_lines": {
        "en": "run lines {first}-{last} under `{header}:`",
        "zh": "把第 {first}-{last} 行放到 `{header}:` 中执行",
    },
    "leaf.fix_wrap_more": {
        "en": "and the same writes from line {lines} too",
        "zh": "；第 {lines} 行起的同类写入也同样处理",
    },
    "leaf.fix_rebind": {
        "en": "compute a new tensor on line {lineno} (`{code}`) instead of changing the leaf",
        "zh": "在第 {lineno} 行计算一个新张量（`{code}`），而不是修改叶子张量",
    },
    # -- non-leaf-grad (warning) --
    "nonleaf.title_rebound": {
        "en": "`{name}` is no longer the tensor you train since line {lineno}, so its .grad is None",
        "zh": "从第 {lineno} 行起 `{name}` 已不再是你训练的那个张量，因此它的 .grad 是 None",
    },
    "nonleaf.title_made": {
        "en": "`{name}` is the result of an operation, not a leaf (line {lineno}), so its .grad is None",
        "zh": "`{name}` 是一次运算的结果而不是叶子张量（第 {lineno} 行），因此它的 .grad 是 None",
    },
    "nonleaf.title_intermediate": {
        "en": "`{name}` is an intermediate result, so its .grad is None",
        "zh": "`{name}` 是中间结果，因此它的 .grad 是 None",
    },
    "nonleaf.title_unnamed": {
        "en": "The .grad of a non-leaf tensor was read: it is always None",
        "zh": "读取了非叶子张量的 .grad：它总是 None",
    },
    "nonleaf.summary": {
        "en": "Line {lineno} reads `{name}.grad`, but backward() fills .grad only on leaf tensors; `{name}` is not "
              "one, so it reads None.",
        "zh": "第 {lineno} 行读取了 `{name}.grad`，但 backward() 只会填充叶子张量的 .grad；`{name}` 不是叶子张量，"
              "所以读到的是 None。",
    },
    "nonleaf.summary_unnamed": {
        "en": "torch warned that .grad was read on a tensor that is not a leaf; grad_magic could not tell "
              "which name in this cell it was.",
        "zh": "torch 警告读取了非叶子张量的 .grad；grad_magic 无法判断是本单元格中的哪个变量。",
    },
    "nonleaf.what": {
        "en": "No error is raised: line {lineno} got None from `{name}.grad` (`{name}` has grad_fn={grad_fn}), and "
              "torch printed a UserWarning about it.",
        "zh": "不会报错：第 {lineno} 行从 `{name}.grad` 得到的是 None（`{name}` 的 grad_fn={grad_fn}），torch 对此"
              "给出了 UserWarning。",
    },
    "nonleaf.what_unnamed": {
        "en": "No error is raised: the read returned None, and torch printed a UserWarning about it.",
        "zh": "不会报错：读取结果是 None，torch 对此给出了 UserWarning。",
    },
    "nonleaf.why_leaf_only": {
        "en": "backward() stores gradients in .grad only for leaf tensors that require grad (parameters, "
              "tensors made with requires_grad=True); a result computed from them keeps .grad = None.",
        "zh": "backward() 只会把梯度存入需要梯度的叶子张量（参数、以 requires_grad=True 创建的张量）的 .grad 中；"
              "由它们计算出来的结果的 .grad 始终是 None。",
    },
    "nonleaf.why_rebound": {
        "en": "Line {lineno} (`{code}`) does not change `{name}`: it computes a new tensor and gives it the name "
              "`{name}`. The leaf you created lost its name there, and the gradients go to it, not to the new "
              "`{name}`. Nothing is raised when this happens; only reading .grad shows it.",
        "zh": "第 {lineno} 行（`{code}`）并没有修改 `{name}`：它计算出一个新张量，并把 `{name}` 这个名字给了它。"
              "你创建的叶子张量在这里失去了名字，梯度累积在它身上，而不是新的 `{name}` 上。这一步不会报错，"
              "只有读取 .grad 时才会显现出来。",
    },
    "nonleaf.why_rebound_fix": {
        "en": "To update `{name}` itself, change it in place under `with torch.no_grad():`.",
        "zh": "要更新 `{name}` 本身，应在 `with torch.no_grad():` 中原地修改它。",
    },
    "nonleaf.why_rebound_no_fix": {
        "en": "If that line is meant to update `{name}`, change it in place under `with torch.no_grad():` "
              "(e.g. `{name} += 1`). If the new tensor is meant to be part of the computation, read the "
              "original leaf's gradient instead, or call `.retain_grad()` on the new one before backward().",
        "zh": "如果这一行是想更新 `{name}`，请在 `with torch.no_grad():` 中原地修改它（例如 `{name} += 1`）。"
              "如果新张量本来就是计算的一部分，请改为读取原叶子张量的梯度，或在 backward() 之前对新张量调用 "
              "`.retain_grad()`。",
    },
    "nonleaf.why_made": {
        "en": "Line {lineno} (`{code}`) creates a leaf with requires_grad=True and then computes on it "
              "({grad_fn}). `{name}` is that result, and the leaf itself has no name, so its gradient cannot be "
              "read. Make the finished tensor the leaf: compute it first, then call `.requires_grad_()`.",
        "zh": "第 {lineno} 行（`{code}`）先以 requires_grad=True 创建叶子张量，然后又在它上面做了运算"
              "（{grad_fn}）。`{name}` 是运算结果，而叶子张量本身没有名字，无法读取它的梯度。应当让最终的张量"
              "成为叶子：先计算出它，再调用 `.requires_grad_()`。",
    },
    "nonleaf.why_intermediate": {
        "en": "`{name}` was computed by an operation ({grad_fn}); autograd passes gradients through it without "
              "keeping them. Call `{name}.retain_grad()` before backward() to keep them.",
        "zh": "`{name}` 是由运算（{grad_fn}）计算得到的；autograd 只让梯度从它身上流过，并不保留。如需保留，"
              "请在 backward() 之前调用 `{name}.retain_grad()`。",
    },
    "nonleaf.fix_update": {
        "en": "update {names} in place under `{header}:` (line {lineno}) instead of rebinding the name",
        "zh": "在 `{header}:` 中原地更新 {names}（第 {lineno} 行），而不是把名字绑定到新张量上",
    },
    "nonleaf.fix_made": {
        "en": "make the finished `{name}` the leaf (line {lineno})",
        "zh": "让计算完成后的 `{name}` 成为叶子张量（第 {lineno} 行）",
    },
    "nonleaf.fix_made_all": {
        "en": "make each finished tensor the leaf (lines {lines})",
        "zh": "让每个计算完成后的张量成为叶子张量（第 {lines} 行）",
    },
    "nonleaf.fix_retain": {
        "en": "keep the gradient of `{name}` with `.retain_grad()` (new line {lineno})",
        "zh": "用 `.retain_grad()` 保留 `{name}` 的梯度（新增第 {lineno} 行）",
    },
}
