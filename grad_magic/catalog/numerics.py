"""Messages of the numerics rules."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- nan-in-backward --
    "numerics.nan.title": {
        "en": "`{function}` produced NaN gradients",
        "zh": "`{function}` 产生了 NaN 梯度",
    },
    "numerics.nan.summary": {
        "en": "Anomaly detection stopped backward(): `{function}` returned NaN in its output {output}.",
        "zh": "异常检测中止了 backward()：`{function}` 的第 {output} 个输出中含有 NaN。",
    },
    "numerics.nan.what": {
        "en": "The gradient of the op on line {lineno} came out as NaN while backward() on line {backward} "
              "ran through it. Without the check, the NaN would have reached .grad and the next optimizer "
              "step would have turned the weights into NaN.",
        "zh": "第 {backward} 行的 backward() 经过第 {lineno} 行的运算时，算出的梯度是 NaN。如果没有这项"
              "检查，NaN 会进入 .grad，下一次优化器 step 就会把权重变成 NaN。",
    },
    "numerics.nan.what_op": {
        "en": "The gradient of the op on line {lineno} came out as NaN.",
        "zh": "第 {lineno} 行的运算算出的梯度是 NaN。",
    },
    "numerics.nan.what_backward": {
        "en": "backward() on line {backward} ran through it; without the check, the NaN would have reached "
              ".grad and the next optimizer step would have turned the weights into NaN.",
        "zh": "当时第 {backward} 行的 backward() 正经过它；如果没有这项检查，NaN 会进入 .grad，下一次优化器 "
              "step 就会把权重变成 NaN。",
    },
    "numerics.nan.what_no_line": {
        "en": "The gradient computed by `{function}` came out as NaN while backward() on line {backward} ran. "
              "Without the check, the NaN would have reached .grad and then the weights.",
        "zh": "第 {backward} 行的 backward() 运行时，`{function}` 算出的梯度是 NaN。如果没有这项检查，"
              "NaN 会进入 .grad，进而污染权重。",
    },
    "numerics.nan.why": {
        "en": "`{function}` computes the gradient of one forward op. It gives NaN when that op's derivative "
              "is undefined or infinite at its input, usually at 0, and the infinity then meets a 0. "
              "Examples: 0 * inf, inf - inf, 0 / 0.",
        "zh": "`{function}` 负责计算某个前向运算的梯度。当该运算在输入处的导数无定义或为无穷大（通常在 0 处），"
              "而这个无穷大又遇到了 0 时，结果就是 NaN。例如 0 * inf、inf - inf、0 / 0。",
    },
    "numerics.nan.cause.sqrt": {
        "en": "Here it is a square root: d/dx sqrt(x) = 1 / (2 sqrt(x)) is infinite at x = 0 (a distance "
              "or a norm of two equal points). Keep its input away from 0 with a small epsilon.",
        "zh": "这里是平方根：d/dx sqrt(x) = 1 / (2 sqrt(x)) 在 x = 0 处为无穷大（例如两个相同点的距离或范数）。"
              "给它的输入加一个很小的 epsilon，使其离开 0。",
    },
    "numerics.nan.cause.log": {
        "en": "Here it is a logarithm: d/dx log(x) = 1 / x is infinite at x = 0 (a probability that "
              "underflowed to 0). Clamp its input to a small positive minimum, or use a log-space function "
              "such as log_softmax.",
        "zh": "这里是对数：d/dx log(x) = 1 / x 在 x = 0 处为无穷大（例如下溢为 0 的概率）。把输入限制在一个"
              "很小的正数之上，或改用 log_softmax 这类在对数空间中计算的函数。",
    },
    "numerics.nan.cause.div": {
        "en": "Here it is a division: the gradient of a / b is -a / b² with respect to b, 0 / 0 when both "
              "are 0. Add a small epsilon to the denominator.",
        "zh": "这里是除法：a / b 对 b 的梯度是 -a / b²，当两者都为 0 时就是 0 / 0。给分母加一个很小的 epsilon。",
    },
    "numerics.nan.cause.pow": {
        "en": "Here it is a power: a fractional exponent (x ** 0.5) has an infinite gradient at 0. Also, "
              "x ** 2 passes on a 0 * inf when a square root of it follows (a norm of a zero vector).",
        "zh": "这里是幂运算：分数指数（x ** 0.5）在 0 处梯度为无穷大。x ** 2 后面再接平方根时（零向量的范数），"
              "会出现 0 * inf。",
    },
    "numerics.nan.cause.exp": {
        "en": "Here it is an exponential: exp overflows to inf for inputs above about 88 (float32), and "
              "inf then meets a 0 or another inf. Subtract the maximum first (the log-sum-exp trick) or use "
              "torch.logsumexp / softmax.",
        "zh": "这里是指数：float32 下输入超过约 88 时 exp 会溢出为 inf，随后与 0 或另一个 inf 相遇。先减去最大值"
              "（log-sum-exp 技巧），或使用 torch.logsumexp / softmax。",
    },
    "numerics.nan.cause.norm": {
        "en": "Here it is a norm: its gradient x / ||x|| is 0 / 0 for a zero vector. Add a small epsilon "
              "(or compute sqrt(sum(x ** 2) + eps) yourself).",
        "zh": "这里是范数：它的梯度 x / ||x|| 对零向量来说是 0 / 0。加一个很小的 epsilon"
              "（或自己计算 sqrt(sum(x ** 2) + eps)）。",
    },
    "numerics.nan.cause.other": {
        "en": "The usual causes: sqrt or log at 0, a division by 0, a fractional power at 0, or exp "
              "overflowing to inf.",
        "zh": "常见原因：在 0 处求 sqrt 或 log、除以 0、在 0 处求分数次幂，或 exp 溢出为 inf。",
    },
    "numerics.nan.why_no_fix": {
        "en": "The op on that line is not one clear `torch.sqrt(...)`, `torch.log(...)` or `a / b`, so the "
              "edit is left to you. Add the epsilon or the clamp at that op.",
        "zh": "该行的运算不是唯一且明确的 `torch.sqrt(...)`、`torch.log(...)` 或 `a / b`，所以修改留给你。"
              "在该运算处加上 epsilon 或 clamp。",
    },
    "numerics.nan.why_no_fix_exp": {
        "en": "A value divided on that line comes from the exp on line {lineno} (inf / inf, which an epsilon "
              "does not cure). So the edit is left to you.",
        "zh": "该行参与除法的值来自第 {lineno} 行的 exp（inf / inf，加 epsilon 无法解决）。所以修改留给你。",
    },
    "numerics.nan.why_no_line": {
        "en": "The forward call is not in this cell (anomaly mode's traceback names none of its lines), so "
              "there is no line to edit here.",
        "zh": "前向调用不在本单元格中（异常检测给出的回溯没有指向本单元格的任何一行），所以这里没有可以修改的行。",
    },
    "numerics.nan.fix_sqrt": {
        "en": "`{new}` inside the square root on line {lineno}, so its input never reaches 0",
        "zh": "把第 {lineno} 行平方根的输入改为 `{new}`，使其永远不会为 0",
    },
    "numerics.nan.fix_log": {
        "en": "`{new}` inside the log on line {lineno}, so its input never reaches 0",
        "zh": "把第 {lineno} 行对数的输入改为 `{new}`，使其永远不会为 0",
    },
    "numerics.nan.fix_div": {
        "en": "`{new}` as the denominator on line {lineno}, so it is never 0",
        "zh": "把第 {lineno} 行的分母改为 `{new}`，使其永远不会为 0",
    },
    # -- nan-gradients (no NaN check: --fast, %gradcheck on) --
    "numerics.nan_grads.title": {
        "en": "{names} got NaN gradients",
        "zh": "{names} 的梯度中出现了 NaN",
    },
    "numerics.nan_grads.summary": {
        "en": "At the end of the cell the gradients of {count} tensor(s) hold NaN, and nothing stopped: this run "
              "had no NaN check in backward (--fast, %gradcheck on, --no-nan-check).",
        "zh": "单元格结束时有 {count} 个张量的梯度含有 NaN，但运行没有被中止：本次运行的反向传播没有 NaN 检查"
              "（--fast、%gradcheck on 或 --no-nan-check）。",
    },
    "numerics.nan_grads.what": {
        "en": "backward() wrote NaN into the .grad of {names}. Without anomaly mode's NaN check torch raises no "
              "error. An optimizer step on them turns those weights into NaN, and every loss computed with them.",
        "zh": "backward() 把 NaN 写进了 {names} 的 .grad。没有异常检测的 NaN 检查，torch 不会报错。对它们做一次优化器"
              "更新就会把这些权重变成 NaN，之后用它们算出的每个损失也都会是 NaN。",
    },
    "numerics.nan_grads.why": {
        "en": "A backward function returns NaN when its forward op's derivative is undefined or infinite at its "
              "input. Examples: a square root or a log at 0, 0 / 0, an exp that overflowed. Which op it was is not known "
              "in this run. Run the cell under `%%gradcheck` (full anomaly mode): backward() then stops at that "
              "op, and the card names its forward line and a fix.",
        "zh": "当前向运算的导数在其输入处无定义或为无穷大时，对应的反向"
              "函数就会返回 NaN。例如 0 处的平方根或对数、0 / 0、溢出的 exp。本次运行无法得知是哪个运算。用 `%%gradcheck`（完整的异常检测模式）重新运行该单元格，"
              "backward() 会停在那个运算上，卡片会指出它的前向代码行并给出修复。",
    },
    "numerics.nan_grads.unnamed": {
        "en": "a tensor of shape {shape}",
        "zh": "一个形状为 {shape} 的张量",
    },
    "numerics.nan_grads.more": {
        "en": " and {count} more",
        "zh": " 等另外 {count} 个",
    },
}
