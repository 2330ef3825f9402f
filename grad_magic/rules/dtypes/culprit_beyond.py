"""The dtypes family's culprit beyond the failing cell, found in a view on the cell where it is (places.py):

- through a DataLoader: a tensor of `for x, y in loader` is what the Dataset's `__getitem__` returned
  (collated), so the statement that made it is there: the item `__getitem__` returns at that position, the
  statement that made it (for `self.labels[i]`, the one of `__init__` that made the attribute) and the spot a
  fix there edits;
- a global of an earlier cell: `torch.full(size, real_label)` takes its dtype from `real_label = 1`.

May touch: the cells' ast, the loader's and dataset's dicts (places.py), the NameIndex. Never runs user code;
the edit itself is fix.py's.
"""
from __future__ import annotations

import ast
import types
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from torch.utils.data import DataLoader

from ...cell import assignments_to, cell_tree
from ...names import attribute_without_code
from ..context import RuleContext
from ..kit import argument, callee_name, calls_on_line, dotted, function_around, lookup, one_line, spans
from ..places import (Place, function_place, getitem_of, global_assignment, item_returned, loop_item, method_place,
                      root, self_assignments)
from .culprit_origin import Origin, made_by


@dataclass(frozen=True)
class LoaderOrigin:
    """Where a loop over a DataLoader got the tensor from: the loop, and the statement that made the item."""

    loop: ast.For  # `for x, y in loader:` of the failing cell
    loader: str  # how the cell writes the loader
    getitem: str  # `PatchDataset.__getitem__`
    origin: Origin  # the statement that made the item, in `at`'s cell
    at: RuleContext  # the view on that cell


def loader_origin(ctx: RuleContext, tree: ast.Module, names: Sequence[str], lineno: int, want: str
                  ) -> Optional[LoaderOrigin]:
    """For a name the loop around `lineno` takes from a DataLoader: where the Dataset made it."""
    for name in (n for n in names if n.isidentifier()):
        loops = [s for s in assignments_to(tree, name) if isinstance(s, ast.For) and spans(s, lineno)]
        item = loop_item(loops[-1], name) if loops else None
        loader = lookup(ctx, item[0]) if item is not None else None
        collate = collate_of(ctx, loader) if item is not None else None
        getitem = collate or (getitem_of(ctx, loader) if item is not None else None)
        values = item_returned(getitem, item[1]) if getitem is not None else []
        if len(values) != 1:
            continue
        dataset = attribute_without_code(loader, "dataset")
        found = _made(ctx, getitem, values[0], type(dataset), want)
        if found is not None:
            origin, at = found
            qualname = collate.node.name if collate is not None else f"{type(dataset).__name__}.__getitem__"
            return LoaderOrigin(loops[-1], one_line(ctx.record.source, item[0]), qualname, origin, at)
    return None


def collate_of(ctx: RuleContext, loader: Any) -> Optional[Place]:
    """The user's own `collate_fn` of a DataLoader (a plain function of a cell): the batch is what it returns."""
    if not isinstance(loader, DataLoader):
        return None
    fn = attribute_without_code(loader, "collate_fn")
    place = function_place(ctx, fn) if isinstance(fn, types.FunctionType) else None
    return place if place is not None and isinstance(place.node, ast.FunctionDef) else None


def _made(ctx: RuleContext, getitem: Place, value: ast.expr, dataset: Any, want: str) -> Optional[tuple]:
    """(Origin, view) of the statement that made a returned value: `img.flatten()` -> `img = ...` before the
    return; `self.labels[i]` -> `self.labels = ...` in `__init__`."""
    base = _base(value)
    name = dotted(base) if base is not None else None
    if name is None and isinstance(value, ast.Call):  # `return x, torch.tensor(label)`: made in the return
        ret = next((r for r in ast.walk(getitem.node) if isinstance(r, ast.Return) and r.value is not None
                    and any(n is value for n in ast.walk(r.value))), None)
        origin = made_by(getitem.ctx, one_line(getitem.ctx.record.source, value), ret, want, value) if ret else None
        return (origin, getitem.ctx) if origin is not None and origin.spot is not None else None
    if name is None:
        return None
    if "." not in name:
        made = [s for s in ast.walk(getitem.node) if isinstance(s, ast.Assign) and len(s.targets) == 1
                and dotted(s.targets[0]) == name and s.lineno < value.lineno]
        place = getitem
    elif name.count(".") == 1 and name.startswith("self."):
        place = method_place(ctx, dataset, "__init__")
        made = _plain(self_assignments(place, name[5:])) if place is not None else []
    else:
        return None
    if not made or place is None:
        return None
    stmt = max(made, key=lambda s: s.lineno)
    return made_by(place.ctx, name, stmt, want), place.ctx


def _base(value: ast.AST) -> Optional[ast.AST]:
    """`img` for `img.flatten()`, `self.labels` for `self.labels[i]`: what the item is computed from."""
    while True:
        if isinstance(value, ast.Subscript):
            value = value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and dotted(value.func) is None:
            value = value.func.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                isinstance(value.func.value, (ast.Name, ast.Attribute)) and value.func.attr in _KEEPS_DTYPE:
            value = value.func.value
        else:
            return value if isinstance(value, (ast.Name, ast.Attribute)) else None


# NB: methods that keep a tensor's (or array's) dtype: what they are called on made the item's dtype
_KEEPS_DTYPE = frozenset({"flatten", "view", "reshape", "squeeze", "unsqueeze", "permute", "transpose", "clone",
                          "contiguous", "copy", "ravel", "t"})


def _plain(stmts: List[ast.stmt]) -> List[ast.stmt]:
    return [s for s in stmts if isinstance(s, ast.Assign) and len(s.targets) == 1]


# -- the caller of a loss module's forward --

def caller_argument(ctx: RuleContext, node: Optional[ast.AST]) -> Optional[Tuple[RuleContext, ast.expr]]:
    """In a view on `forward(self, ...)` of a module the running cell calls on its failing line (a loss module of
    the user's): (the running cell's context, its argument for the parameter `node` names)."""
    tree = cell_tree(ctx.record.source) if ctx.elsewhere and isinstance(node, ast.Name) else None
    fn = function_around(tree, ctx.record.error_lineno or 0) if tree is not None else None
    params = [a.arg for a in fn.args.args] if isinstance(fn, ast.FunctionDef) else []
    if params[:1] != ["self"] or node.id not in params[1:]:  # type: ignore[union-attr]
        return None
    top, me = root(ctx), ctx.names.lookup("self")
    calls = [c for c in calls_on_line(cell_tree(top.record.source), top.record.error_lineno)
             if me is not None and lookup(top, c.func) is me]
    if len(calls) != 1 or any(isinstance(a, ast.Starred) for a in calls[0].args):
        return None
    i = params.index(node.id) - 1  # type: ignore[union-attr]
    args = calls[0].args
    name = node.id  # type: ignore[union-attr]
    found = args[i] if i < len(args) else next((k.value for k in calls[0].keywords if k.arg == name), None)
    return (top, found) if found is not None else None


# -- a global of an earlier cell --

@dataclass(frozen=True)
class IntFill:
    """`torch.full(size, real_label)` with `real_label = 1` assigned in an earlier cell: an int64 tensor."""

    name: str
    value: int
    stmt: ast.stmt  # the assignment, in `at`'s cell
    at: RuleContext


def int_fill(ctx: RuleContext, origin: Optional[Origin]) -> Optional[IntFill]:
    """The global int a `torch.full(...)` / `torch.full_like(...)` origin filled its tensor with."""
    value = getattr(origin.stmt, "value", None) if origin is not None else None
    if not isinstance(value, ast.Call) or callee_name(value) not in ("full", "full_like") or \
            any(k.arg == "dtype" for k in value.keywords):
        return None
    fill = argument(value, 1, "fill_value")
    number = ctx.names.lookup(fill.id) if isinstance(fill, ast.Name) else None
    tree = cell_tree(ctx.record.source)
    if type(number) is not int or tree is None or assignments_to(tree, fill.id):
        return None  # NB: assigned in this cell: the origin the card names already shows it
    place = global_assignment(ctx, fill.id)
    return IntFill(fill.id, number, place.node, place.ctx) if place is not None else None


def global_origin(ctx: RuleContext, names: Sequence[str], want: str, obj: Any) -> Optional[Tuple[Origin, RuleContext]]:
    """(Origin, view) of the top-level statement of an earlier cell that made `obj`, a global the failing cell
    uses and never assigns (`x = torch.from_numpy(a)` two cells up, `model = Net().double()`)."""
    tree = cell_tree(ctx.record.source)
    for name in (n for n in names if n.isidentifier()):
        if tree is None or assignments_to(tree, name) or ctx.namespace.get(name) is not obj:
            continue  # NB: a local of a helper's frame, or another object than the one that failed
        place = global_assignment(ctx, name)
        stmt = place.node if place is not None else None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            return made_by(place.ctx, name, stmt, want), place.ctx
    return None
