"""Rules of the loading family: a checkpoint saved on a device this machine does not have.

A small family in one module, in the four seams' order: the message (torch.load's own text, also when torch
wraps it in "Weights only load failed" -> `LoadError`), the culprit (the `torch.load(...)` call on the failing
line, and the device the cell's `device` variable names), the fix (an edit inside that call's parentheses:
`map_location=` added, or a literal map_location that names the missing device replaced) and the card
(catalog keys `loading.*`).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch

from .. import catalog
from ..cell import assignments_to, cell_tree, enclosing_statement, node_span, segment
from ..edits import make_fix
from ..model import ERROR, Diagnosis, Fix, TextEdit
from .context import RuleContext
from .kit import argument, calls_in, device_variables, lookup, one_line
from .registry import rule

KIND = "load-needs-map-location"

# -- the message --

# torch 0.4 ... 2.13: "on a CUDA device but torch.cuda.is_available() is False" (also privateuse1, HPU, XPU...)
NOT_AVAILABLE = re.compile(r"Attempting to deserialize object on (?:a )?(?P<backend>\w+) device but "
                           r"torch\.(?P<module>\w+)\.is_available\(\) is False")
# saved on cuda:1, this machine has one GPU
TOO_FEW = re.compile(r"Attempting to deserialize object on (?P<backend>\w+) device (?P<index>\d+) but "
                     r"torch\.(?P<module>\w+)\.device_count\(\) is (?P<count>\d+)")
NOT_REGISTERED = re.compile(r"The (?P<backend>\w+) device module is not registered\. If you are running on a "
                            r"CPU-only machine")
WRAPPED = "Weights only load failed"  # torch 2.1 ... 2.5 with weights_only=True wrapped the error


@dataclass(frozen=True)
class LoadError:
    """What torch.load's message says."""

    backend: str  # "cuda", "xpu", ... (lower case, as a device type)
    index: Optional[int] = None  # the saved device index (device-count variant only)
    count: Optional[int] = None  # how many devices of that type this machine has
    wrapped: bool = False  # inside "Weights only load failed ..."


def parse_load_error(message: str) -> Optional[LoadError]:
    """None when `message` is not torch.load's missing-device error; what it says otherwise."""
    wrapped = WRAPPED in message
    m = NOT_AVAILABLE.search(message)
    if m is not None:
        return LoadError(m["backend"].lower(), wrapped=wrapped)
    m = TOO_FEW.search(message)
    if m is not None:
        return LoadError(m["backend"].lower(), int(m["index"]), int(m["count"]), wrapped)
    m = NOT_REGISTERED.search(message)
    if m is not None:
        return LoadError(m["backend"].lower(), wrapped=wrapped)
    return None


# -- the culprit --

@dataclass(frozen=True)
class LoadCall:
    """The `torch.load(...)` call on the failing line, and its map_location if it has one."""

    call: ast.Call
    text: str
    map_node: Optional[ast.AST]  # the map_location value (keyword or second positional argument)
    map_text: str
    path: Optional[str]  # the file argument when it is a variable
    quote: str = '"'  # the quote the call's own strings use

    @staticmethod
    def find(ctx: RuleContext, lineno: Optional[int]) -> Optional["LoadCall"]:
        tree = cell_tree(ctx.record.source) if lineno else None
        stmt = enclosing_statement(tree, lineno) if tree is not None else None
        if stmt is None:
            return None
        src = ctx.record.source
        calls = [c for c in calls_in(stmt) if lookup(ctx, c.func) is torch.load]
        if len(calls) != 1:
            return None
        call = calls[0]
        node = argument(call, 1, "map_location")
        first = argument(call, 0, "f")
        strings = [segment(src, n) or "" for n in ast.walk(call)
                   if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        quote = "'" if strings and strings[0].lstrip("rbuRBU")[:1] == "'" else '"'
        return LoadCall(call, one_line(src, call) or "torch.load(...)", node,
                        segment(src, node) or "" if node else "", first.id if isinstance(first, ast.Name) else None,
                        quote)


def where_to(ctx: RuleContext, err: LoadError, spot: Optional[LoadCall]) -> str:
    """The cell's `device` when it names a device this machine has, else "cpu" (or device 0)."""
    for name, value in device_variables(ctx):
        try:
            device = value if isinstance(value, torch.device) else torch.device(value) \
                if isinstance(value, str) else None
        except (RuntimeError, TypeError):
            device = None
        if device is not None and _usable(device, err) and _bound(ctx, name, spot):
            return name
    quote = spot.quote if spot is not None else '"'
    return f"{quote}{err.backend}:0{quote}" if err.count else f"{quote}cpu{quote}"


def _usable(device: torch.device, err: LoadError) -> bool:
    if device.type == "meta":
        return False
    if device.type != err.backend:
        return True
    return err.count is not None and (device.index or 0) < err.count


def _bound(ctx: RuleContext, name: str, spot: Optional[LoadCall]) -> bool:
    """`name` exists where the call is: assigned before it in the cell, or by an earlier cell."""
    tree = cell_tree(ctx.record.source)
    if tree is None or spot is None:
        return False
    found = assignments_to(tree, name)
    return any(s.lineno < spot.call.lineno for s in found) if found else name in ctx.namespace


# -- the fix --

def map_location_fix(ctx: RuleContext, spot: LoadCall, to: str) -> Tuple[Optional[Fix], str]:
    """(Fix or None, the catalog key saying why there is none)."""
    src = ctx.record.source
    call = spot.call
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return None, "loading.why.kwargs"
    lineno = call.lineno
    if spot.map_node is not None:
        if not _literal_device(spot.map_node):
            return None, "loading.why.map_variable"
        start, end = node_span(src, spot.map_node)
        edit = TextEdit(start, end, to)
        description = ctx.say("loading.fix_replace", expr=to, old=spot.map_text, lineno=lineno)
    else:
        args: List[ast.AST] = [*call.args, *call.keywords]
        if args:
            _, at = node_span(src, max(args, key=lambda a: (a.end_lineno, a.end_col_offset)))
            text = f", map_location={to}"
        else:
            _, end = node_span(src, call)
            at, text = end - 1, f"map_location={to}"
        edit = TextEdit(at, at, text)
        description = ctx.say("loading.fix_add", expr=to, lineno=lineno)
    return make_fix(src, [edit], description), "loading.why.no_fix"


def _literal_device(node: ast.AST) -> bool:
    """`"cuda"`, `'cuda:0'`, `torch.device("cuda")`: a map_location written out that can be replaced."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "device" \
        and all(isinstance(a, ast.Constant) for a in node.args) and not node.keywords


# -- the card --

@rule(KIND, raises=Exception, parse=parse_load_error, matches=(
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.",
    "Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1.",
    "Weights only load failed … (torch 2.1–2.4 wrap the above)",
), fix='`map_location="cpu"` (or the cell\'s `device`) on the torch.load call')
def load_needs_map_location(ctx: RuleContext, err: LoadError) -> Optional[Diagnosis]:
    """torch.load of a checkpoint saved on a GPU, on a machine without one (map_location missing)."""
    lineno = ctx.record.error_lineno
    spot = LoadCall.find(ctx, lineno)
    fix, reason = map_location_fix(ctx, spot, where_to(ctx, err, spot)) if spot is not None \
        else (None, "loading.why.not_in_cell")
    saved = f"{err.backend}:{err.index}" if err.index is not None else err.backend
    title = "loading.title_count" if err.count is not None else "loading.title"
    build = ctx.say("loading.cpu_build") if torch.version.cuda is None and err.backend == "cuda" else ""
    why = [ctx.say("loading.why", saved=saved, backend=err.backend, version=torch.__version__, build=build)]
    if err.wrapped:
        why.append(ctx.say("loading.why.wrapped"))
    if fix is None:
        why.append(ctx.say(reason, expr=spot.map_text if spot else "", backend=err.backend))
    call = f"`{spot.text}`" if spot is not None else ctx.say("loading.called_through")
    what = "loading.what_count" if err.count is not None else "loading.what"
    return ctx.diagnosis(
        KIND, ERROR, title=ctx.say(title, saved=saved, backend=err.backend, count=err.count),
        summary=ctx.say("loading.summary"),
        what=ctx.say(what, call=call, lineno=lineno or "?", saved=saved, backend=err.backend, count=err.count),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno), lines=[lineno],
        names=[spot.path] if spot is not None and spot.path else [], fix=fix)
