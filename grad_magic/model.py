"""The data model every room shares: what a diagnosis says, as plain strings and numbers.

This module may not import torch, IPython or any renderer. A `Diagnosis` never holds a live tensor,
never holds HTML: rules build it, fixes fill its `fix`, renderers read it (`render.Card` shows one).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class SourceLine:
    """One line of the user's code, numbered as the editor shows it (a `%%gradcheck` cell's magic line is
    line 1): in the running cell, or `elsewhere` -- an earlier cell (`cell`, In [k]) or the user's own file."""

    lineno: int
    text: str
    cell: Optional[int] = None  # In [k] of the cell the line is in, when known
    file: str = ""  # a file of the user's; "" for a cell
    function: str = ""  # the function or method the line is in: `Block.forward`; "" at the top level
    elsewhere: bool = False  # not in the running cell


@dataclass(frozen=True)
class CellSource:
    """The text, as it ran, of another cell (or file) that lines of a diagnosis are in."""

    cell: Optional[int]
    file: str
    source: str


@dataclass(frozen=True)
class TensorFact:
    """What is known about one object the user named, as strings (never the object itself)."""

    name: str
    kind: str = "tensor"  # "tensor", "parameter", "module", "optimizer"
    shape: str = ""
    dtype: str = ""
    device: str = ""
    requires_grad: Optional[bool] = None
    is_leaf: Optional[bool] = None
    grad_fn: Optional[str] = None
    version: Optional[int] = None


@dataclass(frozen=True)
class TextEdit:
    """Replace `source[start:end]` with `text` (character offsets into the original cell)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class CellFix:
    """A fixed copy of another cell (or file) the run went through: its complete text, as it would replace
    `original` (the text that ran)."""

    cell: Optional[int]  # In [k]; None for a file
    file: str
    original: str
    source: str
    edits: Tuple[TextEdit, ...]
    # NB: the cells that ran after In [k], before the running cell, and read what In [k] binds (or what such a
    # cell binds: `model = Net()` after `class Net`), in the order they ran: what a re-run must run again
    rerun: Tuple[int, ...] = ()
    # NB: a fixed file: the cell that reloads its module and imports again what the cells imported from it
    # ("" when no module of the kernel was loaded from it: a restart is the way)
    reload: str = ""


@dataclass(frozen=True)
class Fix:
    """A proposed fix: the complete fixed running cell (`source`, exactly as it would be inserted; "" when
    the fix changes only other cells), and fixed copies of the other cells it changes."""

    description: str
    source: str
    edits: Tuple[TextEdit, ...]
    elsewhere: Tuple[CellFix, ...] = ()


@dataclass(frozen=True)
class LiveInfo:
    """A card shown while its cell still ran (grad_magic/live.py): the optimizer step that found it, and what
    it says about that moment, as strings."""

    step: int  # the optimizer step (1-based, counted over the run) whose check found it
    shown_at: float  # time.monotonic() when it was shown: the end of the cell says how long it ran after
    found: str = ""  # "Step 2: `opt` stepped with the gradients of step 1 still in `.grad`."
    cost: str = ""  # what it costs if the cell is left running


@dataclass(frozen=True)
class Diagnosis:
    """One explained problem. `kind` is a stable slug and part of the public API."""

    kind: str
    severity: str
    title: str
    summary: str
    what: str
    why: str
    where: str
    source: str = ""
    lines: Tuple[SourceLine, ...] = ()
    names: Tuple[str, ...] = ()
    tensors: Tuple[TensorFact, ...] = ()
    error_type: Optional[str] = None
    error_message: Optional[str] = None
    fix: Optional[Fix] = None
    versions: Tuple[Tuple[str, str], ...] = ()
    notes: Tuple[str, ...] = ()
    language: str = "en"
    cell: Optional[int] = None  # In [k] of the running cell, when known
    elsewhere: Tuple[CellSource, ...] = ()  # other cells' text, for the lines and fixes there
    live: Optional[LiveInfo] = None  # shown while the cell ran; None for a card shown when it ended
    trace: str = ""  # anomaly mode's report of the failing backward ("Error detected in ..."), when the run had one

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR
