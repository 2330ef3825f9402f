"""Where the user's code is, beyond the running cell: the cells that ran before it, the cell (or file) that
defines a live function, method or module class, the statement of a class's `__init__` that made a module's
child, the last top-level assignment of a global, the Dataset a DataLoader reads and what its `__getitem__`
returns. A place is a view of the run on that cell (RuleContext.view): a rule words a card and edits there
exactly as in the running cell, and the engine shows that cell and fixes a copy of it.

The rules' toolkit for earlier cells (kit.py is the one for a cell's own syntax; this one would not fit there).
May touch: the record's Sources (which code is the user's, the cells that ran and their text), the cells'
ast, and of live objects their code objects and dicts only: never a property, never user code.
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import types
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import torch.utils.data

from ..cell import cell_tree, qualname_at
from ..model import CellSource, Diagnosis
from ..names import attribute_without_code
from ..sources import Frame, Site
from .context import RuleContext


@dataclass(frozen=True)
class Place:
    """A node of the user's code in some cell or file: the view on that cell, its tree, the node."""

    ctx: RuleContext
    tree: ast.Module
    node: ast.AST


# -- views on other cells --

def root(ctx: RuleContext) -> RuleContext:
    """The run as the running cell sees it, from any view."""
    outer = ctx.record.outer
    while outer is not None and outer.outer is not None:
        outer = outer.outer
    return ctx if outer is None else ctx.rebased(outer)


def user_entries(ctx: RuleContext) -> List[Any]:
    """The entries of the error's traceback in the running cell or the user's own cells and files, outermost
    first (the innermost is where the user's code last ran before torch raised)."""
    top = root(ctx)
    sources = top.record.sources
    tb = ctx.exception.__traceback__ if ctx.exception is not None else None
    found = []
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name == top.record.filename or sources is not None and sources.is_user(name):
            found.append(tb)
        tb = tb.tb_next
    return found


def view_on(ctx: RuleContext, filename: str, lineno: int) -> Optional[RuleContext]:
    """The run seen from line `lineno` of the user's cell or file `filename` (the running cell: the run itself)."""
    top = root(ctx)
    sources = top.record.sources
    if filename == top.record.filename:
        return top
    if sources is None or not sources.is_user(filename):
        return None
    text = sources.text(filename)
    if not text.strip():
        return None
    function = qualname_at(cell_tree(text), lineno) or "<module>"
    return top.view(Frame(Site(filename, lineno, function, sources.cell_number(filename)), None))


def place_of(ctx: RuleContext, filename: str, node_at: int, kinds: Tuple[type, ...], name: str = ""
             ) -> Optional[Place]:
    """The node of a kind in `kinds` (named `name`, when given) that starts at line `node_at` of `filename`
    (for a decorated def: at its first decorator's line, as Python's code objects count)."""
    view = view_on(ctx, filename, node_at)
    tree = cell_tree(view.record.source) if view is not None else None
    if view is None or tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, kinds) and (not name or getattr(node, "name", "") == name):
            decorators = getattr(node, "decorator_list", ())
            if node.lineno == node_at or decorators and decorators[0].lineno == node_at:
                return Place(view, tree, node)
    return None


def cells_before(ctx: RuleContext) -> List[Tuple[int, str]]:
    """(In [k], compiled name) of each cell that ran before the running one, the newest first."""
    top = root(ctx)
    sources = top.record.sources
    if sources is None:
        return []
    mine = top.record.cell
    return [(number, filename) for number, filename in sources.cells()
            if filename != top.record.filename and (mine is None or number < mine)]


def global_assignment(ctx: RuleContext, name: str) -> Optional[Place]:
    """The last top-level statement of an earlier cell that assigned the global `name` (`real_label = 1`)."""
    for _, filename in cells_before(ctx):
        text = root(ctx).record.sources.text(filename)
        tree = cell_tree(text)
        found = [s for s in (tree.body if tree is not None else []) if isinstance(s, (ast.Assign, ast.AnnAssign))
                 and any(isinstance(t, ast.Name) and t.id == name for t in _targets(s))]
        if found:
            view = view_on(ctx, filename, found[-1].lineno)
            return Place(view, tree, found[-1]) if view is not None else None
    return None


def _targets(stmt: ast.stmt) -> List[ast.AST]:
    return list(stmt.targets) if isinstance(stmt, ast.Assign) else [stmt.target]


# -- live code objects: where a function, method or class is written --

def code_of(obj: Any) -> Optional[types.CodeType]:
    """The code of a plain function or bound method (through `functools.wraps` decorators), else None."""
    fn = obj.__func__ if isinstance(obj, types.MethodType) else obj
    if not isinstance(fn, types.FunctionType):
        return None
    try:
        fn = inspect.unwrap(fn)  # NB: reads `__wrapped__` from the function's own dict
    except ValueError:
        return None
    return fn.__code__ if isinstance(fn, types.FunctionType) else None


def function_place(ctx: RuleContext, obj: Any) -> Optional[Place]:
    """The def of a live function or bound method of the user's, in its cell (or file)."""
    code = code_of(obj)
    if code is None:
        return None
    return place_of(ctx, code.co_filename, code.co_firstlineno, (ast.FunctionDef, ast.AsyncFunctionDef),
                    code.co_name)


def method_place(ctx: RuleContext, cls: type, name: str) -> Optional[Place]:
    """The def of method `name` that instances of `cls` run: the first class of its MRO that defines it in
    the user's code (a method torch defines is not the user's: None)."""
    for klass in _mro(cls):
        fn = vars(klass).get(name)
        if fn is not None:
            return function_place(ctx, fn)
    return None


def _mro(cls: type) -> Sequence[type]:
    return cls.__mro__ if isinstance(cls, type) else ()


def returned(place: Place) -> List[ast.expr]:
    """The values the function's own `return` statements give (nested functions' left out)."""
    found: List[ast.expr] = []

    def walk(nodes: Sequence[ast.AST]) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Return) and node.value is not None:
                found.append(node.value)
            walk(list(ast.iter_child_nodes(node)))

    walk(list(getattr(place.node, "body", [])))
    return found


def item_returned(place: Place, index: Optional[int]) -> List[ast.expr]:
    """Item `index` of each tuple the function returns (`return x, y`: index 1 is `y`); all of them for None."""
    found = []
    for value in returned(place):
        if index is None:
            found.append(value)
        elif isinstance(value, (ast.Tuple, ast.List)) and index < len(value.elts) and \
                not any(isinstance(e, ast.Starred) for e in value.elts):
            found.append(value.elts[index])
    return found


def self_assignments(place: Place, attr: str) -> List[ast.stmt]:
    """`self.<attr> = ...` statements of a method, in line order."""
    found = [s for s in ast.walk(place.node) if isinstance(s, (ast.Assign, ast.AnnAssign)) and any(
        isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name) and t.value.id == "self"
        for t in _targets(s))]
    return sorted(found, key=lambda s: s.lineno)


# -- modules: the statement that made a child --

def module_path(model: Any, child: Any) -> Optional[str]:
    """`classifier.1`: the child's path in `model` (its `_modules` dicts, breadth first), "" for the model."""
    todo: List[Tuple[str, Any]] = [("", model)]
    seen = set()
    while todo:
        path, module = todo.pop(0)
        if module is child:
            return path
        if id(module) in seen:
            continue
        seen.add(id(module))
        children = attribute_without_code(module, "_modules")
        for name, sub in (children.items() if isinstance(children, dict) else ()):
            if sub is not None:
                todo.append((f"{path}.{name}" if path else name, sub))
    return None


def spelled(base: str, path: str) -> str:
    """`model` + `classifier.1` -> `model.classifier[1]`."""
    text = base
    for part in path.split(".") if path else ():
        text += f"[{part}]" if part.isdigit() else f".{part}"
    return text


def made_at(ctx: RuleContext, model: Any, path: str) -> Optional[Place]:
    """The constructor call in the user's `__init__` that made the child at `path` of `model`: `self.fc =
    nn.Linear(...)`, an item of `nn.Sequential(...)` / `nn.ModuleList([...])`, through the user's own classes."""
    parts = path.split(".") if path else []
    module = model
    while parts:
        init = method_place(ctx, type(module), "__init__")
        made = [s for s in (self_assignments(init, parts[0]) if init is not None else [])
                if isinstance(s, ast.Assign)]
        if len(made) != 1:
            return None
        node: Optional[ast.AST] = made[0].value
        module = attribute_without_code(module, parts[0])
        parts.pop(0)
        while parts and parts[0].isdigit() and isinstance(node, ast.Call):
            node = _item(node, int(parts[0]))
            module = attribute_without_code(module, parts[0])
            parts.pop(0)
        if node is None or not isinstance(node, ast.Call):
            return None
        if not parts:
            return Place(init.ctx, init.tree, node)
    return None


def _item(call: ast.Call, index: int) -> Optional[ast.AST]:
    """Item `index` of `nn.Sequential(a, b)` or `nn.ModuleList([a, b])`, when written out one by one."""
    items: Sequence[ast.AST] = call.args
    if len(call.args) == 1 and isinstance(call.args[0], (ast.List, ast.Tuple)):
        items = call.args[0].elts
    if call.keywords or any(isinstance(a, ast.Starred) for a in items) or index >= len(items):
        return None
    return items[index]


# -- data loaders: what a batch of `for x, y in loader` was made from --

def loop_item(stmt: ast.For, name: str) -> Optional[Tuple[ast.expr, Optional[int]]]:
    """For `for x, y in loader` and `y`: (the loop's iterable, 1); `for i, (x, y) in enumerate(loader)`: the
    enumerated iterable; (iterable, None) for `for batch in loader`."""
    target, source = stmt.target, stmt.iter
    if isinstance(source, ast.Call) and getattr(source.func, "id", "") == "enumerate" and source.args \
            and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        target, source = target.elts[1], source.args[0]
    if isinstance(target, ast.Name):
        return (source, None) if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)):
        for i, elt in enumerate(target.elts):
            if isinstance(elt, ast.Name) and elt.id == name:
                return source, i
    return None


def getitem_of(ctx: RuleContext, loader: Any) -> Optional[Place]:
    """The `__getitem__` of the Dataset a torch DataLoader reads, in the user's code."""
    if not isinstance(loader, torch.utils.data.DataLoader):
        return None
    dataset = attribute_without_code(loader, "dataset")
    return method_place(ctx, type(dataset), "__getitem__") if dataset is not None else None


def with_lines(d: Diagnosis, ctx: RuleContext, lines: Sequence[Optional[int]]) -> Diagnosis:
    """`d` with lines of another view's cell added (and that cell's text, for a card to show them)."""
    have = {(sl.cell, sl.file, sl.lineno) for sl in d.lines}
    shown = tuple(dict.fromkeys(sl for sl in (ctx.line(n) for n in lines)
                                if sl is not None and (sl.cell, sl.file, sl.lineno) not in have))
    if not shown:
        return d
    if not ctx.elsewhere:
        return dataclasses.replace(d, lines=d.lines + shown)
    record = ctx.record
    file = "" if record.cell is not None else record.filename
    cells = d.elsewhere if any(c.cell == record.cell and c.file == file for c in d.elsewhere) else \
        d.elsewhere + (CellSource(record.cell, file, record.source),)
    return dataclasses.replace(d, lines=d.lines + shown, elsewhere=cells)
