"""What the capture's step watch reads at each optimizer step, beyond the optimizer itself: the user's frames
(the models they hold, the Dropout/BatchNorm modes those models step in, the locals that keep an autograd graph
growing from one step to the next: growing.py), and which gradients were cleared since the previous step.

The step watch (capture.py) asks `StepLook.look` in its pre-hook, once per `optimizer.step()`: from the step
call outwards, the user's own frames only (cells and the user's files: `sources.Sources`), innermost first, up
to the running cell's.
This is how a silent rule sees a loop that lives in a helper or a method three cells up: `model` in
`train_model`, `self.model` in `Trainer.train_epoch`, the global `rnn` a helper reads. `Clearings` tells a
gradient cleared (`zero_grad()`, `p.grad.zero_()`) from one only scaled (`clip_grad_norm_`).

Reads frame locals, the globals a frame's code names, `__dict__`s, module registries and the op tracker's
in-place events (the dicts, never a property or `__getattr__`): no user code runs, no tensor data is read.
Keeps weak references and ids only, so no graph and no model is kept alive by watching. Records are plain data.
"""
from __future__ import annotations

import dataclasses
import functools
import weakref
from types import FrameType
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple

import torch
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.dropout import _DropoutNd

from .growing import MAX_NAMES, GrowthWatch
from .names import instance_dict, type_is, user_object
from .record import GrowingLocal, HeldModel, StepEvent
from .sources import Sources
from .tracker import TORCH_DIR

_deref = weakref.ref.__call__

MAX_FRAMES = 8  # user frames looked at per step, innermost first
MAX_MODULES = 5_000  # submodules walked per model
LOOK_FIRST = 8  # an optimizer's first 8 steps are looked at...
# ... then steps 16, 32 and 64 (the live checks read at each power of two), every 64th after them, and each one
# called from another frame or line than its last (docs/PERFORMANCE.md: what a look costs)
LOOK_EVERY = 64


def looks_at(step: int) -> bool:
    """Whether an optimizer's step number `step` (from 1) is looked at whatever calls it."""
    return step <= LOOK_FIRST or step % LOOK_EVERY == 0 or step & (step - 1) == 0


def next_look(step: int) -> int:
    """The first step after `step` that `looks_at`."""
    if step < LOOK_FIRST:
        return step + 1
    power = 1 << step.bit_length()  # NB: the next power of two
    return min(power, (step // LOOK_EVERY + 1) * LOOK_EVERY)


def calling_frame(frame: Optional[FrameType], depth: int = 0) -> Tuple[Optional[FrameType], int]:
    """The first frame from `frame` out that is not torch's: what called `optimizer.step()` (through torch's
    wrappers: the step's own, an LR scheduler's), and its depth (`depth`: that of `frame`)."""
    while frame is not None and frame.f_code.co_filename.startswith(TORCH_DIR):
        frame = frame.f_back
        depth += 1
    return frame, depth


# NB: in-place ops that may clear a gradient (`p.grad.zero_()`, `p.grad.data.mul_(0)`, `g[:] = 0`); scaling it
# (`clip_grad_norm_`'s `_foreach_mul_`, `clamp_`, `div_`) keeps what it holds
CLEARING = frozenset({"zero_", "fill_", "copy_", "mul_", "__imul__", "__setitem__", "set_", "_foreach_zero_",
                      "_foreach_copy_"})


def _NOT_CLEARED(grad: torch.Tensor) -> bool:
    return False


class Clearings:
    """The gradients cleared since the previous step: by `zero_grad()` (its wrapper adds them to `by_zero_grad`)
    or by an in-place op of the user's that clears; a gradient only clipped or scaled is not cleared."""

    def __init__(self) -> None:
        self.by_zero_grad: Set[int] = set()
        self._mark: Any = None  # the op tracker's newest in-place event at the previous step
        self._dropped = 0

    def since_last_step(self, log: Any) -> Callable[[torch.Tensor], bool]:
        """Whether a gradient was cleared since the previous step; then starts counting again. `log`: the op
        tracker's OpLog (its in-place events and the ids it saw changed in place, `touched`)."""
        ids, self.by_zero_grad = self.by_zero_grad, set()  # NB: zero_grad's wrapper adds to the new one
        mark = log.inplace[-1] if log.inplace else None
        if mark is self._mark and log.dropped == self._dropped:  # NB: a healthy loop: no in-place op of the user's
            return (lambda g: id(g) in ids) if ids else _NOT_CLEARED
        events, complete = self._new_events(log)
        clearing = [e for e in events if e.name in CLEARING]
        shapes: Set[Tuple[Any, str]] = set()
        if not complete or any(len(e.targets) >= 4 for e in clearing):
            ids |= log.touched  # NB: what changed cannot be told apart: every change counts as a clearing
        elif clearing:
            ids |= {t.ident for e in clearing for t in e.targets}
            # NB: `p.grad.data.zero_()` clears through another tensor object: known by its shape
            shapes = {(t.shape, t.dtype) for e in clearing for t in e.targets if not t.requires_grad}
        self._mark, self._dropped = mark, log.dropped
        return lambda g: id(g) in ids or bool(shapes) and (tuple(g.shape), str(g.dtype)[6:]) in shapes

    def _new_events(self, log: Any) -> Tuple[List[Any], bool]:
        new = []
        for event in reversed(log.inplace):
            if event is self._mark:
                return new, log.dropped == self._dropped
            new.append(event)
        return new, self._mark is None and log.dropped == self._dropped


def stale_grads(params: Iterable[torch.Tensor], after: Dict[int, Tuple[weakref.ref, int]],
                cleared: Callable[[torch.Tensor], bool]) -> Tuple[int, int, int]:
    """(parameters with a .grad, those whose .grad backward added onto since the previous step, never cleared,
    those whose .grad a backward made or added to since the previous step). `after`: id(param) -> (weak
    reference to the .grad it stepped on, that .grad's version after the step)."""
    with_grad = stale = fresh = 0
    seen_at = after.get
    for p in params:
        g = p.grad
        if g is None:
            continue
        with_grad += 1
        seen = seen_at(id(p))
        if seen is None or seen[0]() is not g:
            # NB: a .grad new since the last step was made by a backward; one this capture never saw, unless
            # something cleared it in place since (then whether a backward added to it is unknown)
            fresh += seen is not None or not cleared(g)
            continue
        moved = g._version - seen[1]
        # NB: same grad object, changed since the last step, and nothing of the user's cleared it in place
        # (zero_grad(set_to_none=False) does) -> backward accumulated onto old gradients.
        if moved and not cleared(g):
            stale += 1
            fresh += 1
        elif moved >= 2:  # NB: cleared in place (one change), then added to by a backward (another)
            fresh += 1
    return with_grad, stale, fresh


def stepped_on(params: Iterable[torch.Tensor], after: Dict[int, Tuple[weakref.ref, int]]) -> None:
    """Notes in `after` the .grad each parameter stepped on and its version now (a step has just ended).
    NB: `weakref.ref(g)` gives the reference `g` already has: one per .grad, kept as long as the .grad is."""
    ref = weakref.ref
    after.update([(id(p), (ref(g), g._version)) for p in params if (g := p.grad) is not None])


def counted_after(step: StepEvent, params: Iterable[torch.Tensor]) -> StepEvent:
    """A `step(closure)` with its gradients counted after it: the closure makes them inside the step."""
    count = sum(1 for p in params if p.grad is not None)
    return dataclasses.replace(step, params_with_grad=count, fresh_params=count)


def users_closure(closure: Callable[..., Any], resume: Callable[[], None], suspend: Callable[[], None]
                  ) -> Callable[..., Any]:
    """The closure of `step(closure)`, run as the user's own code: the step watch's pause is lifted (the op
    tracker back on) while it runs, and put back after it, also when it raises."""
    @functools.wraps(closure)
    def run(*args: Any, **kwargs: Any) -> Any:
        resume()
        try:
            return closure(*args, **kwargs)
        finally:
            suspend()

    return run


class StepLook:
    """Looks at the user's frames at each step of one capture; remembers (as ids) what the last step saw."""

    def __init__(self, sources: Sources, filename: Optional[str] = None) -> None:
        self._sources = sources
        self._filename = filename  # the running cell: the outermost frame looked at (above it: the kernel's)
        self._growth = GrowthWatch()
        self._layers: Dict[Tuple[int, int], Tuple[weakref.ref, bool, Tuple[weakref.ref, ...]]] = {}
        self._plan: Optional[Tuple[Any, Any]] = None  # (the frames and lines of the last read, what it found)
        self._was: Optional[Tuple[Any, Tuple[HeldModel, ...]]] = None  # (the layers' modes, the models) last step
        self._refs: Tuple[weakref.ref, ...] = ()  # the weak references of the plan's models
        self._count = 0  # steps looked at
        self._looked = -1  # the step watch's count at the last look (a look right after it walks graphs)

    def look(self, optimizer: Any, frame: Optional[FrameType], step: int = 0
             ) -> Tuple[Optional[int], Tuple[Tuple[str, int], ...], Tuple[HeldModel, ...], Tuple[GrowingLocal, ...]]:
        """At a step called from `frame`: the running cell's line, the user frames' (filename, line) innermost
        first (what `Sources.stack` gives), the models those frames hold and the locals that grew since the last
        step. One walk of the stack. `step`: the step watch's count of steps ended, all optimizers together (the
        growing locals' graphs are walked when the last look was at the step before). Never raises."""
        try:
            lineno, frames = self._user_frames(frame)
        except Exception:  # NB: watching never changes what the user's code does
            return None, (), (), ()
        sites = tuple((f.f_code.co_filename, f.f_lineno) for f in frames)
        try:
            walk, self._looked = self._looked == step - 1, step
            return lineno, sites, self._models(optimizer, frames), self._growth.look(frames, walk)
        except Exception:
            return lineno, sites, (), ()

    def modes_now(self, optimizer: Any) -> Optional[Tuple[HeldModel, ...]]:
        """Between two looks at a loop's steps: the models of the last look, their layers' modes read now (the
        same tuple when none changed); None when the last look was another optimizer's or a model is gone."""
        plan, was = self._plan, self._was
        if plan is None or plan[0][0] != id(optimizer):
            return None
        if was is not None and not any(was[0]):  # NB: no Dropout/BatchNorm layer: nothing whose mode can change
            # NB: every model still alive, read in C (map of the weak references' call): it runs at every step
            return None if None in map(_deref, self._refs) else was[1]
        try:
            return self._held_now(optimizer, [], plan[0], False)
        except Exception:  # NB: watching never changes what the user's code does
            return None

    def _user_frames(self, frame: Optional[FrameType]) -> Tuple[Optional[int], List[FrameType]]:
        """The running cell's line and the user frames from `frame` out to the cell's (at most MAX_FRAMES): what
        calls the running cell (a kernel, a script) is not what the cell ran."""
        found: List[FrameType] = []
        while frame is not None:
            name = frame.f_code.co_filename
            if name == self._filename:
                if len(found) < MAX_FRAMES:
                    found.append(frame)
                return frame.f_lineno, found
            if len(found) < MAX_FRAMES and self._sources.is_user(name):
                found.append(frame)
            frame = frame.f_back
        return None, found

    # -- the models --

    def _models(self, optimizer: Any, frames: List[FrameType]) -> Tuple[HeldModel, ...]:
        """The models the frames hold, with their layers' modes read now. Which models the frames' names hold is
        read at looks 1, 2, 4 and 8 (LOOK_FIRST), at every second look after those (steps 32, 128, then every
        2 * LOOK_EVERY: stepwatch.looks_at), and whenever the step comes from other frames or lines; in
        between, a loop's step finds what its frames held at the last read."""
        self._count = count = self._count + 1
        key = [id(optimizer)]
        for f in frames:
            key += (id(f), f.f_code, f.f_lineno)
        read = self._plan is None or self._plan[0] != key or (count % 2 == 0 if count > LOOK_FIRST else
                                                              count & (count - 1) == 0)
        found = self._held_now(optimizer, frames, key, read)
        return found if found is not None else self._held_now(optimizer, frames, key, True) or ()

    def _held_now(self, optimizer: Any, frames: List[FrameType], key: Any, read: bool
                  ) -> Optional[Tuple[HeldModel, ...]]:
        """The held models with their modes now; None when one of them is gone since the last read."""
        if read or self._plan is None:
            self._plan, self._was = (key, self._resolve(optimizer, frames)), None
            self._refs = tuple(entry[0] for entry in self._plan[1])
        now = []
        for ref, _, _, _, layers in self._plan[1]:
            if ref() is None:
                return None
            now.append(_modes(layers) if layers else ())
        if self._was is not None and self._was[0] == now:
            return self._was[1]  # NB: a loop's step: the same models, their layers in the same modes
        found = tuple(HeldModel(ref, path, site, stepped,
                                tuple(r for r, m in zip(layers, modes) if m is False and _learning(r)),
                                sum(1 for m in modes if m is True))
                      for (ref, path, site, stepped, layers), modes in zip(self._plan[1], now))
        self._was = (now, found)
        return found

    def _resolve(self, optimizer: Any, frames: List[FrameType]
                 ) -> Tuple[Tuple[weakref.ref, str, Tuple[str, int], bool, Tuple[weakref.ref, ...]], ...]:
        """(module, path, site, stepped, its Dropout/BatchNorm layers) for each model the frames' names hold."""
        seen: Dict[int, Any] = {}
        ids: List[Set[int]] = []  # NB: the optimizer's parameter ids, read only when a model is new to it
        for frame in frames:
            site = (frame.f_code.co_filename, frame.f_lineno)
            for path, module in _modules_held(frame):
                if id(module) in seen or len(seen) >= 32:
                    continue
                stepped, layers = self._mode_layers(optimizer, module, ids)
                seen[id(module)] = (weakref.ref(module), path, site, stepped, layers)
        return tuple(seen.values())

    def _mode_layers(self, optimizer: Any, module: torch.nn.Module, ids: List[Set[int]]
                     ) -> Tuple[bool, Tuple[weakref.ref, ...]]:
        key = (id(optimizer), id(module))
        known = self._layers.get(key)
        if known is None or known[0]() is not module:
            if not ids:
                ids.append({id(p) for g in optimizer.__dict__.get("param_groups", ()) for p in g.get("params", ())})
            known = self._layers[key] = (weakref.ref(module), *_trained_layers(module, ids[0]))
        return known[1], known[2]

    # -- the locals that grow --

def _learning(layer: weakref.ref) -> bool:
    """Whether an eval() layer is being trained now: a Dropout always (its parent's parameters are stepped); a
    BatchNorm when its weight got a gradient for this step (a frozen extractor run under torch.no_grad(), kept
    in eval() on purpose, gets none though the optimizer holds it)."""
    m = layer()
    if m is None or not type_is(m, _BatchNorm):
        return True
    weight = (m.__dict__.get("_parameters") or {}).get("weight")
    return weight is not None and weight.grad is not None


def _modes(layers: Tuple[weakref.ref, ...]) -> Tuple[Optional[bool], ...]:
    """The `training` flag of each layer still alive."""
    return tuple(layer.__dict__.get("training") for layer in (r() for r in layers) if layer is not None)


def _modules_held(frame: FrameType) -> Iterator[Tuple[str, torch.nn.Module]]:
    """(path, module): the frame's locals (a function's), the globals its code names, and modules one
    attribute down from a user's object among them (`self.model`, `trainer.model`)."""
    for name, value in _names_of(frame):
        if type_is(value, torch.nn.Module):
            yield name, value
        elif user_object(value):
            for attr, inner in list(instance_dict(value).items())[:MAX_NAMES]:
                if type(attr) is str and type_is(inner, torch.nn.Module):
                    yield f"{name}.{attr}", inner


def _names_of(frame: FrameType) -> Iterator[Tuple[str, Any]]:
    code = frame.f_code
    local: Dict[str, Any] = {} if code.co_name == "<module>" else dict(frame.f_locals)
    for name, value in list(local.items())[:MAX_NAMES]:
        yield name, value
    globs = frame.f_globals
    for name in code.co_names[:MAX_NAMES]:
        if name not in local and name in globs:
            yield name, globs[name]


def _submodules(module: torch.nn.Module) -> Iterator[Tuple[torch.nn.Module, Optional[torch.nn.Module]]]:
    """(module, its parent) for the module and everything under it, read from `_modules` dicts."""
    todo: List[Tuple[Any, Any]] = [(module, None)]
    seen: Set[int] = set()
    while todo and len(seen) < MAX_MODULES:
        m, parent = todo.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        yield m, parent
        todo.extend((c, m) for c in list((m.__dict__.get("_modules") or {}).values()) if c is not None)


def _trained_layers(module: torch.nn.Module, ids: Set[int]) -> Tuple[bool, Tuple[weakref.ref, ...]]:
    """Whether the optimizer steps some of `module`'s parameters; its Dropout (p > 0) layers whose parent
    holds stepped parameters, and BatchNorm layers whose weight is stepped."""
    pairs = list(_submodules(module))
    direct = {id(m): any(id(p) in ids for p in (m.__dict__.get("_parameters") or {}).values() if p is not None)
              for m, _ in pairs}
    trained = dict(direct)  # NB: a module with stepped parameters anywhere under it (children come later)
    for m, parent in reversed(pairs):
        if parent is not None and trained[id(m)]:
            trained[id(parent)] = True
    layers = []
    for m, parent in pairs:
        if type_is(m, _DropoutNd) and m.__dict__.get("p") and parent is not None and trained[id(parent)]:
            layers.append(weakref.ref(m))
        elif type_is(m, _BatchNorm) and direct[id(m)]:
            weight = (m.__dict__.get("_parameters") or {}).get("weight")
            if weight is not None and weight.requires_grad:
                layers.append(weakref.ref(m))
    return any(direct.values()), tuple(layers)


