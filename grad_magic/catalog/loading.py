"""Messages of the loading rules."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- load-needs-map-location --
    "loading.title": {
        "en": "The checkpoint was saved on {saved}, and this machine has no {backend} device",
        "zh": "检查点是在 {saved} 上保存的，而这台机器没有 {backend} 设备",
    },
    "loading.title_count": {
        "en": "The checkpoint was saved on {saved}, but this machine has only {count} {backend} device(s)",
        "zh": "检查点是在 {saved} 上保存的，但这台机器只有 {count} 个 {backend} 设备",
    },
    "loading.summary": {
        "en": "torch.load puts every tensor back on the device it was saved from, unless `map_location` "
              "says where else to put it.",
        "zh": "torch.load 会把每个张量放回它保存时所在的设备，除非用 `map_location` 指定放到别处。",
    },
    "loading.what": {
        "en": "{call} on line {lineno} stopped: the file holds tensors saved on {saved}, and "
              "torch.{backend}.is_available() is False here.",
        "zh": "第 {lineno} 行的 {call} 中止了：文件里的张量是在 {saved} 上保存的，而这里 "
              "torch.{backend}.is_available() 为 False。",
    },
    "loading.what_count": {
        "en": "{call} on line {lineno} stopped: the file holds tensors saved on {saved}, but "
              "torch.{backend}.device_count() is {count} here.",
        "zh": "第 {lineno} 行的 {call} 中止了：文件里的张量是在 {saved} 上保存的，但这里 "
              "torch.{backend}.device_count() 只有 {count}。",
    },
    "loading.called_through": {"en": "torch.load, called through a function,", "zh": "通过函数调用的 torch.load"},
    "loading.cpu_build": {"en": ", a CPU-only build,", "zh": "（仅 CPU 版本）"},
    "loading.why": {
        "en": "A checkpoint remembers the device of every tensor in it: these were on {saved} when they were "
              "saved (a model trained on a GPU, say). torch.load puts each one back on that device unless "
              "`map_location` says where to put it instead. This torch {version}{build} has no such "
              "device.",
        "zh": "检查点会记住其中每个张量所在的设备：这些张量保存时在 {saved} 上（例如在 GPU 上训练的模型）。"
              "除非用 `map_location` 指定放到别处，torch.load 会把它们放回原来的设备。"
              "而当前的 torch {version}{build}没有这个设备。",
    },
    "loading.why.wrapped": {
        "en": "torch wrapped this error in \"Weights only load failed\": the cause is the missing device, not "
              "weights_only, so there is no need to set weights_only=False.",
        "zh": "torch 把这个错误包装成了 \"Weights only load failed\"：真正的原因是缺少设备，而不是 "
              "weights_only，所以不需要设置 weights_only=False。",
    },
    "loading.why.not_in_cell": {
        "en": "The torch.load call is not on this line of the cell (it runs inside a function defined "
              "elsewhere): add `map_location=\"cpu\"` to it there.",
        "zh": "torch.load 调用不在单元格的这一行上（它在别处定义的函数里运行）：请到那里给它加上 "
              "`map_location=\"cpu\"`。",
    },
    "loading.why.kwargs": {
        "en": "The call passes `**kwargs`, which may already hold a map_location: add or change "
              "`map_location` yourself.",
        "zh": "这个调用传入了 `**kwargs`，其中可能已经有 map_location：请自己添加或修改 `map_location`。",
    },
    "loading.why.map_variable": {
        "en": "The call already passes `map_location={expr}`, and that value still names {backend}: change "
              "where it comes from, e.g. `torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")`.",
        "zh": "这个调用已经传入了 `map_location={expr}`，但它的值仍然指向 {backend}：请修改这个值的来源，"
              "例如 `torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")`。",
    },
    "loading.why.no_fix": {
        "en": "The edited cell would not parse, so no fix is proposed.",
        "zh": "修改后的单元格无法解析，因此不提供修复。",
    },
    "loading.fix_add": {
        "en": "Load onto this machine's device: add `map_location={expr}` to the torch.load call on line "
              "{lineno}",
        "zh": "加载到本机的设备上：在第 {lineno} 行的 torch.load 调用中加上 `map_location={expr}`",
    },
    "loading.fix_replace": {
        "en": "Load onto this machine's device: `map_location={expr}` instead of `{old}` on line {lineno}",
        "zh": "加载到本机的设备上：把第 {lineno} 行的 map_location 从 `{old}` 改为 `{expr}`",
    },
}
