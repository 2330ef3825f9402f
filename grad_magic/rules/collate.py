"""The collate family: a DataLoader's default_collate that cannot stack the samples of a batch into one tensor
(`stack expects each tensor to be equal size, but got [3, 123, 123] at entry 0 and [3, 73, 73] at entry 1`),
in the loop's process or wrapped as `Caught RuntimeError in DataLoader worker process 0`.

A small family in one module, its sections in the seams' order: the message; the culprit (which field of the
sample, read from default_collate's own frames on the traceback by identity -- each level's `batch[0]` is an
item of the level above's; the DataLoader the failing line iterates, its Dataset's `__getitem__` and the
statement that builds the loader); the fix (a padding `collate_fn=` on that statement, only for sequences that
differ in their first dimension alone); the card (catalog keys `collate.*`). Never runs user code: the samples
are read where the traceback holds them.
"""
from __future__ import annotations

import ast
import dataclasses
import re
import types
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import torch.utils.data

from .. import catalog
from ..cell import cell_tree, node_span
from ..edits import keyword_added, make_fix
from ..names import attribute_without_code
from ..facts import shape_text
from ..model import ERROR, Diagnosis, Fix, TextEdit
from .context import RuleContext, dotted_names
from .kit import lookup, quote, torch_name
from .places import Place, getitem_of, global_assignment, returned, root, with_lines
from .samples import field_made_at
from .registry import rule

KIND = "collate-unequal-sizes"

# -- the message --

# aten/src/ATen/native/TensorShape.cpp (stack's check), torch 1.5 ... 2.13; in a worker the same text after
# "Caught RuntimeError in DataLoader worker process N.\nOriginal Traceback ..." (torch/_utils.py)
STACK = re.compile(r"stack expects each tensor to be equal size, but got \[(?P<a>[\d, ]*)\] at entry (?P<i>\d+) "
                   r"and \[(?P<b>[\d, ]*)\] at entry (?P<j>\d+)")
COLLATE_FILE = re.compile(r"utils[/\\]data[/\\]_utils[/\\]collate\.py")


@dataclass(frozen=True)
class Unequal:
    first: Tuple[int, ...]
    first_entry: int
    other: Tuple[int, ...]
    other_entry: int
    in_worker: bool
    collate_in_text: bool  # the worker's traceback text passes through default_collate

    @property
    def sequences(self) -> bool:
        """Tensors that differ in their first dimension alone: sequences of different lengths."""
        return len(self.first) == len(self.other) >= 1 and self.first[1:] == self.other[1:]


# torch/utils/data/_utils/collate.py (collate, for a sequence of samples), torch 1.5 ... 2.13: lists of numbers
# (token ids) of different lengths; the lengths are read from its `batch` where it raised (lengths_of)
LISTS = "each element in list of batch should be of equal size"


def parse_unequal(message: str) -> Optional[Unequal]:
    m = STACK.search(message)
    if m is None and LISTS in message:
        return Unequal((), 0, (), 0, "in DataLoader worker process" in message,
                       COLLATE_FILE.search(message) is not None)
    if m is None:
        return None
    dims = [tuple(int(d) for d in m[k].split(",") if d.strip()) for k in ("a", "b")]
    return Unequal(dims[0], int(m["i"]), dims[1], int(m["j"]), "in DataLoader worker process" in message,
                   COLLATE_FILE.search(message) is not None)


# -- the culprit --

@dataclass(frozen=True)
class Field:
    """Where in each sample the unequal tensors are: () the sample itself, (1,) item 1, ("ids",) a key."""

    path: Tuple[Any, ...]
    kind: str  # "tensor", "sequence" or "mapping": the sample's outer type


def collate_frames(exc: Optional[BaseException]) -> List[Any]:
    """default_collate's `collate` frames on the traceback, outermost first."""
    tb = exc.__traceback__ if exc is not None else None
    frames = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "collate" and COLLATE_FILE.search(code.co_filename):
            frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames


def lengths_of(exc: Optional[BaseException], err: Unequal) -> Optional[Unequal]:
    """`err` with the lengths of the first sequence and the first one of another length, read from the `batch`
    of default_collate's innermost frame (the message gives none)."""
    frames = collate_frames(exc)
    batch = frames[-1].f_locals.get("batch") if frames else None
    try:
        sizes = [len(item) for item in batch] if isinstance(batch, (list, tuple)) else []
    except TypeError:
        return None
    other = next((j for j, n in enumerate(sizes) if n != sizes[0]), None)
    if other is None:
        return None
    return dataclasses.replace(err, first=(sizes[0],), first_entry=0, other=(sizes[other],), other_entry=other)


def field_of(exc: Optional[BaseException]) -> Optional[Field]:
    """Which field of the sample default_collate was stacking, found by identity between the levels."""
    frames = collate_frames(exc)
    batches = [f.f_locals.get("batch") for f in frames]
    if not batches or not all(isinstance(b, (list, tuple)) and b for b in batches):
        return None
    path: List[Any] = []
    for outer, inner in zip(batches, batches[1:]):
        elem, item = outer[0], inner[0]
        keys = list(elem) if isinstance(elem, dict) else range(len(elem)) if isinstance(elem, (list, tuple)) else []
        found = [k for k in keys if elem[k] is item]
        if len(found) != 1:
            return None
        path.append(found[0])
    top = batches[0][0]
    kind = "mapping" if isinstance(top, dict) else "sequence" if isinstance(top, (list, tuple)) else "tensor"
    return Field(tuple(path), kind)


def loader_on_line(ctx: RuleContext) -> Tuple[str, Optional[torch.utils.data.DataLoader]]:
    """The one DataLoader the failing line names (`for x, y in loader:`, `next(iter(train_dl))`), or whose
    iterator it names (`next(batch_iterator)`: the loader of the iterator's dataset, by identity)."""
    found = {}
    for name in dotted_names(ctx.record.source_line(ctx.record.error_lineno)):
        obj = ctx.names.lookup(name)
        if isinstance(obj, _ITERATOR):
            name, obj = _loader_of(ctx, obj)
        if isinstance(obj, torch.utils.data.DataLoader):
            found.setdefault(id(obj), (name, obj))
    return next(iter(found.values())) if len(found) == 1 else ("", None)


_ITERATOR = torch.utils.data.dataloader._BaseDataLoaderIter


def _loader_of(ctx: RuleContext, iterator: Any) -> Tuple[str, Any]:
    dataset = attribute_without_code(iterator, "_dataset")
    loaders = {id(obj): (name, obj) for name, obj in ctx.names.all_objects()
               if isinstance(obj, torch.utils.data.DataLoader) and dataset is not None
               and attribute_without_code(obj, "dataset") is dataset}
    return next(iter(loaders.values())) if len(loaders) == 1 else ("", None)


def loader_built(ctx: RuleContext, name: str) -> Optional[Place]:
    """The `DataLoader(...)` call that built the loader: a top-level `name = DataLoader(...)` of this cell before
    the failing line, else of an earlier cell."""
    tree = cell_tree(ctx.record.source)
    mine = [s for s in (tree.body if tree is not None and not ctx.elsewhere else [])
            if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)
            and s.lineno < (ctx.record.error_lineno or 0)]
    place = Place(ctx, tree, mine[-1]) if mine else global_assignment(ctx, name) if name.isidentifier() else None
    if place is None:
        return None
    calls = [c for c in ast.walk(place.node) if isinstance(c, ast.Call)
             and lookup(place.ctx, c.func) is torch.utils.data.DataLoader]
    return Place(place.ctx, place.tree, calls[0]) if len(calls) == 1 else None


# -- the fix --

PAD = "{t}.nn.utils.rnn.pad_sequence({items}, batch_first=True)"
DEFAULT = "{t}.utils.data.default_collate({items})"


def collate_text(t: str, field: Field) -> Optional[str]:
    """A `collate_fn` that pads the field's sequences with zeros to the longest and collates the rest as
    default_collate does."""
    if field.kind == "tensor" and not field.path:
        return f"lambda batch: {PAD.format(t=t, items='batch')}"
    if len(field.path) != 1:
        return None
    k = field.path[0]
    if field.kind == "sequence":
        pad, rest = PAD.format(t=t, items="list(f)"), DEFAULT.format(t=t, items="list(f)")
        return f"lambda batch: [{pad} if i == {k} else {rest} for i, f in enumerate(zip(*batch))]"
    items = "[d[k] for d in batch]"
    pad, rest = PAD.format(t=t, items=items), DEFAULT.format(t=t, items=items)
    return f"lambda batch: {{k: {pad} if k == {k!r} else {rest} for k in batch[0]}}"


def users_collate(ctx: RuleContext, loader: Any) -> str:
    """The name of the one collate function the user wrote (a function of a cell or file of theirs, named
    `*collate*`) that the loader does not use: what they meant to pass."""
    used = attribute_without_code(loader, "collate_fn")
    sources = root(ctx).record.sources
    found = [name for name, obj in ctx.names.all_objects() if name.isidentifier() and "collate" in name.lower()
             and isinstance(obj, types.FunctionType) and obj is not used and sources is not None
             and sources.is_user(obj.__code__.co_filename) and obj.__code__.co_argcount >= 1]
    return found[0] if len(set(found)) == 1 else ""


def named_collate_fix(built: Place, name: str, description: str) -> Optional[Fix]:
    call = built.node
    if not name or not isinstance(call, ast.Call) or any(k.arg == "collate_fn" for k in call.keywords):
        return None
    source = built.ctx.record.source
    return make_fix(source, [keyword_added(source, call, f"collate_fn={name}")], description)


def padding_fix(built: Place, field: Optional[Field], description: str) -> Optional[Fix]:
    call = built.node
    if field is None or not isinstance(call, ast.Call) or any(k.arg == "collate_fn" for k in call.keywords):
        return None
    t = torch_name(built.ctx, built.tree)
    text = collate_text(t, field) if t else None
    if text is None:
        return None
    source = built.ctx.record.source
    _, end = node_span(source, call)
    return make_fix(source, [TextEdit(end - 1, end - 1, f", collate_fn={text}")], description)


# -- the card --

@rule(KIND, raises=RuntimeError, parse=parse_unequal, matches=(
    "stack expects each tensor to be equal size, but got [3, 123, 123] at entry 0 and [3, 73, 73] at entry 1 "
    "(default_collate, also inside 'Caught RuntimeError in DataLoader worker process 0')",
    "each element in list of batch should be of equal size (lists of token ids of different lengths)",
), fix="a `collate_fn=` on the DataLoader that pads sequences of different lengths (torch.nn.utils.rnn."
       "pad_sequence), when the samples differ in their first dimension alone")
def collate_unequal_sizes(ctx: RuleContext, err: Unequal) -> Optional[Diagnosis]:
    """A DataLoader's default_collate given samples whose tensors have different shapes."""
    if not (collate_frames(ctx.exception) or err.in_worker and err.collate_in_text):
        return None  # NB: a torch.stack of the user's own (their collate_fn included): not default_collate's
    lists = not err.first  # NB: lists of numbers: pad_sequence takes tensors, so only the user's own collate_fn
    if lists:
        err = lengths_of(ctx.exception, err)
        if err is None:
            return None  # NB: lists of another length in a worker: no batch to read the lengths from
    name, loader = loader_on_line(ctx)
    if loader is None:
        return None
    field = None if err.in_worker else field_of(ctx.exception)
    built = loader_built(ctx, name)
    theirs = users_collate(ctx, loader) if built is not None else ""
    fix = named_collate_fix(built, theirs, built.ctx.say("collate.fix_theirs", loader=name, function=theirs,
                                                         lineno=built.node.lineno)) if theirs else None
    if fix is None and built is not None and err.sequences and not lists:
        fix = padding_fix(built, field, built.ctx.say("collate.fix", loader=name, lineno=built.node.lineno))
    lineno = ctx.record.error_lineno
    where_field = _field_said(ctx, field)
    sizes = dict(a=shape_text(err.first), i=err.first_entry, b=shape_text(err.other), j=err.other_entry)
    why = [ctx.say("collate.why", loader=quote(name), field=where_field, **sizes)]
    why.append(ctx.say("collate.why_sequences" if err.sequences else "collate.why_images", **sizes))
    if theirs and fix is not None:
        why.append(ctx.say("collate.why_theirs", function=theirs))
    elif fix is None:
        why.append(ctx.say("collate.no_fix_worker" if err.in_worker and err.sequences else "collate.no_fix"))
    at = built.ctx if built is not None and fix is not None else ctx  # NB: the card is where its fix is
    d = at.diagnosis(
        KIND, ERROR, title=ctx.say("collate.title", loader=quote(name), field=where_field, **sizes),
        summary=ctx.say("collate.summary"),
        what=ctx.say("collate.what", lineno=lineno or "?", loader=quote(name), **sizes),
        why=catalog.sentences(why, ctx.language, capitalise=True), where=ctx.where(lineno),
        lines=_call_lines(built) if at is not ctx else [lineno], names=[name] if name.isidentifier() else [],
        fix=fix)
    if at is not ctx:
        d = with_lines(d, ctx, [lineno])
    elif built is not None:
        d = with_lines(d, built.ctx, _call_lines(built))
    return _getitem_marked(ctx, d, loader, field)


def _call_lines(built: Place) -> List[int]:
    """The loader's call: its first line, and its last where it spans several (where a keyword is added)."""
    first, last = built.node.lineno, getattr(built.node, "end_lineno", None) or built.node.lineno
    return [first] if last == first else [first, last]


def _field_said(ctx: RuleContext, field: Optional[Field]) -> str:
    if field is None or not field.path:
        return ctx.say("collate.the_samples")
    return ctx.say("collate.field", field="".join(f"[{k!r}]" for k in field.path))


def _getitem_marked(ctx: RuleContext, d: Diagnosis, loader: Any, field: Optional[Field]) -> Diagnosis:
    """`d` with the `return` lines of the Dataset's `__getitem__`, where each sample gets its shape; first the
    line that made the field default_collate was stacking, where the run read which one it was."""
    place = getitem_of(ctx, loader)
    if place is None:
        return d
    made = field_made_at(place, field.path[:1]) if field is not None and len(field.path) <= 1 else None
    lines = [v.lineno for v in returned(place)][:2]
    return with_lines(d, place.ctx, ([made] if made is not None else []) + (lines or [place.node.lineno]))
