"""Messages of `%grad_device`'s report (grad_magic.inventory and its renderer, render/inventory.py).

Counts come formatted (`1,234`); `{path}`, `{models}` and the like are names and are quoted by the caller
where the sentence shows code.
"""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- warnings (the walk's findings) --
    "inventory.warn.module_spans": {
        "en": "`{path}` has parameters and buffers on {count} devices: {parts}; move it whole with "
              "`{path}.to(device)`",
        "zh": "`{path}` 的参数和缓冲区分布在 {count} 个设备上：{parts}；请用 `{path}.to(device)` 把它整体移到"
              "一个设备上",
    },
    "inventory.warn.module_part": {
        "en": "{device} ({count}, e.g. `{example}`)",
        "zh": "{device}（{count} 个，例如 `{example}`）",
    },
    "inventory.warn.state_device": {
        "en": "{state} on {here}, but the parameter is on {there}: `{optimizer}.step()` will fail; move the state "
              "to {there}, or load the state dict after moving the model",
        "zh": "{state} 在 {here} 上，但对应的参数在 {there} 上：`{optimizer}.step()` 会失败；请把优化器状态移到 "
              "{there} 上，或者先移动模型再加载 state dict",
    },
    "inventory.and_more": {"en": "{first} and {count} more", "zh": "{first} 等另外 {count} 个"},
    "inventory.warn.will_collide": {
        "en": "`{path}` is on {device}; it will collide with {models} on {home}",
        "zh": "`{path}` 在 {device} 上，而 {models} 在 {home} 上：两者一起运算时会出错",
    },
    "inventory.warn.will_collide_more": {
        "en": "{count} more tensors are not on {home} either",
        "zh": "另有 {count} 个张量也不在 {home} 上",
    },
    "inventory.warn.kept_one": {
        "en": "{names} keeps {count} tensor(s) ({size}) on {devices} alive that nothing else refers to; "
              "`%reset -f out` frees them",
        "zh": "{names} 让 {devices} 上 {count} 个别处已不再引用的张量（{size}）一直占着内存；"
              "`%reset -f out` 可以释放它们",
    },
    "inventory.warn.kept_many": {
        "en": "{names} keep {count} tensor(s) ({size}) on {devices} alive that nothing else refers to; "
              "`%reset -f out` frees them",
        "zh": "{names} 让 {devices} 上 {count} 个别处已不再引用的张量（{size}）一直占着内存；"
              "`%reset -f out` 可以释放它们",
    },
    # -- why an object was not looked into --
    "inventory.skip.proxy": {
        "en": "{cls} answers any attribute name (__getattr__); not looked into",
        "zh": "{cls} 对任何属性名都会作答（__getattr__）；未查看其内部",
    },
    "inventory.skip.depth": {
        "en": "depth limit: deeper than {depth} levels; not looked into",
        "zh": "深度限制：超过 {depth} 层；未查看其内部",
    },
    "inventory.skip.raised": {"en": "attribute access raised {error}", "zh": "读取属性时抛出了 {error}"},
    "inventory.skip.metadata": {"en": "reading its metadata raised {error}", "zh": "读取其元数据时抛出了 {error}"},
    "inventory.skip.objects": {
        "en": "object limit: stopped after {count} containers",
        "zh": "对象数量限制：查看 {count} 个容器后停止",
    },
    "inventory.skip.tensors": {
        "en": "tensor limit: stopped after {count} tensors",
        "zh": "张量数量限制：找到 {count} 个张量后停止",
    },
    "inventory.skip.stopped": {
        "en": "{reason}; the rest of the namespace was not walked",
        "zh": "{reason}；命名空间的其余部分没有查看",
    },
    "inventory.skip.more": {"en": "{count} more not listed", "zh": "另有 {count} 个未列出"},
    "inventory.skip.time": {
        "en": "time limit: stopped after {seconds} s",
        "zh": "时间限制：{seconds} 秒后停止",
    },
    "inventory.skip.no_dict": {
        "en": "{cls} makes its own `__dict__` (a property); not called, not looked into",
        "zh": "{cls} 自己定义了 `__dict__`（一个 property）；没有调用它，未查看其内部",
    },
    "inventory.skip.unwalked": {
        "en": "not walked: {names} (at least {count} objects)",
        "zh": "没有查看：{names}（至少 {count} 个对象）",
    },
    # -- the report's labels (text and HTML) --
    "inventory.column.path": {"en": "path", "zh": "路径"},
    "inventory.column.role": {"en": "role", "zh": "角色"},
    "inventory.column.shape": {"en": "shape", "zh": "形状"},
    "inventory.column.dtype": {"en": "dtype", "zh": "数据类型"},
    "inventory.column.device": {"en": "device", "zh": "设备"},
    "inventory.column.grad": {"en": "grad", "zh": "梯度"},
    "inventory.column.size": {"en": "size", "zh": "大小"},
    "inventory.role.tensor": {"en": "tensor", "zh": "张量"},
    "inventory.role.parameter": {"en": "parameter", "zh": "参数"},
    "inventory.role.buffer": {"en": "buffer", "zh": "缓冲区"},
    "inventory.role.grad": {"en": "grad", "zh": "梯度"},
    "inventory.role.optimizer_state": {"en": "optimizer state", "zh": "优化器状态"},
    "inventory.grad.no": {"en": "no", "zh": "无"},
    "inventory.grad.leaf": {"en": "leaf", "zh": "叶子"},
    "inventory.tensors.one": {"en": "{count} tensor", "zh": "{count} 个张量"},
    "inventory.tensors.many": {"en": "{count} tensors", "zh": "{count} 个张量"},
    "inventory.total": {"en": "total: {totals}", "zh": "合计：{totals}"},
    "inventory.total.device": {"en": "{device}: {tensors}, {size}", "zh": "{device}：{tensors}，{size}"},
    "inventory.total.sep": {"en": "; ", "zh": "；"},
    "inventory.more_rows": {
        "en": "… {more} more rows (all {total} are in report.rows)",
        "zh": "… 还有 {more} 行（全部 {total} 行都在 report.rows 中）",
    },
    "inventory.more_rows_html": {
        "en": "… {more} more rows (all are in `report.rows`)",
        "zh": "… 还有 {more} 行（全部都在 `report.rows` 中）",
    },
    "inventory.nothing": {
        "en": "grad_device: no tensors found in the namespace",
        "zh": "grad_device：命名空间中没有找到张量",
    },
    "inventory.nothing_on": {
        "en": "grad_device: no tensors found on {device} in the namespace",
        "zh": "grad_device：命名空间中没有找到 {device} 上的张量",
    },
    "inventory.skipped": {"en": "skipped {path}: {reason}", "zh": "已跳过 {path}：{reason}"},
    "inventory.skipped_more": {
        "en": "… {count} more skipped (see report.skipped)",
        "zh": "… 另有 {count} 个被跳过（见 report.skipped）",
    },
    "inventory.not_looked_into.one": {"en": "{count} object not looked into", "zh": "{count} 个对象未查看内部"},
    "inventory.not_looked_into.many": {"en": "{count} objects not looked into", "zh": "{count} 个对象未查看内部"},
    "inventory.see_skipped_html": {"en": "… see `report.skipped`", "zh": "… 见 `report.skipped`"},
    "inventory.reason_sep": {"en": ": ", "zh": "："},
    # -- the magic's usage errors --
    "inventory.usage.sort": {
        "en": "sort must be one of {sorts}, not {sort!r}",
        "zh": "sort 必须是 {sorts} 之一，而不是 {sort!r}",
    },
    "inventory.usage.bounds": {
        "en": "depth must be >= 0, max_tensors >= 1 and the time limit > 0",
        "zh": "depth 必须 >= 0，max_tensors 必须 >= 1，时间限制必须 > 0",
    },
    "inventory.usage.device": {
        "en": "unknown device {device!r}: try cpu, cuda, cuda:0, meta, mps",
        "zh": "未知设备 {device!r}：可以用 cpu、cuda、cuda:0、meta、mps",
    },
    "inventory.usage.help": {
        "en": "Run `%grad_device --help` for the options.",
        "zh": "运行 `%grad_device --help` 查看所有选项。",
    },
}
