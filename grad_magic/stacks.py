"""Anomaly mode's forward traces, without grad_magic's own frames.

Under anomaly detection torch stores, for every autograd node it creates, the Python stack of the
forward call (`torch.fx.traceback.format_stack()`, called from C++), and prints it when that node's
backward fails. Under `%%gradcheck` that stack also holds the magic's plumbing (IPython's
`run_cell_magic`, our magic, the cell runner) and the op tracker's `__torch_function__` -- noise in
the trace the user reads, and ~40% more frames to format on every op of a small training step.
While a capture runs, `format_stack` is swapped for one that leaves those frames out, so the trace
reads as it would in a plain cell.

The same goes for the traceback of an error raised under the tracker (`without_dispatch`): torch calls the
tracker from its own dispatch, and each error in a tracked call would otherwise show the tracker's frame,
and for a torch function written in Python (`F.relu`, `Tensor.backward`) also torch's `handle_torch_function`
and a second copy of that function's frame.

And the traceback IPython shows for a failing `%%gradcheck` cell (`plain_traceback_once`): without the cell's
`get_ipython().run_cell_magic(...)` line and the magic's frames, as a plain cell's.
"""
from __future__ import annotations

import sys
import traceback
import warnings
from types import CodeType, FrameType, TracebackType
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple, TypeVar

import torch.overrides

from .sources import frame_at

# NB: the files whose frames lead to a hidden frame: torch's dispatch to the tracker, `warnings` to the recorder
_DISPATCH_FILES = frozenset({torch.overrides.handle_torch_function.__code__.co_filename, warnings.__file__})
_Entry = TypeVar("_Entry")


class TraceFilter:
    """`torch.fx.traceback.format_stack` without the given frames, and without the tracker's frames (the
    given code) and torch's dispatch to them (`without_dispatch`)."""

    def __init__(self, frames: FrozenSet[FrameType], codes: FrozenSet[CodeType]) -> None:
        import torch.fx.traceback as fx_traceback

        self._module = fx_traceback
        self._previous: Callable[[], List[str]] = fx_traceback.format_stack
        outer = self._previous if isinstance(self._previous, TraceFilter) else None
        # NB: nested captures: the inner one hides the outer one's frames too
        self._frames = set(frames) | (outer._frames if outer else set())  # NB: frames hash by identity
        # NB: code objects hash by value (slow): ids
        self._codes = frozenset(id(c) for c in codes) | (outer._codes if outer else frozenset())
        self._closed = False
        self._entries: Dict[Tuple[int, int], Tuple[CodeType, Tuple[str, int, str], str]] = {}

    def install(self) -> None:
        self._module.format_stack = self

    def uninstall(self) -> None:
        self._closed = True
        if self._module.format_stack is self:  # NB: idempotent; a later swap by someone else is kept
            self._module.format_stack = self._previous
        self._frames = set()  # NB: no frame outlives the run through us
        self._entries = {}

    def __call__(self) -> List[str]:
        if self._closed:  # NB: kept by the user past its run (saved, then put back): what it replaced, back
            if self._module.format_stack is self:
                self._module.format_stack = self._previous
            return self._previous()
        if getattr(self._module, "should_preserve_node_meta", False):
            return self._previous()  # NB: fx tracing's own path: not a stack walk
        frames, kept = self._frames, []
        frame = frame_at(1)
        while frame is not None:
            if frame not in frames:
                kept.append((frame, frame.f_lineno))
            frame = frame.f_back
        kept.reverse()
        if self._codes:
            kept = without_dispatch(kept, lambda entry: entry[0].f_code, self._codes)
        return self._format(kept)

    def _format(self, kept: List[Tuple[FrameType, int]]) -> List[str]:
        """What `traceback.format_list(StackSummary.extract(kept))` gives, each frame's entry formatted once
        per run: torch asks on every op of the forward pass, and the frames below the cell's loop (IPython's,
        a test runner's) are the same each time (~4 µs a frame otherwise). A line repeated in a row (recursion,
        which the stdlib folds into "[Previous line repeated ...]") and a `sys.tracebacklimit` take the stdlib's
        own path. A source file edited during the run shows the line it had when first seen."""
        if getattr(sys, "tracebacklimit", None) is not None:
            return _as_format_stack(kept)
        cache, out, last = self._entries, [], None
        for frame, line in kept:
            code = frame.f_code
            hit = cache.get((id(code), line))
            if hit is None:
                summary = traceback.StackSummary.extract(iter(((frame, line),)))
                hit = (code, (code.co_filename, line, code.co_name), summary.format_frame_summary(summary[0]))
                cache[id(code), line] = hit  # NB: the entry holds the code: its id is not reused during the run
            if hit[1] == last:
                return _as_format_stack(kept)
            last = hit[1]
            out.append(hit[2])
        return out


def _as_format_stack(kept: List[Tuple[FrameType, int]]) -> List[str]:
    """torch's `format_stack` on the stack `kept` (outermost first): `extract_stack()[:-1]`, which applies
    `sys.tracebacklimit` to the innermost frames, its own frame (here this one) counted, then drops one."""
    here = frame_at(0)
    summary = traceback.StackSummary.extract(iter([(here, here.f_lineno)] + kept[::-1]))
    summary.reverse()
    return traceback.format_list(summary[:-1])


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


def without_dispatch(entries: Sequence[_Entry], code_of: Callable[[_Entry], CodeType],
                     tracker: FrozenSet[int]) -> List[_Entry]:
    """`entries` (frames or traceback entries, outermost first) without the tracker's and torch's dispatch
    to it: the tracker's own entry, the `torch/overrides.py` entries right before it, and before those the
    torch function that dispatched (`F.relu` at its `handle_torch_function` line) when the entry after the
    tracker runs the same code -- the call as a plain cell makes it, which stays. `tracker`: the ids of the
    tracker's code objects (and of any other hidden code: the warning recorder's, `warnings`' entries before
    it dropped alike)."""
    dropped = set()
    for i, entry in enumerate(entries):
        if id(code_of(entry)) not in tracker:
            continue
        dropped.add(i)
        j = i - 1
        while j >= 0 and code_of(entries[j]).co_filename in _DISPATCH_FILES:
            dropped.add(j)
            j -= 1
        if j < i - 1 and j >= 0 and i + 1 < len(entries) and code_of(entries[j]) is code_of(entries[i + 1]):
            dropped.add(j)
    if not dropped:
        return list(entries)
    return [entry for k, entry in enumerate(entries) if k not in dropped]


def traceback_without_dispatch(tb: Optional[TracebackType], tracker: FrozenSet[CodeType]
                               ) -> Optional[TracebackType]:
    """The traceback as a plain cell would have it (see `without_dispatch`): a new chain, the old one left
    as it is; `tb` itself when it holds no tracker entry."""
    entries: List[TracebackType] = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    kept = without_dispatch(entries, lambda entry: entry.tb_frame.f_code, frozenset(map(id, tracker)))
    if len(kept) == len(entries):
        return entries[0] if entries else None
    chain: Optional[TracebackType] = None
    for entry in reversed(kept):
        # NB: tb_lineno is None where the instruction has no line (an interrupt can land there); -1 is how
        # CPython stores "look it up from tb_lasti", which gives that None back
        line = entry.tb_lineno
        chain = TracebackType(chain, entry.tb_frame, entry.tb_lasti, -1 if line is None else line)
    return chain


def plain_traceback_once(shell: Any, exc: BaseException, runners: Tuple[CodeType, ...]) -> None:
    """IPython's next `showtraceback`, for `exc`, without the frames a plain cell has not: the cell's
    `get_ipython().run_cell_magic('gradcheck', ...)` line, IPython's magic call and ours (`sys.last_traceback`,
    `%debug` then see a plain cell's); `runners`: the code of the cell runner that ran the body. The wrapper is
    an instance attribute that takes itself off at its first call, or when the cell ends (`post_run_cell`)
    without one: nothing stays on the shell."""
    before = vars(shell).get("showtraceback", _NONE)

    def off(*_: Any) -> None:
        if vars(shell).get("showtraceback") is showtraceback:
            if before is _NONE:
                del shell.showtraceback
            else:
                shell.showtraceback = before
        try:
            shell.events.unregister("post_run_cell", off)
        except ValueError:
            pass

    def showtraceback(exc_tuple: Any = None, *args: Any, **kwargs: Any) -> Any:
        off()
        try:
            value = exc_tuple[1] if exc_tuple is not None else sys.exc_info()[1]
            if value is exc:
                _without_magic_call(exc.__traceback__, runners)
        except Exception:  # NB: never in place of the user's traceback
            pass
        return shell.showtraceback(exc_tuple, *args, **kwargs)

    try:
        shell.showtraceback = showtraceback
        shell.events.register("post_run_cell", off)
    except Exception:  # NB: a shell without events: the wrapper comes off at the next traceback
        pass


_NONE = object()


def _without_magic_call(tb: Optional[TracebackType], runners: Tuple[CodeType, ...]) -> None:
    """Relink `tb` in place: the entry before the cell's magic-call line goes on to the first frame of the
    cell's body. Unchanged when the chain is not the one IPython builds for a cell magic."""
    from IPython.core.interactiveshell import InteractiveShell

    magic_call = InteractiveShell.run_cell_magic.__code__
    entries: List[TracebackType] = []
    while tb is not None and len(entries) < 10_000:
        entries.append(tb)
        tb = tb.tb_next
    runner = next((i for i, e in enumerate(entries) if e.tb_frame.f_code in runners), None)
    if runner is None or runner + 1 >= len(entries):
        return
    calls = [i for i in range(runner) if entries[i].tb_frame.f_code is magic_call]
    if not calls or calls[-1] < 2:
        return
    entries[calls[-1] - 2].tb_next = entries[runner + 1]
