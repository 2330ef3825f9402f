"""The user's names for objects: `w`, `model.fc.weight`, `opt` -- found by identity, never by value.

Reads only dictionaries (the namespace, a module's `_parameters`/`_buffers`/`_modules`, an object's
`__dict__`): it never calls a property or `__getattr__` of a user object, so it runs no user code.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

import torch

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


class NameIndex:
    """The user's names over one or more namespaces (first namespace wins), bounded.

    `lookup` reads the namespaces directly; the reverse index (id -> names) and the list of every name
    are built on first use only, without a tuple or list per name: a card is built while a namespace of
    many thousands of objects is alive, and each object allocated here is work for the garbage collector.
    """

    def __init__(self, *namespaces: Optional[Mapping[str, Any]], limit: int = 50_000) -> None:
        # NB: error_locals is the namespace itself for an error at the cell's top level
        self._namespaces: List[Mapping[str, Any]] = []
        for ns in namespaces:
            if ns and all(ns is not seen for seen in self._namespaces):
                self._namespaces.append(ns)
        self._limit = limit
        self._objects: Optional[Dict[str, Any]] = None
        self._first: Dict[int, str] = {}  # id(object) -> its first name
        self._more: Dict[int, List[str]] = {}  # id(object) -> its other names, for the few that have some
        self._scans = 0

    def _top(self, name: str) -> Any:
        if not _is_user_name(name):
            return None
        for ns in self._namespaces:
            value = ns.get(name, _MISSING)
            if value is not _MISSING and _plain_class(value):
                return value
        return None

    def _index(self) -> Dict[str, Any]:
        if self._objects is None:
            self._objects = objects = {}
            first, module = self._first, torch.nn.Module
            for ns in self._namespaces:
                for name in list(ns):
                    # NB: the hot loop of a card in a large namespace: _add's checks, inlined
                    if name in objects or not _is_user_name(name):
                        continue
                    value = ns.get(name, _MISSING)
                    if value is _MISSING or len(objects) >= self._limit or not _plain_class(value):
                        continue
                    objects[name] = value
                    if id(value) in first:
                        self._more.setdefault(id(value), []).append(name)
                    else:
                        first[id(value)] = name
                    if isinstance(value, module):
                        self._add_registries(name, value)
        return self._objects

    def _add_registries(self, name: str, module: Any) -> None:
        for registry in ("_parameters", "_buffers"):  # NB: named_parameters()'s order
            for dotted, item in _registry_items(name, module, registry, set()):
                self._add(dotted, item)

    def _add(self, name: str, value: Any) -> None:
        objects = self._objects
        if len(objects) >= self._limit or name in objects or not _plain_class(value):
            return
        objects[name] = value
        key = id(value)
        if key not in self._first:
            self._first[key] = name
        else:
            self._more.setdefault(key, []).append(name)
        if isinstance(value, torch.nn.Module):
            self._add_registries(name, value)

    def names_for(self, obj: Any) -> List[str]:
        if self._objects is None and self._scans < 2:  # NB: a name or two is found faster without the index
            self._scans += 1
            found = self._scan(obj)
            if found is not None:
                return found
        self._index()
        first = self._first.get(id(obj))
        return [first, *self._more.get(id(obj), ())] if first is not None else []

    def _scan(self, obj: Any) -> Optional[List[str]]:
        """`names_for(obj)` by one pass over the namespaces, storing nothing: the index's names in the
        index's order. None when the index's limit could have cut it short (the index then decides)."""
        if not _plain_class(obj):
            return []
        names: List[str] = []
        taken: set = set()  # NB: names an earlier namespace has (the first namespace wins)
        count, module = 0, torch.nn.Module
        try:
            for i, ns in enumerate(self._namespaces):
                for name, value in ns.items():  # NB: no copy; a namespace changed meanwhile: the index decides
                    if not isinstance(name, str) or name[:1] == "_" or name in _IPYTHON_NAMES or name in taken:
                        continue
                    count += 1
                    if value is obj:
                        names.append(name)
                    elif issubclass(type(value), module):
                        for registry in ("_parameters", "_buffers"):
                            for dotted, item in _registry_items(name, value, registry, set()):
                                count += 1
                                if item is obj:
                                    names.append(dotted)
                if i + 1 < len(self._namespaces):
                    taken.update(ns)
        except RuntimeError:  # "dictionary changed size during iteration" (another thread)
            return None
        return names if count < self._limit // 2 else None

    def name_for(self, obj: Any) -> Optional[str]:
        names = self.names_for(obj)
        return min(names, key=len) if names else None

    def lookup(self, dotted: str) -> Any:
        """`model.fc.weight` -> the object, following only dict-held attributes; None if unknown."""
        head, _, rest = dotted.partition(".")
        obj = self._top(head)
        for part in rest.split(".") if rest else ():
            obj = attribute_without_code(obj, part)
            if obj is None:
                return None
        return obj

    def objects(self) -> Iterator[Tuple[str, Any]]:
        return iter(self._index().items())


_MISSING = object()


def _is_user_name(name: Any) -> bool:
    # NB: `globals()[1] = x` is legal: a key that is no string is no name
    return isinstance(name, str) and not name.startswith("_") and name not in _IPYTHON_NAMES


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
