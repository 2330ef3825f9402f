"""Healthy-cell overhead: one training cell run plain, under `detect_anomaly()`, `%%gradcheck` and
`%%gradcheck --fast`, round by round in one IPython shell.

Each workload is a setup cell (model, optimizer, data; run once, plain) and a loop cell (timed). The
loop cell is the same text in every variant; only its wrapping changes.
"""
from __future__ import annotations

import textwrap
from typing import Any, Dict, List

from common import check_ran, log, ratio_summary, run_cell, summary, timed_cpu

VARIANTS = ("plain", "detect_anomaly", "gradcheck", "gradcheck_fast")
ORDER = ("plain", "gradcheck_fast", "detect_anomaly", "gradcheck")  # each ratio's pair adjacent

# NB: sizes chosen so that the plain loop takes ~0.2-0.5 s on an idle 2-core CPU with 1 torch thread.
FULL = {"mlp": {"steps": 100, "width": 256, "batch": 64},
        "cnn": {"steps": 6, "channels": 16, "batch": 16},
        "lstm": {"steps": 8, "hidden": 64, "seq": 24, "batch": 16}}
QUICK = {"mlp": {"steps": 2, "width": 8, "batch": 2},
         "cnn": {"steps": 1, "channels": 2, "batch": 1},
         "lstm": {"steps": 1, "hidden": 4, "seq": 2, "batch": 1}}

SETUP = {
    "mlp": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(784, {width}), nn.ReLU(), nn.Linear({width}, {width}), nn.ReLU(),
                              nn.Linear({width}, 10)).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        criterion = nn.CrossEntropyLoss()
        batches = [(torch.randn({batch}, 784, device=device), torch.randint(0, 10, ({batch},), device=device))
                   for _ in range(8)]
        """,
    "cnn": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, {channels}, 3, padding=1), nn.BatchNorm2d({channels}), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Conv2d({channels}, 2 * {channels}, 3, padding=1), nn.ReLU(),
                              nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(32 * {channels}, 10)).to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        criterion = nn.CrossEntropyLoss()
        batches = [(torch.randn({batch}, 3, 32, 32, device=device),
                    torch.randint(0, 10, ({batch},), device=device)) for _ in range(4)]
        """,
    "lstm": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        lstm = nn.LSTM(32, {hidden}, num_layers=2, batch_first=True).to(device)
        head = nn.Linear({hidden}, 1).to(device)
        optimizer = torch.optim.Adam([*lstm.parameters(), *head.parameters()], lr=1e-3)
        batches = [(torch.randn({batch}, {seq}, 32, device=device), torch.randn({batch}, 1, device=device))
                   for _ in range(4)]
        """,
}

LOOP = {
    "mlp": """
        for step in range({steps}):
            x, y = batches[step % len(batches)]
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        """,
    "cnn": """
        for step in range({steps}):
            x, y = batches[step % len(batches)]
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        """,
    "lstm": """
        for step in range({steps}):
            x, y = batches[step % len(batches)]
            optimizer.zero_grad()
            out, (h, c) = lstm(x)
            loss = ((head(out[:, -1]) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
        """,
}


def cells(workload: str, sizes: Dict[str, int], device: str) -> Dict[str, str]:
    """The loop cell in each variant; a cuda run waits for the device before the cell ends."""
    body = textwrap.dedent(LOOP[workload]).strip().format(**sizes) + "\n"
    if device.startswith("cuda"):
        body += "torch.cuda.synchronize()\n"
    return {"plain": body,
            "detect_anomaly": "with torch.autograd.detect_anomaly():\n" + textwrap.indent(body, "    "),
            "gradcheck": "%%gradcheck\n" + body,
            "gradcheck_fast": "%%gradcheck --fast\n" + body}


def measure_workload(shell: Any, workload: str, sizes: Dict[str, int], device: str,
                     repeats: int) -> Dict[str, Any]:
    shell.user_ns["device"] = device
    setup = textwrap.dedent(SETUP[workload]).strip().format(**sizes)
    check_ran(run_cell(shell, setup), f"{workload} setup")
    variants = cells(workload, sizes, device)
    for name, cell in variants.items():  # warm-up round, not counted (first-call costs, caches)
        check_ran(run_cell(shell, cell), f"{workload} {name}")
    times: Dict[str, List[float]] = {v: [] for v in VARIANTS}
    cpu: Dict[str, List[float]] = {v: [] for v in VARIANTS}
    for round_ in range(repeats):
        # NB: interleaved, each ratio's two variants side by side, the order reversed every other round
        # (plain fast anomaly gradcheck, gradcheck anomaly fast plain, ...): this machine's speed drifts
        # within seconds, and a drift then hits both sides of a ratio alike.
        for name in ORDER if round_ % 2 == 0 else ORDER[::-1]:
            wall, used = timed_cpu(lambda: run_cell(shell, variants[name]))
            times[name].append(wall)
            cpu[name].append(used)
    result = {"sizes": sizes,
              "seconds": {v: summary(t) for v, t in times.items()},
              "gradcheck_over_detect_anomaly": ratio_summary(times["gradcheck"], times["detect_anomaly"]),
              "fast_over_plain": ratio_summary(times["gradcheck_fast"], times["plain"]),
              "detect_anomaly_over_plain": ratio_summary(times["detect_anomaly"], times["plain"]),
              "gradcheck_over_plain": ratio_summary(times["gradcheck"], times["plain"]),
              "cpu_seconds": {v: summary(t) for v, t in cpu.items()},
              "cpu_gradcheck_over_detect_anomaly": ratio_summary(cpu["gradcheck"], cpu["detect_anomaly"]),
              "cpu_fast_over_plain": ratio_summary(cpu["gradcheck_fast"], cpu["plain"])}
    log(f"  {device} {workload:5s} plain {result['seconds']['plain']['median'] * 1000:7.1f} ms   "
        f"gradcheck/anomaly {result['gradcheck_over_detect_anomaly']['median']:.3f}   "
        f"fast/plain {result['fast_over_plain']['median']:.3f}   (CPU time: "
        f"{result['cpu_gradcheck_over_detect_anomaly']['median']:.3f}, {result['cpu_fast_over_plain']['median']:.3f})")
    return result


def measure(shell: Any, quick: bool, repeats: int, device: str = "cpu") -> Dict[str, Any]:
    return {w: measure_workload(shell, w, sizes, device, repeats)
            for w, sizes in (QUICK if quick else FULL).items()}
