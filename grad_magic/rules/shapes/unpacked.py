"""shape-mismatch where a library unpacks its input's dimensions (`batch_size, seq_length = input_shape` in a
transformers model) and the input has fewer: `not enough values to unpack (expected 2, got 1)`.

Read from the traceback, never by running code: the innermost frame (the library's) holds the shape it unpacked
(a `torch.Size` of `got` sizes); the user's innermost call passed the one tensor argument of that shape (its
frame's variable); where the run made that tensor is marked. One dimension short is one sample without its batch
dimension: `.unsqueeze(0)` where the line passes it.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Optional

import torch

from ...cell import cell_tree, node_span
from ...edits import make_fix
from ...facts import shape_text
from ...model import ERROR, Diagnosis, Fix, TextEdit
from ..context import RuleContext
from ..kit import parenthesised, quote
from ..places import root, user_entries, view_on
from ..plain import module_of
from ..tb import UNKNOWN, call_at, entries_of, file_tree, local_value_in, value_in
from ..traced import born, marked

# Python's own words (ceval), every version: "not enough values to unpack (expected 2, got 1)"
UNPACK = re.compile(r"^not enough values to unpack \(expected (?P<want>\d+), got (?P<got>\d+)\)")


@dataclass(frozen=True)
class Unpacked:
    want: int
    got: int


def parse_unpacked(message: str) -> Optional[Unpacked]:
    m = UNPACK.search(message)
    return Unpacked(int(m["want"]), int(m["got"])) if m else None


def unpacked_card(ctx: RuleContext, err: Unpacked, kind: str) -> Optional[Diagnosis]:
    entries = entries_of(ctx.exception)
    top = root(ctx)
    sources = top.record.sources
    if not entries or sources is None:
        return None
    inner = entries[-1]
    library = inner.tb_frame.f_code.co_filename
    if library == top.record.filename or sources.is_user(library):
        return None  # NB: the user's own unpacking (`x, y, z = batch`): the generic card says what it means
    size = _unpacked(inner, err)
    users = user_entries(ctx)
    if size is None or not users:
        return None
    entry = users[-1]
    at = view_on(ctx, entry.tb_frame.f_code.co_filename, entry.tb_lineno)
    if at is None or at.record.filename != ctx.record.filename:
        return None  # NB: answered from the view of the user's frame that made the call
    source = at.record.source
    call = call_at(cell_tree(source), entry)
    held = [(a, v) for a in ([*call.args, *(k.value for k in call.keywords)] if call is not None else ())
            for v in (local_value_in(entry.tb_frame, a),)
            if v is not UNKNOWN and isinstance(v, torch.Tensor) and tuple(v.shape) == tuple(size)]
    if len(held) != 1:
        return None
    node, tensor = held[0]
    name = source[slice(*node_span(source, node))]
    callee = source[slice(*node_span(source, call.func))]
    module, line = module_of(library), inner.tb_lineno
    fields = dict(callee=quote(callee), name=quote(name), shape=shape_text(tuple(size)), want=err.want,
                  got=err.got, lineno=call.lineno, where=f"{module}, line {line}" if module else f"line {line}")
    fix = _unsqueezed(at, source, node, name) if err.want == err.got + 1 else None
    d = at.diagnosis(
        kind, ERROR, title=at.say("shapes.unpacked.title", **fields), summary=at.say("shapes.unpacked.summary"),
        what=at.say("shapes.unpacked.what", **fields),
        why=at.say("shapes.unpacked.why_batch" if fix is not None else "shapes.unpacked.why", **fields),
        where=at.where(call.lineno), lines=[call.lineno], names=[name] if name.isidentifier() else [], fix=fix)
    found = born(at, tensor, lambda m: tuple(m.shape) == tuple(size))
    return marked(d, found, at) if found is not None else d


def _unpacked(entry: object, err: Unpacked) -> Optional[torch.Size]:
    """The shape the library's line unpacked: the value of its assignment to `want` names, a `torch.Size`."""
    frame = entry.tb_frame  # type: ignore[attr-defined]
    tree = file_tree(frame.f_code.co_filename)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Assign) and node.lineno <= entry.tb_lineno <= (node.end_lineno or node.lineno) \
                and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List)) \
                and len(node.targets[0].elts) == err.want:
            value = value_in(frame, node.value)
            if isinstance(value, torch.Size) and len(value) == err.got:
                return value
    return None


def _unsqueezed(at: RuleContext, source: str, node: ast.expr, name: str) -> Optional[Fix]:
    start, end = node_span(source, node)
    return make_fix(source, [TextEdit(start, end, f"{parenthesised(source[start:end], node)}.unsqueeze(0)")],
                    at.say("shapes.unpacked.fix", name=name, lineno=node.lineno))
