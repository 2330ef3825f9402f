"""Time to card: from the user's exception to the rendered bundle (text/plain + text/html + JSON).

For each seed failure (the `seed_article` case of tests/cases/<kind>/), padded to a 200-line cell, with
10,000 more objects in the namespace:

- `diagnose_render_ms` (the figure): `engine.diagnose` + `render.mimebundle` of every diagnosis, timed
  directly on the RunRecord that a real `%%gradcheck` run of the cell captured. It is the work done
  between the exception and the bundle, without the noise of running the cell itself.
- `cell_minus_plain_ms` (a cross-check): the failing `%%gradcheck` cell minus the same cell run plain,
  both through the shell. It also counts the hooks and anomaly mode while the cell runs, and how
  IPython shows each traceback, so it is larger and noisier.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import Any, Dict, List, Tuple

import torch

from common import ROOT, log, run_cell, summary, timed, timed_cpu

CASES = Path(ROOT) / "tests" / "cases"
SEEDS = ("missing-requires-grad", "saved-tensor-modified-in-place", "leaf-modified-in-place",
         "device-mismatch", "grads-not-zeroed", "load-needs-map-location")
CELL_LINES = 200


def padded(source: str, lines: int) -> str:
    """The case cell padded to `lines` lines with ordinary code after its `%%gradcheck` line."""
    magic, body = source.split("\n", 1)
    pad = max(0, lines - len(source.splitlines()))
    filler = [f"step_{i} = {{'lr': {i} * 0.001, 'epoch': {i} // 10}}" if i % 3 else f"# stage {i}: settings"
              for i in range(pad)]
    return magic + "\n" + "\n".join(filler) + ("\n" if filler else "") + body


def crowd(count: int) -> Dict[str, Any]:
    """`count` objects of the kinds a long-lived notebook holds: tensors, lists, dicts, numbers, strings."""
    objects: Dict[str, Any] = {}
    for i in range(count):
        kind = i % 4
        objects[f"obj_{i}"] = (torch.zeros(2) if kind == 0 else [i, i + 1] if kind == 1 else
                               {"i": i} if kind == 2 else f"value {i}")
    return objects


class _Case:
    def __init__(self, kind: str, lines: int) -> None:
        path = CASES / kind / "seed_article.py"
        setup = path.with_name("seed_article.setup.py")
        self.kind = kind
        self.cell = padded(path.read_text(encoding="utf-8"), lines)
        self.plain = self.cell.split("\n", 1)[1]
        self.setup = setup.read_text(encoding="utf-8") if setup.exists() else ""


def _prepare(shell: Any, base: Dict[str, Any], objects: Dict[str, Any], case: _Case) -> None:
    """A namespace of its own for the case: the shell's base names, the crowd, then the case's setup."""
    ns = shell.user_ns
    if "ckpt_dir" in ns:  # the map_location setup's temporary checkpoint folder
        shutil.rmtree(ns["ckpt_dir"], ignore_errors=True)
    ns.clear()
    ns.update(base)
    ns.update(objects)
    if case.setup:
        run_cell(shell, case.setup)


def _capture(shell: Any, case: _Case) -> Tuple[Any, Dict[str, Any]]:
    """Run the failing cell through the shell once and keep the RunRecord it produced."""
    import grad_magic.cellrun as cellrun

    seen: List[Tuple[Any, Any]] = []
    real = cellrun.diagnose_and_remember

    def keep(record: Any, namespace: Any) -> Any:
        seen.append((record, namespace))
        return real(record, namespace)

    cellrun.diagnose_and_remember = keep  # NB: the bench's own process only; the package is untouched
    try:
        run_cell(shell, case.cell)
    finally:
        cellrun.diagnose_and_remember = real
    record, namespace = seen[-1]
    namespace = dict(namespace)  # NB: the shell's namespace is cleared for the next case
    if record.error_locals is shell.user_ns:
        record.error_locals = namespace
    # NB: the cell's own frame holds the namespace itself, as in a real run (not the next case's names)
    record.frames = tuple(dataclasses.replace(f, local_names=namespace) if f.local_names is shell.user_ns else f
                          for f in record.frames)
    return record, namespace


def _cold() -> None:
    """Forget what an earlier card of the same cell left in grad_magic's caches: each card is timed
    as the first one of its cell."""
    from grad_magic import cell

    for cached in (cell.python_of_cell, cell.cell_tree, cell._lines_and_offsets, cell.names_in_order,
                   cell.callee_texts):
        cached.cache_clear()


def _diagnose_and_render(record: Any, namespace: Dict[str, Any]) -> List[str]:
    from grad_magic.engine import diagnose
    from grad_magic.render import mimebundle

    _cold()
    diagnoses = diagnose(record, namespace)
    bundles = [mimebundle(d) for d in diagnoses]
    assert all(len(b) == 3 for b in bundles), "a bundle lacks a format"
    return [d.kind for d in diagnoses]


def measure(shell: Any, quick: bool, repeats: int) -> Dict[str, Any]:
    objects = crowd(1_000 if quick else 10_000)
    lines = 60 if quick else CELL_LINES
    cases = [_Case(kind, lines) for kind in SEEDS]
    base, cwd = dict(shell.user_ns), os.getcwd()
    check_rounds = 1 if quick else repeats  # the cross-check runs cells: one round is enough for a smoke run
    captured, kinds = {}, {}
    try:
        for case in cases:
            _prepare(shell, base, objects, case)
            captured[case.kind] = _capture(shell, case)
            kinds[case.kind] = _diagnose_and_render(*captured[case.kind])  # also the warm-up
        direct: Dict[str, List[float]] = {c.kind: [] for c in cases}
        direct_cpu: Dict[str, List[float]] = {c.kind: [] for c in cases}
        in_cell: Dict[str, List[float]] = {c.kind: [] for c in cases}
        for round_ in range(repeats):
            for case in cases:  # NB: interleaved across the cases, round by round
                wall, cpu = timed_cpu(lambda: _diagnose_and_render(*captured[case.kind]))
                direct[case.kind].append(1000 * wall)
                direct_cpu[case.kind].append(1000 * cpu)
            for case in cases if round_ < check_rounds else ():
                _prepare(shell, base, objects, case)
                checked = timed(lambda: run_cell(shell, case.cell))
                _prepare(shell, base, objects, case)
                plain = timed(lambda: run_cell(shell, case.plain))
                in_cell[case.kind].append(1000 * (checked - plain))
    finally:
        _prepare(shell, base, {}, _Case(SEEDS[0], 0))
        os.chdir(cwd)
    results = {}
    for case in cases:
        results[case.kind] = {"diagnosed": kinds[case.kind], "cell_lines": len(case.cell.splitlines()),
                              "namespace_objects": len(objects),
                              "diagnose_render_ms": summary(direct[case.kind]),
                              "diagnose_render_cpu_ms": summary(direct_cpu[case.kind]),
                              "cell_minus_plain_ms": summary(in_cell[case.kind])}
        log(f"  card {case.kind:31s} {results[case.kind]['diagnose_render_ms']['median']:7.1f} ms, "
            f"CPU {results[case.kind]['diagnose_render_cpu_ms']['median']:6.1f} ms (cell - plain {results[case.kind]['cell_minus_plain_ms']['median']:7.1f} ms) {kinds[case.kind]}")
    return {"method": "diagnose_render_ms: engine.diagnose + render.mimebundle on the RunRecord captured "
                      "from a real %%gradcheck run (the figure); cell_minus_plain_ms: failing %%gradcheck "
                      "cell minus the same cell plain (cross-check: also hooks, anomaly mode, tracebacks)",
            "cases": results}
