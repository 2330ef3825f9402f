"""The bytecodes grad_magic's own code runs per optimizer step of a tiny_steps cell under `%gradcheck on`: the
load-independent figure of docs/PERFORMANCE.md (time on a shared machine moves with its load; this does not).

    .venv/bin/python bench/bytecodes.py              # the width-64 MLP's 150-step cell
    .venv/bin/python bench/bytecodes.py --workload gru --by-function
    .venv/bin/python bench/bytecodes.py --marginal --by-function   # a step between looks

`sys.settrace` with opcode events; each opcode of a frame whose code lives in grad_magic/ is counted under the
outermost grad_magic function on the stack (the step pre-hook, a wrapper, the cell's start or end). The cell runs
once unwatched and once watched first (warm-up: the first cell lists torch's entry points, imports lazily), then
is counted. A measurement tool, not a test.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import textwrap
from typing import Any, Counter, Dict, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, check_ran, make_shell, run_cell  # noqa: E402  (path set up just above)

import tiny_steps  # noqa: E402
from overhead import ALWAYS_OFF, ALWAYS_ON  # noqa: E402

PACKAGE = os.path.join(ROOT, "grad_magic") + os.sep


def _name(code: Any) -> str:
    return f"{os.path.relpath(code.co_filename, PACKAGE)}:{code.co_qualname}"


def count(shell: Any, cell: str, by_function: bool, within: str = "") -> Counter[str]:
    """Opcodes of grad_magic's code while `cell` runs, by outermost grad_magic function (or by every function;
    `within`: only under the outermost function of that name)."""
    counts: Counter[str] = collections.Counter()
    ours: Dict[Any, bool] = {}

    def is_ours(code: Any) -> bool:
        known = ours.get(code)
        if known is None:
            known = ours[code] = code.co_filename.startswith(PACKAGE)
        return known

    def outermost(frame: Any) -> Optional[Any]:
        found = None
        while frame is not None:
            if is_ours(frame.f_code):
                found = frame
            frame = frame.f_back
        return found

    def on_call(frame: Any, event: str, arg: Any) -> Any:
        if event != "call" or not is_ours(frame.f_code):
            return None
        top = _name(outermost(frame).f_code)
        if within and top != within:
            return None
        key = _name(frame.f_code) if by_function else top
        frame.f_trace_opcodes = True

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "opcode":
                counts[key] += 1
            return local

        return local

    sys.settrace(on_call)
    try:
        check_ran(run_cell(shell, cell), "counted cell")
    finally:
        sys.settrace(None)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="mlp64", choices=sorted(tiny_steps.FULL))
    parser.add_argument("--by-function", action="store_true", help="count under each function, not the outermost")
    parser.add_argument("--within", default="", metavar="FILE:FUNCTION",
                        help="count only under this outermost function (with --by-function: what it calls)")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--marginal", action="store_true",
                        help="a step between looks: the count of a cell three times as long, less the cell's, "
                             "over the steps it adds (as tiny_steps times it)")
    args = parser.parse_args()
    sizes = dict(tiny_steps.FULL[args.workload])
    shell = make_shell()
    shell.user_ns["device"] = "cpu"
    setup = tiny_steps.SETUP["mlp" if args.workload.startswith("mlp") else args.workload]
    check_ran(run_cell(shell, textwrap.dedent(setup).strip().format(**sizes)), "setup")
    steps = sizes["steps"]
    counts = _counted(shell, args, sizes)
    if args.marginal:
        sizes["steps"] = 3 * steps
        longer = _counted(shell, args, sizes)
        longer.subtract(counts)
        counts, steps = longer, 2 * steps
    total = sum(counts.values())
    what = "a step between looks" if args.marginal else f"a {steps}-step cell"
    print(f"{args.workload}: {total} bytecodes of grad_magic ({what}): {total / steps:.0f} per step")
    for name, n in counts.most_common(args.top):
        print(f"  {n / steps:8.1f}  {name}")
    return 0


def _counted(shell: Any, args: Any, sizes: Dict[str, int]) -> Counter[str]:
    cell = tiny_steps._cell(args.workload, sizes, "cpu")
    check_ran(run_cell(shell, cell), "plain warm-up")
    check_ran(run_cell(shell, ALWAYS_ON), "%gradcheck on")
    try:
        check_ran(run_cell(shell, cell), "watched warm-up")
        return count(shell, cell, args.by_function, args.within)
    finally:
        run_cell(shell, ALWAYS_OFF)


if __name__ == "__main__":
    raise SystemExit(main())
