"""The locals that keep an autograd graph growing from one optimizer step to the next: a running total with a
grad_fn (`total += loss`), a list of losses or outputs (`losses.append(loss)`), in the user's functions and
methods. Asked by the step watch (stepwatch.StepLook) at each step, with the user frames it walked.

Reads frame locals, `__dict__`s of the user's own objects (`self.losses`; an object the cell names, two levels
down: `metrics.track.totals['loss']`) and at most MAX_GRAPH grad_fn nodes:
no user code runs, no tensor data is read; keeps ids and autograd's own node numbers only. Records are plain data.

A graph grew when the newest value's graph holds the node the previous step's value had: nodes are known by
autograd's own sequence number and their type (a node's Python object may be made anew at each read, and its
id then means nothing), so that a sum rebuilt and backpropagated at every step (`l2 += p.norm()` over the
parameters, a KL term summed over layers, `outs.append(model(chunk))` then a loss on `torch.cat(outs)`) never
counts: only a graph that reaches back into an earlier step's does.
"""
from __future__ import annotations

import itertools
from types import FrameType
from typing import Any, Dict, Iterator, List, Optional, Tuple

import torch

from .graphprobe import next_nodes
from .names import instance_dict, type_is, user_object
from .record import GrowingLocal

MAX_NAMES = 256  # names looked at per frame
MAX_ITEMS = 16  # entries of a dict an object holds looked at
DEPTH = 2  # user objects looked into from a name the cell's code spells (`metrics.losses_track.train_losses`)
MAX_GRAPH = 32  # grad_fn nodes looked at to tell that a graph grew from the previous step's
GROWTH = 1  # steps in a row a local must have grown before it is reported: its graph reached into the step before


class GrowthWatch:
    """The growing locals of one capture's steps; remembers (as ids) what the last step saw."""

    def __init__(self) -> None:
        self._last: Dict[Tuple[int, str], State] = {}  # key -> (id(value), size, the grad_fn's node_key)
        self._streak: Dict[Tuple[int, str], int] = {}

    def look(self, frames: List[FrameType], walk: bool = True) -> Tuple[GrowingLocal, ...]:
        """The locals of `frames` that grew at GROWTH steps in a row: a function's locals, and of a cell's (or a
        script's) own frame the globals its code names. `walk`: whether a tensor's graph is walked to the last
        look's node (False when the last look was steps ago: MAX_GRAPH nodes reach back a step or two, not
        sixteen, so the walk would cost its ~30 node reads and find nothing; a list is compared either way)."""
        now: Dict[Tuple[int, str], State] = {}
        found: List[GrowingLocal] = []
        for frame in frames:
            for name, value in _locals_with_graphs(frame):
                key = (id(frame), name)
                state = _state(value)
                if state is None:
                    continue
                now[key] = state
                before = self._last.get(key)
                grew = before is not None and (walk or state[2] is None) and _grew(value, state, before)
                streak = self._streak[key] = self._streak.get(key, 0) + 1 if grew else 0
                if streak >= GROWTH:
                    found.append(_growing_local(frame, name, value, state))
        self._last = now
        self._streak = {k: v for k, v in self._streak.items() if k in now}
        return tuple(found)


State = Tuple[int, int, Any]
_HOLDERS = (torch.Tensor, list)  # NB: what may hold a growing graph: a tensor, a list of them


def _locals_with_graphs(frame: FrameType) -> Iterator[Tuple[str, Any]]:
    if frame.f_code.co_name == "<module>":  # NB: the namespace itself: only the names the cell's code spells
        globs = frame.f_globals
        # NB: every name the cell's code spells, read and filtered in C (map, compress): type_is, in bulk
        names = frame.f_code.co_names[:MAX_NAMES]
        values = list(map(globs.get, names))
        keep = list(map(issubclass, map(type, values), itertools.repeat(_HOLDERS)))
        yield from zip(itertools.compress(names, keep), itertools.compress(values, keep))
        # NB: what a tracker object the cell names holds (`metrics.losses[k] += ...`), MAX_NAMES in all
        held = (pair for name, value in zip(names, values) if not issubclass(type(value), _HOLDERS)
                and user_object(value) for pair in _held_by(name, value, DEPTH))
        yield from itertools.islice(held, MAX_NAMES)
        return
    for name, value in list(frame.f_locals.items())[:MAX_NAMES]:
        if name == "self" and user_object(value):
            for attr, inner in list((instance_dict(value) or {}).items())[:MAX_NAMES]:
                if type_is(inner, list):
                    yield f"self.{attr}", inner
        elif type_is(value, (torch.Tensor, list)):
            yield name, value


def _held_by(path: str, obj: Any, depth: int) -> Iterator[Tuple[str, Any]]:
    """What a user's object holds that may grow a graph: its tensors and lists, the tensors of its dicts
    (`self.train_losses[key] += loss[key]`), and so on in the user objects it holds, `depth` levels down."""
    for attr, inner in list((instance_dict(obj) or {}).items())[:MAX_NAMES]:
        if not isinstance(attr, str) or attr.startswith("__"):
            continue
        if type_is(inner, _HOLDERS):
            yield f"{path}.{attr}", inner
        elif type_is(inner, dict):
            for key, item in list(inner.items())[:MAX_ITEMS]:
                if type_is(item, torch.Tensor) and type_is(key, (str, int)):
                    yield f"{path}.{attr}[{key!r}]", item
        elif depth > 1 and user_object(inner):
            yield from _held_by(f"{path}.{attr}", inner, depth - 1)


def _graph_of(value: Any) -> Optional[torch.Tensor]:
    """The tensor with a grad_fn that `value` (a tensor, or a dict / tuple / list of them) holds, else None."""
    if type_is(value, torch.Tensor):
        return value if value.grad_fn is not None else None
    items = value.values() if type_is(value, dict) else value if type_is(value, (tuple, list)) else ()
    return next((t for t in list(items)[:16] if type_is(t, torch.Tensor) and t.grad_fn is not None), None)


def node_key(node: Any) -> Tuple[str, int]:
    """An autograd node as autograd numbers it: its type and sequence number (per thread, never reused there)."""
    return type(node).__name__, node._sequence_nr()


def _state(value: Any) -> Optional[State]:
    if type_is(value, torch.Tensor):
        return (id(value), 0, node_key(value.grad_fn)) if value.grad_fn is not None else None
    if value and _graph_of(value[-1]) is not None:
        return id(value), len(value), None
    return None


def _grew(value: Any, now: State, before: State) -> bool:
    """A list: the same list, longer. A tensor: a new grad_fn whose graph holds the previous step's."""
    if type_is(value, list):
        return now[0] == before[0] and now[1] > before[1]
    if now[2] == before[2]:
        return False
    name, number = before[2]
    todo = [value.grad_fn]
    for node in itertools.islice(todo, MAX_GRAPH):  # NB: breadth first: the list grows as it is read
        for child, _ in next_nodes(node):
            if child is not None:
                if child._sequence_nr() == number and type(child).__name__ == name:  # NB: node_key, inlined
                    return True
                todo.append(child)
    return False


def _growing_local(frame: FrameType, name: str, value: Any, state: State) -> GrowingLocal:
    code = frame.f_code
    newest = value if type_is(value, torch.Tensor) else value[-1]
    item = "tensor" if type_is(newest, torch.Tensor) else "dict" if type_is(newest, dict) and all(
        type_is(v, torch.Tensor) for v in newest.values()) else "other"
    tensor = _graph_of(newest)
    return GrowingLocal((code.co_filename, frame.f_lineno), getattr(code, "co_qualname", code.co_name), name,
                        "tensor" if type_is(value, torch.Tensor) else "list", state[1], item,
                        tensor.numel() if tensor is not None else 0,
                        type(tensor.grad_fn).__name__ if tensor is not None else "")
