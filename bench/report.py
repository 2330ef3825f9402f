"""The bench's results as a target list and a Markdown table (docs/BENCHMARKS.md shows the table)."""
from __future__ import annotations

from typing import Any, Dict, List

RATIO_TARGET = 1.10  # full %%gradcheck over detect_anomaly; a compile inside a tracked cell over a plain one
FAST_TARGET = 1.05  # --fast and always-on over plain (issue 17)
CARD_TARGET_MS = 50.0
DEVICE_10K_TARGET_MS = 100.0
LOAD_TARGET_MS = 150.0
TINY_TARGETS = {"mlp64": 1.05, "mlp256": 1.02}  # always-on / plain on the tutorial-sized models (issue 36)
STEP_TARGET_US = 10.0  # what always-on adds to a step between looks, whatever the model's size (issue 36)
INPLACE_LOOP_TARGET = 1.5  # always-on / plain on a Python loop of 100k in-place ops (issue 31)
LINEAR_SLACK = 1.5  # "linear": the cost per row at the largest size within 1.5x of the next size's


def _row(section: str, figure: str, stats: Dict[str, Any], target: float, unit: str,
         cpu: Dict[str, Any] | None = None) -> Dict[str, Any]:
    return {"section": section, "figure": figure, "median": stats["median"], "min": stats["min"],
            "max": stats["max"], "cpu_median": cpu["median"] if cpu else None, "target": target,
            "unit": unit, "met": stats["median"] <= target}


def _overhead_rows(overhead: Dict[str, Any], device: str) -> List[Dict[str, Any]]:
    rows = []
    for workload, r in overhead.items():
        plain_ms = 1000 * r["seconds"]["plain"]["median"]
        steps = r.get("sizes", {}).get("steps")
        name = f"{workload} ({device}, plain {plain_ms:.0f} ms" + (f", {steps} steps)" if steps else ")")
        rows.append(_row("overhead", f"{name}: %%gradcheck / detect_anomaly",
                         r["gradcheck_over_detect_anomaly"], RATIO_TARGET, "x",
                         r["cpu_gradcheck_over_detect_anomaly"]))
        rows.append(_row("overhead", f"{name}: --fast / plain", r["fast_over_plain"], FAST_TARGET, "x",
                         r["cpu_fast_over_plain"]))
        if "always_on_over_plain" in r:
            rows.append(_row("overhead", f"{name}: always-on / plain", r["always_on_over_plain"], FAST_TARGET,
                             "x", r["cpu_always_on_over_plain"]))
    return rows


def _tiny_rows(tiny: Dict[str, Any], device: str) -> List[Dict[str, Any]]:
    rows = []
    for workload, r in tiny.items():
        name = f"{workload} ({device}, {r['sizes']['steps']} steps, plain {r['plain_ms_per_step']:.3f} ms/step)"
        rows.append(_row("tiny steps", f"{name}: always-on / plain", r["always_on_over_plain"],
                         TINY_TARGETS.get(workload, float("inf")), "x", r["cpu_always_on_over_plain"]))
        rows.append(_row("tiny steps", f"{name}: always-on adds per step", r["added_us_per_step"], float("inf"),
                         "us", r["cpu_added_us_per_step"]))
        if "between_looks" in r:
            short, long_ = r["between_looks"]["steps"]
            rows.append(_row("tiny steps", f"{name}: always-on adds per step between looks (a {long_}-step cell "
                             f"minus a {short}-step one)", r["between_looks"]["added_us_per_step"], STEP_TARGET_US,
                             "us"))
    return rows


def _compile_rows(r: Dict[str, Any]) -> List[Dict[str, Any]]:
    plain_ms = 1000 * r["seconds"]["plain"]["median"]
    return [_row("compile", f"torch.compile of an MLP, aot_eager (plain {plain_ms:.0f} ms): {label} / plain",
                 r[key], RATIO_TARGET, "x") for label, key in (("--fast", "fast_over_plain"),
                                                               ("always-on", "always_on_over_plain"))]


def targets(results: Dict[str, Any]) -> List[Dict[str, Any]]:
    rows: List[Dict[str, Any]] = []
    for device, overhead in results["overhead"].items():
        rows += _overhead_rows(overhead, device)
    for device, tiny in results.get("tiny_steps", {}).items():
        rows += _tiny_rows(tiny, device)
    for device, loops in results.get("inplace_loop", {}).items():
        for workload, r in loops.items():
            name = f"{workload} ({device}, {r['ops']:,} ops, plain {r['plain_us_per_op']:.2f} us/op)"
            rows.append(_row("in-place loop", f"{name}: always-on / plain", r["always_on_over_plain"],
                             INPLACE_LOOP_TARGET, "x", r["cpu_always_on_over_plain"]))
            rows.append(_row("in-place loop", f"{name}: --fast / plain", r["fast_over_plain"], float("inf"), "x",
                             r["cpu_fast_over_plain"]))
    if "fixed_cost" in results:
        for label, key in (("always-on", "always_on_minus_plain_ms"), ("--fast", "fast_minus_plain_ms")):
            rows.append(_row("fixed cost", f"a watched cell of one torch op, no step: {label} minus plain",
                             results["fixed_cost"][key], float("inf"), "ms"))
    if "compile_time" in results:
        rows += _compile_rows(results["compile_time"])
    for kind, r in results.get("time_to_card", {"cases": {}})["cases"].items():
        rows.append(_row("time to card", f"{kind} ({r['cell_lines']} lines, {r['namespace_objects']:,} "
                         "objects)", r["diagnose_render_ms"], CARD_TARGET_MS, "ms",
                         r["diagnose_render_cpu_ms"]))
    sizes = list(results.get("grad_device", {}).values())
    for r in sizes:
        target = DEVICE_10K_TARGET_MS if r["tensors"] == 10_000 else float("inf")
        rows.append(_row("%grad_device", f"{r['tensors']:,} tensors + {r['model_layers']}-layer model "
                         f"({r['rows']:,} rows; {r['ms_per_1k_tensors']:.1f} ms/1k tensors, "
                         f"{r['us_per_row']:.1f} us/row)", r["magic_ms"], target, "ms",
                         r["magic_cpu_ms"]))
    if len(sizes) >= 2:
        growth = sizes[-1]["us_per_row"] / sizes[-2]["us_per_row"]
        rows.append(_row("%grad_device", "linear growth: us/row at the largest / at the next size",
                         {"median": growth, "min": growth, "max": growth}, LINEAR_SLACK, "x"))
    if "load" in results:
        rows.append(_row("load", "%load_ext grad_magic after import torch and IPython (the call, in a fresh "
                         "process)",
                         results["load"]["in_process_wall_ms"], LOAD_TARGET_MS, "ms",
                         results["load"]["in_process_cpu_ms"]))
    return rows


def _fmt(value: float, unit: str) -> str:
    if value == float("inf"):
        return "-"
    return f"{value:.2f}" if unit == "x" else f"{value:.1f}"


def _table(rows: List[Dict[str, Any]]) -> List[str]:
    lines = ["| Section | Figure | Median | Min – max | CPU median | Target | |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        unit = r["unit"]
        target = "-" if r["target"] == float("inf") else f"≤ {_fmt(r['target'], unit)} {unit}"
        cpu = "-" if r.get("cpu_median") is None else f"{_fmt(r['cpu_median'], unit)} {unit}"
        mark = "-" if r["target"] == float("inf") else ("met" if r["met"] else "**missed**")
        lines.append(f"| {r['section']} | {r['figure']} | {_fmt(r['median'], unit)} {unit} | "
                     f"{_fmt(r['min'], unit)} – {_fmt(r['max'], unit)} | {cpu} | {target} | {mark} |")
    return lines


def markdown(results: Dict[str, Any]) -> str:
    m, s = results["machine"], results["settings"]
    cuda = m["cuda"]["device"] + f" (CUDA {m['cuda']['version']})" if m["cuda"] else "none"
    head = [f"Machine: {m['cpu']}, {m['cores']} cores, torch.set_num_threads({m['torch_threads']}); "
            f"Python {m['python']}, torch {m['torch']}, IPython {m['ipython']}; CUDA: {cuda}; "
            f"grad_magic {m['grad_magic']}; load average {m['load_average_start']:.2f} at start, "
            f"{m['load_average_end']:.2f} at end.",
            f"{'Quick (smoke) run' if s['quick'] else 'Full run'}: median of {s['repeats']} interleaved "
            f"rounds per figure, min – max beside it; {results['seconds']:.0f} s in all. Time to card: "
            "engine.diagnose + render of all three formats on a RunRecord captured from a real %%gradcheck "
            "run (the failing cell minus the plain cell is in latest.json as a cross-check). Met / missed "
            "is judged on the wall-clock median; the CPU column is the bench process's CPU time (load: of "
            "load_ext inside its process), which other processes on a busy machine do not inflate.", ""]
    rows = [r for r in results["targets"] if "(cuda" not in r["figure"]]
    out = head + (_table(rows) if rows else [])
    gpu = [r for r in results["targets"] if "(cuda" in r["figure"]]
    if gpu:
        out += ([""] if rows else []) + [f"CUDA ({cuda}): the same workloads on cuda:0, each cell ending in "
                    "torch.cuda.synchronize().", ""] + _table(gpu)
    return "\n".join(out) + "\n"
