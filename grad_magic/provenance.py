"""Where the tensors of a watched run came from: for each tensor a torch op made while the cell ran (full
`%%gradcheck`: the op tracker sees every op), the op, the user frames that called it and the tensors it read.

A rule follows this record back from a failing op's operand to where the odd property was born: the
factory that made a tensor on the wrong device, the `from_numpy` that made it float64, the `view` that
changed its batch size; or to a tensor made before the run (an earlier cell), which the namespace names.
Reading the code then turns that line into an edit; it never finds the line.

Bounded (MAX_BIRTHS, oldest forgotten first) and weak: a record keeps no tensor alive. Torch-only; never
runs user code.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import torch

MAX_BIRTHS = 20_000
MAX_INPUTS = 8  # tensor inputs kept per op (a foreach or cat of hundreds: the first ones describe it)
MAX_HOPS = 256  # steps back a walk takes
MAX_BACKWARDS = 64


@dataclass(frozen=True)
class Meta:
    """What an op's input was when the op read it: enough for a walk to test what it carried."""

    device: torch.device
    dtype: torch.dtype
    shape: Tuple[int, ...]
    requires_grad: bool = False
    version: int = -1  # its in-place version counter then (-1: none, an inference tensor)


@dataclass(frozen=True)
class Input:
    """A tensor an op read: its metadata then, and either the op that made it (`parent`) or, for a tensor made
    before the run (or by code the tracker did not see), a weak reference to it."""

    meta: Meta
    parent: Optional["Birth"]
    ref: Optional[weakref.ref] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Birth:
    """The op that made a tensor: its name, the user frames that called it (innermost first), the tensors it
    read, the keywords it was given (`device`, `dtype`)."""

    op: str
    frames: Tuple[Tuple[str, int], ...]
    inputs: Tuple[Input, ...] = field(repr=False)
    keywords: Tuple[str, ...] = ()
    grad: bool = True  # grad mode was on when the op ran (off: under torch.no_grad() / inference_mode())
    # NB: a `torch.stack` of samples along a new dimension 0 (a DataLoader's collate): how many. A walk that
    # finds no input carrying the batch's property goes on into a sample, the property read per sample
    stacked: int = 0


@dataclass(frozen=True)
class Origin:
    """Where a walk back ended: `birth` is the op that gave the property (None: the walk reached a tensor made
    before the run, `root`); `path` the births walked, the failing operand's first."""

    birth: Optional[Birth]
    root: Optional[torch.Tensor]
    path: Tuple[Birth, ...]
    sampled: bool = False  # the walk went on from a batch into one of the samples stacked into it


def meta_of(t: torch.Tensor) -> Meta:
    return Meta(t.device, t.dtype, tuple(t.shape), t.requires_grad, _version(t))


class Lineage:
    """The births of one run, keyed by the tensor's id and checked by a weak reference (ids are reused).
    Births link to the births of their inputs, so a walk goes on through temporaries long gone."""

    def __init__(self) -> None:
        self._births: Dict[int, Tuple[weakref.ref, Birth]] = {}
        # NB: the memory each birth's tensor occupied: an alias an unseen op made (`x = Variable(x)`) keeps that
        # memory after the tensor the run saw is gone, so its layout still names the birth (newest first)
        self._layouts: Dict[Tuple[Any, ...], Birth] = {}
        # NB: (the tensor's backward node as autograd numbers it, the user frames) of each backward() that
        # went through: nodes, not tensors -- a library may call backward() on a loss derived from the user's
        self.backwards: List[Tuple[Tuple[str, int], Tuple[Tuple[str, int], ...]]] = []

    def backward(self, t: Any, frames: Tuple[Tuple[str, int], ...]) -> None:
        """A backward() that went through: on which graph, from which user frames (the last MAX_BACKWARDS)."""
        node = t.grad_fn if isinstance(t, torch.Tensor) else None
        if node is not None:
            self.backwards.append(((type(node).__name__, node._sequence_nr()), frames))
            del self.backwards[:-MAX_BACKWARDS]

    def record(self, name: str, args: tuple, kwargs: dict, result: Any,
               frames: Tuple[Tuple[str, int], ...]) -> None:
        made = list(_tensors(result, 4))
        if not made:
            return
        read = list(_tensors((args, tuple(kwargs.values())), MAX_INPUTS))
        if any(t is r for t in made for r in read):
            return  # NB: an op that returns its input (in place, `x.to(x.device)`): not a birth
        inputs = tuple(self._input(t) for t in read)
        birth = Birth(name, frames, inputs, tuple(k for k, v in kwargs.items() if v is not None),
                      torch.is_grad_enabled(), _stacked(name, args, kwargs, made[0]))
        births, layouts = self._births, self._layouts
        for t in made:
            births.pop(id(t), None)
            births[id(t)] = (weakref.ref(t), birth)
            key = _layout(t)
            if key is not None:
                layouts.pop(key, None)
                layouts[key] = birth
        while len(births) > MAX_BIRTHS:
            del births[next(iter(births))]
        while len(layouts) > MAX_BIRTHS:
            del layouts[next(iter(layouts))]

    def _input(self, t: torch.Tensor) -> Input:
        parent = self.birth_of(t)
        # NB: a parameter is kept by reference even when made in the run: `changed_leaves` compares its version
        return Input(meta_of(t), parent, _ref(t) if parent is None or t.is_leaf and t.requires_grad else None)

    def birth_of(self, t: torch.Tensor) -> Optional[Birth]:
        entry = self._births.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else None

    def made(self, birth: Birth) -> Optional[torch.Tensor]:
        """The tensor `birth` made, while it lives."""
        for ref, b in self._births.values():
            if b is birth:
                return ref()
        return None

    def ancestors(self, t: torch.Tensor) -> Iterator[Birth]:
        """The births `t` came from, nearest first (breadth first, every input; at most MAX_HOPS)."""
        first = self.birth_of(t) or self.alias_birth(t)
        queue, seen = ([first] if first is not None else []), set()
        while queue and len(seen) < MAX_HOPS:
            b = queue.pop(0)
            if id(b) in seen:
                continue
            seen.add(id(b))
            yield b
            queue.extend(i.parent for i in b.inputs if i.parent is not None)

    def alias_birth(self, t: torch.Tensor) -> Optional[Birth]:
        """The birth of a tensor the run made that `t` is an alias of -- the same memory, shape, strides and
        dtype -- when an op the tracker does not see made `t` from it (`Variable(x)`, `x.data`, a C extension)."""
        key = _layout(t)
        if key is None:
            return None
        for ref, birth in reversed(list(self._births.values())):
            other = ref()
            if other is not None and other is not t and _layout(other) == key:
                return birth
        # NB: the tensor the run saw is gone, its memory kept by `t`. Not a view the run made of `t` itself
        # (`t.detach()`, `t[:]`: same memory, `t` among its inputs), which is no birth of `t`'s
        found = self._layouts.get(key)
        if found is None or found is self.birth_of(t) or any(i.ref is not None and i.ref() is t for i in found.inputs):
            return None
        return found

    def origin(self, t: torch.Tensor, carries: Callable[[Meta], bool]) -> Origin:
        """Follow `t` back through the ops whose inputs carry the property (`carries`, true of `t`) to the op
        that gave it: one none of whose inputs carries it."""
        birth = self.birth_of(t) or self.alias_birth(t)
        if birth is None:
            return Origin(None, t, ())
        path: List[Birth] = []
        sampled = False
        for _ in range(MAX_HOPS):
            path.append(birth)
            nxt = next((i for i in birth.inputs if _safe(carries, i.meta)), None)
            if nxt is None and birth.stacked:
                # NB: only a property the batch's size does not decide (a sample's own shape, dtype): that one
                # the samples carry; a batch of 32 is the stack's doing
                per_sample, other = _per_sample(carries, birth.stacked), _per_sample(carries, birth.stacked + 1)
                nxt = next((i for i in birth.inputs if _safe(per_sample, i.meta) and _safe(other, i.meta)), None)
                carries = per_sample if nxt is not None else carries
            if nxt is None:
                return Origin(birth, None, tuple(path), sampled)
            sampled = sampled or birth.stacked > 0
            if nxt.parent is None:
                root = nxt.ref() if nxt.ref is not None else None
                if root is None:  # NB: a temporary an unseen op made on this line (`torch.from_numpy(a)`)
                    return Origin(birth, None, tuple(path), sampled)
                alias = self.alias_birth(root)
                if alias is None or any(alias is b for b in path):
                    return Origin(None, root, tuple(path), sampled)
                birth = alias
                continue
            if any(nxt.parent is b for b in path):
                break
            birth = nxt.parent
        return Origin(birth, None, tuple(path), sampled)


    def changed_leaves(self, t: torch.Tensor) -> List[torch.Tensor]:
        """The leaves that require grad (parameters) `t`'s ops read and that were changed in place since: an
        optimizer step (or `p.add_` under no_grad) between building a graph and backpropagating it again."""
        found: List[torch.Tensor] = []
        for b in self.ancestors(t):
            for i in b.inputs:
                leaf = i.ref() if i.ref is not None and i.meta.requires_grad else None
                if isinstance(leaf, torch.Tensor) and leaf.is_leaf and i.meta.version >= 0 and \
                        _version(leaf) != i.meta.version and all(leaf is not f for f in found):
                    found.append(leaf)
        return found

    def cut(self, t: torch.Tensor) -> Optional[Birth]:
        """The nearest op on `t`'s way back that ran with grad mode off and read a tensor that requires grad:
        where its graph was cut (a forward pass under torch.no_grad())."""
        birth = self.birth_of(t)
        queue, seen = ([birth] if birth is not None else []), set()
        while queue and len(seen) < MAX_HOPS:
            b = queue.pop(0)
            if id(b) in seen:
                continue
            seen.add(id(b))
            if not b.grad and any(i.meta.requires_grad for i in b.inputs):
                return b
            queue.extend(i.parent for i in b.inputs if i.parent is not None and not i.meta.requires_grad)
        return None


def _stacked(name: str, args: tuple, kwargs: dict, made: torch.Tensor) -> int:
    """How many samples a `torch.stack(samples)` along dimension 0 put in `made`; 0 for any other op."""
    if name != "stack" or not args or not isinstance(args[0], (list, tuple)) or not args[0]:
        return 0
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    first = args[0][0]
    if dim != 0 or not isinstance(first, torch.Tensor) or tuple(made.shape) != (len(args[0]), *first.shape):
        return 0
    return len(args[0])


def _per_sample(carries: Callable[[Meta], bool], n: int) -> Callable[[Meta], bool]:
    """`carries` read of one of `n` samples stacked along a new dimension 0: of the batch it would make."""
    return lambda m: carries(Meta(m.device, m.dtype, (n, *m.shape), m.requires_grad, m.version))


def _layout(t: torch.Tensor) -> Optional[Tuple[Any, ...]]:
    """Where a tensor's elements are in memory, and how it reads them; None where it has no memory (meta)."""
    try:
        ptr = t.data_ptr()
        return (ptr, t.device, tuple(t.shape), t.stride(), t.dtype) if ptr else None
    except (RuntimeError, TypeError, NotImplementedError):
        return None


def _version(t: torch.Tensor) -> int:
    try:
        return t._version
    except RuntimeError:  # NB: inference tensors keep no version counter
        return -1


def _ref(t: torch.Tensor) -> Optional[weakref.ref]:
    try:
        return weakref.ref(t)
    except TypeError:
        return None


def _safe(carries: Callable[[Meta], bool], m: Meta) -> bool:
    try:
        return bool(carries(m))
    except Exception:  # NB: a tensor subclass whose metadata raises
        return False


def _tensors(value: Any, limit: int, depth: int = 0) -> Iterator[torch.Tensor]:
    """Tensors in a value, one level into lists, tuples and dicts (two for an op's (args, kwargs))."""
    if isinstance(value, torch.Tensor):
        yield value
        return
    if depth > 2 or not isinstance(value, (list, tuple, dict)):
        return
    items = value.values() if isinstance(value, dict) else value
    count = 0
    for item in items:
        for t in _tensors(item, limit - count, depth + 1):
            yield t
            count += 1
            if count >= limit:
                return
