"""Always-on at tutorial scale (issue 36): the small models people train in notebooks, where the fixed cost of
each optimizer step decides the ratio. Each workload's loop cell runs plain and with `%gradcheck on`, round by
round in one IPython shell (the order reversed every other round); the figures are the ratio of the two and the
microseconds always-on adds per optimizer step (the cell's own fixed cost spread over its steps included).

The cell's own fixed cost (the capture put on and taken off, the end-of-cell rules) and the first looks are spread
over its steps; what a step adds between looks (the issue's <= 10 us) is measured apart, on the two smaller MLPs: the
same loop with three times the steps runs in the same rounds, and the difference of the two cells' added times over
the difference of their steps is the marginal cost of a step (its later looks, every 64th step, included).

The MLPs are the issue's table (3 layers on 784 inputs, SGD with momentum): width 64 / batch 32 and width
256 / batch 128 with 150 steps, width 1024 / batch 256 with fewer (each of its steps takes ~25 ms). A tiny GRU
(Adam) and a tiny CNN (BatchNorm, Adam) stand for the other tutorial loops.
"""
from __future__ import annotations

import textwrap
from typing import Any, Dict, List

from common import check_ran, log, ratio_summary, run_cell, summary, timed_cpu
from overhead import ALWAYS_OFF, ALWAYS_ON

VARIANTS = ("plain", "always_on")
FULL = {"mlp64": {"steps": 150, "width": 64, "batch": 32},
        "mlp256": {"steps": 150, "width": 256, "batch": 128},
        "mlp1024": {"steps": 20, "width": 1024, "batch": 256},
        "gru": {"steps": 150, "hidden": 32, "seq": 12, "batch": 16},
        "cnn": {"steps": 150, "channels": 8, "batch": 16}}
QUICK = {"mlp64": {"steps": 2, "width": 8, "batch": 2},
         "mlp256": {"steps": 2, "width": 8, "batch": 2},
         "mlp1024": {"steps": 1, "width": 8, "batch": 2},
         "gru": {"steps": 2, "hidden": 4, "seq": 2, "batch": 1},
         "cnn": {"steps": 1, "channels": 2, "batch": 1}}
TARGETS = {"mlp64": 1.05, "mlp256": 1.02}  # always-on / plain (issue 36)
LONGER = {"mlp64": 3, "mlp256": 3}  # the longer cell's steps, in multiples of the cell's: a step's marginal cost

MLP = """
    import torch
    from torch import nn
    torch.manual_seed(0)
    tiny = nn.Sequential(nn.Linear(784, {width}), nn.ReLU(), nn.Linear({width}, {width}), nn.ReLU(),
                         nn.Linear({width}, 10)).to(device)
    tiny_opt = torch.optim.SGD(tiny.parameters(), lr=0.01, momentum=0.9)
    tiny_loss = nn.CrossEntropyLoss()
    tiny_batches = [(torch.randn({batch}, 784, device=device), torch.randint(0, 10, ({batch},), device=device))
                    for _ in range(8)]
    """
SETUP = {
    "mlp": MLP,
    "gru": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class TinyGRU(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(8, {hidden}, batch_first=True)
                self.head = nn.Linear({hidden}, 1)
            def forward(self, x):
                out, _ = self.gru(x)
                return self.head(out[:, -1])
        tiny = TinyGRU().to(device)
        tiny_opt = torch.optim.Adam(tiny.parameters(), lr=1e-3)
        tiny_loss = nn.MSELoss()
        tiny_batches = [(torch.randn({batch}, {seq}, 8, device=device), torch.randn({batch}, 1, device=device))
                        for _ in range(4)]
        """,
    "cnn": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        tiny = nn.Sequential(nn.Conv2d(1, {channels}, 3, padding=1), nn.BatchNorm2d({channels}), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Conv2d({channels}, {channels}, 3, padding=1), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(4 * {channels}, 10)).to(device)
        tiny_opt = torch.optim.Adam(tiny.parameters(), lr=1e-3)
        tiny_loss = nn.CrossEntropyLoss()
        tiny_batches = [(torch.randn({batch}, 1, 28, 28, device=device),
                         torch.randint(0, 10, ({batch},), device=device)) for _ in range(4)]
        """,
}

LOOP = """
    for step in range({steps}):
        x, y = tiny_batches[step % len(tiny_batches)]
        tiny_opt.zero_grad()
        loss = tiny_loss(tiny(x), y)
        loss.backward()
        tiny_opt.step()
    """


def _cell(workload: str, sizes: Dict[str, int], device: str) -> str:
    body = textwrap.dedent(LOOP).strip().format(**sizes) + "\n"
    return body + ("torch.cuda.synchronize()\n" if device.startswith("cuda") else "")


def _timed(shell: Any, name: str, cell: str) -> Any:
    if name == "always_on":
        check_ran(run_cell(shell, ALWAYS_ON), "%gradcheck on")
    try:
        return timed_cpu(lambda: check_ran(run_cell(shell, cell), name))
    finally:
        if name == "always_on":
            run_cell(shell, ALWAYS_OFF)


def measure_workload(shell: Any, workload: str, sizes: Dict[str, int], device: str, repeats: int) -> Dict[str, Any]:
    shell.user_ns["device"] = device
    setup = SETUP["mlp" if workload.startswith("mlp") else workload]
    check_ran(run_cell(shell, textwrap.dedent(setup).strip().format(**sizes)), f"{workload} setup")
    cell = _cell(workload, sizes, device)
    longer = sizes["steps"] * LONGER.get(workload, 0)
    long_cell = _cell(workload, {**sizes, "steps": longer}, device) if longer else None
    for name in VARIANTS:  # NB: warm-up, not counted
        _timed(shell, name, cell)
    times: Dict[str, List[float]] = {v: [] for v in VARIANTS}
    cpu: Dict[str, List[float]] = {v: [] for v in VARIANTS}
    long_times: Dict[str, List[float]] = {v: [] for v in VARIANTS}
    for round_ in range(repeats):
        order = VARIANTS if round_ % 2 == 0 else VARIANTS[::-1]
        for name in order:
            wall, used = _timed(shell, name, cell)
            times[name].append(wall)
            cpu[name].append(used)
        for name in order if long_cell is not None else ():
            long_times[name].append(_timed(shell, name, long_cell)[0])
    steps = sizes["steps"]
    per_step = [1e6 * (a - p) / steps for a, p in zip(times["always_on"], times["plain"])]
    cpu_per_step = [1e6 * (a - p) / steps for a, p in zip(cpu["always_on"], cpu["plain"])]
    result = {"sizes": sizes,
              "seconds": {v: summary(t) for v, t in times.items()},
              "plain_ms_per_step": 1000 * summary(times["plain"])["median"] / steps,
              "always_on_over_plain": ratio_summary(times["always_on"], times["plain"]),
              "added_us_per_step": summary(per_step),
              "cpu_seconds": {v: summary(t) for v, t in cpu.items()},
              "cpu_always_on_over_plain": ratio_summary(cpu["always_on"], cpu["plain"]),
              "cpu_added_us_per_step": summary(cpu_per_step)}
    if long_cell is not None:
        # NB: round by round, (the longer cell's added time - the cell's) / the steps between them
        marginal = [1e6 * ((la - lp) - (a - p)) / (longer - steps) for la, lp, a, p in
                    zip(long_times["always_on"], long_times["plain"], times["always_on"], times["plain"])]
        result["between_looks"] = {"steps": [steps, longer], "added_us_per_step": summary(marginal)}
    log(f"  {device} {workload:8s} plain {result['plain_ms_per_step']:7.3f} ms/step   "
        f"always-on/plain {result['always_on_over_plain']['median']:.3f}   "
        f"+{result['added_us_per_step']['median']:6.1f} us/step   (CPU time: "
        f"{result['cpu_always_on_over_plain']['median']:.3f}, +{result['cpu_added_us_per_step']['median']:.1f} us)" +
        (f"   a step between looks: +{result['between_looks']['added_us_per_step']['median']:.1f} us"
         if "between_looks" in result else ""))
    return result


def measure(shell: Any, quick: bool, repeats: int, device: str = "cpu") -> Dict[str, Any]:
    return {w: measure_workload(shell, w, sizes, device, repeats)
            for w, sizes in (QUICK if quick else FULL).items()}
