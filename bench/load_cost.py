"""Load cost: `%load_ext grad_magic` on top of `import torch`, each run in a fresh `python -c`.

Two subprocesses per round, interleaved: the baseline imports torch and IPython and makes the shell;
the other does the same, then `%load_ext grad_magic`. The figure is the `load_ext` call timed inside
the second process (wall and CPU): exactly the cost on top of `import torch`. As a cross-check, the
difference of the two processes' CPU times (user + sys) and wall times, round by round; on this shared
machine those swing by ±100 ms between runs (two 2-5 s processes), too much for a 0.1 s figure. Module
bytecode is cached first, as an installed package has it (the quick smoke run skips that warm-up).
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Tuple

from common import ROOT, log, summary

PRELUDE = ("import time, torch, IPython\n"
           "from IPython.core.interactiveshell import InteractiveShell\n"
           "shell = InteractiveShell.instance()\n")
BASELINE = PRELUDE
LOADED = PRELUDE + ("start, cpu = time.perf_counter(), time.process_time()\n"
                    "shell.run_line_magic('load_ext', 'grad_magic')\n"
                    "print((time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000)\n")


def _run(code: str, cache: str, write_cache: bool = False) -> Tuple[float, float, str]:
    """Wall ms, CPU ms (user + sys) and stdout of one `python -c code`.

    NB: with the bytecode in `cache` (PYTHONPYCACHEPREFIX, outside the tree), as an installed package
    has it: where PYTHONDONTWRITEBYTECODE is set every import would otherwise compile its source anew.
    """
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONPYCACHEPREFIX=cache)
    if write_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=ROOT, check=True)
    wall = 1000 * (time.perf_counter() - start)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = 1000 * (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def measure(repeats: int, warm_up: bool = True) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="grad_magic_bench_pyc_") as cache:
        if warm_up:  # the files in the page cache, and every module's bytecode in `cache`
            _run(LOADED, cache, write_cache=True)
        result = _measure(repeats, cache)
    result["bytecode_cached"] = warm_up
    return result


def _measure(repeats: int, cache: str) -> Dict[str, Any]:
    runs: Dict[str, List[float]] = {k: [] for k in ("base_wall", "base_cpu", "wall", "cpu", "in_wall",
                                                    "in_cpu")}
    for _ in range(repeats):  # NB: interleaved: baseline, loaded, baseline, loaded, ...
        wall, cpu, _out = _run(BASELINE, cache)
        runs["base_wall"].append(wall)
        runs["base_cpu"].append(cpu)
        wall, cpu, out = _run(LOADED, cache)
        runs["wall"].append(wall)
        runs["cpu"].append(cpu)
        inside = out.strip().splitlines()[-1].split()
        runs["in_wall"].append(float(inside[0]))
        runs["in_cpu"].append(float(inside[1]))
    diff = lambda a, b: summary([y - x for x, y in zip(runs[a], runs[b])])  # noqa: E731
    result = {"load_ext_ms": diff("base_cpu", "cpu"), "load_ext_wall_ms": diff("base_wall", "wall"),
              "in_process_wall_ms": summary(runs["in_wall"]), "in_process_cpu_ms": summary(runs["in_cpu"]),
              "baseline_wall_ms": summary(runs["base_wall"]), "baseline_cpu_ms": summary(runs["base_cpu"])}
    log(f"  load: %load_ext {result['in_process_wall_ms']['median']:6.1f} ms in process "
        f"({result['in_process_cpu_ms']['median']:6.1f} ms CPU; cross-check: processes differ by "
        f"{result['load_ext_ms']['median']:6.1f} ms CPU, {result['load_ext_wall_ms']['median']:6.1f} ms wall; baseline "
        f"{result['baseline_wall_ms']['median']:6.0f} ms wall)")
    return result
