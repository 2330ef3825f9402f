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
}
