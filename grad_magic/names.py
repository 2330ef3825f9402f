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
        if not name.startswith("_") and name not in _IPYTHON_NAMES:
            yield name, value


class NameIndex:
    """id(object) -> the names it goes by, built once from the namespace (bounded)."""

    def __init__(self, *namespaces: Optional[Mapping[str, Any]], limit: int = 50_000) -> None:
        self._names: Dict[int, List[str]] = {}
        self._objects: Dict[str, Any] = {}
        self._limit = limit
        for ns in namespaces:
            if ns:
                for name, value in user_items(ns):
                    self._add(name, value)

    def _add(self, name: str, value: Any) -> None:
        if len(self._objects) >= self._limit or name in self._objects:
            return
        self._objects[name] = value
        self._names.setdefault(id(value), []).append(name)
        if isinstance(value, torch.nn.Module):
            for pname, p in value.named_parameters():
                self._add(f"{name}.{pname}", p)
            for bname, b in value.named_buffers():
                self._add(f"{name}.{bname}", b)

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


def attribute_without_code(obj: Any, name: str) -> Any:
    """An attribute held in a dict (module registries, `__dict__`), or a tensor's `.grad`; else None."""
    if isinstance(obj, torch.Tensor):
        return obj.grad if name == "grad" else None
    if isinstance(obj, torch.nn.Module):
        for registry in ("_parameters", "_buffers", "_modules"):
            found = obj.__dict__.get(registry, {}).get(name)
            if found is not None:
                return found
    try:
        return object.__getattribute__(obj, "__dict__").get(name)
    except Exception:
        return None
