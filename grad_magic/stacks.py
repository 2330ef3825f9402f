"""Anomaly mode's forward traces, without grad_magic's own frames.

Under anomaly detection torch stores, for every autograd node it creates, the Python stack of the
forward call (`torch.fx.traceback.format_stack()`, called from C++), and prints it when that node's
backward fails. Under `%%gradcheck` that stack also holds the magic's plumbing (IPython's
`run_cell_magic`, our magic, the cell runner) and the op tracker's `__torch_function__` -- noise in
the trace the user reads, and ~40% more frames to format on every op of a small training step.
While a capture runs, `format_stack` is swapped for one that leaves those frames out, so the trace
reads as it would in a plain cell.
"""
from __future__ import annotations

import sys
import traceback
from types import CodeType, FrameType
from typing import Callable, FrozenSet, List, Optional


class TraceFilter:
    """`torch.fx.traceback.format_stack` without the given frames and the frames of the given code."""

    def __init__(self, frames: FrozenSet[FrameType], codes: FrozenSet[CodeType]) -> None:
        import torch.fx.traceback as fx_traceback

        self._module = fx_traceback
        self._previous: Callable[[], List[str]] = fx_traceback.format_stack
        outer = self._previous if isinstance(self._previous, TraceFilter) else None
        # NB: nested captures: the inner one hides the outer one's frames too
        self._frames = set(frames) | (outer._frames if outer else set())  # NB: frames hash by identity
        self._codes = {id(c) for c in codes} | (outer._codes if outer else set())  # NB: code objects hash
        # by value (slow): ids

    def install(self) -> None:
        self._module.format_stack = self

    def uninstall(self) -> None:
        if self._module.format_stack is self:  # NB: idempotent; a later swap by someone else is kept
            self._module.format_stack = self._previous
        self._frames = set()  # NB: no frame outlives the run through us

    def __call__(self) -> List[str]:
        if getattr(self._module, "should_preserve_node_meta", False):
            return self._previous()  # NB: fx tracing's own path: not a stack walk
        frames, codes, kept = self._frames, self._codes, []
        frame: Optional[FrameType] = sys._getframe(1)
        while frame is not None:
            if frame not in frames and id(frame.f_code) not in codes:
                kept.append((frame, frame.f_lineno))
            frame = frame.f_back
        kept.reverse()
        return traceback.format_list(traceback.StackSummary.extract(iter(kept)))


def plumbing_frames(frame: FrameType) -> FrozenSet[FrameType]:
    """`frame` (the cell runner's) and the frames out to IPython's `run_cell_magic` and the cell code that
    called it (`<module>`; IPython 7.34 names it `<cell line: 0>`): what stands between IPython running
    a cell and the `%%gradcheck` body. Just `frame` when no `run_cell_magic` is near (the magic called
    from other code)."""
    found: List[FrameType] = []
    at: Optional[FrameType] = frame
    while at is not None and len(found) < 16:
        found.append(at)
        if at.f_code.co_name == "run_cell_magic":
            caller = at.f_back
            if caller is not None and caller.f_code.co_name.startswith("<"):
                found.append(caller)
            return frozenset(found)
        at = at.f_back
    return frozenset({frame})
