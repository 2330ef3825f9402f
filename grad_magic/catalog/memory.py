"""Messages of the memory rules."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- cuda-oom --
    "memory.oom.title": {
        "en": "{device} ran out of memory",
        "zh": "{device} 内存不足",
    },
    "memory.oom.summary": {
        "en": "An allocation of {size} failed: {device} has no room left for it.",
        "zh": "分配 {size} 失败：{device} 已经没有足够的空间。",
    },
    "memory.oom.size": {"en": "{size}", "zh": "{size}"},
    "memory.oom.size_unknown": {"en": "memory", "zh": "内存"},
    "memory.oom.what": {
        "en": "Line {lineno} asked {device} for {size} more, and the allocator could not find it. What is "
              "already allocated fills the device: tensors, their gradients, optimizer state and the saved "
              "activations of every graph still alive.",
        "zh": "第 {lineno} 行向 {device} 再申请 {size}，分配器找不到这么多空间。已分配的内容占满了设备：张量、"
              "它们的梯度、优化器状态，以及所有仍存活的计算图保存的激活值。",
    },
    "memory.oom.why": {
        "en": "Memory stays allocated for as long as something refers to it: a name, a list, or a graph "
              "that a tensor with a grad_fn keeps alive.",
        "zh": "只要还有东西引用着内存，它就不会被释放：一个变量名、一个列表，或者一个带 grad_fn 的张量"
              "所保留的计算图。",
    },
    "memory.oom.largest": {
        "en": "The largest tensors your names hold: {tensors}.",
        "zh": "你的变量持有的最大张量：{tensors}。",
    },
    "memory.oom.graph_kept": {
        "en": "`{total} += {value}` on line {lineno} adds a tensor with a graph to a running total. "
              "`{total}` ({grad_fn}) then keeps the graph of every step alive, with all its saved "
              "activations, so memory grows each iteration.",
        "zh": "第 {lineno} 行的 `{total} += {value}` 把一个带计算图的张量累加到总和里。`{total}`（{grad_fn}）"
              "于是让每一步的计算图及其保存的激活值都一直存活，内存每次迭代都在增长。",
    },
    "memory.oom.fixes": {
        "en": "The usual fixes: a smaller batch; `with torch.no_grad():` around evaluation; `.item()` "
              "(or `.detach()`) on what you log or accumulate. Also `del` the large tensors you no longer "
              "need, then call `torch.cuda.empty_cache()` to return the cached blocks.",
        "zh": "常见的解决办法：减小 batch；评估时用 `with torch.no_grad():` 包住；对要记录或累加的值调用 "
              "`.item()`（或 `.detach()`）。另外，用 `del` 删除不再需要的大张量，再调用 `torch.cuda.empty_cache()` "
              "归还缓存的显存块。",
    },
    "memory.oom.why_no_fix": {
        "en": "No single edit frees the memory here: which tensors to make smaller or fewer is your call.",
        "zh": "这里没有哪一处修改能直接释放内存：哪些张量该变小或变少，需要你自己决定。",
    },
    "memory.oom.fix": {
        "en": "`{value}.item()` on line {lineno}, so `{total}` is a plain number and no step's graph is kept",
        "zh": "把第 {lineno} 行改为累加 `{value}.item()`，让 `{total}` 成为普通数字，不再保留任何一步的计算图",
    },
}
