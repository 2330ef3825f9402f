"""What a capture session saw while the cell ran: plain records, filled by the recorder.

Torch-free. Records hold strings, numbers and weak references to user objects: once the cell's
diagnosis is made the tool must keep nothing alive.
"""
from __future__ import annotations

import weakref
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

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
    frames: Tuple[Tuple[str, int], ...] = ()  # (filename, line) of the user's code that made it, innermost first


@dataclass(frozen=True)
class HeldModel:
    """A module a user frame held at a step, and how its Dropout/BatchNorm layers stood (stepwatch.py)."""

    model: Optional[weakref.ref] = field(compare=False, repr=False)
    path: str  # how the innermost user frame holding it names it: `model`, `self.model`, `rnn`
    site: Tuple[str, int]  # (filename, line) of that frame at the step
    stepped: bool  # some of its parameters are in the optimizer's param_groups
    eval_layers: Tuple[weakref.ref, ...] = field(default=(), compare=False, repr=False)  # in eval() mode
    train_layers: int = 0  # how many such layers were in train() mode
    # NB: "such layers": Dropout with p > 0 and BatchNorm whose weight is stepped, inside a part of the model
    # that is trained (a frozen backbone's own Dropout, kept in eval() on purpose, is not one)


@dataclass(frozen=True)
class GrowingLocal:
    """A local that held more of the graph at each step: a running total with a grad_fn, a list of losses
    (growing.py)."""

    site: Tuple[str, int]  # (filename, line) of its frame at the step
    function: str  # the frame's qualified name: `train_epoch`, `Trainer.fit`
    name: str  # `total`, `outputs`, `self.losses`
    kind: str  # "tensor" (a running total) or "list"
    size: int  # items in the list; 0 for a tensor
    item: str  # the newest item: "tensor", "dict" (of tensors only), "other"; "tensor" for a running total
    numel: int  # elements of the (newest) tensor: 1 is one number
    grad_fn: str = ""  # its grad_fn: `AddBackward0`


@dataclass(frozen=True)
class StepEvent:
    """One `optimizer.step()`, with how many parameters stepped on gradients left from the last step, and what
    the user's frames held at it (the step watch's look: stepwatch.py)."""

    optimizer: Optional[weakref.ref] = field(compare=False, repr=False)
    optimizer_class: str
    lineno: Optional[int]
    params_with_grad: int
    stale_params: int  # grads accumulated since the previous step, never cleared
    frames: Tuple[Tuple[str, int], ...] = ()  # (filename, line) of the user's code that stepped, innermost first
    models: Tuple[HeldModel, ...] = ()
    growing: Tuple[GrowingLocal, ...] = ()
    closure: bool = False  # step(closure): the gradients are made inside the step, after the pre-hook
    fresh_params: int = 0  # grads a backward made or added to since the optimizer's previous step


def distinct_steps(steps: Sequence[StepEvent], last: bool = False) -> List[StepEvent]:
    """Each step record once, in the order it first came (`last`: in the order it last came).

    NB: a loop's steps between two looks repeat the last look's record, the same object (stephooks.StepWatch): a
    150-step cell holds ~12 records. A question about what the steps saw reads each record once, not once a step;
    dict, zip and map run in C, with no bytecode per step."""
    if last:
        return list(dict(zip(map(id, reversed(steps)), reversed(steps))).values())[::-1]
    return list(dict(zip(map(id, steps), steps)).values())


def step_counts(steps: Sequence[StepEvent]) -> Dict[int, int]:
    """How many steps each record stands for, by the record's id (see distinct_steps)."""
    return Counter(map(id, steps))


ANOMALY_REPORT = "Error detected in "  # NB: how anomaly mode's report of a failing backward begins


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
    lineage: Any = field(default=None, repr=False)  # provenance.Lineage: where the run's tensors came from (full mode)
    samplers: Tuple[Any, ...] = ()  # samplerwatch.SamplerUse: the DistributedSamplers the run iterated
    modes: Tuple[Any, ...] = ()  # modewatch.ModeSwitch: the train()/eval() calls the user's code made
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
