"""Messages of live cards (grad_magic/live.py): what a step found, what it costs left running, how to stop,
and the end of the cell's note on a card already shown. `card.*` keys are labels of the JSON card too."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- what the step found ({step}: the step that found it; {name}: the card's first name) --
    "live.found.grads-not-zeroed": {
        "en": "Step {step}: `{name}` stepped with the gradients of step {previous} still in `.grad`.",
        "zh": "第 {step} 步：`{name}` 执行 step 时，`.grad` 里还留着第 {previous} 步的梯度。",
    },
    "live.found.train-eval-mode": {
        "en": "Step {step}: `{name}` was trained in eval() mode, its Dropout/BatchNorm layers acting as at "
              "evaluation.",
        "zh": "第 {step} 步：`{name}` 在 eval() 模式下被训练，它的 Dropout/BatchNorm 层按评估时的方式工作。",
    },
    "live.found.graph-kept-alive": {
        "en": "Step {step}: `{name}` already holds the autograd graph of every step so far.",
        "zh": "第 {step} 步：`{name}` 已经抓住了到目前为止每一步的计算图。",
    },
    "live.found.optimizer-not-on-model": {
        "en": "Step {step}: `{name}` stepped parameters that belong to no model the training uses.",
        "zh": "第 {step} 步：`{name}` 更新的参数不属于训练所用的任何模型。",
    },
    "live.found.frozen-by-no-grad": {
        "en": "Step {step}: none of the {step} steps of `{name}` so far found a gradient.",
        "zh": "第 {step} 步：`{name}` 到目前为止的 {step} 次 step 都没有找到梯度。",
    },
    # -- what it costs if the cell is left running --
    "live.cost.grads-not-zeroed": {
        "en": "Left running, each step adds the gradients of every step before it: the effective learning rate "
              "grows with the step count, and the training diverges or stalls.",
        "zh": "继续运行的话，每一步都会叠加之前所有步的梯度：有效学习率随步数增长，训练会发散或停滞。",
    },
    "live.cost.train-eval-mode": {
        "en": "Left running, the model trains with dropout off (no regularisation) and BatchNorm's running "
              "statistics never updated: the run trains another model than the one you meant.",
        "zh": "继续运行的话，模型在关闭 Dropout（没有正则化）、BatchNorm 统计量从不更新的情况下训练：训练出来的不是你想要的模型。",
    },
    "live.cost.graph-kept-alive": {
        "en": "Left running, memory grows with every step until the device runs out of it.",
        "zh": "继续运行的话，内存随每一步增长，直到设备内存耗尽。",
    },
    "live.cost.optimizer-not-on-model": {
        "en": "Left running, no step changes the model the training uses: the whole run updates parameters "
              "nothing reads.",
        "zh": "继续运行的话，没有一步会改变训练所用的模型：整个运行都在更新没有人用的参数。",
    },
    "live.cost.frozen-by-no-grad": {
        "en": "Left running, every step leaves the parameters as they were: the model never learns, however "
              "long it runs.",
        "zh": "继续运行的话，每一步都让参数保持原样：无论运行多久，模型都学不到东西。",
    },
    # -- the end of the cell, for a kind already shown live ({seconds}: "41 s", "3 min 5 s") --
    "live.after": {
        "en": "{kind} was shown live at step {step}; the cell ran {seconds} more after it.",
        "zh": "{kind} 已在第 {step} 步实时显示；此后单元格又运行了 {seconds}。",
    },
    # -- labels of the card (render/json.py LABELS; the text and HTML cards) --
    "card.live": {
        "en": "Found while the cell runs",
        "zh": "在单元格运行时发现",
    },
    "card.interrupt": {
        "en": "To stop the cell now, interrupt it: I, I (or the stop button) in a notebook, Ctrl-C in a terminal.",
        "zh": "要立即停止这个单元格，请中断它：在 notebook 中按 I, I（或停止按钮），在终端中按 Ctrl-C。",
    },
    "card.stop": {
        "en": "Stop the cell",
        "zh": "停止单元格",
    },
    "card.stop_sent": {
        "en": "Interrupt sent.",
        "zh": "已发送中断。",
    },
    "card.stop_failed": {
        "en": "The interrupt did not reach the kernel: use the toolbar's stop button.",
        "zh": "中断没有送达内核：请使用工具栏的停止按钮。",
    },
}
