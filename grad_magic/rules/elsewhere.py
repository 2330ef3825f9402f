"""A run seen from one user frame outside the running cell: the method three cells up where torch raised,
the helper whose loop called `backward()`.

`seen_from` re-bases a record on that frame (its cell's text, its line, its variables; every event's line
is its line in that cell), so a rule reads a view exactly as it reads the running cell. `from_view` turns
what a rule says from a view into a diagnosis of the running cell: the lines are marked with their cell,
the running cell's calling line joins them, and a fix becomes a fixed copy of that cell. Pure data.

`with_reruns` says, for each fixed copy of an earlier cell, which cells between it and the running cell read
what it binds: the class fixed in In [2], the model built from it in In [3], the training in In [4] -- a re-run
of In [2] and In [4] alone would train the old class's model again.
"""
from __future__ import annotations

import ast
import dataclasses
from typing import FrozenSet, Optional, Set, Tuple

from .. import catalog
from ..cell import cell_tree, split_lines
from ..model import CellFix, CellSource, Diagnosis, Fix, SourceLine
from ..record import RunRecord
from ..sources import Frame


def seen_from(record: RunRecord, frame: Frame) -> RunRecord:
    filename = frame.site.filename
    text = record.sources.text(filename) if record.sources is not None else ""

    def moved(event):  # NB: its line in this view's cell: the innermost frame there, else None
        return dataclasses.replace(event, lineno=next((n for f, n in event.frames if f == filename), None))

    return dataclasses.replace(
        record, filename=filename, source=text, error_lineno=frame.site.lineno,
        error_locals=frame.local_names, inplace_ops=[moved(e) for e in record.inplace_ops],
        failed_ops=[moved(e) for e in record.failed_ops], steps=[moved(e) for e in record.steps],
        cell=frame.site.cell, focus=frame, outer=record)


def from_view(d: Diagnosis, view: RunRecord) -> Diagnosis:
    outer = view.outer if view.outer is not None else view
    file = "" if view.cell is not None else view.filename
    calling = _line(outer, outer.error_lineno)
    where = d.where if calling is None else catalog.message("where.via", d.language, where=d.where,
                                                            lineno=calling.lineno)
    return dataclasses.replace(
        d, source=outer.source, cell=outer.cell, where=where,
        lines=d.lines + ((calling,) if calling is not None else ()),
        elsewhere=(CellSource(view.cell, file, view.source),) + d.elsewhere,
        fix=_moved_fix(d.fix, view, file))


def _moved_fix(fix: Optional[Fix], view: RunRecord, file: str) -> Optional[Fix]:
    if fix is None or not fix.source:
        return fix
    moved: Tuple[CellFix, ...] = (CellFix(view.cell, file, view.source, fix.source, fix.edits),)
    return Fix(fix.description, "", (), moved + fix.elsewhere)


def _line(record: RunRecord, lineno: Optional[int]) -> Optional[SourceLine]:
    lines = split_lines(record.source)
    if lineno is None or not 1 <= lineno <= len(lines):
        return None
    return SourceLine(lineno, lines[lineno - 1], record.cell)


def with_reruns(d: Diagnosis, record: RunRecord) -> Diagnosis:
    """`d` with each fixed earlier cell's `rerun`: the cells a re-run must run again, between it and this one;
    and each fixed file's `reload`: the cell that reloads its module (with the cells to run again after it)."""
    if d.fix is None or not d.fix.elsewhere or record.sources is None or record.cell is None:
        return d
    cells = []
    for c in d.fix.elsewhere:
        if c.cell is not None:
            c = dataclasses.replace(c, rerun=cells_to_rerun(record, c.cell))
        elif c.file:
            reload, rerun = reload_cell(record, c.file)
            c = dataclasses.replace(c, reload=reload, rerun=rerun)
        cells.append(c)
    return dataclasses.replace(d, fix=dataclasses.replace(d.fix, elsewhere=tuple(cells)))


def reload_cell(record: RunRecord, path: str) -> Tuple[str, Tuple[int, ...]]:
    """The cell that reloads the module loaded from `path` (once the user has changed the file) and imports
    again what the earlier cells imported from it (`from nets import Net`), and the cells that read those
    names (`model = Net()`), to run again after it. ("", ()) when no module of this kernel was loaded from
    that file (then only a restart brings the change in)."""
    name = _module_at(path)
    if name is None:
        return "", ()
    lines = ["import importlib", f"import {name}", f"importlib.reload({name})"]
    names: Set[str] = set()
    for number in range(1, record.cell):
        tree = cell_tree(record.sources.typed(number) or "")
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.ImportFrom) and node.module == name and node.level == 0 \
                    and not any(a.name == "*" for a in node.names):
                line = ast.unparse(node)
                if line not in lines:
                    lines.append(line)
                names.update(a.asname or a.name for a in node.names)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == name and alias.asname:
                        lines.append(f"{alias.asname} = {name}")
                        names.add(alias.asname)
                    elif alias.name == name:
                        names.add(name.split(".")[0])
    return "\n".join(lines), cells_reading(record, frozenset(names), 1)


def _module_at(path: str) -> Optional[str]:
    """The name of the loaded module whose file is `path` (not `__main__`)."""
    import os
    import sys

    want = os.path.realpath(path)
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if name != "__main__" and isinstance(file, str) and os.path.realpath(file) == want:
            return name
    return None


MAX_BETWEEN = 200  # cells read between a fixed cell and the running one


def cells_to_rerun(record: RunRecord, fixed: int) -> Tuple[int, ...]:
    """The cells that ran after In [`fixed`] and before the running cell, in the order they ran, that read a
    name In [`fixed`] binds (assigns, defines; not imports), or a name bound by such a cell. A cell that binds
    such a name anew without reading any (`model = OtherNet()`) ends its reach."""
    tree = cell_tree(record.sources.typed(fixed) or "")
    return cells_reading(record, _bound(tree) if tree is not None else frozenset(), fixed + 1)


def cells_reading(record: RunRecord, names: FrozenSet[str], start: int) -> Tuple[int, ...]:
    """The cells from In [`start`] to the one before the running cell that read `names`, or what such a cell
    binds; a cell that binds one of them anew without reading any ends its reach."""
    stale = set(names)
    found = []
    for number in range(start, min(record.cell, start + MAX_BETWEEN)):
        tree = cell_tree(record.sources.typed(number) or "")
        if tree is None or not stale:
            continue
        bound = _bound(tree)
        if _read(tree) & stale:
            found.append(number)
            stale |= bound
        else:
            stale -= bound
    return tuple(found)


def _bound(tree: ast.AST) -> FrozenSet[str]:
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return frozenset(names)  # NB: not what imports bind: run again, an import binds the same module


def _read(tree: ast.AST) -> FrozenSet[str]:
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
