"""`build_report`: the inventory of one namespace -- the walk's phases (visible names, private names, then
IPython's output history), the rows sorted, the bytes per device, and the warnings.

May touch: the namespace's objects, read-only, and of a tensor only its METADATA (walk.py says what that
is), with torch functions off. No IPython, no renderer here. The report holds strings and numbers, never a live tensor, so keeping it
(in `Out`, say) keeps no memory alive; each of them within a stated bound (MAX_PATH, bounds.MAX_TEXT).
"""
from __future__ import annotations

import gc
import re
import time
from contextlib import contextmanager
from operator import attrgetter
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

import torch

from .. import state
from ..bounds import MAX_TEXT, clip
from .report import DeviceOptions, DeviceReport, DeviceTotal, DeviceWarning, Found, Skipped, TensorRow
from .walk import Walk
from .warnings import kept_by_history

MAX_PATH = 500  # characters of a row's path (a skipped object's too); every sentence within bounds.MAX_TEXT
KEPT_BY_HISTORY_DEVICES = ("cuda",)  # device types whose memory `Out` pins is worth a warning
IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
_HISTORY = re.compile(r"(Out|_oh|_{1,3}|_\d+)\Z")  # IPython's output history: Out, _oh, _, __, ___, _N
_INPUT_SIDE = re.compile(r"(_ih|_dh|_i+|_i\d+)\Z")


def build_report(namespace: Mapping[str, object], options: DeviceOptions = DeviceOptions(),
                 language: str = "") -> DeviceReport:
    """Every tensor reachable from `namespace` (metadata only), the bytes per device, and warnings, said in
    `language` (default: grad_magic's chosen language)."""
    language = language or state.language()
    started = time.monotonic()  # NB: the time limit counts from here, the namespace's partition included
    # NB: torch functions off: a tensor subclass's `__torch_function__` (or a user's mode) is user code
    with _collector_paused(), torch._C.DisableTorchFunction():
        visible, private, history = _partition(namespace)
        walk = Walk(options, language, started)
        rows = walk.phase(visible, keep=True)
        private_only = walk.phase(private, keep=options.include_private)
        # NB: history last, so what it finds is exactly what nothing else in the namespace refers to.
        history_only = walk.phase(history, keep=options.include_private)
        if options.include_private:
            rows += private_only + history_only
        shown = rows if options.device is None else \
            [found for found in rows if device_matches(found[0].device, options.device)]
        warnings = walk.warnings(rows) + kept_by_history(history_only, KEPT_BY_HISTORY_DEVICES, language)
        rows_shown = [_bounded_row(found[0]) for found in shown]
        return DeviceReport(rows=tuple(_sorted(rows_shown, options.sort)),
                            totals=_totals(shown), warnings=tuple(_bounded_warning(w) for w in warnings),
                            skipped=tuple(Skipped(clip(s.path, MAX_PATH), clip(s.reason)) for s in walk.skipped_list()),
                            options=options, language=language)


def _bounded_row(row: TensorRow) -> TensorRow:
    """A row whose path (a dict key, an attribute name: the user's text) is within MAX_PATH characters."""
    if len(row.path) <= MAX_PATH:
        return row
    return TensorRow(clip(row.path, MAX_PATH), row.role, row.shape, row.dtype, row.device, row.requires_grad,
                     row.is_leaf, row.grad_fn, row.nbytes)


def _bounded_warning(w: DeviceWarning) -> DeviceWarning:
    return w if len(w.message) <= MAX_TEXT else DeviceWarning(w.kind, clip(w.message))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The walk makes many small objects and no garbage cycles; a collection meanwhile traverses every
    live tensor (at 100k tensors, 40% of the time). Restored as it was found, whatever happens."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _partition(namespace: Mapping[str, object]) -> Tuple[List[Tuple[str, Any]], ...]:
    """(visible, private, output history) names; dunders and IPython's own input-side names dropped."""
    visible: List[Tuple[str, Any]] = []
    private: List[Tuple[str, Any]] = []
    history: List[Tuple[str, Any]] = []
    for name, value in list(namespace.items()):
        if type(name) is not str:
            continue
        if name[:1] != "_":  # NB: the common case first, without pattern matching
            if name == "Out":
                history.append((name, value))
            elif name not in IPYTHON_NAMES:  # `In`, `exit`...: strings and the shell, not a user's tensor
                visible.append((name, value))
        elif _HISTORY.match(name):
            history.append((name, value))
        elif not _INPUT_SIDE.match(name) and not (name.endswith("__") and len(name) > 4):
            private.append((name, value))  # dunders (`__builtins__`) and `_i3`, `_ih` never hold tensors
    return visible, private, history


def device_matches(device: str, wanted: Optional[str]) -> bool:
    """`cuda` (a device type) matches every `cuda:N`; `cuda:1` only itself."""
    return wanted is None or device == wanted or (":" not in wanted and device.split(":")[0] == wanted)


def _sorted(rows: List[TensorRow], sort: str) -> List[TensorRow]:
    """Stable sorts, least significant key first (C-level attrgetter keys: 100k rows in ~20 ms)."""
    rows = sorted(rows, key=attrgetter("path"))
    if sort != "name":
        rows.sort(key=attrgetter("nbytes"), reverse=True)  # NB: reverse=True keeps ties in order
    if sort == "device":
        rows.sort(key=attrgetter("device"))
    return rows


def _totals(rows: List[Found]) -> Dict[str, DeviceTotal]:
    counts: Dict[str, int] = {}
    storages: Dict[str, Dict[Any, int]] = {}
    for row, _, key, nbytes in rows:
        counts[row.device] = counts.get(row.device, 0) + 1
        storages.setdefault(row.device, {})[key] = nbytes  # NB: each storage once, however many views
    totals = {dev: DeviceTotal(counts[dev], sum(storages[dev].values())) for dev in counts}
    return dict(sorted(totals.items(), key=lambda kv: (-kv[1].bytes, kv[0])))
