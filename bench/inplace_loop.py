"""A Python loop of in-place ops (issue 31): 100k `t[i % 8] = v` / `t.add_(1)` on a small tensor, the cell run plain,
with `%gradcheck on` and as `%%gradcheck --fast`, round by round in one IPython shell (the order reversed every other
round). Fast mode wraps each in-place entry point of torch, so here every op of the loop passes a wrapper: the
ratio is what a wrapper's call costs beside the op itself (target: always-on <= 1.5x plain). Full `%%gradcheck`
(a TorchFunctionMode that records every in-place op) is not timed here.
"""
from __future__ import annotations

from typing import Any, Dict, List

from common import check_ran, log, ratio_summary, run_cell, summary, timed_cpu
from overhead import ALWAYS_OFF, ALWAYS_ON

VARIANTS = ("plain", "always_on", "gradcheck_fast")
SETUP = "import torch\ninplace_t = torch.zeros(8)\ninplace_v = torch.tensor(1.0)\n"
LOOPS = {"setitem": "for i in range({ops}):\n    inplace_t[i % 8] = inplace_v\n",
         "add_": "for i in range({ops}):\n    inplace_t.add_(1)\n"}
FULL_OPS, QUICK_OPS = 100_000, 100
TARGET = 1.5  # always-on / plain (issue 31)


def _timed(shell: Any, name: str, cell: str) -> Any:
    if name == "always_on":
        check_ran(run_cell(shell, ALWAYS_ON), "%gradcheck on")
    try:
        text = "%%gradcheck --fast\n" + cell if name == "gradcheck_fast" else cell
        return timed_cpu(lambda: check_ran(run_cell(shell, text), name))
    finally:
        if name == "always_on":
            run_cell(shell, ALWAYS_OFF)


def measure_workload(shell: Any, workload: str, ops: int, repeats: int) -> Dict[str, Any]:
    check_ran(run_cell(shell, SETUP), "in-place loop setup")
    cell = LOOPS[workload].format(ops=ops)
    for name in VARIANTS:  # NB: warm-up, not counted
        _timed(shell, name, cell)
    times: Dict[str, List[float]] = {v: [] for v in VARIANTS}
    cpu: Dict[str, List[float]] = {v: [] for v in VARIANTS}
    for round_ in range(repeats):
        for name in VARIANTS if round_ % 2 == 0 else VARIANTS[::-1]:
            wall, used = _timed(shell, name, cell)
            times[name].append(wall)
            cpu[name].append(used)
    result = {"ops": ops,
              "seconds": {v: summary(t) for v, t in times.items()},
              "plain_us_per_op": 1e6 * summary(times["plain"])["median"] / ops,
              "always_on_over_plain": ratio_summary(times["always_on"], times["plain"]),
              "fast_over_plain": ratio_summary(times["gradcheck_fast"], times["plain"]),
              "cpu_always_on_over_plain": ratio_summary(cpu["always_on"], cpu["plain"]),
              "cpu_fast_over_plain": ratio_summary(cpu["gradcheck_fast"], cpu["plain"])}
    log(f"  cpu in-place {workload:8s} plain {result['plain_us_per_op']:6.2f} us/op   "
        f"always-on/plain {result['always_on_over_plain']['median']:.3f}   "
        f"fast/plain {result['fast_over_plain']['median']:.3f}   (CPU time: "
        f"{result['cpu_always_on_over_plain']['median']:.3f}, {result['cpu_fast_over_plain']['median']:.3f})")
    return result


def measure(shell: Any, quick: bool, repeats: int) -> Dict[str, Any]:
    ops = QUICK_OPS if quick else FULL_OPS
    return {w: measure_workload(shell, w, ops, repeats) for w in LOOPS}
