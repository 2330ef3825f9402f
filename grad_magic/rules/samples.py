"""Where a Dataset made the field of a sample that a batch holds, when the run followed a property from a batch
into its samples (provenance.py: a DataLoader's collate stacks them) but saw no op of the user's make it (a
legacy constructor such as `torch.FloatTensor([y])`, code the tracker does not see).

The evidence: the batch the collate made (by identity) is bound on the loop's line by a name of the `for`
target (`for i, (imgs, labels) in enumerate(loader)`: field 1); the loader that line iterates; its Dataset's
`__getitem__` in the user's code. Reading that function then turns the field into a line: the `return`'s item,
or the assignment of the name it returns. May touch: the NameIndex, the cells' ast. Never runs user code.
"""
from __future__ import annotations

import ast
from typing import Any, Iterator, List, Mapping, Optional, Tuple

import torch

from ..cell import assignments_to, cell_tree, enclosing_statement
from .context import RuleContext
from .kit import dotted, lookup
from .places import Place, getitem_of, returned, root

Path = Tuple[int, ...]


def field_line(view: RuleContext, lineno: int, batch: torch.Tensor) -> Optional[Tuple[RuleContext, int]]:
    """(the view on `__getitem__`'s cell or file, the line) where the Dataset made the field of its samples that
    `batch` holds, the batch a DataLoader made for the loop on line `lineno` of `view`."""
    loop = _loop(view, lineno)
    if loop is None:
        return None
    iterated, enumerated = _iterated(loop.iter)
    local = _locals(view, loop)
    loader = _value(view, local, iterated)
    place = getitem_of(view, loader) if isinstance(loader, torch.utils.data.DataLoader) else None
    if place is None:
        return None
    paths = [path + inner for path, node in _names(loop.target, ())
             for inner, value in _held(_value(view, local, node)) if value is batch]
    if len(paths) != 1 or (enumerated and paths[0][:1] != (1,)):
        return None
    line = field_made_at(place, paths[0][1:] if enumerated else paths[0])
    return (place.ctx, line) if line is not None else None


def loop_loader(view: RuleContext, lineno: int) -> Optional[torch.utils.data.DataLoader]:
    """The torch DataLoader that the `for` on line `lineno` of `view` iterates (`enumerate(loader)` too)."""
    loop = _loop(view, lineno)
    if loop is None:
        return None
    loader = _value(view, _locals(view, loop), _iterated(loop.iter)[0])
    return loader if isinstance(loader, torch.utils.data.DataLoader) else None


def _loop(view: RuleContext, lineno: int) -> Optional[ast.For]:
    """The `for` statement that starts on line `lineno` of `view`."""
    tree = cell_tree(view.record.source)
    loop = enclosing_statement(tree, lineno) if tree is not None else None
    return loop if isinstance(loop, ast.For) and loop.lineno == lineno else None


def field_made_at(place: Place, path: Path) -> Optional[int]:
    """The line of `__getitem__` (`place`) that made field `path` of the samples it returns (() the whole
    sample; (1,) item 1 of a tuple; ('y',) a dict's 'y'), when every `return` gives it from one line."""
    items = [_item(value, path[0]) for value in returned(place)] if len(path) == 1 else \
        returned(place) if not path else []
    lines = {_made_line(place, item) if item is not None else None for item in items}
    return lines.pop() if len(lines) == 1 and None not in lines else None


def _held(value: Any) -> Iterator[Tuple[Path, Any]]:
    """`value`, and what a plain dict, list or tuple holds (`data['input_img']` of `for data in loader`), with
    its key. NB: builtin containers only: a subclass's item access is user code."""
    yield (), value
    if type(value) is dict:
        yield from (((k,), v) for k, v in value.items())
    elif type(value) in (list, tuple):
        yield from (((k,), v) for k, v in enumerate(value))


def _item(value: ast.expr, key: Any) -> Optional[ast.expr]:
    """What a returned `(x, y)` holds at index `key`, or a returned `{'x': x, ...}` under the key."""
    if isinstance(value, (ast.Tuple, ast.List)) and type(key) is int and key < len(value.elts) and \
            not any(isinstance(e, ast.Starred) for e in value.elts):
        return value.elts[key]
    if isinstance(value, ast.Dict):
        found = [v for k, v in zip(value.keys, value.values) if isinstance(k, ast.Constant) and k.value == key]
        return found[0] if len(found) == 1 else None
    return None


def _locals(view: RuleContext, loop: ast.For) -> Optional[Mapping[str, Any]]:
    """The variables of the traceback's frame that runs `loop` (a helper's loop in an earlier cell), if any."""
    for frame in reversed(root(view).record.frames):
        site = frame.site
        if site.filename == view.record.filename and loop.lineno <= site.lineno <= (loop.end_lineno or loop.lineno):
            return frame.local_names
    return None


def _value(view: RuleContext, local: Optional[Mapping[str, Any]], node: Optional[ast.expr]) -> Any:
    """What a name the loop reads holds there: the frame's variable, else the namespace's (NameIndex)."""
    if isinstance(node, ast.Name) and local is not None and node.id in local:
        return local[node.id]
    return lookup(view, node)


def _iterated(node: ast.expr) -> Tuple[Optional[ast.expr], bool]:
    """What a `for` iterates: `loader`, or `loader` of `enumerate(loader)` / `tqdm(loader)` (and whether the
    items are (index, batch) pairs)."""
    if isinstance(node, ast.Call) and node.args and not isinstance(node.args[0], ast.Starred):
        name = dotted(node.func) or ""
        if name == "enumerate":
            return node.args[0], True
        if name.split(".")[-1] in ("tqdm", "trange", "track"):
            return _iterated(node.args[0])
    return node, False


def _names(target: ast.expr, path: Path) -> List[Tuple[Path, ast.Name]]:
    """Each name a `for` target binds, with where it sits in the item (`i, (x, y)`: y at (1, 1))."""
    if isinstance(target, ast.Name):
        return [(path, target)]
    if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
        return [found for k, e in enumerate(target.elts) for found in _names(e, path + (k,))]
    return []


def _made_line(place: Place, item: ast.expr) -> Optional[int]:
    """The line that made what a `return` gives: the last assignment of the name it returns, before that line
    and in the same function; the return's own line for any other expression."""
    if not isinstance(item, ast.Name):
        return item.lineno
    inside = {id(n) for n in ast.walk(place.node)}
    before = [a for a in assignments_to(place.tree, item.id) if id(a) in inside and a.lineno < item.lineno]
    return max(a.lineno for a in before) if before else None
