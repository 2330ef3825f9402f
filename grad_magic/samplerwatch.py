"""DistributedSampler's epochs: which samplers the run iterated, how often, and at which epochs.

For the run, `DistributedSampler.__iter__` is wrapped (one class attribute, put on when the capture starts and
taken off when it ends; the undo puts back only its own wrapper). A call notes the sampler (weakly), its
`epoch` and `shuffle`, and at its second iteration the user's frames that iterated it (`for x in loader:`) and
how the innermost one names it (`sampler`, `loader.sampler`). A shuffling sampler iterated twice or more at the
same epoch, its first two iterations begun at one user line (the loop over the data run again: a
`next(iter(loader))` to look at a batch first is not an epoch), hands every epoch the same order: `set_epoch()`
was never called (rules/distributed.py).

Records strings, numbers and weak references only; never changes what the sampler yields.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from .sources import Sources, frame_at

MAX_SAMPLERS = 64  # samplers noted per run


@dataclass(frozen=True)
class SamplerUse:
    """One DistributedSampler the run iterated."""

    ref: Optional[weakref.ref] = field(compare=False, repr=False)
    iterations: int
    epochs: Tuple[int, ...]  # its `epoch` at each iteration, in order (at most 8 kept)
    shuffle: bool
    frames: Tuple[Tuple[str, int], ...] = ()  # (filename, line) of the user's code at its second iteration
    name: str = ""  # how the innermost of those frames names it: `sampler`, `loader.sampler`; "" unknown
    same_site: bool = False  # its first two iterations began at one user line (a loop over the data run again)


class _Use:
    __slots__ = ("ref", "iterations", "epochs", "shuffle", "first", "frames", "name")

    def __init__(self, ref: Optional[weakref.ref], shuffle: bool) -> None:
        self.ref, self.iterations, self.epochs, self.shuffle = ref, 0, [], shuffle
        self.first: Tuple[Tuple[str, int], ...] = ()  # the user's frames at its first iteration
        self.frames: Tuple[Tuple[str, int], ...] = ()
        self.name = ""


class SamplerWatch:
    """The run's DistributedSamplers (see the module's docstring). `sources`: which frames are the user's."""

    def __init__(self, sources: Optional[Sources], filename: Optional[str]) -> None:
        self._sources = sources
        self._filename = filename
        self._seen: Dict[int, _Use] = {}
        self._class: Any = None
        self._original: Optional[Callable[..., Any]] = None
        self._wrapper: Optional[Callable[..., Any]] = None

    def install(self) -> None:
        try:
            from torch.utils.data.distributed import DistributedSampler
        except ImportError:  # pragma: no cover - torch built without distributed
            return
        original = DistributedSampler.__dict__.get("__iter__")
        if original is None:
            return
        watch = self

        def __iter__(sampler: Any) -> Any:
            try:
                watch._note(sampler)
            except Exception:  # NB: never in place of the user's loop
                pass
            return original(sampler)

        __iter__.__qualname__ = getattr(original, "__qualname__", "__iter__")
        self._class, self._original, self._wrapper = DistributedSampler, original, __iter__
        DistributedSampler.__iter__ = __iter__

    def uninstall(self) -> None:
        cls, wrapper = self._class, self._wrapper
        if cls is not None and cls.__dict__.get("__iter__") is wrapper:
            cls.__iter__ = self._original
        self._class = None

    def _note(self, sampler: Any) -> None:
        use = self._seen.get(id(sampler))
        if use is None or use.ref is not None and use.ref() is not sampler:
            if len(self._seen) >= MAX_SAMPLERS:
                return
            try:
                ref: Optional[weakref.ref] = weakref.ref(sampler)
            except TypeError:
                ref = None
            use = self._seen[id(sampler)] = _Use(ref, bool(getattr(sampler, "shuffle", False)))
        use.iterations += 1
        if len(use.epochs) < 8:
            epoch = getattr(sampler, "epoch", None)
            use.epochs.append(epoch if isinstance(epoch, int) else -1)
        if use.iterations <= 2 and self._sources is not None:
            here = frame_at(1)  # NB: this wrapper's frame; the user's are further out
            _, frames = self._sources.stack(here, self._filename)
            if use.iterations == 1:
                use.first = frames
            else:
                use.frames, use.name = frames, _name_in(here, frames, sampler)

    def uses(self) -> Tuple[SamplerUse, ...]:
        return tuple(SamplerUse(u.ref, u.iterations, tuple(u.epochs), u.shuffle, u.frames, u.name,
                                bool(u.frames) and u.frames[:1] == u.first[:1])
                     for u in self._seen.values())


def _name_in(frame: Any, frames: Tuple[Tuple[str, int], ...], sampler: Any) -> str:
    """How the innermost user frame names `sampler`: a variable holding it, or a DataLoader's `.sampler` (a
    comprehension's frame is looked through to the frame that runs it, on the same line)."""
    if not frames:
        return ""
    while frame is not None and (frame.f_code.co_filename, frame.f_lineno) != frames[0]:
        frame = frame.f_back
    while frame is not None:
        found: List[str] = []
        for name, value in list(frame.f_locals.items()):
            if value is sampler:
                return name
            if getattr(type(value), "__name__", "") == "DataLoader" and getattr(value, "__dict__", {}).get("sampler") is sampler:
                found.append(f"{name}.sampler")
        if found:
            return found[0] if len(found) == 1 else ""
        if not frame.f_code.co_name.startswith("<") or frame.f_code.co_name == "<module>":
            return ""
        frame = frame.f_back  # NB: <listcomp>, <genexpr>: their own frame in Python 3.11
    return ""
