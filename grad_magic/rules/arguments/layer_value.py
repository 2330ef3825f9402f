"""A torch layer built with a value of the wrong type, refused only when its forward hands it to torch's C
function: `nn.LSTM(..., bidirectional=args.bidirectional)` with an int from argparse (`lstm()` takes a bool),
`nn.Conv2d(..., stride=s / 2)` (a float in a tuple of ints), `nn.MaxPool2d(k / 2)`.

Found from the run: the argument torch marks as the wrong type, the value torch's own frame passed there, the
attribute of the torch layer whose forward ran that holds that value (the `self.bidirectional` the call reads,
or, for a value that is an object of its own, the attribute holding that very object), the user's model that
holds the layer (the value the user's call was made on) and the constructor call in the user's `__init__` that
made it (places.made_at). The edit goes on that call's keyword: `bool(...)`, `//` for a `/`, `int(...)`.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Iterable, Optional

import torch

from ...cell import cell_tree, node_span, segment
from ...edits import make_fix
from ...model import ERROR, Diagnosis, Fix, TextEdit
from ...tracker import TORCH_DIR
from ..context import RuleContext
from ..kit import quote
from ..places import Place, made_at, module_path, user_entries, view_on
from ..tb import UNKNOWN, call_at, entries_of, file_tree, value_in
from .message import BadArgument


@dataclass(frozen=True)
class LayerValue:
    """The layer `layer` (its repr), built by `place`'s call, whose keyword `keyword` gave it `value`."""

    place: Place
    keyword: ast.keyword
    attribute: str
    value: Any
    want: str


def layer_value(ctx: RuleContext, err: BadArgument) -> Optional[LayerValue]:
    entries = entries_of(ctx.exception)
    users = user_entries(ctx)
    if not entries or not users or entries[-1] is users[-1]:
        return None
    inner = entries[-1]
    if not inner.tb_frame.f_code.co_filename.startswith(TORCH_DIR):
        return None
    call = call_at(file_tree(inner.tb_frame.f_code.co_filename), inner)
    if call is None:
        return None
    for position in (err.marked or (() if err.position is None else (err.position,))):
        node = call.args[position] if position < len(call.args) else None
        value = value_in(inner.tb_frame, node) if node is not None else UNKNOWN
        want = err.wants[position] if position < len(err.wants) else err.want
        if value is UNKNOWN or not _wrong(value, want):
            continue
        held = _held(entries[entries.index(users[-1]) + 1:], inner.tb_frame, node, value)
        if held is None:
            continue
        layer, attribute = held
        place = next(filter(None, (_built_at(ctx, user, layer) for user in reversed(users))), None)
        keyword = next((k for k in place.node.keywords if k.arg == attribute), None) if place is not None else None
        if keyword is not None:
            return LayerValue(place, keyword, attribute, value, want)
    return None


def _wrong(value: Any, want: str) -> bool:
    """A Python number of the wrong kind where torch takes a bool or whole numbers (the value's type alone)."""
    if want == "bool":
        return type(value) is int
    if "int" in want:
        items = value if isinstance(value, tuple) else (value,)
        return any(type(v) is float for v in items)
    return False


def _held(frames: Iterable[Any], inner: Any, node: ast.AST, value: Any) -> Optional[tuple]:
    """(the torch layer, its attribute) that held the value: the `self.X` the call reads, else an attribute of
    a layer whose forward is on the stack holding that very object (not a small int: those are shared)."""
    me = inner.f_locals.get("self")
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" and \
            _torch_layer(me):
        return me, node.attr
    if type(value) in (int, bool):
        return None
    for entry in frames:
        layer = entry.tb_frame.f_locals.get("self")
        if _torch_layer(layer):
            for name, held in vars(layer).items():
                if held is value:
                    return layer, name
    return None


def _torch_layer(obj: Any) -> bool:
    return isinstance(obj, torch.nn.Module) and type(obj).__module__.startswith("torch.")


def _built_at(ctx: RuleContext, user: Any, layer: torch.nn.Module) -> Optional[Place]:
    """The constructor call that made `layer`, in the `__init__` of the user's model that holds it: the module
    the user's frame runs in (`self.lstm(x)` in a forward), or the one its line called (`model(x)`)."""
    view = view_on(ctx, user.tb_frame.f_code.co_filename, user.tb_lineno)
    call = call_at(cell_tree(view.record.source), user) if view is not None else None
    called = value_in(user.tb_frame, call.func) if call is not None else UNKNOWN
    for model in (user.tb_frame.f_locals.get("self"), called):
        path = module_path(model, layer) if isinstance(model, torch.nn.Module) else None
        place = made_at(ctx, model, path) if path else None
        if place is not None:
            return place
    return None


def layer_value_card(ctx: RuleContext, found: LayerValue, kind: str) -> Diagnosis:
    place, keyword = found.place, found.keyword
    at = place.ctx
    source = at.record.source
    written = segment(source, keyword.value) or ""
    lineno = keyword.value.lineno
    got = type(found.value).__name__ if not isinstance(found.value, tuple) else "a tuple of floats"
    params = dict(layer=quote(segment(source, place.node.func) or "nn.Module"), lineno=lineno, want=found.want,
                  setting=quote(f"{keyword.arg}={found.value!r}"), got=got)
    return at.diagnosis(
        kind, ERROR, title=at.say("arguments.layer.title", **params), summary=at.say("arguments.layer.summary"),
        what=at.say("arguments.layer.what", **params), why=at.say("arguments.layer.why", **params),
        where=at.where(lineno), lines=[lineno], names=[written] if written.isidentifier() else [],
        fix=_fix(at, source, keyword.value, found))


def _fix(at: RuleContext, source: str, node: ast.expr, found: LayerValue) -> Optional[Fix]:
    start, end = node_span(source, node)
    text = source[start:end]
    division = floor_division_edit(source, node) if found.want != "bool" else None
    if division is not None:
        edit = division
        new = text[:division.start - start] + "//" + text[division.end - start:]
    else:
        new = f"bool({text})" if found.want == "bool" else f"int({text})"
        edit = TextEdit(start, end, new)
    return make_fix(source, [edit], at.say("arguments.layer.fix", lineno=node.lineno, code=new))


def floor_division_edit(source: str, node: ast.AST) -> Optional[TextEdit]:
    """`a / b` -> `a // b`: the operator between the operands, nothing else (None: not one `/` there)."""
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Div):
        return None
    _, left_end = node_span(source, node.left)
    right_start, _ = node_span(source, node.right)
    between = source[left_end:right_start]
    if between.count("/") != 1:
        return None
    at = left_end + between.index("/")
    return TextEdit(at, at + 1, "//")
