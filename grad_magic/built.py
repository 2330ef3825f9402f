"""Where the user's code built each module's parameters, kept from `%load_ext grad_magic` on, across cells.

A run's provenance (provenance.py) starts with its cell; the model usually comes from an earlier one. When
a module registers a parameter (`self.fc = nn.Linear(64, 12)` in a class's `__init__`, a transformers model
built from a config), torch's global parameter-registration hook tells this record, which keeps the user
frames on the stack then: the `__init__` line that made the layer, the cell line that built the model. A rule
that traces a failing op's operand back to a parameter (the classifier that made the logits) asks here which
line made it.

Bounded (MAX_PARAMETERS, oldest forgotten first) and weak: no parameter is kept alive, and a freed one's entry
goes with it. Costs one walk of the
stack per parameter registered (module construction only, never a forward or a step); never runs user code.
"""
from __future__ import annotations

import weakref
from typing import Any, Dict, Optional, Tuple

import torch
from torch.nn.modules.module import register_module_parameter_registration_hook

from .sources import Sources, frame_at

MAX_PARAMETERS = 100_000
Frames = Tuple[Tuple[str, int], ...]  # (file, line) of the user frames, innermost first


class Built:
    def __init__(self, shell: Any) -> None:
        self._sources = Sources(shell)
        self._made: Dict[int, Tuple[weakref.ref, Frames]] = {}
        self._handle: Any = None

    def install(self) -> None:
        if self._handle is None:
            self._handle = register_module_parameter_registration_hook(self._registered)

    def uninstall(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def frames_of(self, param: Any) -> Frames:
        """The user frames that built `param` (innermost first); () when none was recorded."""
        entry = self._made.get(id(param))
        return entry[1] if entry is not None and entry[0]() is param else ()

    def _registered(self, module: Any, name: str, param: Any) -> None:
        # NB: never raises and returns None (a hook's return value would replace the parameter)
        try:
            if not isinstance(param, torch.Tensor):
                return
            frames = self._sources.stack(frame_at(2), None)[1]
            if frames:
                made, key = self._made, id(param)
                made.pop(key, None)
                made[key] = (weakref.ref(param, lambda ref: self._forget(key, ref)), frames)
                while len(made) > MAX_PARAMETERS:
                    del made[next(iter(made))]
        except Exception:  # NB: watching never changes what the user's code does
            pass

    def _forget(self, key: int, ref: weakref.ref) -> None:
        """A recorded parameter was freed: its entry goes (a session builds many models over its cells)."""
        entry = self._made.get(key)
        if entry is not None and entry[0] is ref:
            del self._made[key]


_BUILT: Optional[Built] = None


def start(shell: Any) -> None:
    """`%load_ext`: record where parameters are built from now on."""
    global _BUILT
    if _BUILT is None:
        _BUILT = Built(shell)
    _BUILT.install()


def stop() -> None:
    """`%unload_ext`: the hook off, the record forgotten."""
    global _BUILT
    if _BUILT is not None:
        _BUILT.uninstall()
    _BUILT = None


def frames_of(param: Any) -> Frames:
    """The user frames that built `param`, innermost first (() when not recorded, or the record is off)."""
    return _BUILT.frames_of(param) if _BUILT is not None else ()
