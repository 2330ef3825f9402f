"""Shared by the bench sections: the IPython shell they drive, the clock, and the summary of repeats.

A measurement, not a test: nothing here asserts. Every figure is taken in this one process, with the
variants interleaved round by round (A B C D, D C B A, ...), so drift of the machine hits them alike.
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import statistics
import sys
import time
import warnings
from typing import Any, Callable, Dict, Iterator, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:  # NB: the package of this checkout (or of a copy being measured), not site-packages'
    sys.path.insert(0, ROOT)


def summary(values: Sequence[float]) -> Dict[str, Any]:
    """Median and range of the repeats (the unit is the caller's)."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def ratio_summary(numerators: Sequence[float], denominators: Sequence[float]) -> Dict[str, Any]:
    """The ratio taken round by round (each pair ran side by side), then summarised."""
    return summary([a / b for a, b in zip(numerators, denominators)])


def timed(fn: Callable[[], Any]) -> float:
    """Seconds `fn()` took on the wall clock."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def timed_cpu(fn: Callable[[], Any]) -> Tuple[float, float]:
    """Seconds `fn()` took on the wall clock and in this process's CPU time.

    NB: on a busy machine the wall clock also counts other processes' turns; the CPU time does not
    (with one torch thread it is the work done), so both are kept.
    """
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Swallow what a cell prints (tracebacks, cards as text): the bench prints its own lines."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def make_shell() -> Any:
    """The user's path: IPython's own shell with `%load_ext grad_magic`; displays kept, not printed."""
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "grad_magic")
    shell.display_pub = CapturingDisplayPublisher()
    shell.display_pub.shell = shell
    # NB: detect_anomaly() warns each time it is entered; the warning is the same for every variant.
    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
    return shell


def run_cell(shell: Any, source: str) -> Any:
    """Run one cell as a notebook does and drop what it displayed (the bench keeps no outputs)."""
    with quiet():
        result = shell.run_cell(source, store_history=False)
    shell.display_pub.outputs.clear()  # NB: not clear_output(): that prints escape codes
    return result


def check_ran(result: Any, what: str) -> None:
    if not result.success:
        raise RuntimeError(f"bench: {what} failed: {result.error_in_exec or result.error_before_exec!r}")


def finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
