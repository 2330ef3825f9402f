"""The culprit seam of `device-mismatch`, naming: a tensor by its path from a frame's variables -- `self.pe`
(a plain attribute), `inputs["attention_mask"]` (a dict item), `hidden[1]` (a tuple element),
`criterion.weight` (a buffer) -- found by identity, breadth first, so the shortest path wins.

May touch: dicts, tuples, lists and objects' `__dict__`s (read as dicts: no property, no `__getattr__`, no
user code runs); tensor identity only, never data. No wording.
"""
from __future__ import annotations

import ast
import collections
import inspect
import types
from typing import Any, Iterator, List, Mapping, Optional, Sequence, Tuple

import torch

from ...names import attribute_without_code, instance_dict as _instance_dict, plain_class
from ..context import RuleContext
from ..kit import dotted

_DEPTH = 3  # steps below a variable: `self.encoder.pe`, `batch["x"][0]`
_WIDTH = 64  # items of one container looked at
_BUDGET = 4000  # objects visited per search
_CLOSED = (torch.Tensor, type, str, bytes, int, float, types.ModuleType, types.FunctionType, types.MethodType,
           types.BuiltinFunctionType)


def path_to(variables: Optional[Mapping[str, Any]], obj: Any, first: Sequence[str] = ()) -> Optional[str]:
    """The shortest path to `obj` from the variables in `first` (those the line names), else from any of
    `variables`. None when no path of at most _DEPTH steps leads there."""
    if not variables:
        return None
    on_line = [n for n in dict.fromkeys(first) if n in variables]
    return _search(variables, obj, on_line) or _search(variables, obj, list(variables)[:_BUDGET])


def _search(variables: Mapping[str, Any], obj: Any, names: Sequence[str]) -> Optional[str]:
    seen = {id(variables)}
    level: List[Tuple[str, Any]] = []
    for name in names:
        if not isinstance(name, str) or name.startswith("_") or name in ("In", "Out"):
            continue
        value = variables.get(name)
        if value is obj:
            return name
        level.append((name, value))
    budget = _BUDGET
    for _ in range(_DEPTH):
        below: List[Tuple[str, Any]] = []
        for path, value in level:
            if id(value) in seen or not _opens(value):
                continue
            seen.add(id(value))
            for step, item in _children(value):
                budget -= 1
                if item is obj:
                    return path + step
                if budget <= 0:
                    return None
                below.append((path + step, item))
        level = below
    return None


def root_of(path: str) -> str:
    """`self.pe` -> self, `batch["x"]` -> batch."""
    end = len(path)
    for i, ch in enumerate(path):
        if ch in ".[":
            end = i
            break
    return path[:end]


def owner_of(path: str) -> Tuple[str, Optional[str]]:
    """`self.encoder.pe` -> (`self.encoder`, "pe"); a path whose last step is no attribute -> (path, None)."""
    head, dot, attr = path.rpartition(".")
    if not dot or "[" in attr or "]" in attr or not attr.isidentifier():
        return path, None
    return head, attr


def item_of(path: str) -> Tuple[str, Optional[Any]]:
    """`state[1]` -> (`state`, 1), `batch["x"]` -> (`batch`, "x"); else (path, None)."""
    if not path.endswith("]") or "[" not in path:
        return path, None
    head, _, key = path[:-1].rpartition("[")
    if key.isdigit():
        return head, int(key)
    if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"":
        return head, key[1:-1]
    return path, None


def _opens(value: Any) -> bool:
    if not plain_class(value):  # NB: a proxy, a lazy object: reading it runs the user's code
        return False
    return _is(value, (dict, tuple, list, torch.nn.Module, collections.UserDict)) or (
        not _is(value, _CLOSED) and _instance_dict(value) is not None)


def _children(value: Any) -> Iterator[Tuple[str, Any]]:
    """(step, item): `.name` for attributes and module registries, `[k]` for items (a UserDict's too: a
    transformers BatchEncoding is one)."""
    if _is(value, collections.UserDict):
        value = _instance_dict(value).get("data", {})
    if _is(value, dict):
        for key, item in list(value.items())[:_WIDTH]:
            if _is(key, str):
                yield f'["{key}"]' if '"' not in key else f"[{key!r}]", item
            elif _is(key, int) and not _is(key, bool):
                yield f"[{key}]", item
        return
    if _is(value, (tuple, list)):
        for i, item in enumerate(value[:_WIDTH]):
            yield f"[{i}]", item
        return
    own = _instance_dict(value) or {}
    if _is(value, torch.nn.Module):
        for registry in ("_parameters", "_buffers", "_modules"):
            for key, item in list((own.get(registry) or {}).items())[:_WIDTH]:
                if item is not None and key.isidentifier():
                    yield f".{key}", item
                elif item is not None and registry == "_modules" and key.isdigit():
                    yield f"[{key}]", item  # NB: a Sequential's or ModuleList's child: `model[0]`
    for key, item in list(own.items())[:_WIDTH]:
        if _is(key, str) and key.isidentifier() and not key.startswith("_"):
            yield f".{key}", item


def _is(value: Any, types: Any) -> bool:
    """`isinstance` from the type alone (isinstance reads a `__class__` property of the user's on a miss)."""
    return issubclass(type(value), types)


def resolve(ctx: Any, path: str) -> Any:
    """The object at `path` where the rule reads the run (a frame's variables, then the namespace): module
    registries and `__dict__`s for `.name`, dicts, tuples and lists for `[k]`; None when unknown."""
    steps = _steps(path)
    if not steps:
        return None
    obj = ctx.names.lookup(steps[0][1])
    for kind, key in steps[1:]:
        if obj is None:
            return None
        if kind == "." or isinstance(obj, torch.nn.Module):
            obj = attribute_without_code(obj, str(key))
        elif isinstance(obj, (dict, collections.UserDict)):
            items = obj if isinstance(obj, dict) else _instance_dict(obj).get("data", {})
            obj = items.get(key) if isinstance(items, dict) else None
        elif isinstance(obj, (tuple, list)) and isinstance(key, int) and -len(obj) <= key < len(obj):
            obj = obj[key]
        else:
            return None
    return obj


def parameter_path(module: torch.nn.Module, prefix: str, wanted: Any, depth: int = 4) -> Optional[str]:
    """`self.embed.weight`: the first parameter (in registration order) for which `wanted(t)` holds, by
    attribute names only (a Sequential's `0` is no attribute)."""
    own = _instance_dict(module) or {}
    for key, item in (own.get("_parameters") or {}).items():
        if isinstance(item, torch.Tensor) and key.isidentifier() and wanted(item):
            return f"{prefix}.{key}"
    if depth > 0:
        for key, sub in (own.get("_modules") or {}).items():
            if isinstance(sub, torch.nn.Module) and key.isidentifier():
                found = parameter_path(sub, f"{prefix}.{key}", wanted, depth - 1)
                if found is not None:
                    return found
    return None


def _steps(path: str) -> List[Tuple[str, Any]]:
    """`batch["x"].mask[0]` -> [("", "batch"), ("[", "x"), (".", "mask"), ("[", 0)]; [] when unreadable."""
    steps: List[Tuple[str, Any]] = []
    rest = path
    name = root_of(rest)
    if not name.isidentifier():
        return []
    steps.append(("", name))
    rest = rest[len(name):]
    while rest:
        if rest[0] == ".":
            name = root_of(rest[1:])
            if not name.isidentifier() and not name.isdigit():  # NB: `model.0.weight`, as NameIndex says it
                return []
            steps.append((".", name) if not name.isdigit() else ("[", int(name)))
            rest = rest[1 + len(name):]
        elif rest[0] == "[" and "]" in rest:
            key, rest = rest[1:rest.index("]")], rest[rest.index("]") + 1:]
            _, value = item_of(f"x[{key}]")
            if value is None:
                return []
            steps.append(("[", value))
        else:
            return []
    return steps


def callee(ctx: RuleContext, func: ast.AST) -> Tuple[Any, Any]:
    """(function, its instance) a call's callee names: `rnn.init_hidden` -> (CharRNN.init_hidden, rnn) --
    found on the instance's class without running anything; a plain name -> (its object, None)."""
    name = dotted(func)
    if not name:
        return None, None
    owner_path, attr = owner_of(name)
    owner = resolve(ctx, owner_path) if attr is not None else None
    if owner is not None and not isinstance(owner, types.ModuleType):
        try:
            found = inspect.getattr_static(type(owner), attr)
        except AttributeError:
            found = None
        if isinstance(found, types.FunctionType):
            return found, owner
    return resolve(ctx, name), None


def static(obj: Any, name: str) -> Any:
    """A class attribute, found without running anything (no property, no `__getattr__`)."""
    try:
        return inspect.getattr_static(type(obj), name)
    except AttributeError:
        return None
