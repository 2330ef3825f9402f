"""What a capture session saw while the cell ran: plain records, filled by the recorder.

Torch-free. Records hold strings, numbers and weak references to user objects: once the cell's
diagnosis is made the tool must keep nothing alive.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, List, Mapping, Optional, Tuple

from .sources import Frame, Sources


@dataclass(frozen=True)
class TensorSnapshot:
    """A tensor's metadata at the moment an op touched it."""

    ident: int
    shape: Tuple[int, ...]
    dtype: str
    device: str
    version: int
    requires_grad: bool
    is_leaf: bool
    ref: Optional[weakref.ref] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class OpEvent:
    """An op the tracker recorded: an in-place op, or an op that raised."""

    name: str
    lineno: Optional[int]
    targets: Tuple[TensorSnapshot, ...]
    how: str  # "method", "setitem", "inplace=True", "out=", "raised"
    arg_names: Tuple[str, ...] = ()
    frames: Tuple[Tuple[str, int], ...] = ()  # (filename, line) of the user's code that made it, innermost first


@dataclass(frozen=True)
class StepEvent:
    """One `optimizer.step()`, with how many parameters stepped on gradients left from the last step."""

    optimizer: Optional[weakref.ref] = field(compare=False, repr=False)
    optimizer_class: str
    lineno: Optional[int]
    params_with_grad: int
    stale_params: int  # grads accumulated since the previous step, never cleared
    frames: Tuple[Tuple[str, int], ...] = ()  # (filename, line) of the user's code that stepped, innermost first


@dataclass(frozen=True)
class CapturedWarning:
    category: str
    message: str
    filename: str
    lineno: int


@dataclass
class RunRecord:
    """Everything one run produced. Built by the capture session; read by the rules."""

    filename: str
    source: str
    exception: Optional[BaseException] = None
    error_lineno: Optional[int] = None
    error_locals: Optional[Mapping[str, Any]] = None
    inplace_ops: List[OpEvent] = field(default_factory=list)
    failed_ops: List[OpEvent] = field(default_factory=list)
    steps: List[StepEvent] = field(default_factory=list)
    warnings: List[CapturedWarning] = field(default_factory=list)
    dropped_events: int = 0
    versions: Tuple[Tuple[str, str], ...] = ()
    frames: Tuple[Frame, ...] = ()  # the user frames of the exception's traceback, outermost first
    cell: Optional[int] = None  # In [k] of the running cell
    sources: Optional[Sources] = field(default=None, repr=False)
    probed: Any = field(default=None, repr=False)  # graphprobe.Probed: what a run without anomaly mode leaves
    compiled: bool = False  # the run went through torch.compile'd code, which the trackers step aside for
    # NB: a rule sees the run from one user frame at a time (rules/context.py): `filename`, `source`,
    # `error_lineno`, `error_locals` and each event's `lineno` are that frame's; `focus` is the frame
    # (None: the running cell) and `outer` the record as the cell saw it.
    focus: Optional[Frame] = None
    outer: Optional["RunRecord"] = field(default=None, repr=False)

    @property
    def failed(self) -> bool:
        return self.exception is not None

    def source_line(self, lineno: Optional[int]) -> str:
        lines = self.source.splitlines()
        if lineno is None or not 1 <= lineno <= len(lines):
            return ""
        return lines[lineno - 1]
