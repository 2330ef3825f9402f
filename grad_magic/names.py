"""The user's names for objects: `w`, `model.fc.weight`, `opt` -- found by identity, never by value.

Reads only dictionaries (the namespace, a module's `_parameters`/`_buffers`/`_modules`, an object's
`__dict__`): it never calls a property or `__getattr__` of a user object, so it runs no user code.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

import torch

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


def user_items(namespace: Mapping[str, Any]) -> Iterator[Tuple[str, Any]]:
    for name, value in list(namespace.items()):
        # NB: `globals()[1] = x` is legal: a key that is no string is no name
        if isinstance(name, str) and not name.startswith("_") and name not in _IPYTHON_NAMES:
            yield name, value


class NameIndex:
    """id(object) -> the names it goes by, built once from the namespace (bounded)."""

    def __init__(self, *namespaces: Optional[Mapping[str, Any]], limit: int = 50_000) -> None:
        self._names: Dict[int, List[str]] = {}
        self._objects: Dict[str, Any] = {}
        self._limit = limit
        indexed: set = set()
        for ns in namespaces:
            # NB: error_locals is the namespace itself for an error at the cell's top level
            if ns and id(ns) not in indexed:
                indexed.add(id(ns))
                for name, value in user_items(ns):
                    self._add(name, value)

    def _add(self, name: str, value: Any) -> None:
        if len(self._objects) >= self._limit or name in self._objects or not _plain_class(value):
            return
        self._objects[name] = value
        self._names.setdefault(id(value), []).append(name)
        if isinstance(value, torch.nn.Module):
            for registry in ("_parameters", "_buffers"):  # NB: named_parameters()'s order
                for dotted, item in _registry_items(name, value, registry, set()):
                    self._add(dotted, item)

    def names_for(self, obj: Any) -> List[str]:
        return list(self._names.get(id(obj), ()))

    def name_for(self, obj: Any) -> Optional[str]:
        names = self._names.get(id(obj))
        return min(names, key=len) if names else None

    def lookup(self, dotted: str) -> Any:
        """`model.fc.weight` -> the object, following only dict-held attributes; None if unknown."""
        if dotted in self._objects:
            return self._objects[dotted]
        head, _, rest = dotted.partition(".")
        obj = self._objects.get(head)
        for part in rest.split(".") if rest else ():
            obj = attribute_without_code(obj, part)
            if obj is None:
                return None
        return obj

    def objects(self) -> Iterator[Tuple[str, Any]]:
        return iter(self._objects.items())


def _plain_class(value: Any) -> bool:
    """Whether `isinstance(value, ...)` is safe: it reads `value.__class__`, which a proxy or a broken
    object may make run code that raises. Such an object is no name the rules can reason about."""
    try:
        isinstance(value, torch.Tensor)
    except Exception:
        return False
    return True


def _registry_items(prefix: str, module: Any, registry: str, seen: set) -> Iterator[Tuple[str, Any]]:
    """(dotted name, tensor) for each entry of a module registry in the module tree, read from the dicts
    (named_parameters() would be a method a subclass can override)."""
    if id(module) in seen:
        return
    seen.add(id(module))
    own = _dict_of(module)
    for key, item in list((own.get(registry) or {}).items()):
        if item is not None:
            yield f"{prefix}.{key}", item
    for key, sub in list((own.get("_modules") or {}).items()):
        if sub is not None:
            yield from _registry_items(f"{prefix}.{key}", sub, registry, seen)


def _dict_of(obj: Any) -> dict:
    try:
        found = object.__getattribute__(obj, "__dict__")
    except Exception:
        return {}
    return found if isinstance(found, dict) else {}


def attribute_without_code(obj: Any, name: str) -> Any:
    """An attribute held in a dict (module registries, `__dict__`), or a tensor's `.grad`; else None."""
    if isinstance(obj, torch.Tensor):
        return _grad(obj) if name == "grad" else None
    if isinstance(obj, torch.nn.Module):
        for registry in ("_parameters", "_buffers", "_modules"):
            found = obj.__dict__.get(registry, {}).get(name)
            if found is not None:
                return found
    try:
        return object.__getattribute__(obj, "__dict__").get(name)
    except Exception:
        return None


def _grad(t: torch.Tensor) -> Any:
    """`t.grad`, without the warning torch gives for a non-leaf (whose `.grad` is None unless retained)."""
    try:
        if not (t.is_leaf or t.retains_grad):
            return None
        return t.grad
    except Exception:  # NB: a tensor subclass whose torch functions raise
        return None
