"""Messages of the distributed family (ddp-unused-parameters, no-process-group, sampler-epoch-not-set)."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- ddp-unused-parameters --
    "distributed.unused_title": {
        "en": "DistributedDataParallel found parameters that the loss never used",
        "zh": "DistributedDataParallel 发现了损失从未用到的参数",
    },
    "distributed.unused_summary": {
        "en": "No gradient reached {params} of `{model}`, so DDP was still waiting to reduce them when the next "
              "forward pass began.",
        "zh": "`{model}` 的 {params} 没有得到梯度，所以下一次前向计算开始时，DDP 还在等待归约它们。",
    },
    "distributed.indices": {
        "en": "the parameters at indices {indices}", "zh": "下标为 {indices} 的参数",
    },
    "distributed.unused_what": {
        "en": "Line {lineno} ran `{model}` again, and rank {rank} stopped: {params} got no gradient from the last "
              "backward().",
        "zh": "第 {lineno} 行再次运行了 `{model}`，进程 {rank} 停了下来：{params} 在上一次 backward() 中没有得到梯度。",
    },
    "distributed.unused_why": {
        "en": "DDP reduces every parameter's gradient across the ranks after backward(). A parameter that the "
              "loss does not use never gets one, and the reduction never finishes.",
        "zh": "DDP 在 backward() 之后跨进程归约每个参数的梯度。损失没有用到的参数永远得不到梯度，归约也就永远完成不了。",
    },
    "distributed.unused_why_fix": {
        "en": "With `find_unused_parameters=True` DDP looks for such parameters after each forward pass and "
              "reduces without them. Removing the unused layer also works, if nothing needs it.",
        "zh": "加上 `find_unused_parameters=True` 后，DDP 每次前向计算后都会找出这些参数，归约时跳过它们。"
              "如果没有地方需要那个未使用的层，删掉它也可以。",
    },
    "distributed.unused_why_no_fix": {
        "en": "Pass `find_unused_parameters=True` to `DistributedDataParallel(...)`, or remove the unused layer. "
              "The call could not be found here, so no fix is proposed.",
        "zh": "给 `DistributedDataParallel(...)` 传入 `find_unused_parameters=True`，或删掉未使用的层。"
              "这里找不到那个调用，因此不提供修复。",
    },
    "distributed.unused_fix": {
        "en": "pass `find_unused_parameters=True` to the DDP call on line {lineno}",
        "zh": "给第 {lineno} 行的 DDP 调用传入 `find_unused_parameters=True`",
    },
    # -- no-process-group --
    "distributed.no_group_title": {
        "en": "torch.distributed was used before `init_process_group()`",
        "zh": "在 `init_process_group()` 之前使用了 torch.distributed",
    },
    "distributed.no_group_summary": {
        "en": "A collective, DDP or a DistributedSampler needs the default process group, and none was made yet.",
        "zh": "集合通信、DDP 或 DistributedSampler 需要默认进程组，而它还没有被创建。",
    },
    "distributed.no_group_what": {
        "en": "Line {lineno} (`{code}`) asked torch.distributed for the default process group, and there was none.",
        "zh": "第 {lineno} 行（`{code}`）向 torch.distributed 要默认进程组，但它不存在。",
    },
    "distributed.no_group_why": {
        "en": "Each process must call `torch.distributed.init_process_group()` once before any distributed call.",
        "zh": "每个进程都必须在任何分布式调用之前调用一次 `torch.distributed.init_process_group()`。",
    },
    "distributed.no_group_launched": {
        "en": "torchrun started this process, so `init_process_group()` reads the rank and world size from the "
              "environment. Call it first, with \"gloo\" on CPUs or \"nccl\" on GPUs.",
        "zh": "这个进程由 torchrun 启动，`init_process_group()` 会从环境变量读取 rank 和进程总数。"
              "请先调用它，CPU 用 \"gloo\"，GPU 用 \"nccl\"。",
    },
    "distributed.no_group_not_launched": {
        "en": "No launcher set RANK and WORLD_SIZE here. Start the script with `torchrun --nproc_per_node N`, "
              "then call `init_process_group()` first.",
        "zh": "这里没有启动器设置 RANK 和 WORLD_SIZE。请用 `torchrun --nproc_per_node N` 启动脚本，"
              "然后先调用 `init_process_group()`。",
    },
    # -- sampler-epoch-not-set --
    "distributed.sampler_title": {
        "en": "`{name}` gave every epoch the same order: its `set_epoch()` was never called",
        "zh": "`{name}` 每个 epoch 给出的顺序都一样：从未调用它的 `set_epoch()`",
    },
    "distributed.sampler_summary": {
        "en": "`{name}` was read {count} times, always at epoch {epoch}, so it shuffled the data the same way "
              "each time.",
        "zh": "`{name}` 被读取了 {count} 次，每次都处于第 {epoch} 个 epoch，所以每次打乱的方式都一样。",
    },
    "distributed.sampler_what": {
        "en": "The loop on line {lineno} went through `{name}` {count} times, each time at epoch {epoch}.",
        "zh": "第 {lineno} 行的循环遍历了 `{name}` {count} 次，每次都处于第 {epoch} 个 epoch。",
    },
    "distributed.sampler_why": {
        "en": "A DistributedSampler seeds its shuffle with its seed plus its epoch, and only `set_epoch()` changes "
              "the epoch. Without it each rank sees the same samples in the same order every epoch.",
        "zh": "DistributedSampler 用种子加上 epoch 来打乱数据，而只有 `set_epoch()` 会改变 epoch。"
              "不调用它，每个进程在每个 epoch 都以相同顺序看到相同的样本。",
    },
    "distributed.sampler_why_fix": {
        "en": "Calling `{name}.set_epoch()` with the epoch number at the start of each epoch gives each epoch a new "
              "order, the same on every rank.",
        "zh": "在每个 epoch 开始时用 epoch 编号调用 `{name}.set_epoch()`，每个 epoch 就有新的顺序，且各进程一致。",
    },
    "distributed.sampler_why_no_fix": {
        "en": "Call `{name}.set_epoch(epoch)` at the start of each epoch. The epoch loop could not be found here, "
              "so no fix is proposed.",
        "zh": "请在每个 epoch 开始时调用 `{name}.set_epoch(epoch)`。这里找不到 epoch 循环，因此不提供修复。",
    },
    "distributed.sampler_fix": {
        "en": "call `{name}.set_epoch({epoch})` before the loop on line {lineno}",
        "zh": "在第 {lineno} 行的循环之前调用 `{name}.set_epoch({epoch})`",
    },
}
