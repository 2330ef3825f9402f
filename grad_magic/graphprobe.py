"""After a run without anomaly mode (--fast, always-on): what torch's graph and gradients still tell.

Two probes, run once when the record is made, each leaving plain facts and no strong reference to the graph:

- `broken_nodes`: after a backward() that failed on a saved tensor (changed in place, or freed by an earlier
  backward), the nodes of the graph backward() ran on whose saved values torch now refuses, read the way
  torch itself reads them. The root is the tensor backward() was called on, taken from torch's own frames
  in the exception's traceback (`Tensor.backward(self)`, `torch.autograd.backward(tensors)`,
  `torch.autograd.grad(outputs)`): no hook, nothing patched.
- `nan_gradients`: the parameters of the optimizers the run stepped (and of the models their frames held)
  whose `.grad` holds a NaN: anomaly mode's NaN check is off, so backward() raised nothing.

May touch: autograd nodes (their type, `next_functions`, saved values -- metadata, no tensor data), frame
locals of torch's frames, gradients (one NaN reduction per device, one sync per device). Never runs user code:
a saved value with an unpack hook (`saved_tensors_hooks`) is never unpacked, and the nodes of a custom
`autograd.Function` are read through torch's own descriptors, never through the user's class.
"""
from __future__ import annotations

import os
import weakref
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple

import torch

from .names import instance_dict
from .record import distinct_steps

MAX_NODES = 20_000  # autograd nodes looked at from one root set
MAX_BROKEN = 64  # broken saved values kept, of each kind (changed in place, freed)
MAX_PARAMS = 100_000  # parameters a NaN check looks at
_FREED = "backward through the graph a second time"
_CHANGED = "modified by an inplace operation"
_CUSTOM = torch._C._FunctionBase  # NB: the node class of a custom autograd.Function derives from it
_CUSTOM_SAVED = _CUSTOM.saved_tensors.__get__  # torch's descriptor: a subclass cannot redefine what it reads
_CUSTOM_RAW = _CUSTOM._raw_saved_tensors.__get__
_CUSTOM_NEXT = _CUSTOM.next_functions.__get__


@dataclass(frozen=True)
class BrokenSaved:
    """One saved value torch refuses: the node that saved it, which of its saved values, and torch's words."""

    node: str  # "TanhBackward0"
    saved: str  # "result", "self", "other", "tensors" (a custom Function's)
    message: str  # what torch raises when it is read: the same text as a backward() meeting it
    freed: bool  # freed by an earlier backward (else changed in place)


@dataclass(frozen=True)
class GraphFacts:
    """What the failing backward's graph showed after the failure."""

    roots: Tuple[str, ...]  # the root tensors' grad_fn types
    broken: Tuple[BrokenSaved, ...]
    nodes: int  # nodes looked at
    complete: bool  # False: the walk stopped at MAX_NODES


@dataclass(frozen=True)
class NanGradient:
    """A parameter whose gradient held a NaN at the end of the run."""

    ref: Optional[weakref.ref]
    shape: Tuple[int, ...]
    dtype: str
    device: str


# -- the failing backward's graph --

def backward_roots(tb: Optional[TracebackType]) -> List[torch.Tensor]:
    """The tensors the failing backward() (or autograd.grad()) started from, read from torch's own frames."""
    found: List[torch.Tensor] = []
    while tb is not None:
        code = tb.tb_frame.f_code
        where = code.co_filename.replace(os.sep, "/")
        names = {("torch/_tensor.py", "backward"): "self", ("torch/autograd/__init__.py", "backward"): "tensors",
                 ("torch/autograd/__init__.py", "grad"): "outputs"}
        local = next((n for (f, c), n in names.items() if c == code.co_name and where.endswith(f)), None)
        if local is not None:
            value = tb.tb_frame.f_locals.get(local)
            items = value if isinstance(value, (tuple, list)) else (value,)
            # NB: a subclass's attributes may go through its __torch_function__ (user code): plain tensors only
            found += [t for t in items[:64] if type(t) in (torch.Tensor, torch.nn.Parameter)]
            if found:
                return found  # NB: the outermost of torch's frames holds what the user passed
        tb = tb.tb_next
    return found


def broken_nodes(roots: Sequence[torch.Tensor]) -> GraphFacts:
    """The saved values of the graph under `roots` that torch refuses now, in walk order (from the roots)."""
    broken: List[BrokenSaved] = []
    seen: set = set()  # NB: ids (a custom node's class may define __eq__)
    # NB: torch may hand out a new Python object for a node at each `next_functions` read (torch 2.11 did):
    # one dropped after its visit frees its id for the next, which then passed for seen. Kept till the end.
    visited: List[Any] = []
    todo = [t.grad_fn for t in roots if t.grad_fn is not None]
    while todo and len(seen) < MAX_NODES:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        visited.append(node)
        following = next_nodes(node)
        for attr, message in refused_saved(node):
            if sum((_FREED in b.message) == (_FREED in message) for b in broken) < MAX_BROKEN:  # NB: per kind
                broken.append(BrokenSaved(type(node).__name__, attr, message, _FREED in message))
        todo.extend(f for f, _ in following)
    return GraphFacts(tuple(type(t.grad_fn).__name__ for t in roots if t.grad_fn is not None), tuple(broken),
                      len(seen), not todo)


def next_nodes(node: Any) -> Tuple[Tuple[Any, int], ...]:
    """A node's `next_functions`, read through torch's own descriptor for a custom Function's node."""
    return tuple(_CUSTOM_NEXT(node) if issubclass(type(node), _CUSTOM) else getattr(node, "next_functions", ()))


def refused_saved(node: Any) -> Iterator[Tuple[str, str]]:
    """(which saved value, torch's message) for each saved value of `node` torch refuses to give back."""
    if issubclass(type(node), _CUSTOM):  # NB: the user's Function class: only torch's descriptors are read
        raw, message = _raw(lambda: _CUSTOM_RAW(node))
        message = message or ("" if _hooked(raw) else _read(lambda: _CUSTOM_SAVED(node)))
        if message:
            yield "tensors", message
        return
    for attr in _saved_attrs(type(node)):
        raw, message = _raw(lambda: getattr(node, "_raw_saved_" + attr, None))
        message = message or ("" if _hooked(raw) else _read(lambda: getattr(node, "_saved_" + attr)))
        if message:
            yield attr, message


def _raw(get: Any) -> Tuple[Any, str]:
    """A node's raw saved value, or torch's message when it refuses even that (a buffer freed by a backward()
    without retain_graph refuses its raw value too)."""
    try:
        return get(), ""
    except RuntimeError:
        return None, _read(get)


_ATTRS: Dict[type, Tuple[str, ...]] = {}


def _saved_attrs(cls: type) -> Tuple[str, ...]:
    """The tensor values a node class saves (`_saved_x` with a `_raw_saved_x` beside it), once per class."""
    found = _ATTRS.get(cls)
    if found is None:
        names = set(dir(cls))
        found = _ATTRS[cls] = tuple(n[len("_raw_saved_"):] for n in sorted(names) if n.startswith("_raw_saved_")
                                    and "_saved_" + n[len("_raw_saved_"):] in names)
    return found


def _hooked(raw: Any) -> bool:
    """Whether a saved value (or one of a list of them) carries an unpack hook, the user's code: never read."""
    items = raw if isinstance(raw, (tuple, list)) else (raw,)
    return any(getattr(r, "unpack_hook", None) is not None for r in items if r is not None)


def _read(get: Any) -> str:
    """torch's message when reading a saved value fails on a version or a freed buffer, else ""."""
    try:
        get()
    except RuntimeError as exc:
        text = str(exc)
        return text if _CHANGED in text or _FREED in text else ""
    return ""


def probe_failure(exc: Optional[BaseException]) -> Optional[GraphFacts]:
    """The graph facts after a backward() that failed on a saved value; None for any other run."""
    # NB: torch raises a plain RuntimeError; a subclass's __str__ would be user code
    text = exc.args[0] if type(exc) is RuntimeError and exc.args and type(exc.args[0]) is str else ""
    if _CHANGED not in text and _FREED not in text:
        return None
    roots = backward_roots(exc.__traceback__)
    return broken_nodes(roots) if roots else None


@dataclass(frozen=True)
class Probed:
    """What a run without anomaly mode (or without its NaN check) leaves for the rules (RunRecord.probed)."""

    graph: Optional[GraphFacts] = None  # after a backward() that failed on a saved value
    nan: Tuple[NanGradient, ...] = ()  # parameters of the steps' optimizers and models with NaN gradients
    # NB: ids of the parameters whose gradients `nan` looked at (alive while the record is: their optimizers and
    # models hold them): the rule looks again only at the others
    checked: FrozenSet[int] = frozenset()


def probe(exc: Optional[BaseException], steps: Sequence[Any], anomaly: bool, nan_check: bool) -> Optional[Probed]:
    """The probes anomaly mode's absence calls for; None in a run with anomaly mode and its NaN check (the
    default %%gradcheck: backward() stops at the op itself). A Probed, even empty, says the run had no NaN check.
    NB: never raises: a probe that fails leaves the rules what they had (the user's error is shown either way)."""
    if anomaly and nan_check:
        return None
    try:
        graph = probe_failure(exc) if not anomaly else None
        params = list(stepped_params(steps)) if steps else []
        nan = nan_gradients(params) if params else ()
    except Exception:  # noqa: BLE001 -- see NB
        return Probed()
    return Probed(graph, nan, frozenset(id(p) for p in params[:MAX_PARAMS]))


# -- NaN gradients at the end of the run --

def stepped_params(steps: Sequence[Any]) -> Iterator[torch.Tensor]:
    """The parameters of the optimizers the run stepped, then of the models the user's frames held at a step
    (record.StepEvent and its `models`), read from their registries (no user code)."""
    steps = distinct_steps(steps)  # NB: a loop's steps repeat a few records
    optimizers = {id(o): o for o in (s.optimizer() if s.optimizer is not None else None for s in steps)
                  if o is not None}
    for opt in optimizers.values():
        for group in (instance_dict(opt) or {}).get("param_groups", ())[:1000]:
            params = group.get("params", ()) if type(group) is dict else ()
            yield from (p for p in params if type(p) in (torch.Tensor, torch.nn.Parameter))
    held = {id(m): m for s in steps for h in s.models for m in [h.model() if h.model else None]
            if m is not None}
    for model in held.values():
        yield from module_params(model)


def module_params(module: Any) -> Iterator[torch.Tensor]:
    """A module's parameters and its submodules', from their registries (no user code), each module once."""
    seen: set = set()
    todo = [module]
    while todo and len(seen) < 10_000:
        m = todo.pop()
        if not issubclass(type(m), torch.nn.Module) or id(m) in seen:
            continue
        seen.add(id(m))
        attrs = instance_dict(m) or {}
        yield from (p for p in list((attrs.get("_parameters") or {}).values()) if type(p) is torch.nn.Parameter)
        todo.extend(list((attrs.get("_modules") or {}).values()))


def nan_gradients(params: Iterable[torch.Tensor]) -> Tuple[NanGradient, ...]:
    """The parameters whose `.grad` holds a NaN: one reduction per dtype and one host sync per device, whatever
    the count (a second one only when a NaN is there, to say where)."""
    by_device: Dict[torch.device, Dict[torch.dtype, List[torch.Tensor]]] = {}
    seen: set = set()
    for p in params:
        if len(seen) >= MAX_PARAMS:
            break
        grad = p.grad if id(p) not in seen else None
        seen.add(id(p))
        # NB: a meta tensor has no values (whether one is NaN is unknowable): left out
        if type(grad) is torch.Tensor and grad.is_floating_point() and grad.layout == torch.strided and \
                grad.device.type != "meta":
            by_device.setdefault(grad.device, {}).setdefault(grad.dtype, []).append(p)
    found: List[NanGradient] = []
    for groups in by_device.values():
        group = [p for ps in groups.values() for p in ps]
        with torch.no_grad(), torch._C.DisableTorchFunction():  # NB: a mode the user left on sees none of it
            # NB: a norm is NaN when a value is (inf stays inf); one flag per parameter, in `group`'s order
            bad = torch.cat([torch.isnan(torch.stack(torch._foreach_norm([p.grad for p in ps])))
                             for ps in groups.values()])
            if not bool(bad.any()):  # NB: the one sync of this device
                continue
            flags = bad.tolist()
        found += [NanGradient(_ref(p), tuple(p.shape), str(p.dtype).replace("torch.", ""), str(p.device))
                  for p, flag in zip(group, flags) if flag]
    return tuple(found)


def _ref(t: torch.Tensor) -> Optional[weakref.ref]:
    try:
        return weakref.ref(t)
    except TypeError:
        return None
