"""A sample item default_collate cannot batch (`found <class 'NoneType'>`: a Dataset that returns None for the
labels of a test split, a PIL image without ToTensor): which item, read from default_collate's frames (the field
its nested batches hold, by identity: collate.field_of), and where the Dataset's `__getitem__` puts it in the
sample (its `return`, then the assignment of the name returned there). No fix: what belongs there is the user's
to say.
"""
from __future__ import annotations

import ast
from typing import Any, List, Optional

from ...model import ERROR, Diagnosis
from ..collate import field_of, loader_on_line
from ..context import RuleContext
from ..kit import quote
from ..places import Place, getitem_of, returned, with_lines
from .message import BadArgument

KIND = "argument-type"


def uncollatable(ctx: RuleContext, err: BadArgument) -> Optional[Diagnosis]:
    if ctx.elsewhere:
        return None  # NB: the loop's line in the running cell: default_collate's frames are torch's
    name, loader = loader_on_line(ctx)
    field = field_of(ctx.exception)
    if loader is None or field is None:
        return None
    lineno = ctx.record.error_lineno
    item = "".join(f"[{k!r}]" for k in field.path) or ctx.say("arguments.collate.whole")
    got = "None" if err.got_type == "NoneType" else err.got_type
    fields = dict(loader=quote(name) or ctx.say("arguments.collate.the_loader"), item=item, got=got,
                  lineno=lineno or "?")
    d = ctx.diagnosis(
        KIND, ERROR, title=ctx.say("arguments.collate.title", **fields), summary=ctx.say("arguments.collate.summary"),
        what=ctx.say("arguments.collate.what", **fields), why=ctx.say("arguments.collate.why", **fields),
        where=ctx.where(lineno), lines=[lineno])
    place = getitem_of(ctx, loader)
    if place is None:
        return d
    values = returned(place)
    made = [_assigned(place, v, field.path, err.got_type == "NoneType") for v in values]
    lines = [v.lineno for v in values][:2] + [m.lineno for m in made if m is not None][:1]
    return with_lines(d, place.ctx, lines or [place.node.lineno])


def _assigned(place: Place, value: ast.expr, path: tuple, none: bool) -> Optional[ast.stmt]:
    """The statement of `__getitem__` that binds the name the returned sample holds at `path` (before the
    `return`): for a None, the one that binds the literal None (the branch that ran); else the last."""
    node: Any = value
    for key in path:
        if isinstance(node, (ast.Tuple, ast.List)) and isinstance(key, int) and key < len(node.elts):
            node = node.elts[key]
        elif isinstance(node, ast.Dict) and isinstance(key, str):
            node = next((v for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant) and k.value == key),
                        None)
        else:
            return None
    if not isinstance(node, ast.Name):
        return None
    binds: List[ast.stmt] = [s for s in ast.walk(place.node) if isinstance(s, (ast.Assign, ast.AnnAssign))
                             and s.lineno < value.lineno and any(isinstance(t, ast.Name) and t.id == node.id for t in
                                                                 (s.targets if isinstance(s, ast.Assign) else [s.target]))]
    literal = [s for s in binds if isinstance(s.value, ast.Constant) and s.value.value is None]
    if none and literal:
        return literal[-1] if len(literal) == 1 else None
    return max(binds, key=lambda s: s.lineno) if binds else None


def in_worker(ctx: RuleContext, err: BadArgument) -> Optional[Diagnosis]:
    """An argument error a DataLoader worker raised: its line, read from the worker's traceback text (the frame
    is gone: no value, no fix), seen from the view of that frame."""
    frames = ctx.record.frames
    focus = ctx.record.focus
    if focus is None or not frames or focus is not frames[-1] or focus.local_names is not None:
        return None
    lineno = ctx.record.error_lineno
    got = err.got if err.got.startswith("(") else f"`{err.got}`"
    fields = dict(function=err.function, got=got, want=err.want or "?", lineno=lineno or "?")
    return ctx.diagnosis(
        KIND, ERROR, title=ctx.say("arguments.worker.title", **fields), summary=ctx.say("arguments.summary"),
        what=ctx.say("arguments.worker.what", **fields), why=ctx.say("generic.worker"), where=ctx.where(lineno),
        lines=[lineno])
