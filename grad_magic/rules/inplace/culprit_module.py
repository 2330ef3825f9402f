"""Which module made an in-place write, and where the user built it: the module the tracker saw writing
(`nn.ReLU(inplace=True)` inside an `nn.Sequential`), its path from the user's names (`model.unit1.body[0]`),
and the call that constructed it -- in the `__init__` of the user's class that holds it, or in the newest cell
that assigned the top-level name -- with the `True` that makes it in place.

May touch: the modules the tracker recorded and the user's modules (their `_modules` dicts, read without
running code); the text of cells and user files (ast). Never runs user code; makes no fix and no sentence.
"""
from __future__ import annotations

import ast
import inspect
from collections import deque
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import torch

from ...cell import cell_tree
from ...record import OpEvent
from ..context import RuleContext
from ..kit import callee_name, dotted
from ..places import cells_before, root

MAX_VISITS = 20_000  # modules visited looking for a path from the user's names
CONTAINERS = ("Sequential", "ModuleList", "ModuleDict")


@dataclass(frozen=True)
class ModuleWrite:
    """The module that wrote in place, and the constructor call that made it so."""

    module: Any  # the module (nn.ReLU, nn.LeakyReLU, nn.Dropout ...)
    path: str  # how the user reaches it: `model.unit1.body[0]`, or `self.body[0]` from its owner
    filename: str  # the cell or file whose text builds it
    call: ast.Call  # the constructor call there
    flag: ast.AST  # the `True` that makes it in place
    keyword: bool  # `inplace=True` (else a positional `True`)
    called_as: Optional[str] = None  # `self.act`, `self.body`: the call on the user's line whose input it wrote


Step = Tuple[Any, str]  # (a module, the key of one of its children)


def module_write(ctx: RuleContext, event: OpEvent) -> Optional[ModuleWrite]:
    """The library module whose `forward()` made the in-place op `event`, when its constructor call is found."""
    chain = _chain(event)
    if not chain or _users_init(ctx, type(chain[0])) is not None \
            or getattr(chain[0], "inplace", None) is not True:
        return None
    writer = chain[0]
    root, steps = _path_from_names(ctx, writer)
    if root is None:
        steps = _steps_along(chain)
    called_as = _called_as(ctx, chain)
    for i in reversed(range(len(steps))):  # NB: the innermost user class that holds it built it
        owner = steps[i][0]
        init = _users_init(ctx, type(owner))
        if init is not None:
            found = _built_in_init(ctx, init, [k for _, k in steps[i:]], type(writer))
            if found is not None:
                path = _path_text(root, steps) if root else _path_text("self", steps[i:])
                return ModuleWrite(writer, path, found[0], found[1], *found[2], called_as)
    if root is not None:
        found = _built_in_cell(ctx, root, [k for _, k in steps], type(writer))
        if found is not None:
            return ModuleWrite(writer, _path_text(root, steps), found[0], found[1], *found[2], called_as)
    return None


def _called_as(ctx: RuleContext, chain: Sequence[Any]) -> Optional[str]:
    """How the innermost user frame calls the module whose input the writer overwrote: `self.act` (the writer
    is a child of the frame's own module), `self.body` (the first module of that Sequential: its input is the
    Sequential's), `act` (a module held by a name); None when the writer's input is made inside a container."""
    if len(chain) == 1:
        return ctx.names.name_for(chain[0])
    steps = _steps_along(chain)
    if not steps or _users_init(ctx, type(steps[0][0])) is None:
        return None
    if any(k != "0" or not isinstance(m, torch.nn.Sequential) for m, k in steps[1:]):
        return None
    return f"self.{steps[0][1]}"


def inplace_flag(ctx: RuleContext, call: ast.Call, cls: type) -> Optional[Tuple[ast.AST, bool]]:
    """The constant `True` that makes `call` (a constructor of `cls`) in place: `inplace=True` or positional."""
    named = ctx.names.lookup(dotted(call.func) or "")
    if (named is not cls) if named is not None else callee_name(call) != cls.__name__:
        return None
    kw = next((k for k in call.keywords if k.arg == "inplace"), None)
    if kw is not None:
        return (kw.value, True) if _is_true(kw.value) else None
    try:
        index = list(inspect.signature(cls).parameters).index("inplace")
    except (ValueError, TypeError):
        return None
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]) \
            and _is_true(call.args[index]):
        return call.args[index], False
    return None


def _is_true(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


# -- the modules: what ran, and how the user's names reach the writer --

def module_writer(event: OpEvent) -> List[Any]:
    """The modules on the stack of an in-place op, innermost first, when the innermost is in place (`inplace`
    True, however it became so); [] otherwise."""
    chain = _chain(event)
    return chain if chain and getattr(chain[0], "inplace", None) is True else []


def called_as(ctx: RuleContext, chain: Sequence[Any]) -> Optional[str]:
    return _called_as(ctx, chain) if chain else None


def _chain(event: OpEvent) -> List[Any]:
    found = []
    for ref in getattr(event, "modules", ()):
        module = ref()
        if module is None:
            break
        found.append(module)
    return found


def _children(module: Any) -> Iterator[Tuple[str, Any]]:
    registry = module.__dict__.get("_modules") if isinstance(module, torch.nn.Module) else None
    for key, child in list((registry or {}).items()):
        if child is not None:
            yield key, child


def _path_from_names(ctx: RuleContext, target: Any) -> Tuple[Optional[str], List[Step]]:
    """The shortest path from a user's name to `target` through module registries: (`model`, steps)."""
    roots = [(name, obj) for name, obj in ctx.names.objects() if "." not in name
             and isinstance(obj, torch.nn.Module)]
    for name, obj in roots:
        if obj is target:
            return name, []
    queue: deque = deque((name, obj, ()) for name, obj in roots)
    seen = {id(obj) for _, obj in roots}
    while queue and len(seen) < MAX_VISITS:
        name, module, steps = queue.popleft()
        for key, child in _children(module):
            if child is target:
                return name, [*steps, (module, key)]
            if id(child) not in seen:
                seen.add(id(child))
                queue.append((name, child, (*steps, (module, key))))
    return None, []


def _steps_along(chain: Sequence[Any]) -> List[Step]:
    """Steps from the outermost recorded module to the writer, where each links to the next (else fewer)."""
    steps: List[Step] = []
    for outer, inner in zip(reversed(chain[1:]), reversed(chain[:-1])):
        key = next((k for k, child in _children(outer) if child is inner), None)
        steps = [*steps, (outer, key)] if key is not None else []
    return steps


def _path_text(root: str, steps: Sequence[Step]) -> str:
    return root + "".join(f"[{k}]" if k.isdigit() else f".{k}" for _, k in steps)


# -- where it was built: a user class's __init__, or the cell that assigned the name --

def _users_init(ctx: RuleContext, cls: type) -> Optional[Any]:
    """The `__init__` code `cls` runs when the user wrote it (a cell or the user's file), else None."""
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is not None:
            code = getattr(init, "__code__", None)
            sources = ctx.record.sources
            return code if code is not None and sources is not None and sources.is_user(code.co_filename) \
                else None
    return None


def _function_at(tree: Optional[ast.Module], lineno: int) -> Optional[ast.FunctionDef]:
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and lineno in (
                node.lineno, *(d.lineno for d in node.decorator_list)):
            return node  # type: ignore[return-value]
    return None


Found = Tuple[str, ast.Call, Tuple[ast.AST, bool]]
Scope = Tuple[str, ast.AST]  # a cell (or file) and the function (or the cell's tree) whose code is read


def _built_in_init(ctx: RuleContext, code: Any, keys: List[str], cls: type) -> Optional[Found]:
    """`self.<keys[0]> = ...` in the user's `__init__`, followed down the remaining keys to the call."""
    filename = code.co_filename
    function = _function_at(cell_tree(ctx.record.sources.text(filename)), code.co_firstlineno)
    if function is None:
        return None
    values = [s.value for s in ast.walk(function) if isinstance(s, ast.Assign) and any(
        isinstance(t, ast.Attribute) and t.attr == keys[0] and dotted(t.value) == "self" for t in s.targets)]
    values += [c.args[1] for c in ast.walk(function) if isinstance(c, ast.Call) and dotted(c.func) ==
               "self.add_module" and len(c.args) == 2 and getattr(c.args[0], "value", None) == keys[0]]
    if not values:  # NB: `self.add_module(f"act{i}", ...)` in a loop
        return _the_one_in(ctx, (filename, function), cls)
    return _descend(ctx, (filename, function), values[0], keys[1:], cls) if len(values) == 1 else None


def _built_in_cell(ctx: RuleContext, root_name: str, keys: List[str], cls: type) -> Optional[Found]:
    """The newest cell (up to the running one) whose top level assigns `root_name`, followed down `keys`."""
    for filename in _cells_newest_first(ctx):
        tree = cell_tree(ctx.record.sources.text(filename))
        values = [v for stmt in (tree.body if tree is not None else ()) for v in _assigned(stmt, root_name)]
        if values:
            return _descend(ctx, (filename, tree), values[-1], keys, cls) if tree is not None else None
    return None


def _assigned(stmt: ast.stmt, name: str) -> List[ast.AST]:
    """The value `stmt` binds to `name`: `name = v`, `a, name = u, v`."""
    if not isinstance(stmt, ast.Assign):
        return []
    for target in stmt.targets:
        if isinstance(target, ast.Name) and target.id == name:
            return [stmt.value]
        if isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Tuple) \
                and len(target.elts) == len(stmt.value.elts):
            return [v for t, v in zip(target.elts, stmt.value.elts) if isinstance(t, ast.Name) and t.id == name]
    return []


def _cells_newest_first(ctx: RuleContext) -> List[str]:
    """The running cell, then the cells that ran before it, the newest first."""
    return [root(ctx).record.filename, *(filename for _, filename in cells_before(ctx))]


# -- following a module's key through the code that built its container --

MAX_HELPERS = 3  # the user's builder functions followed one into another (`make_layers` -> `conv_block`)


def _descend(ctx: RuleContext, scope: Scope, node: ast.AST, keys: List[str], cls: type, depth: int = 0
             ) -> Optional[Found]:
    """The call that built the module at `keys` under the expression `node` (`nn.Sequential(a, b)`, key "1" ->
    `b`), following names assigned once in the scope and the user's own builder functions (`conv_block(3, 8)`
    -> its `return nn.Sequential(...)`). Where a function's code cannot be followed (a list grown in a loop),
    the one constructor of the writer's class with the flag in that function."""
    for i, key in enumerate([*keys, None]):
        node = _resolved(node, scope[1])
        helper = _builder(ctx, node) if isinstance(node, ast.Call) and depth < MAX_HELPERS else None
        if helper is not None:
            return _descend(ctx, helper[0], helper[1], keys[i:], cls, depth + 1) if helper[1] is not None \
                else _the_one_in(ctx, helper[0], cls)
        if key is None:
            break
        if not isinstance(node, ast.Call) or callee_name(node) not in CONTAINERS:
            return None  # NB: a parameter, a module passed in: built elsewhere
        items = _items(node, scope[1])
        if items is None:  # NB: `nn.Sequential(*layers)` of a list grown in a loop
            return _the_one_in(ctx, scope, cls)
        node = items.get(key)
        if node is None:
            return None
    flag = inplace_flag(ctx, node, cls) if isinstance(node, ast.Call) else None
    return (scope[0], node, flag) if flag is not None else None  # type: ignore[return-value]


def _the_one_in(ctx: RuleContext, scope: Scope, cls: type) -> Optional[Found]:
    """The one constructor of `cls` with the in-place flag in a function (built in a loop, through a list)."""
    if not isinstance(scope[1], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None  # NB: a cell's top level builds many things: no guess there
    calls = [(c, f) for c in ast.walk(scope[1]) if isinstance(c, ast.Call)
             for f in [inplace_flag(ctx, c, cls)] if f is not None]
    return (scope[0], calls[0][0], calls[0][1]) if len(calls) == 1 else None


def _builder(ctx: RuleContext, call: ast.Call) -> Optional[Tuple[Scope, Optional[ast.AST]]]:
    """A call of the user's own function: its scope and the one value it returns (None when it returns several)."""
    fn = ctx.names.lookup(dotted(call.func) or "")
    code = getattr(fn, "__code__", None) if callable(fn) and not isinstance(fn, type) else None
    sources = ctx.record.sources
    if code is None or sources is None or not sources.is_user(code.co_filename):
        return None
    function = _function_at(cell_tree(sources.text(code.co_filename)), code.co_firstlineno)
    if function is None:
        return None
    values = [n.value for n in ast.walk(function) if isinstance(n, ast.Return) and n.value is not None]
    return (code.co_filename, function), values[0] if len(values) == 1 else None


def _resolved(node: ast.AST, scope: ast.AST) -> ast.AST:
    """A name assigned once in `scope` (and never changed in place) -> its value."""
    if not isinstance(node, ast.Name):
        return node
    values = [s.value for s in ast.walk(scope) if isinstance(s, ast.Assign)
              and any(isinstance(t, ast.Name) and t.id == node.id for t in s.targets)]
    changed = any(isinstance(n, ast.AugAssign) and getattr(n.target, "id", None) == node.id
                  or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                  and dotted(n.func.value) == node.id for n in ast.walk(scope))
    return values[0] if len(values) == 1 and not changed else node


def _items(call: ast.Call, scope: ast.AST) -> Optional[Dict[str, ast.AST]]:
    """The children a container call is given, by key: `Sequential(a, b)` -> {"0": a, "1": b}."""
    kind, args = callee_name(call), call.args
    if len(args) == 1 and isinstance(args[0], ast.Starred):
        listed = _resolved(args[0].value, scope)
        elements = listed.elts if isinstance(listed, (ast.List, ast.Tuple)) else None
    elif kind == "Sequential" and len(args) == 1 and isinstance(args[0], ast.Call) \
            and callee_name(args[0]) == "OrderedDict":
        return _pairs(args[0].args[0] if args[0].args else None)
    elif kind == "Sequential":
        elements = args
    elif kind == "ModuleDict":
        return _pairs(args[0] if args else None)
    else:
        elements = args[0].elts if args and isinstance(args[0], (ast.List, ast.Tuple)) else None
    if elements is None or any(isinstance(e, ast.Starred) for e in elements):
        return None
    return {str(i): e for i, e in enumerate(elements)}


def _pairs(node: Optional[ast.AST]) -> Optional[Dict[str, ast.AST]]:
    """`{"a": m}` or `[("a", m), ...]` -> {"a": m}."""
    if isinstance(node, ast.Dict):
        pairs = list(zip(node.keys, node.values))
    elif isinstance(node, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Tuple) and len(e.elts) == 2 for e in node.elts):
        pairs = [(e.elts[0], e.elts[1]) for e in node.elts]
    else:
        return None
    found = {k.value: v for k, v in pairs if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return found if len(found) == len(pairs) else None
