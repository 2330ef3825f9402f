"""The rule `argument-type` and its card (catalog keys `arguments.*`): where the value came from, and the edit
its own type makes certain."""
from __future__ import annotations

import ast
import dataclasses
from typing import Any, List, Optional

import torch

from ... import catalog
from ...cell import node_span, segment
from ...edits import make_fix
from ...model import ERROR, Diagnosis, Fix, TextEdit
from ..context import RuleContext
from ..kit import function_around, module_parameters, quote, torch_name
from ..places import Place, function_place, method_place, returned, self_assignments, with_lines
from ..registry import rule
from .given import UNKNOWN, Given, given, local_value
from ..plain import worker_error
from .collated import in_worker, uncollatable
from .message import INDEX_RANGE, BadArgument, parse_bad_argument
from .layer_value import floor_division_edit, layer_value, layer_value_card
from .misbound import misbound, misbound_card

KIND = "argument-type"
_METHODS = ("builtin_function_or_method", "method", "method-wrapper")
_TUPLE_MODULES = (torch.nn.RNNBase, torch.nn.MultiheadAttention)  # NB: documented to return (output, state)


@dataclasses.dataclass(frozen=True)
class Origin:
    """Why the value is what it is: the catalog key and its words, the lines that made it, the fix."""

    key: str
    params: dict
    place: Optional[Any] = None  # places.Place of the line that made the value, when not the call's own
    fix: Optional[Fix] = None
    more: tuple = ()  # other places.Place whose lines the card marks (the assignment that took a tuple)


@rule(KIND, raises=(TypeError, IndexError), parse=parse_bad_argument, matches=(
    "linear(): argument 'input' (position 1) must be Tensor, not tuple",
    "conv2d() received an invalid combination of arguments - got (list, Parameter, Parameter, tuple, tuple, tuple, "
    "int), but expected one of: ...",
    "empty(): argument 'size' (position 1) must be tuple of ints, not builtin_function_or_method",
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class 'NoneType'>",
    "normal() received an invalid combination of arguments - got (int, int), but expected one of: ... (no form "
    "takes them; also inside 'Caught TypeError in DataLoader worker process 0')",
    "index out of range in self (IndexError), or any message above, when the failing value was passed by "
    "position into another parameter than the one it is named for",
), fix="item 0 of what an nn.LSTM / GRU / MultiheadAttention returns (`self.lstm(x)[0]`), a transformers "
       "output's tensor (`.logits`), the missing `return` of a forward, `x.size()` for `x.size`, `model.to(device)` "
       "for `model(device)`, `torch.as_tensor(...)` around a NumPy array or a list of numbers, `//` for a size "
       "made by `/`, `labels=labels` for a value passed by position into another parameter, `bool(...)` / "
       "`//` / `int(...)` on the keyword a torch layer was built with")
def argument_type(ctx: RuleContext, err: BadArgument) -> Optional[Diagnosis]:
    """A torch function, layer or model handed a value of the wrong type."""
    wrong = misbound(ctx)
    if wrong is not None:
        return misbound_card(ctx, wrong, KIND)
    if err.got == INDEX_RANGE:
        return None  # NB: an id past an embedding's table, passed where it was meant to go: the generic card's
    built = layer_value(ctx, err)
    if built is not None:
        return layer_value_card(ctx, built, KIND)
    if err.function == "default_collate":
        return uncollatable(ctx, err)
    if worker_error(ctx.error_message):
        return in_worker(ctx, err)
    g = ctx.memo(("argument-type", "given"), lambda: given(ctx, err))
    if g is None or g.ctx.record.filename != ctx.record.filename:
        return None  # NB: the card is read from the view of the user's frame that passed the value
    at = g.ctx
    callee = _text(at, g.call.func)
    argument = _text(at, g.argument) if g.argument is not None else ""
    origin = _origin(at, g, err)
    what = at.say("arguments.what", lineno=g.lineno, callee=quote(callee), function=err.function,
                  argument=quote(argument) or at.say("arguments.a_value"), got=err.got, want=err.want,
                  name=f" '{err.name}'" if err.name else "")
    why = at.say(origin.key, callee=quote(callee), argument=quote(argument), **origin.params)
    fix_at = origin.place.ctx if origin.place is not None and origin.fix is not None else at
    lines: List[int] = [origin.place.node.lineno] if fix_at is not at else [g.lineno]
    d = fix_at.diagnosis(
        KIND, ERROR, title=at.say("arguments.title", callee=quote(callee), got=_a(at, err.got), want=err.want),
        summary=at.say("arguments.summary"), what=what, why=catalog.sentences([why], ctx.language, capitalise=True),
        where=at.where(g.lineno), lines=lines, names=[argument] if argument.isidentifier() else [],
        tensors=at.facts_on_line(g.lineno), fix=origin.fix)
    if fix_at is not at:
        d = with_lines(d, at, [g.lineno])
    elif origin.place is not None:
        d = with_lines(d, origin.place.ctx, [getattr(origin.place.node, "lineno", None)])
    for place in origin.more:
        d = with_lines(d, place.ctx, [place.node.lineno])
    return d


def _a(ctx: RuleContext, got: str) -> str:
    return ctx.say("arguments.none") if got == "NoneType" else f"`{got}`"


def _text(ctx: RuleContext, node: Optional[ast.AST]) -> str:
    return (segment(ctx.record.source, node) or "") if node is not None else ""


# -- where the value came from --

def _origin(ctx: RuleContext, g: Given, err: BadArgument) -> Origin:
    node, value = g.argument, g.value
    if err.got in _METHODS and isinstance(node, ast.Attribute):
        return Origin("arguments.why.method", {"method": node.attr},
                      fix=_edit(ctx, node, _text(ctx, node) + "()", "arguments.fix.call", method=node.attr))
    if err.got == "torch.device" and isinstance(local_value(g, g.call.func), torch.nn.Module) and len(g.call.args) == 1:
        moved = f"{_text(ctx, g.call.func)}.to({_text(ctx, node)})"
        return Origin("arguments.why.device", {}, fix=_edit(ctx, g.call, moved, "arguments.fix.to", code=moved))
    if err.got == "numpy.ndarray" and node is not None and err.want.startswith("Tensor"):
        return Origin("arguments.why.numpy", {}, fix=_wrapped(ctx, g, node, value))
    if err.got == "list" and node is not None and _numbers(value):
        return Origin("arguments.why.numbers", {}, fix=_wrapped(ctx, g, node, value))
    if err.got == "float" and isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return Origin("arguments.why.division", {}, fix=_floor_division(ctx, g, node, err.function))
    divided = _divided(ctx, g, node) if err.got == "float" and err.want.endswith("int") else None
    if divided is not None:
        return divided
    if isinstance(node, ast.Call) and value is not UNKNOWN:
        return _made_by(ctx, g, node, node, value)  # NB: `loss_fn(net(x), y)`: the value is what the call gave
    if isinstance(node, ast.BinOp):  # NB: `feature_matrix * 100` on a tuple repeats it: the tuple is the operand
        held = [n for n in (node.left, node.right) if isinstance(n, ast.Name)
                and type(local_value(g, n)).__name__ == err.got]
        node, value = (held[0], local_value(g, held[0])) if len(held) == 1 else (node, value)
    if isinstance(node, ast.Name) and value is not UNKNOWN:
        made = _assigned(ctx, g, node.id)
        if made is not None and isinstance(made.value, ast.Call):
            return _made_by(ctx, g, made.value, made, value)
        if made is not None and _trailing_comma(ctx, made) and isinstance(value, tuple) and len(value) == 1:
            return _comma(ctx, g, made)
    return Origin("arguments.why.plain", {"got": err.got, "want": err.want})


def _floor_division(ctx: RuleContext, g: Given, node: ast.BinOp, function: str) -> Optional[Fix]:
    """`n / 4` -> `n // 4`: a size is a whole number (the operator between the operands, nothing else); the same
    slip in the other `<function>(...)` calls of the function too (they would fail next)."""
    source = ctx.record.source
    scope = function_around(g.tree, g.lineno)
    same = [a for c in ast.walk(scope) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
            and c.func.attr == function for a in c.args if isinstance(a, ast.BinOp) and isinstance(a.op, ast.Div)] \
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    edits = [floor_division_edit(source, division) for division in [node, *(a for a in same if a is not node)]]
    if None in edits:
        return None
    return make_fix(source, edits, ctx.say("arguments.fix.floordiv", lineno=node.lineno))


def _divided(ctx: RuleContext, g: Given, node: Optional[ast.AST]) -> Optional[Origin]:
    """A float size held in a name or in `self.X`, made by a `/` where it was assigned (the call's own function
    for a name; the `__init__` of the object for an attribute, an earlier cell's usually): `//` there."""
    made: Optional[ast.AST] = None
    place: Optional[Place] = None
    if isinstance(node, ast.Name):
        made = _assigned(ctx, g, node.id)
        place = Place(ctx, g.tree, made) if made is not None else None
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        owner = local_value(g, node.value)
        init = method_place(ctx, type(owner), "__init__") if owner is not UNKNOWN else None
        found = [a for a in self_assignments(init, node.attr) if isinstance(a, ast.Assign)] if init else []
        made = found[0] if len(found) == 1 else None
        place = Place(init.ctx, init.tree, made) if made is not None else None
    edit = floor_division_edit(place.ctx.record.source, made.value) if place is not None else None
    if edit is None:
        return None
    fix = make_fix(place.ctx.record.source, [edit], place.ctx.say("arguments.fix.floordiv", lineno=made.lineno))
    return Origin("arguments.why.division_made", {"lineno": made.lineno}, place, fix)


def _trailing_comma(ctx: RuleContext, stmt: ast.AST) -> bool:
    """`x = f(x),`: a one-item tuple written without brackets."""
    value = getattr(stmt, "value", None)
    return isinstance(value, ast.Tuple) and len(value.elts) == 1 and \
        not _text(ctx, value).lstrip().startswith("(") and _text(ctx, value).rstrip().endswith(",")


def _comma(ctx: RuleContext, g: Given, made: ast.Assign) -> Origin:
    """The value is a one-item tuple a trailing comma made: every such comma of the function goes (the same slip
    on the lines after it would fail next)."""
    scope = function_around(g.tree, g.lineno)
    slips = sorted((s for s in ast.walk(scope) if isinstance(s, ast.Assign) and _trailing_comma(ctx, s)),
                   key=lambda s: s.lineno)
    source = ctx.record.source
    edits = []
    for stmt in slips:
        start, end = node_span(source, stmt.value)
        text = source[start:end].rstrip()
        edits.append(TextEdit(start, start + len(text), text[:-1].rstrip()))
    fix = make_fix(source, edits, ctx.say("arguments.fix.comma", lineno=made.lineno))
    return Origin("arguments.why.comma", {"lineno": made.lineno}, Place(ctx, g.tree, made), fix)


def _assigned(ctx: RuleContext, g: Given, name: str) -> Optional[ast.Assign]:
    """The last `name = ...` of the call's own function (or cell) before the call's line."""
    scope = function_around(g.tree, g.lineno)
    found = [s for s in ast.walk(scope) if isinstance(s, ast.Assign) and s.lineno < g.lineno
             and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
    return max(found, key=lambda s: s.lineno, default=None)


def _made_by(ctx: RuleContext, g: Given, call: ast.Call, made: ast.AST, value: Any) -> Origin:
    maker = local_value(g, call.func)
    here = Place(ctx, g.tree, made)
    maker_text = _text(ctx, call.func)
    if isinstance(value, tuple) and isinstance(maker, _TUPLE_MODULES) and value and torch.is_tensor(value[0]):
        return Origin("arguments.why.torch_tuple", {"maker": quote(maker_text), "cls": type(maker).__name__,
                                                   "lineno": made.lineno}, here,
                      _edit(ctx, call, _text(ctx, call) + "[0]", "arguments.fix.item", code=_text(ctx, call) + "[0]"))
    keys = list(dict.keys(value)) if isinstance(value, dict) and type(value).__module__.startswith("transformers") \
        else []
    if keys and str(keys[0]).isidentifier() and torch.is_tensor(dict.__getitem__(value, keys[0])):
        code = f"{_text(ctx, call)}.{keys[0]}"
        return Origin("arguments.why.model_output", {"maker": quote(maker_text), "cls": type(value).__name__,
                                                     "field": keys[0], "lineno": made.lineno}, here,
                      _edit(ctx, call, code, "arguments.fix.field", code=code))
    fn = method_place(ctx, type(maker), "forward") if isinstance(maker, torch.nn.Module) else \
        function_place(ctx, maker) if callable(maker) and maker is not UNKNOWN else None
    if fn is not None and value is None and not returned(fn):
        return _no_return(fn, maker_text, made)
    if fn is not None and isinstance(value, (tuple, list)):
        many = [r for r in returned(fn) if isinstance(r, (ast.Tuple, ast.List))]
        if many:
            return Origin("arguments.why.returns_many", {"maker": quote(maker_text), "lineno": many[0].lineno,
                                                         "count": len(value), "got": type(value).__name__},
                          Place(fn.ctx, fn.tree, many[0]), more=(here,))
    return Origin("arguments.why.assigned", {"maker": quote(maker_text), "lineno": made.lineno,
                                             "got": type(value).__name__}, here)


def _no_return(fn: Any, maker_text: str, made: ast.AST) -> Origin:
    body = fn.node.body
    last = body[-1] if body else None
    target = last.targets[0].id if isinstance(last, ast.Assign) and len(last.targets) == 1 and \
        isinstance(last.targets[0], ast.Name) else last.target.id if isinstance(last, ast.AugAssign) and \
        isinstance(last.target, ast.Name) else None
    fix = None
    if target is not None:
        source = fn.ctx.record.source
        _, end = node_span(source, last)
        indent = " " * last.col_offset
        fix = make_fix(source, [TextEdit(end, end, f"\n{indent}return {target}")],
                       fn.ctx.say("arguments.fix.return", name=target, function=fn.node.name))
    return Origin("arguments.why.no_return", {"maker": quote(maker_text), "function": fn.node.name,
                                              "lineno": made.lineno},
                  Place(fn.ctx, fn.tree, last if last is not None else fn.node), fix)


# -- the edits --

def _edit(ctx: RuleContext, node: ast.AST, text: str, key: str, **params: Any) -> Optional[Fix]:
    source = ctx.record.source
    start, end = node_span(source, node)
    return make_fix(source, [TextEdit(start, end, text)], ctx.say(key, lineno=node.lineno, **params))


def _numbers(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        type(v) in (int, float, bool) for v in value)


def _wrapped(ctx: RuleContext, g: Given, node: ast.AST, value: Any) -> Optional[Fix]:
    """`torch.as_tensor(arg)`: float64 arrays made float32 when the layer they go into is."""
    t = torch_name(ctx, g.tree)
    if t is None:
        return None
    layer = local_value(g, g.call.func)
    weights = module_parameters(layer)[:1] if isinstance(layer, torch.nn.Module) else []
    if any(p.device.type != "cpu" for p in weights):
        return None  # NB: the tensor would be made on the CPU: a device mismatch next
    dtype = getattr(value, "dtype", None)
    cast = f", dtype={t}.{str(weights[0].dtype).split('.')[-1]}" if weights and str(dtype) == "float64" and \
        weights[0].dtype != torch.float64 else ""
    code = f"{t}.as_tensor({_text(ctx, node)}{cast})"
    return _edit(ctx, node, code, "arguments.fix.tensor", code=code)
