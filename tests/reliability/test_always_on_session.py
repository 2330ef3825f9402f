"""A long `%gradcheck on` session (issue 17): 1,000 cells, healthy and failing mixed, some marked %%gradcheck.

Every failing cell's card is shown once (a generic error, a typo's NameError, gets none: the user did not ask),
healthy cells show none but their silent-bug warnings, the memory grad_magic holds stays flat, and after
`%gradcheck off` nothing of the watch is left: torch's modes and hooks, patched attributes, IPython's events,
the shell's own methods are as before the session.
"""
from __future__ import annotations

import gc
import random
import textwrap
import tracemalloc
from typing import Dict, List, Tuple

import grad_magic
import grad_magic.model
from reliability_support import attributes, changed_attributes, differences, live_objects_of, snapshot
from test_soak import (device_error, grad_magic_memory, healthy, inplace_error, torch_error, user_error,
                       without_bounded_caches)

CELLS = 1000
TRACE_FROM = 500  # tracemalloc watches the second half (it slows every allocation while on)

# kind: (cell maker, the card's kind or None, weight); `marked`: the same cell under %%gradcheck
KINDS: Dict[str, Tuple] = {
    "healthy": (healthy, None, 5), "user_error": (user_error, None, 2),
    "torch_error": (torch_error, "missing-requires-grad", 2), "inplace_error": (inplace_error,
                                                                                "saved-tensor-modified-in-place", 2),
    "device_error": (device_error, "device-mismatch", 2), "marked": (inplace_error, "saved-tensor-modified-in-place", 1),
}


def watched(kind: str, i: int) -> str:
    """The soak's cell without its `%%gradcheck` line (kept for the `marked` kind)."""
    text = textwrap.dedent(KINDS[kind][0](i))
    return text if kind == "marked" else text.split("\n", 1)[1]


def kinds_shown(shell) -> List[str]:
    """The kinds of the cards shown: a text card's footer (its last line) names it."""
    feet = [o["data"].get("text/plain", "").rsplit("\n", 1)[-1] for o in shell.display_pub.outputs]
    return [foot.split("·")[-1].strip() for foot in feet if foot.startswith("grad_magic ·")]


def test_a_thousand_watched_cells_show_each_card_once_and_leave_nothing(shell, capsys):
    rng = random.Random(17)
    names = sorted(KINDS)
    order = rng.choices(names, weights=[KINDS[k][2] for k in names], k=CELLS)
    shell.run_line_magic("xmode", "Minimal")  # NB: IPython's long tracebacks cost ~1 s per torch error
    shell.run_cell("import torch\n", store_history=True)
    before, patched = snapshot(shell), attributes()
    events = {k: list(v) for k, v in shell.events.callbacks.items()}
    shell.run_cell("%gradcheck on", store_history=True)
    wrong: List[str] = []
    traced_at = 0
    objects: List[Dict[str, int]] = []
    try:
        for i, kind in enumerate(order):
            shell.display_pub.outputs.clear()
            shell.run_cell(watched(kind, i), store_history=True)
            expected = KINDS[kind][1]
            shown = [k for k in kinds_shown(shell) if k != "grads-not-zeroed"]
            if shown != ([expected] if expected else []):
                wrong.append(f"cell {i} ({kind}): {shown}")
            if i % 100 == 99:
                capsys.readouterr()
                gc.collect()  # NB: a failed cell's traceback is a reference cycle: freed by the collector
                objects.append(live_objects_of("grad_magic"))
            if i + 1 == TRACE_FROM:
                tracemalloc.start()
                without_bounded_caches()
                traced_at = grad_magic_memory(tracemalloc.take_snapshot())
        without_bounded_caches()
        grown = grad_magic_memory(tracemalloc.take_snapshot()) - traced_at
    finally:
        tracemalloc.stop()
        shell.run_cell("%gradcheck off", store_history=True)
        shell.run_line_magic("xmode", "Context")
    assert not wrong, wrong[:10]
    # NB: the last cards (model.py's records) are kept for %gradfix by design; their number is the last card's
    kept = set(vars(grad_magic.model))
    grew = {k: (objects[1].get(k, 0), n) for k, n in objects[-1].items() if n > objects[1].get(k, 0) and k not in kept}
    assert not grew, f"grad_magic objects grew across the cells: {grew}"
    assert grown < 64 * 1024, f"memory held by grad_magic grew by {grown:,} bytes over {CELLS - TRACE_FROM} cells"
    after = snapshot(shell)
    for volatile in ("warning_filters",):  # NB: the cells' own warnings.filters changes are the user's
        before.pop(volatile), after.pop(volatile)
    assert not differences(before, after)
    assert not changed_attributes(patched, attributes())
    assert {k: list(v) for k, v in shell.events.callbacks.items()} == events
    assert grad_magic.state.last_diagnoses()  # NB: the last card's fix is still there for %gradfix
