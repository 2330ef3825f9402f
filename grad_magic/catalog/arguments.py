"""Messages of the argument-type family."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "arguments.title": {
        "en": "{callee} was given {got} where it takes {want}",
        "zh": "{callee} 收到的是 {got}，而它需要 {want}",
    },
    "arguments.summary": {
        "en": "A torch function, layer or model checks the type of each argument before it runs.",
        "zh": "torch 的函数、层或模型在运行前会检查每个参数的类型。",
    },
    "arguments.what": {
        "en": "Line {lineno} passed {argument} to {callee}, and torch's `{function}()` got a `{got}` for its "
              "argument{name}, which must be {want}.",
        "zh": "第 {lineno} 行把 {argument} 传给了 {callee}，torch 的 `{function}()` 的参数{name}收到的是 `{got}`，"
              "而它必须是 {want}。",
    },
    "arguments.a_value": {"en": "a value", "zh": "一个值"},
    "arguments.none": {"en": "None", "zh": "None"},
    "arguments.why.method": {
        "en": "{argument} is the method `{method}` itself: without `()` it is never called, so torch gets the "
              "method instead of what it returns.",
        "zh": "{argument} 是方法 `{method}` 本身：没有 `()` 就不会调用它，所以 torch 拿到的是方法而不是它的返回值。",
    },
    "arguments.why.device": {
        "en": "{callee} called with a device runs the model on it as if it were the input; `.to(device)` moves "
              "a model to a device.",
        "zh": "用设备调用 {callee} 会把设备当作输入来运行模型；把模型移到设备上要用 `.to(device)`。",
    },
    "arguments.why.numpy": {
        "en": "{argument} is a NumPy array: torch functions and layers take tensors, so it needs converting "
              "first.",
        "zh": "{argument} 是一个 NumPy 数组：torch 的函数和层只接受张量，需要先转换。",
    },
    "arguments.why.numbers": {
        "en": "{argument} is a Python list of numbers: torch takes a tensor there, made from the list.",
        "zh": "{argument} 是一个 Python 数字列表：这里 torch 需要用这个列表做成的张量。",
    },
    "arguments.why.torch_tuple": {
        "en": "{argument} is what {maker} returned on line {lineno}: an nn.{cls} returns a tuple (its output, "
              "then its state), and item 0 is the output.",
        "zh": "{argument} 是第 {lineno} 行 {maker} 的返回值：nn.{cls} 返回一个元组（先是输出，然后是状态），"
              "第 0 项才是输出。",
    },
    "arguments.why.model_output": {
        "en": "{argument} is what {maker} returned on line {lineno}: a `{cls}`, which holds its tensors by name; "
              "`.{field}` is the tensor.",
        "zh": "{argument} 是第 {lineno} 行 {maker} 的返回值：一个 `{cls}`，它按名字保存张量；`.{field}` 才是张量。",
    },
    "arguments.why.no_return": {
        "en": "{argument} is what {maker} returned on line {lineno}, and `{function}` has no `return`: "
              "a Python function without one returns None.",
        "zh": "{argument} 是第 {lineno} 行 {maker} 的返回值，而 `{function}` 没有 `return`："
              "没有 return 的 Python 函数返回 None。",
    },
    "arguments.why.returns_many": {
        "en": "{argument} is what {maker} returned: a {got} of {count}, made by its `return` on line {lineno}. "
              "Which item the next step takes is yours to say, so no fix is proposed.",
        "zh": "{argument} 是 {maker} 的返回值：第 {lineno} 行的 `return` 返回了一个含 {count} 项的 {got}。"
              "下一步该取哪一项需要你来决定，因此不提供修复。",
    },
    "arguments.why.assigned": {
        "en": "{argument} is the {got} that {maker} returned on line {lineno}.",
        "zh": "{argument} 是第 {lineno} 行 {maker} 返回的 {got}。",
    },
    "arguments.why.plain": {
        "en": "torch takes {want} there and got a `{got}`.",
        "zh": "torch 在这里需要 {want}，收到的却是 `{got}`。",
    },
    "arguments.fix.call": {
        "en": "Call `{method}()` on line {lineno}",
        "zh": "在第 {lineno} 行调用 `{method}()`",
    },
    "arguments.fix.to": {
        "en": "Move the model with `{code}` on line {lineno}",
        "zh": "在第 {lineno} 行用 `{code}` 移动模型",
    },
    "arguments.fix.tensor": {
        "en": "Pass a tensor, `{code}`, on line {lineno}",
        "zh": "在第 {lineno} 行传入张量 `{code}`",
    },
    "arguments.fix.item": {
        "en": "Take the output, `{code}`, on line {lineno}",
        "zh": "在第 {lineno} 行取输出 `{code}`",
    },
    "arguments.fix.field": {
        "en": "Take the tensor, `{code}`, on line {lineno}",
        "zh": "在第 {lineno} 行取张量 `{code}`",
    },
    "arguments.fix.return": {
        "en": "Return `{name}` at the end of `{function}`",
        "zh": "在 `{function}` 的末尾返回 `{name}`",
    },
    "arguments.why.comma": {
        "en": "{argument} was made a one-item tuple by the comma at the end of line {lineno}: in Python "
              "`x = f(x),` is `x = (f(x),)`.",
        "zh": "第 {lineno} 行末尾的逗号把 {argument} 变成了只有一项的元组：在 Python 里 `x = f(x),` 就是 `x = (f(x),)`。",
    },
    "arguments.fix.comma": {
        "en": "Remove the trailing comma that makes a tuple (line {lineno}, and the same slip after it)",
        "zh": "删掉把结果变成元组的行尾逗号（第 {lineno} 行，以及之后同样的写法）",
    },
    "arguments.why.division": {
        "en": "{argument} is made with `/`, which always gives a float in Python 3, even for 8 / 4; a size must be "
              "a whole number. `//` divides and keeps an int.",
        "zh": "{argument} 是用 `/` 算出的，在 Python 3 中 `/` 总是得到浮点数（即使是 8 / 4）；而大小必须是整数。`//` 做除法"
              "并保持整数。",
    },
    "arguments.why.division_made": {
        "en": "{argument} was made with `/` on line {lineno}, which always gives a float in Python 3; a size must "
              "be a whole number. `//` divides and keeps an int.",
        "zh": "{argument} 是第 {lineno} 行用 `/` 算出的，在 Python 3 中 `/` 总是得到浮点数；而大小必须是整数。"
              "`//` 做除法并保持整数。",
    },
    "arguments.fix.floordiv": {
        "en": "Divide with `//` on line {lineno}: a size is a whole number",
        "zh": "在第 {lineno} 行改用 `//` 做除法：大小必须是整数",
    },
    "arguments.collate.title": {
        "en": "Item {item} of each {loader} sample is a `{got}`: default_collate cannot batch it",
        "zh": "{loader} 每个样本的第 {item} 项是 `{got}`：default_collate 无法把它组成批次",
    },
    "arguments.collate.summary": {
        "en": "A batch is made of tensors, NumPy arrays, numbers, and dicts or lists of them; one item of the "
              "samples is none of these.",
        "zh": "批次只能由张量、NumPy 数组、数字以及由它们组成的字典或列表构成；样本中有一项不属于这些类型。",
    },
    "arguments.collate.what": {
        "en": "Line {lineno} asked {loader} for a batch, and default_collate found a `{got}` at item {item} of the "
              "samples.",
        "zh": "第 {lineno} 行向 {loader} 请求一个批次，default_collate 在样本的第 {item} 项发现了 `{got}`。",
    },
    "arguments.collate.why": {
        "en": "The Dataset's `__getitem__` (marked) puts a `{got}` there. Return a tensor or a number in its "
              "place, or pass a `collate_fn` that leaves the item out.",
        "zh": "Dataset 的 `__getitem__`（已标出）在那里放入了 `{got}`。改为返回张量或数字，或传入一个跳过该项的 `collate_fn`。",
    },
    "arguments.collate.whole": {"en": "(the sample itself)", "zh": "（样本本身）"},
    "arguments.collate.the_loader": {"en": "the DataLoader", "zh": "该数据加载器"},
    "arguments.worker.title": {
        "en": "`{function}()` was given {got} where it takes {want}, in a DataLoader worker",
        "zh": "DataLoader 工作进程中，`{function}()` 收到了 {got}，而它需要 {want}",
    },
    "arguments.worker.what": {
        "en": "Line {lineno} ran in a DataLoader worker process and called `{function}()` with {got}, where it "
              "takes {want}.",
        "zh": "第 {lineno} 行在 DataLoader 工作进程中运行，调用 `{function}()` 时传入了 {got}，而它需要 {want}。",
    },
    "arguments.misbound.title": {
        "en": "{argument} went into {callee}'s {bound}",
        "zh": "{argument} 被传进了 {callee} 的 {bound}",
    },
    "arguments.misbound.summary": {
        "en": "Arguments passed by position fill a function's parameters in order, whatever their names.",
        "zh": "按位置传入的参数会依次填入函数的参数，与变量名无关。",
    },
    "arguments.misbound.what": {
        "en": "Line {lineno} passed {argument} to {callee} as argument {position}, which {function} names "
              "{bound}; torch's error came from that value.",
        "zh": "第 {lineno} 行把 {argument} 作为第 {position} 个参数传给 {callee}，而 {function} 的这个参数是 "
              "{bound}；torch 的报错正来自这个值。",
    },
    "arguments.misbound.why": {
        "en": "{function} has a parameter named {argument} of its own, further on: by position, the value went "
              "into {bound} instead.",
        "zh": "{function} 另有一个名为 {argument} 的参数，位置更靠后：按位置传入时，这个值进了 {bound}。",
    },
    "arguments.misbound.fix": {
        "en": "Pass `{name}={name}` by name on line {lineno}",
        "zh": "在第 {lineno} 行按名字传入 `{name}={name}`",
    },
    "arguments.layer.title": {
        "en": "{layer} was built with {setting}: torch takes {want} there, not {got}",
        "zh": "{layer} 构建时传入了 {setting}：torch 在这里需要 {want}，而不是 {got}",
    },
    "arguments.layer.summary": {
        "en": "A layer keeps its constructor's values and hands them to torch at every forward.",
        "zh": "层会保存构造时传入的值，并在每次前向计算时交给 torch。",
    },
    "arguments.layer.what": {
        "en": "Line {lineno} built {layer} with {setting}; its forward passed that {got} on to torch, which "
              "takes {want} there.",
        "zh": "第 {lineno} 行用 {setting} 构建了 {layer}；它的前向计算把这个 {got} 交给了 torch，"
              "而 torch 在这里需要 {want}。",
    },
    "arguments.layer.why": {
        "en": "The layer accepted the value when it was built; torch checks its type only when the layer runs.",
        "zh": "构建层时并不检查这个值；torch 只在层运行时才检查它的类型。",
    },
    "arguments.layer.fix": {
        "en": "Build the layer with `{code}` on line {lineno}",
        "zh": "在第 {lineno} 行用 `{code}` 构建该层",
    },
}
