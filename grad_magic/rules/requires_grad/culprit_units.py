"""Why nothing requires grad, across cells: the trace (culprit_trace.py) follows the loss into functions,
methods and modules' `forward` defined in other cells (or the user's files), and out to the caller of the
helper backward() ran in. Each cell it reads is a `Unit`: a view on that cell (places.py), its tree, its own
functions and classes, and how it spells torch; a cause found there is worded and fixed there.

May touch: the cells' ast; live objects through the NameIndex (classes' and instances' dicts, code objects:
never a property, never user code). Makes no fix and no sentence.
"""
from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ...cell import cell_tree
from ...names import NameIndex, attribute_without_code
from ..context import RuleContext
from ..kit import callee_name, calls_on_line, function_around, scope_statements, torch_aliases
from ..places import Place, function_place, root, view_on
from .culprit import Scope


@dataclass
class Unit:
    """A cell (or file) the trace reads."""

    ctx: RuleContext  # the view on it (the trace's own cell: the rule's context)
    tree: ast.Module
    functions: Dict[str, ast.FunctionDef] = field(default_factory=dict)
    classes: Dict[str, ast.ClassDef] = field(default_factory=dict)
    torch: Set[str] = field(default_factory=set)
    module_scope: Optional[Scope] = None

    @staticmethod
    def of(ctx: RuleContext, tree: ast.Module, module_scope: Optional[Scope] = None) -> "Unit":
        unit = Unit(ctx, tree, {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))},
                    {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}, torch_aliases(tree) | {"torch"})
        unit.module_scope = module_scope or Scope(tree, scope_statements(tree), root(ctx).names.lookup, unit=unit)
        return unit

    @property
    def filename(self) -> str:
        return self.ctx.record.filename


class Units:
    """The cells a trace has read, by file: the trace's own first."""

    def __init__(self, home: Unit) -> None:
        self.home = home
        self._by_file: Dict[str, Unit] = {home.filename: home}

    def of_place(self, place: Place) -> Unit:
        found = self._by_file.get(place.ctx.record.filename)
        if found is None:
            found = self._by_file[place.ctx.record.filename] = Unit.of(place.ctx, place.tree)
        return found

    def of_file(self, ctx: RuleContext, filename: str, lineno: int) -> Optional[Unit]:
        found = self._by_file.get(filename)
        if found is None:
            view = view_on(ctx, filename, lineno)
            tree = cell_tree(view.record.source) if view is not None else None
            if view is None or tree is None:
                return None
            found = self._by_file[filename] = Unit.of(view, tree)
        return found


# -- live callees: a function or method of the user's, a module's forward --

def method_of(obj: Any, name: str) -> Optional[types.FunctionType]:
    """The plain function `name` of obj's class (its MRO's dicts), when the class is the user's."""
    for klass in type(obj).__mro__ if obj is not None else ():
        fn = vars(klass).get(name)
        if fn is not None:
            return fn if isinstance(fn, types.FunctionType) else None
    return None


def self_resolver(obj: Any) -> Callable[[str], Any]:
    """Live values of `self.a.b` paths in a method of `obj`, read from dicts (no user code)."""
    def live(path: str) -> Any:
        head, _, rest = path.partition(".")
        if head != "self":
            return None
        found: Any = obj
        for part in rest.split(".") if rest else ():
            found = attribute_without_code(found, part)
            if found is None:
                return None
        return found

    return live


# -- the caller of the helper backward() ran in --

def caller_call(ctx: RuleContext, units: Units) -> Optional[Tuple[ast.Call, Scope]]:
    """In a view on a helper's frame: the call of this helper on the caller frame's line, and the caller's
    scope (its frame's variables), so the helper's parameters can be followed to the caller's arguments."""
    focus, frames = ctx.record.focus, list(ctx.record.frames)
    if focus is None or focus not in frames or frames.index(focus) == 0:
        return None
    caller = frames[frames.index(focus) - 1]
    unit = units.of_file(ctx, caller.site.filename, caller.site.lineno)
    if unit is None:
        return None
    name = focus.site.function.rpartition(".")[2]
    calls = [c for c in calls_on_line(unit.tree, caller.site.lineno) if callee_name(c) == name]
    if len(calls) != 1:
        return None
    at = caller.site.filename == root(ctx).record.filename
    names = root(ctx).names if at else NameIndex(caller.local_names, ctx.namespace)
    node = function_around(unit.tree, caller.site.lineno)
    return calls[0], Scope(node, scope_statements(node), names.lookup, unit=unit)


def user_function(ctx: RuleContext, obj: Any) -> Optional[Place]:
    """The def of a live function or bound method of the user's (any cell or file)."""
    return function_place(ctx, obj) if isinstance(obj, (types.FunctionType, types.MethodType)) else None


def parameters(fn: ast.AST) -> List[str]:
    args = getattr(fn, "args", None)
    if args is None:
        return []
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]] + \
        [a.arg for a in (args.vararg, args.kwarg) if a is not None]
