"""`%grad_device` through the shell at 1k, 10k and 100k tensors (each namespace also holds a 100-layer
model with gradients and its Adam optimizer), sizes interleaved round by round.

- `magic_ms` (the figure): `%grad_device` as a line magic -> the DeviceReport (the walk and the report).
- `cell_ms`: the cell `%grad_device` as the user runs it, also rendering the report it displays.
A full collection runs (untimed) before each timed call: all three namespaces stay alive for the whole
run, and a collection their garbage makes due would otherwise land in whichever size comes next.
Each namespace mixes the shapes a notebook has: half the tensors as top-level names, a quarter in a
list, a quarter in a dict of dicts, every 10th name a view of another; plus `model`, an nn.Sequential of
100 Linear layers (200 parameters) with gradients, and its Adam optimizer after one step.
(Folded in from the earlier bench/bench_devices.py, which timed `build_report` alone.)
"""
from __future__ import annotations

import gc
from typing import Any, Dict, List

import torch

from common import log, run_cell, summary, timed, timed_cpu

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (10, 100)


def model_and_optimizer(layers: int) -> Dict[str, object]:
    model = torch.nn.Sequential(*[torch.nn.Linear(16, 16) for _ in range(layers)])
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.randn(2, 16)).sum().backward()
    optimizer.step()
    return {"model": model, "optimizer": optimizer}


def namespace(n: int, layers: int) -> Dict[str, object]:
    """`n` tensors (besides the model's) spread over names, a list and a dict of dicts."""
    ns: Dict[str, object] = {}
    quarter = n // 4
    names = n - 2 * quarter
    for i in range(names):
        base = ns.get(f"t{i - 1}") if i % 10 == 9 else None
        ns[f"t{i}"] = base[1:] if base is not None else torch.zeros(4)  # every 10th a view
    ns["batches"] = [torch.zeros(3) for _ in range(quarter)]
    groups = [range(start, min(quarter, start + 100)) for start in range(0, quarter, 100)]
    ns["features"] = {f"group{g}": {f"f{i}": torch.zeros(2) for i in group} for g, group in enumerate(groups)}
    ns.update(model_and_optimizer(layers))
    return ns


def _swap_in(shell: Any, base: Dict[str, Any], ns: Dict[str, Any]) -> None:
    shell.user_ns.clear()
    shell.user_ns.update(base)
    shell.user_ns.update(ns)


def measure(shell: Any, quick: bool, repeats: int) -> Dict[str, Any]:
    layers = 10 if quick else 100
    sizes = QUICK_SIZES if quick else SIZES
    spaces = {n: namespace(n, layers) for n in sizes}
    base = dict(shell.user_ns)
    rows = {}
    magic: Dict[int, List[float]] = {n: [] for n in sizes}
    cell: Dict[int, List[float]] = {n: [] for n in sizes}
    magic_cpu: Dict[int, List[float]] = {n: [] for n in sizes}
    try:
        for n in sizes:  # warm-up, and the row count
            _swap_in(shell, base, spaces[n])
            rows[n] = len(shell.run_line_magic("grad_device", "").rows)
        for _ in range(repeats):
            for n in sizes:  # NB: interleaved: 1k 10k 100k, 1k 10k 100k, ...
                _swap_in(shell, base, spaces[n])
                gc.collect()  # NB: not timed: the garbage the last size's report left is the bench's own
                wall, cpu = timed_cpu(lambda: shell.run_line_magic("grad_device", ""))
                magic[n].append(1000 * wall)
                magic_cpu[n].append(1000 * cpu)
                cell[n].append(1000 * timed(lambda: run_cell(shell, "%grad_device")))
    finally:
        _swap_in(shell, base, {})
    results = {}
    for n in sizes:
        m = summary(magic[n])
        results[str(n)] = {"tensors": n, "model_layers": layers, "rows": rows[n], "magic_ms": m,
                           "magic_cpu_ms": summary(magic_cpu[n]),
                           "cell_ms": summary(cell[n]), "ms_per_1k_tensors": 1000 * m["median"] / n,
                           "us_per_row": 1000 * m["median"] / rows[n]}
        log(f"  %grad_device {n:>7,} tensors ({rows[n]:>7,} rows): magic {m['median']:8.1f} ms (CPU {results[str(n)]['magic_cpu_ms']['median']:8.1f})  "
            f"cell {results[str(n)]['cell_ms']['median']:8.1f} ms  "
            f"{results[str(n)]['ms_per_1k_tensors']:.2f} ms/1k")
    return results
