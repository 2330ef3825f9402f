"""Messages of the devices rules."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- device-mismatch: title, summary, what --
    "devices.title": {
        "en": "{op} got tensors on two devices: {odd} on {odd_device}, {rest} on {device}",
        "zh": "{op} 收到了两个设备上的张量：{odd} 在 {odd_device} 上，{rest} 在 {device} 上",
    },
    "devices.summary": {
        "en": "An op computes on one device and never copies its inputs there by itself: {odd} must be moved "
              "to {device}, where the op's other tensors are.",
        "zh": "一个运算只在一个设备上计算，不会自动把输入搬过去：{odd} 必须移到 {device} 上，"
              "和该运算的其他张量放在一起。",
    },
    "devices.summary_unclear": {
        "en": "An op computes on one device and never copies its inputs there by itself, and which device "
              "this one should use is not clear from the cell.",
        "zh": "一个运算只在一个设备上计算，不会自动把输入搬过去；而从单元格看不出这个运算应该用哪个设备。",
    },

    "devices.what": {
        "en": "{op} on line {lineno} was given {listing}.",
        "zh": "第 {lineno} 行的 {op} 收到的是：{listing}。",
    },
    "devices.what_arg": {
        "en": "torch's message points at its `{arg}` argument, on {odd}.",
        "zh": "torch 的报错信息指向它的 `{arg}` 参数（在 {odd} 上）。",
    },
    "devices.what_devices": {
        "en": "tensors on {devices}",
        "zh": "分别位于 {devices} 上的张量",
    },
    "devices.on": {"en": "{name} on {device}", "zh": "{name}（{device}）"},
    "devices.list_sep": {"en": ", ", "zh": "，"},
    "devices.step_sep": {"en": "; ", "zh": "；"},
    "devices.an_op": {"en": "an op", "zh": "某个运算"},
    "devices.another": {"en": "another tensor", "zh": "另一个张量"},
    "devices.unnamed": {"en": "an intermediate result", "zh": "一个中间结果"},
    "devices.parameters": {"en": "{module}'s parameters", "zh": "{module} 的参数"},
    # -- why --
    "devices.why.rule": {
        "en": "PyTorch never moves a tensor to another device behind your back: every tensor an op takes "
              "must already be on the device it runs on.",
        "zh": "PyTorch 不会在背后替你把张量搬到别的设备：一个运算用到的所有张量都必须事先放在它运行的设备上。",
    },
    "devices.why.grad": {
        "en": "A tensor's .grad must live on the same device as the tensor itself; the gradient assigned here "
              "is on another device. Move it with `.to(<tensor>.device)` before assigning it.",
        "zh": "张量的 .grad 必须和张量本身在同一个设备上；这里赋给它的梯度却在另一个设备上。"
              "请先用 `.to(<张量>.device)` 把梯度移过去再赋值。",
    },
    "devices.why.unclear": {
        "en": "Which device is meant is not clear from the cell ({devices}): move one side with `.to(...)` so "
              "that all of them match.",
        "zh": "从单元格看不出本意是哪个设备（{devices}）：请用 `.to(...)` 移动其中一方，让它们一致。",
    },
    "devices.why.variable": {
        "en": "The cell's `{variable}` says where tensors belong: {device}.",
        "zh": "单元格中的 `{variable}` 表明张量应该放在 {device} 上。",
    },
    "devices.why.module": {
        "en": "{module}'s parameters are on {device}, and data goes where the model is.",
        "zh": "{module} 的参数在 {device} 上，数据应该跟着模型走。",
    },
    "devices.why.placed": {
        "en": "Only {odd} is still on {odd_device}, where every new tensor starts; the op's other tensors were "
              "put on {device} on purpose.",
        "zh": "只有 {odd} 还在新张量默认所在的 {odd_device} 上；该运算的其他张量都是特意放到 {device} 上的。",
    },
    "devices.why.created": {
        "en": "{name} is created on line {lineno} by `{code}` without `device=`, so it is made on the default "
              "device, {odd_device}.",
        "zh": "{name} 是在第 {lineno} 行由 `{code}` 创建的，没有指定 `device=`，所以它被创建在默认设备 "
              "{odd_device} 上。",
    },
    "devices.why.loop": {
        "en": "{names} come from `{iterable}` (line {lineno}), which yields tensors on {odd_device}.",
        "zh": "{names} 来自第 {lineno} 行的 `{iterable}`，它产出的张量在 {odd_device} 上。",
    },
    "devices.why.use": {
        "en": "{name} is on {odd_device} when line {lineno} uses it.",
        "zh": "第 {lineno} 行使用 {name} 时，它在 {odd_device} 上。",
    },
    "devices.why.earlier": {
        "en": "{name} was made outside this cell and is on {odd_device} (line {lineno} uses it).",
        "zh": "{name} 是在本单元格之外创建的，位于 {odd_device} 上（第 {lineno} 行用到了它）。",
    },
    "devices.why.taken": {
        "en": "{name} is taken from {source} on line {lineno}.",
        "zh": "{name} 是在第 {lineno} 行从 {source} 中取出的。",
    },
    "devices.why.module_made": {
        "en": "{name} is created on line {lineno} and never moved, so its parameters stay on {odd_device}.",
        "zh": "{name} 在第 {lineno} 行创建后没有被移动，所以它的参数还在 {odd_device} 上。",
    },
    "devices.why.attribute": {
        "en": "{name} is a plain tensor attribute, set on line {lineno}: `.to(...)` moves a module's parameters "
              "and buffers, never its plain attributes, so it stayed on {odd_device}.",
        "zh": "{name} 是一个普通的张量属性（第 {lineno} 行赋值）：`.to(...)` 只移动模块的参数和缓冲区（buffer），"
              "从不移动普通属性，所以它留在了 {odd_device} 上。",
    },
    "devices.why.weight": {
        "en": "{name} is the tensor given to the loss on line {lineno} (`{code}`): the loss keeps it on "
              "{odd_device}, where it was made.",
        "zh": "{name} 是第 {lineno} 行传给损失函数的张量（`{code}`）：损失函数把它留在创建时所在的 {odd_device} 上。",
    },
    "devices.why.comprehension": {
        "en": "{name} is the dict built on line {lineno} (`{code}`), whose tensors are still on {odd_device}.",
        "zh": "{name} 是第 {lineno} 行构造的字典（`{code}`），其中的张量仍在 {odd_device} 上。",
    },
    "devices.why.dict_loop": {
        "en": "{name} is a dict of tensors that `{iterable}` yields (line {lineno}), on {odd_device}.",
        "zh": "{name} 是第 {lineno} 行的 `{iterable}` 产出的张量字典，位于 {odd_device} 上。",
    },
    "devices.why.operand": {
        "en": "`{code}` on line {lineno} gives a tensor on {odd_device}.",
        "zh": "第 {lineno} 行的 `{code}` 得到的张量在 {odd_device} 上。",
    },
    "devices.why.made": {
        "en": "`{code}` on line {lineno} makes a tensor without `device=`, so it is made on the default device, "
              "{odd_device}.",
        "zh": "第 {lineno} 行的 `{code}` 创建张量时没有指定 `device=`，所以它被创建在默认设备 {odd_device} 上。",
    },
    "devices.why.passed": {
        "en": "{name} is `{code}`, passed in on line {lineno}.",
        "zh": "{name} 就是第 {lineno} 行传进来的 `{code}`。",
    },
    "devices.why.returned": {
        "en": "{name} is what `{code}` returns, on line {lineno}.",
        "zh": "{name} 是第 {lineno} 行 `{code}` 的返回值。",
    },
    "devices.why.batch": {
        "en": "{name} is made on line {lineno} by `{code}`, on {odd_device}.",
        "zh": "{name} 是在第 {lineno} 行由 `{code}` 创建的，位于 {odd_device} 上。",
    },
    "devices.why.kept": {
        "en": "`{code}` on line {lineno} makes a moved copy and throws it away: a tensor's `.to()` leaves {name} "
              "where it is, on {odd_device}.",
        "zh": "第 {lineno} 行的 `{code}` 生成了一个移动后的副本却把它丢掉了：张量的 `.to()` 不会移动 {name} 本身，"
              "它仍在 {odd_device} 上。",
    },
    "devices.why.explicit": {
        "en": "{name} is put on {odd_device} explicitly on line {lineno}, so which device is meant is not "
              "clear: move one side with `.to(...)`.",
        "zh": "{name} 是在第 {lineno} 行被显式放到 {odd_device} 上的，因此看不出本意是哪个设备："
              "请用 `.to(...)` 移动其中一方。",
    },
    "devices.why.module_odd": {
        "en": "{module}'s parameters are on {odd_device}: move the model (or the data) with `.to(...)` so "
              "that they match.",
        "zh": "{module} 的参数在 {odd_device} 上：请用 `.to(...)` 移动模型（或数据），让两者一致。",
    },
    "devices.why.no_spot": {
        "en": "No line of the cell could be changed safely to move {name}: move it with `.to(...)` yourself.",
        "zh": "单元格中找不到可以安全修改的地方来移动 {name}：请自己用 `.to(...)` 移动它。",
    },
    "devices.why.no_named": {
        "en": "The tensor on the other device has no name in the cell (it is an intermediate result), so "
              "there is no line to change: look at how it is computed.",
        "zh": "位于另一个设备上的张量在单元格中没有名字（它是中间结果），所以没有可以修改的行："
              "请检查它是如何计算出来的。",
    },
    # -- fix descriptions --
    "devices.fix.factory": {
        "en": "create {name} on {device}: add `device={expr}` on line {lineno}",
        "zh": "把 {name} 直接创建在 {device} 上：在第 {lineno} 行加上 `device={expr}`",
    },
    "devices.fix.loop": {
        "en": "move {names} to {device} at the top of the loop on line {lineno}",
        "zh": "在第 {lineno} 行的循环开头把 {names} 移到 {device} 上",
    },
    "devices.fix.use": {
        "en": "move {name} to {device} where line {lineno} uses it: `.to({expr})`",
        "zh": "在第 {lineno} 行使用 {name} 的地方把它移到 {device} 上：`.to({expr})`",
    },
    "devices.fix.buffer": {
        "en": "register {name} as a buffer on line {lineno} (`register_buffer`), so that `.to(...)` moves it "
              "with the model, then create the model again",
        "zh": "在第 {lineno} 行把 {name} 注册为缓冲区（`register_buffer`），让 `.to(...)` 随模型一起移动它，"
              "然后重新创建模型",
    },
    "devices.fix.weight": {
        "en": "move the loss's tensor to {device} where the loss is made, on line {lineno}: `.to({expr})`",
        "zh": "在第 {lineno} 行创建损失函数的地方把传给它的张量移到 {device} 上：`.to({expr})`",
    },
    "devices.fix.comprehension": {
        "en": "move each tensor of the dict to {device} where it is built, on line {lineno}: `.to({expr})`",
        "zh": "在第 {lineno} 行构造字典的地方把其中每个张量移到 {device} 上：`.to({expr})`",
    },
    "devices.fix.dict_loop": {
        "en": "move each tensor of {name} to {device} at the top of the loop on line {lineno}",
        "zh": "在第 {lineno} 行的循环开头把 {name} 中的每个张量移到 {device} 上",
    },
    "devices.fix.operand": {
        "en": "move `{code}` to {device} on line {lineno}: `.to({expr})`",
        "zh": "在第 {lineno} 行把 `{code}` 移到 {device} 上：`.to({expr})`",
    },
    "devices.fix.made": {
        "en": "make `{code}` on {device}: add `device={expr}` on line {lineno}",
        "zh": "把 `{code}` 直接创建在 {device} 上：在第 {lineno} 行加上 `device={expr}`",
    },
    "devices.fix.kept": {
        "en": "keep the moved copy on line {lineno}: assign it back to {name}",
        "zh": "在第 {lineno} 行保留移动后的副本：把它赋回给 {name}",
    },
    "devices.fix.module": {
        "en": "move {name} to {device} where it is created on line {lineno}: `.to({expr})`",
        "zh": "在第 {lineno} 行创建 {name} 的地方把它移到 {device} 上：`.to({expr})`",
    },
    "devices.unregistered.title": {
        "en": "`{owner}.{attribute}` is a plain {container}: moving the model never moved the layers in it",
        "zh": "`{owner}.{attribute}` 是普通的 {container}：移动模型时其中的层没有被移动",
    },
    "devices.unregistered.summary": {
        "en": "Layers kept in a plain Python {container} are not registered as submodules: `.to(device)`, "
              "`.parameters()` and `state_dict()` all skip them.",
        "zh": "放在普通 Python {container} 中的层不会注册为子模块：`.to(device)`、`.parameters()` 和 `state_dict()` "
              "都会跳过它们。",
    },
    "devices.unregistered.what": {
        "en": "Line {lineno} met tensors on {devices}. One is a parameter of a layer in `self.{attribute}`, the "
              "plain {container} that `{owner}.__init__` assigns on line {assigned}.",
        "zh": "第 {lineno} 行遇到了分别位于 {devices} 上的张量。其中一个是 `self.{attr"
              "ibute}` 中某层的参数，而它是 `{owner}.__init__` 第 {assigned} 行"
              "赋值的普通 {container}。",
    },
    "devices.unregistered.why": {
        "en": "An `nn.ModuleList` / `nn.ModuleDict` registers the layers it holds: the model's `.to()` moves them, "
              "its `.parameters()` (and so the optimizer) sees them, and `state_dict()` saves them. In a plain "
              "{container} they also never train.",
        "zh": "`nn.ModuleList` / `nn.ModuleDict` 会注册其中的层：模型的 `.to()` 会移动它们，`.parameters()`（因而优化器）"
              "能看到它们，`state_dict()` 会保存它们。放在普通 {container} 中时，这些层也永远不会被训练。",
    },
    "devices.fix.registered": {
        "en": "Hold the layers in `{kind}` instead of a plain {attribute} on line {lineno}",
        "zh": "在第 {lineno} 行用 `{kind}` 代替普通 {attribute} 存放这些层",
    },
}
