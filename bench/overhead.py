"""Healthy-cell overhead: one training cell run plain, under `detect_anomaly()`, `%%gradcheck`,
`%%gradcheck --fast` and with `%gradcheck on` (always-on), round by round in one IPython shell.

Each workload is a setup cell (model, optimizer, data; run once, plain) and a loop cell (timed). The
loop cell is the same text in every variant; only its wrapping changes (always-on: the same text as plain,
with `%gradcheck on` run before it and `%gradcheck off` after, both untimed). The "compiled" workload's
model is `torch.compile`d in its setup (inductor), so the rounds time the compiled code, not the compile;
`compile_time` times the compile itself (dynamo + AOT autograd, backend="aot_eager": what a tracker can
slow down; inductor's code generation does not see it) plain, --fast and always-on.
"""
from __future__ import annotations

import textwrap
from typing import Any, Dict, List

from common import check_ran, log, ratio_summary, run_cell, summary, timed_cpu

VARIANTS = ("plain", "detect_anomaly", "gradcheck", "gradcheck_fast", "always_on")
ORDER = ("always_on", "plain", "gradcheck_fast", "detect_anomaly", "gradcheck")  # each ratio's pair adjacent
ALWAYS_ON, ALWAYS_OFF = "%gradcheck on\n", "%gradcheck off\n"

# NB: sizes chosen so that the plain loop takes ~0.2-0.5 s on an idle 2-core CPU with 1 torch thread: a
# training cell, not a single step (a watched cell's own cost, whatever it runs, is `fixed_cost`'s figure).
FULL = {"mlp": {"steps": 200, "width": 256, "batch": 64},
        "cnn": {"steps": 50, "channels": 16, "batch": 16},
        "lstm": {"steps": 80, "hidden": 64, "seq": 24, "batch": 16},
        "transformer": {"steps": 50, "d_model": 64, "seq": 32, "batch": 16},
        "compiled": {"steps": 200, "width": 256, "batch": 64, "backend": "inductor"}}
QUICK = {"mlp": {"steps": 2, "width": 8, "batch": 2},
         "cnn": {"steps": 1, "channels": 2, "batch": 1},
         "lstm": {"steps": 1, "hidden": 4, "seq": 2, "batch": 1},
        "transformer": {"steps": 1, "d_model": 8, "seq": 2, "batch": 1},
        "compiled": {"steps": 2, "width": 8, "batch": 2, "backend": "aot_eager"}}  # NB: inductor: ~40 s cold

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
    "transformer": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        block = nn.TransformerEncoderLayer({d_model}, nhead=4, dim_feedforward=2 * {d_model}, batch_first=True
                                           ).to(device)
        head = nn.Linear({d_model}, 10).to(device)
        optimizer = torch.optim.AdamW([*block.parameters(), *head.parameters()], lr=1e-3)
        criterion = nn.CrossEntropyLoss()
        batches = [(torch.randn({batch}, {seq}, {d_model}, device=device),
                    torch.randint(0, 10, ({batch},), device=device)) for _ in range(4)]
        """,
    "compiled": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = torch.compile(nn.Sequential(nn.Linear(784, {width}), nn.ReLU(), nn.Linear({width}, {width}),
                                            nn.ReLU(), nn.Linear({width}, 10)).to(device), backend="{backend}")
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        criterion = nn.CrossEntropyLoss()
        batches = [(torch.randn({batch}, 784, device=device), torch.randint(0, 10, ({batch},), device=device))
                   for _ in range(8)]
        criterion(model(batches[0][0]), batches[0][1]).backward()  # NB: compiled here, not in the rounds
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
    "transformer": """
        for step in range({steps}):
            x, y = batches[step % len(batches)]
            optimizer.zero_grad()
            loss = criterion(head(block(x).mean(dim=1)), y)
            loss.backward()
            optimizer.step()
        """,
}
LOOP["compiled"] = LOOP["mlp"]


def cells(workload: str, sizes: Dict[str, int], device: str) -> Dict[str, str]:
    """The loop cell in each variant; a cuda run waits for the device before the cell ends."""
    body = textwrap.dedent(LOOP[workload]).strip().format(**sizes) + "\n"
    if device.startswith("cuda"):
        body += "torch.cuda.synchronize()\n"
    return {"plain": body,
            "detect_anomaly": "with torch.autograd.detect_anomaly():\n" + textwrap.indent(body, "    "),
            "gradcheck": "%%gradcheck\n" + body,
            "gradcheck_fast": "%%gradcheck --fast\n" + body,
            "always_on": body}


def timed_variant(shell: Any, name: str, cell: str) -> Any:
    """Wall and CPU seconds of one run of the variant's cell (always-on switched on and off around it)."""
    if name == "always_on":
        check_ran(run_cell(shell, ALWAYS_ON), "%gradcheck on")
    try:
        return timed_cpu(lambda: check_ran(run_cell(shell, cell), name))
    finally:
        if name == "always_on":
            run_cell(shell, ALWAYS_OFF)


def measure_workload(shell: Any, workload: str, sizes: Dict[str, int], device: str,
                     repeats: int) -> Dict[str, Any]:
    shell.user_ns["device"] = device
    setup = textwrap.dedent(SETUP[workload]).strip().format(**sizes)
    check_ran(run_cell(shell, setup), f"{workload} setup")
    variants = cells(workload, sizes, device)
    for name, cell in variants.items():  # warm-up round, not counted (first-call costs, caches)
        timed_variant(shell, name, cell)
    times: Dict[str, List[float]] = {v: [] for v in VARIANTS}
    cpu: Dict[str, List[float]] = {v: [] for v in VARIANTS}
    for round_ in range(repeats):
        # NB: interleaved, each ratio's two variants side by side, the order reversed every other round
        # (plain fast anomaly gradcheck, gradcheck anomaly fast plain, ...): this machine's speed drifts
        # within seconds, and a drift then hits both sides of a ratio alike.
        for name in ORDER if round_ % 2 == 0 else ORDER[::-1]:
            wall, used = timed_variant(shell, name, variants[name])
            times[name].append(wall)
            cpu[name].append(used)
    result = {"sizes": sizes,
              "seconds": {v: summary(t) for v, t in times.items()},
              "gradcheck_over_detect_anomaly": ratio_summary(times["gradcheck"], times["detect_anomaly"]),
              "fast_over_plain": ratio_summary(times["gradcheck_fast"], times["plain"]),
              "always_on_over_plain": ratio_summary(times["always_on"], times["plain"]),
              "detect_anomaly_over_plain": ratio_summary(times["detect_anomaly"], times["plain"]),
              "gradcheck_over_plain": ratio_summary(times["gradcheck"], times["plain"]),
              "cpu_seconds": {v: summary(t) for v, t in cpu.items()},
              "cpu_gradcheck_over_detect_anomaly": ratio_summary(cpu["gradcheck"], cpu["detect_anomaly"]),
              "cpu_fast_over_plain": ratio_summary(cpu["gradcheck_fast"], cpu["plain"]),
              "cpu_always_on_over_plain": ratio_summary(cpu["always_on"], cpu["plain"])}
    log(f"  {device} {workload:11s} plain {result['seconds']['plain']['median'] * 1000:7.1f} ms   "
        f"gradcheck/anomaly {result['gradcheck_over_detect_anomaly']['median']:.3f}   "
        f"fast/plain {result['fast_over_plain']['median']:.3f}   "
        f"always-on/plain {result['always_on_over_plain']['median']:.3f}   (CPU time: "
        f"{result['cpu_gradcheck_over_detect_anomaly']['median']:.3f}, {result['cpu_fast_over_plain']['median']:.3f}, "
        f"{result['cpu_always_on_over_plain']['median']:.3f})")
    return result


def measure(shell: Any, quick: bool, repeats: int, device: str = "cpu") -> Dict[str, Any]:
    return {w: measure_workload(shell, w, sizes, device, repeats)
            for w, sizes in (QUICK if quick else FULL).items()}


FIXED_VARIANTS = ("always_on", "plain", "gradcheck_fast")
FIXED_CELL = "y = (batches[0][0] * 2).sum()\n"  # NB: one torch op, no step: what a watched cell costs by itself


def fixed_cost(shell: Any, quick: bool, repeats: int) -> Dict[str, Any]:
    """Milliseconds a watched cell costs whatever it runs (hooks on and off, the end-of-cell checks): a cell of
    one torch op, always-on and --fast minus plain, round by round. Run after `measure` (its `batches`)."""
    cells = {"plain": FIXED_CELL, "gradcheck_fast": "%%gradcheck --fast\n" + FIXED_CELL, "always_on": FIXED_CELL}
    for name in FIXED_VARIANTS:
        timed_variant(shell, name, cells[name])
    times: Dict[str, List[float]] = {v: [] for v in FIXED_VARIANTS}
    for round_ in range(3 if quick else 5 * repeats):
        for name in FIXED_VARIANTS if round_ % 2 == 0 else FIXED_VARIANTS[::-1]:
            times[name].append(timed_variant(shell, name, cells[name])[0])
    result = {"seconds": {v: summary(t) for v, t in times.items()},
              "always_on_minus_plain_ms": summary([1000 * (a - b) for a, b in zip(times["always_on"], times["plain"])]),
              "fast_minus_plain_ms": summary([1000 * (a - b) for a, b in zip(times["gradcheck_fast"], times["plain"])])}
    log(f"  fixed cost of a watched cell: always-on {result['always_on_minus_plain_ms']['median']:.2f} ms, "
        f"--fast {result['fast_minus_plain_ms']['median']:.2f} ms")
    return result


COMPILE_VARIANTS = ("always_on", "plain", "gradcheck_fast")
COMPILE_CELL = """
torch._dynamo.reset()
fresh = torch.compile(net, backend="aot_eager")
fresh(probe).sum().backward()
"""


def compile_time(shell: Any, quick: bool, repeats: int) -> Dict[str, Any]:
    """The compile of a small MLP (dynamo + AOT autograd) inside a cell, plain / --fast / always-on."""
    width = 8 if quick else 256
    check_ran(run_cell(shell, "import torch\ntorch.manual_seed(0)\n"
                              f"net = torch.nn.Sequential(torch.nn.Linear(784, {width}), torch.nn.ReLU(inplace=True), "
                              f"torch.nn.Linear({width}, 10))\nprobe = torch.randn(4, 784)\n"), "compile setup")
    body = COMPILE_CELL.lstrip()
    cells = {"plain": body, "gradcheck_fast": "%%gradcheck --fast\n" + body, "always_on": body}
    for name in COMPILE_VARIANTS:
        timed_variant(shell, name, cells[name])
    times: Dict[str, List[float]] = {v: [] for v in COMPILE_VARIANTS}
    for round_ in range(1 if quick else repeats):
        for name in COMPILE_VARIANTS if round_ % 2 == 0 else COMPILE_VARIANTS[::-1]:
            times[name].append(timed_variant(shell, name, cells[name])[0])
    run_cell(shell, "torch._dynamo.reset()\n")
    result = {"seconds": {v: summary(t) for v, t in times.items()},
              "fast_over_plain": ratio_summary(times["gradcheck_fast"], times["plain"]),
              "always_on_over_plain": ratio_summary(times["always_on"], times["plain"])}
    log(f"  compile (aot_eager) plain {result['seconds']['plain']['median'] * 1000:7.1f} ms   "
        f"fast/plain {result['fast_over_plain']['median']:.3f}   "
        f"always-on/plain {result['always_on_over_plain']['median']:.3f}")
    return result
