"""The user's names for objects: `w`, `model.fc.weight`, `opt` -- found by identity, never by value.

Reads only dictionaries (the namespace, a module's `_parameters`/`_buffers`/`_modules`, an object's
`__dict__` as Python keeps it) and types: it never calls a property, `__getattr__`, `__class__` or
`__torch_function__` of a user object, so it runs no user code. `instance_dict`, `plain_class` and `is_tensor`
are those reads for other rooms (the inventory's walk, facts, the rules).

What a rule may blame: of the tensors, modules and optimizers, `NameIndex.objects()` yields only what this
run touched (`Touched`: names the code that ran spells, the variables of its frames, the tracker's tensors
and optimizers) -- a leftover `clf` of an earlier cell is not the classifier of a `logits` the cell made
with `torch.randn`; other values (an earlier cell's `device`, `num_classes`) a fix may still use. Naming an object
already found (`names_for`, `lookup`) reads every name.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from types import GetSetDescriptorType, MemberDescriptorType
from typing import Any, Dict, FrozenSet, Iterator, List, Mapping, Optional, Tuple

import torch

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
_BLAMABLE = (torch.Tensor, torch.nn.Module, torch.optim.Optimizer)  # what a card may name as a cause


@dataclass(frozen=True)
class Touched:
    """What one run touched: the top-level names its code spells (`names`) and the ids of the objects its
    tracker saw (`ids`). A dotted name (`model.fc.weight`) is touched when its first part is."""

    names: FrozenSet[str] = frozenset()
    ids: FrozenSet[int] = frozenset()

    def covers(self, name: str, obj: Any) -> bool:
        """Whether a rule may use `obj` (named `name`): anything that holds no state of a model's -- a
        `device`, a class count, a holder object -- and what holds some (a tensor, a module, an optimizer)
        when the run touched it."""
        return not issubclass(type(obj), _BLAMABLE) or name.partition(".")[0] in self.names or id(obj) in self.ids


class NameIndex:
    """The user's names over one or more namespaces (first namespace wins), bounded.

    `lookup` reads the namespaces directly; the reverse index (id -> names) and the list of every name
    are built on first use only, without a tuple or list per name: a card is built while a namespace of
    many thousands of objects is alive, and each object allocated here is work for the garbage collector.
    """

    def __init__(self, *namespaces: Optional[Mapping[str, Any]], limit: int = 50_000,
                 touched: Optional[Touched] = None) -> None:
        # NB: error_locals is the namespace itself for an error at the cell's top level
        self._namespaces: List[Mapping[str, Any]] = []
        for ns in namespaces:
            if ns and all(ns is not seen for seen in self._namespaces):
                self._namespaces.append(ns)
        self._limit = limit
        self._touched = touched  # None: every object counts as touched (a hand-made index)
        self._objects: Optional[Dict[str, Any]] = None
        self._first: Dict[int, str] = {}  # id(object) -> its first name
        self._more: Dict[int, List[str]] = {}  # id(object) -> its other names, for the few that have some
        self._scans = 0

    def _top(self, name: str) -> Any:
        if not _is_user_name(name):
            return self._mangled(name) if type(name) is str and name.startswith("__") else None
        for ns in self._namespaces:
            value = ns.get(name, _MISSING)
            if value is not _MISSING and plain_class(value):
                return value
        return None

    def _mangled(self, name: str) -> Any:
        """`__w` written in a method of class C is the local `_C__w` (Python's name mangling): its value."""
        if name.endswith("__") or not name[2:].isidentifier():
            return None
        for ns in self._namespaces:
            for key in [k for k in ns if type(k) is str and k.endswith(name) and k.startswith("_")
                        and k[1:-len(name)].lstrip("_").isidentifier()][:1]:
                value = ns.get(key, _MISSING)
                if value is not _MISSING and plain_class(value):
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
                    if value is _MISSING or len(objects) >= self._limit or not plain_class(value):
                        continue
                    objects[name] = value
                    if id(value) in first:
                        self._more.setdefault(id(value), []).append(name)
                    else:
                        first[id(value)] = name
                    if issubclass(type(value), module):
                        self._add_registries(name, value)
        return self._objects

    def _add_registries(self, name: str, module: Any) -> None:
        for registry in ("_parameters", "_buffers"):  # NB: named_parameters()'s order
            for dotted, item in _registry_items(name, module, registry, set()):
                self._add(dotted, item)

    def _add(self, name: str, value: Any) -> None:
        objects = self._objects
        if len(objects) >= self._limit or name in objects or not plain_class(value):
            return
        objects[name] = value
        key = id(value)
        if key not in self._first:
            self._first[key] = name
        else:
            self._more.setdefault(key, []).append(name)
        if issubclass(type(value), torch.nn.Module):
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
        if not plain_class(obj):
            return []
        names: List[str] = []
        taken: set = set()  # NB: names an earlier namespace has (the first namespace wins)
        count, module = 0, torch.nn.Module
        try:
            for i, ns in enumerate(self._namespaces):
                for name, value in ns.items():  # NB: no copy; a namespace changed meanwhile: the index decides
                    if type(name) is not str or name[:1] == "_" or name in _IPYTHON_NAMES or name in taken:
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
        """(name, object) for what this run touched: what a rule may blame by resemblance (a shape, a
        layer's size, a device). To say how the user holds an object already found, `names_for`."""
        touched = self._touched
        if touched is None:
            return iter(self._index().items())
        return ((name, obj) for name, obj in self._index().items() if touched.covers(name, obj))

    def all_objects(self) -> Iterator[Tuple[str, Any]]:
        """(name, object) for every name, touched or not: to find how the user holds an object already
        found by identity (never to pick a culprit)."""
        return iter(self._index().items())


_MISSING = object()


def _is_user_name(name: Any) -> bool:
    # NB: `globals()[1] = x` is legal: a key that is no string is no name
    return type(name) is str and not name.startswith("_") and name not in _IPYTHON_NAMES


_OBJECT_CLASS = vars(object)["__class__"]
_SLOT = type(vars(object)["__getattribute__"])  # wrapper_descriptor: a C type's slot
_TYPE_MRO = vars(type)["__mro__"]  # NB: read through type's own descriptors: a metaclass's run no code here
_TYPE_DICT = vars(type)["__dict__"]
_PLAIN: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()
_DICT_READER: "weakref.WeakKeyDictionary[type, Any]" = weakref.WeakKeyDictionary()


def _first_in_mro(cls: type, attribute: str) -> Any:
    for klass in _TYPE_MRO.__get__(cls):
        found = _TYPE_DICT.__get__(klass).get(attribute, _MISSING)
        if found is not _MISSING:
            return found
    return _MISSING


def plain_class(value: Any) -> bool:
    """Whether `isinstance(value, T)` runs no user code. For a value that is not a T, isinstance reads
    `value.__class__`, through the class's `__getattribute__`: a `__class__` property or an overridden
    `__getattribute__` (a proxy, a lazy object) is user code, maybe slow, maybe raising. Such an object is
    no name the rules can reason about. Decided from the type alone, once per type."""
    cls = type(value)
    try:  # NB: inline, not plain_type(cls): called for every object of a namespace, every scan
        return _PLAIN[cls]
    except (KeyError, TypeError):
        return plain_type(cls)


def plain_type(cls: type) -> bool:
    """`plain_class` of the instances of `cls`."""
    try:
        return _PLAIN[cls]
    except KeyError:
        pass
    except TypeError:  # a type that refuses weak references: decide each time
        return _plain_type(cls)
    verdict = _PLAIN[cls] = _plain_type(cls)
    return verdict


def _plain_type(cls: type) -> bool:
    try:
        # NB: a C type's own `__getattribute__` (a module's, a tensor's) is no user code; a def in a class is
        return _first_in_mro(cls, "__class__") is _OBJECT_CLASS and \
            type(_first_in_mro(cls, "__getattribute__")) is _SLOT
    except Exception:
        return False


def is_tensor(obj: Any) -> bool:
    """A tensor by its type: not `isinstance`, which asks the object (`Mock(spec=Tensor)` says yes)."""
    return issubclass(type(obj), torch.Tensor)


def is_module(obj: Any) -> bool:
    return issubclass(type(obj), torch.nn.Module)


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


def instance_dict(obj: Any) -> Optional[dict]:
    """The dict Python keeps `obj`'s attributes in, read through the C descriptor that holds it: never a
    `__dict__` property of the user's class (which `object.__getattribute__(obj, "__dict__")` would call).
    None when the object has no such dict."""
    cls = type(obj)
    try:
        reader = _DICT_READER[cls]
    except KeyError:
        reader = _DICT_READER[cls] = _dict_reader(cls)
    except TypeError:
        reader = _dict_reader(cls)
    if reader is None:
        return None
    try:
        found = reader.__get__(obj, cls)
    except Exception:
        return None
    return found if type(found) is dict else None


def _dict_reader(cls: type) -> Any:
    """The first C descriptor named `__dict__` along the MRO (a heap type's getset, a module's member),
    passing over a `__dict__` property a class defines above it."""
    try:
        for klass in _TYPE_MRO.__get__(cls):
            found = _TYPE_DICT.__get__(klass).get("__dict__")
            if type(found) in (GetSetDescriptorType, MemberDescriptorType):
                return found
    except Exception:
        pass
    return None


def _dict_of(obj: Any) -> dict:
    found = instance_dict(obj)
    return found if found is not None else {}


def attribute_without_code(obj: Any, name: str) -> Any:
    """An attribute held in a dict (module registries, `__dict__`), or a tensor's `.grad`; else None."""
    if is_tensor(obj):
        return _grad(obj) if name == "grad" else None
    own = _dict_of(obj)
    if is_module(obj):
        for registry in ("_parameters", "_buffers", "_modules"):
            found = (own.get(registry) or {}).get(name)
            if found is not None:
                return found
    return own.get(name)


def _grad(t: torch.Tensor) -> Any:
    """`t.grad`, without the warning torch gives for a non-leaf (whose `.grad` is None unless retained),
    and without a tensor subclass's `__torch_function__`."""
    try:
        with torch._C.DisableTorchFunction():
            if not (t.is_leaf or t.retains_grad):
                return None
            return t.grad
    except Exception:  # NB: a tensor subclass whose torch functions raise
        return None


def user_object(value: Any) -> bool:
    """An instance of a user's class (a Trainer, a Predictor): not a module, tensor, type, function or builtin."""
    return _users_type(type(value)) and instance_dict(value) is not None


def _users_type(cls: type) -> bool:
    """Whether `cls` is a user's class (`user_object`), decided once per type."""
    try:
        user = _USER_TYPES[cls]
    except KeyError:
        user = _USER_TYPES[cls] = _user_type(cls)
    except TypeError:  # a type that refuses weak references: decide each time
        user = _user_type(cls)
    return user


def _user_type(cls: type) -> bool:
    """Decided from the type alone, once per type (the step watch asks at every step, for every name)."""
    module = cls.__dict__.get("__module__", "builtins")  # NB: the class's own dict: no metaclass property runs
    return plain_type(cls) and not issubclass(cls, (torch.nn.Module, torch.Tensor, type)) and \
        isinstance(module, str) and module not in ("builtins", "types") and \
        not module.startswith(("torch", "numpy", "IPython"))


_USER_TYPES: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()


def type_is(value: Any, types: Any) -> bool:
    """`isinstance` from the type alone: a frame's values are the user's objects, and isinstance reads a
    `__class__` (a property of the user's, maybe slow) when the type is not one of `types`."""
    return issubclass(type(value), types)
