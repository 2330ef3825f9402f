"""Rules of the backward family: backward() on a non-scalar, through a freed graph, through `out=`, or
through tensors made under inference_mode.

Reads the error message, the cell's syntax around the failing line and metadata of the user's tensors
(shape, grad_fn, is_inference) -- never tensor data. Fixes are small edits of the user's text: a reduction
appended to the receiver of backward(), `.detach()` of a state carried across iterations, the graph's
statements moved into the loop, `retain_graph=True`, the out-of-place form of a call, and
`torch.inference_mode()` swapped for `torch.no_grad()`.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import torch

from ..facts import dtype_name, fact_for, shape_text
from ..cell import (assignments_to, cell_tree, enclosing_statement, indent_of, line_offsets, node_span, split_lines, segment)
from ..edits import insert_line_before, make_fix
from ..model import ERROR, Diagnosis, Fix, TensorFact, TextEdit
from .context import RuleContext, dotted_names
from .registry import rule

# torch 0.4 ... 2.13 (unchanged): "grad can be implicitly created only for scalar outputs"; torch >= 1.8 adds
# the complex case "... only for real scalar outputs but got torch.complex64".
NON_SCALAR = re.compile(r"grad can be implicitly created only for (?P<real>real )?scalar outputs")
# torch >= 1.9 ... 2.13: "Trying to backward through the graph a second time (or directly access saved tensors
# after they have already been freed). ..."; torch 1.0 ... 1.8: "..., but the saved intermediate results have
# already been freed."; torch 0.4: "..., but the buffers have already been freed."
TWICE = re.compile(r"Trying to backward through the graph a second time")
# torch 1.x ... 2.13: "add(): functions with out=... arguments don't support automatic differentiation, but
# one of the arguments requires grad."
OUT = re.compile(r"functions with out=\.\.\. arguments don't support automatic differentiation")
OUT_OP = re.compile(r"(?<![\w.])(?P<op>[\w.]{1,80})\(\): \Z")
# torch 1.9 ... 2.x: "Inference tensors cannot be saved for backward. To work around you can make a clone to get
# a normal tensor and use it in autograd."; torch 2.13 adds "Please do not use Tensors created in inference
# mode ... or use `torch.no_grad()` instead of `torch.inference_mode()`." The other two: torch 1.9 ... 2.13.
INFERENCE = re.compile(r"Inference tensors cannot be saved for backward|(?P<inplace>Inplace update to inference "
                       r"tensor outside InferenceMode)|(?P<requires>Setting requires_grad=True on inference tensor "
                       r"outside InferenceMode)")
# torch 1.9 ... 2.13, from `t._version` of an inference tensor
_LOSS_NAME = re.compile(r"loss|cost|err|objective|risk|nll|mse|bce", re.IGNORECASE)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


# -- shared: the cell around the failing line --

@dataclass(frozen=True)
class Site:
    """The failing statement and the backward()/autograd.grad call in it, if there is exactly one."""

    tree: ast.Module
    stmt: ast.stmt
    call: Optional[ast.Call]
    receiver: Optional[ast.expr]  # `loss` in `loss.backward()`, the first argument of autograd.grad
    method: bool  # `x.backward()` (not torch.autograd.backward / grad)

    @staticmethod
    def find(ctx: RuleContext) -> Optional["Site"]:
        lineno = ctx.record.error_lineno
        tree = cell_tree(ctx.record.source) if lineno else None
        stmt = enclosing_statement(tree, lineno) if tree is not None else None
        if stmt is None:
            return None
        found = [c for c in _calls(stmt) if _backward_receiver(c) is not None]
        if len(found) != 1:
            return Site(tree, stmt, None, None, False)
        call = found[0]
        receiver, method = _backward_receiver(call)
        return Site(tree, stmt, call, receiver, method)

    def text(self, ctx: RuleContext, node: Optional[ast.AST]) -> str:
        return " ".join((segment(ctx.record.source, node) or "").split()) if node else ""


def _calls(node: ast.AST) -> Iterator[ast.Call]:
    return (n for n in ast.walk(node) if isinstance(n, ast.Call))


def _backward_receiver(call: ast.Call) -> Optional[Tuple[ast.expr, bool]]:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    owner = dotted(func.value) if isinstance(func, ast.Attribute) else None
    if name in ("backward", "grad") and owner and owner.split(".")[-1] == "autograd" or \
            name == "grad" and isinstance(func, ast.Name):
        first = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg in ("outputs", "tensors")), None)
        return (first, False) if first is not None else None
    if name == "backward" and isinstance(func, ast.Attribute):
        return func.value, True
    return None


def dotted(node: ast.AST) -> Optional[str]:
    """`model.fc.weight` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def _fact(ctx: RuleContext, name: Optional[str]) -> Optional[TensorFact]:
    if not name:
        return None
    value = ctx.names.lookup(name)
    try:
        if isinstance(value, torch.Tensor) and value.is_inference():
            # NB: facts.tensor_fact reads `_version`, which an inference tensor does not have
            return TensorFact(name=name, shape=shape_text(value.shape), dtype=dtype_name(value.dtype),
                              device=str(value.device), requires_grad=value.requires_grad,
                              is_leaf=value.is_leaf, grad_fn=None)
        return fact_for(name, value)
    except Exception:  # NB: a tensor subclass whose attributes raise is no fact
        return None


def _joined(ctx: RuleContext, parts: Sequence[str]) -> str:
    return ("" if ctx.language == "zh" else " ").join(p for p in parts if p)


def _own_lines(ctx: RuleContext, stmt: ast.stmt) -> bool:
    """The statement is alone on its lines (no `;` neighbours), so whole lines can move."""
    first = ctx.record.source_line(stmt.lineno)
    last = ctx.record.source_line(stmt.end_lineno or stmt.lineno)
    rest = last.encode("utf-8")[stmt.end_col_offset or 0:].decode("utf-8", errors="ignore").strip()
    return stmt.col_offset == len(indent_of(first).encode("utf-8")) and (not rest or rest.startswith("#"))


# -- backward-non-scalar --

@rule("backward-non-scalar", matches=(
    "grad can be implicitly created only for scalar outputs",
    "grad can be implicitly created only for real scalar outputs but got torch.complex64 (complex, torch >= 1.8)",
), fix="`.mean()` (a loss) or `.sum()` appended to the tensor backward() was called on")
def backward_non_scalar(ctx: RuleContext) -> Optional[Diagnosis]:
    """backward() or autograd.grad() on a tensor with more than one element, without `gradient=`."""
    m = NON_SCALAR.search(ctx.error_message) if isinstance(ctx.exception, RuntimeError) else None
    if m is None:
        return None
    lineno = ctx.record.error_lineno
    site = Site.find(ctx)
    receiver = site.receiver if site else None
    expr = site.text(ctx, receiver) if site else ""
    name = dotted(receiver) if receiver is not None else None
    fact = _fact(ctx, name)
    shape = fact.shape if fact else _failed_shape(ctx)
    label = f"`{expr}`" if expr else ctx.say("backward.scalar.unnamed")
    call = "backward()" if site is None or site.method else "autograd.grad()"
    if m["real"]:
        why = [ctx.say("backward.scalar.why_complex", tensor=label, dtype=fact.dtype if fact else "complex")]
        fix, reduce = None, ""
    else:
        shaped = ctx.say("backward.scalar.shape", shape=shape) if shape else ""
        why = [ctx.say("backward.scalar.why", tensor=label, shaped=shaped, call=call)]
        reduce, reason = _reduction(ctx, site, name)
        fix = _reduce_fix(ctx, site, reduce) if reduce else None
        if fix is not None:
            why.append(ctx.say("backward.scalar.why_" + reduce, tensor=label))
        else:
            why.append(ctx.say(reason or "backward.scalar.why_no_fix", tensor=label))
    variant = "_complex" if m["real"] else "" if shape else "_unknown"
    code = site.text(ctx, site.call) if site and site.call else call
    return ctx.diagnosis(
        "backward-non-scalar", ERROR, title=ctx.say("backward.scalar.title" + variant, tensor=label, shape=shape),
        summary=ctx.say("backward.scalar.summary" + ("_complex" if m["real"] else ""), call=call),
        what=ctx.say("backward.scalar.what" + variant, code=code, lineno=lineno or "?", tensor=label,
                     shape=shape, dtype=fact.dtype if fact else "complex"),
        why=_joined(ctx, why), where=ctx.where(lineno), lines=[lineno], names=[name] if name else [],
        tensors=[fact] if fact else [], fix=fix)


def _failed_shape(ctx: RuleContext) -> str:
    """The shape of the tensor backward()/grad() refused, as the op tracker saw it ("" if it did not)."""
    for op in reversed(ctx.record.failed_ops):
        if op.name in ("backward", "grad") and op.lineno == ctx.record.error_lineno and op.targets:
            return shape_text(op.targets[0].shape)
    return ""


def _reduction(ctx: RuleContext, site: Optional[Site], name: Optional[str]) -> Tuple[str, str]:
    """("mean" | "sum", "") or ("", the catalog key saying why there is no fix)."""
    if site is None or site.receiver is None or isinstance(site.receiver, (ast.List, ast.Tuple)):
        return "", ""
    if name and _made_with_reduction_none(ctx, site, name):
        return "", "backward.scalar.why_reduction_none"
    last = (name or "").split(".")[-1]
    return ("mean" if _LOSS_NAME.search(last) else "sum"), ""


def _made_with_reduction_none(ctx: RuleContext, site: Site, name: str) -> bool:
    """`loss = F.mse_loss(a, b, reduction="none")`, or a criterion built with reduction='none'."""
    before = [s for s in assignments_to(site.tree, name) if s.lineno <= site.stmt.lineno]
    value = getattr(before[-1], "value", None) if before else None
    for call in _calls(value) if value is not None else ():
        if any(k.arg == "reduction" and isinstance(k.value, ast.Constant) and k.value.value == "none"
               for k in call.keywords):
            return True
        callee = dotted(call.func)
        module = ctx.names.lookup(callee) if callee else None
        if isinstance(module, torch.nn.Module) and module.__dict__.get("reduction") == "none":
            return True
    return False


def _reduce_fix(ctx: RuleContext, site: Site, reduce: str) -> Optional[Fix]:
    src = ctx.record.source
    node = site.receiver
    start, end = node_span(src, node)
    if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        edits = [TextEdit(end, end, f".{reduce}()")]
    elif site.method and src[start - 1:start] == "(" and src[end:end + 1] == ")":  # NB: `(a * b).backward()`
        edits = [TextEdit(end + 1, end + 1, f".{reduce}()")]
    else:
        edits = [TextEdit(start, start, "("), TextEdit(end, end, f").{reduce}()")]
    expr = site.text(ctx, node)
    new = f"{expr}.{reduce}()" if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else \
        f"({expr}).{reduce}()"
    return make_fix(src, edits, ctx.say("backward.scalar.fix", old=expr, new=new, lineno=site.stmt.lineno))


# -- backward-twice --

@rule("backward-twice", matches=(
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). … (torch >= 1.9)",
    "Trying to backward through the graph a second time, but the saved intermediate results have already been "
    "freed. (torch 1.0–1.8; 0.4: \"but the buffers have already been freed\")",
), fix="`h = h.detach()` for a state carried across iterations; the forward pass moved into the loop; "
       "`retain_graph=True` on the first of two backward() calls")
def backward_twice(ctx: RuleContext) -> Optional[Diagnosis]:
    """backward() through a graph whose saved tensors an earlier backward() already freed."""
    if not isinstance(ctx.exception, RuntimeError) or not TWICE.search(ctx.error_message):
        return None
    lineno = ctx.record.error_lineno
    site = Site.find(ctx)
    expr = site.text(ctx, site.receiver) if site and site.receiver is not None else ""
    label = f"`{expr}`" if expr else ctx.say("backward.twice.unnamed")
    cause = _twice_cause(ctx, site) if site is not None and site.receiver is not None else None
    names = [n for n in ([dotted(site.receiver)] if site and site.receiver is not None else []) if n]
    why = [ctx.say("backward.twice.why")]
    lines = [lineno]
    title = ctx.say("backward.twice.title", tensor=label)
    if cause is not None:
        why.append(ctx.say(cause.key, tensor=label, **cause.params))
        lines = sorted({*cause.lines, lineno} - {None})
        names += [n for n in cause.names if n not in names]
        title = ctx.say(cause.key + "_title", tensor=label, **cause.params)
    fix = cause.fix if cause is not None else None
    if cause is None:
        why.append(ctx.say("backward.twice.why_no_fix"))
    elif fix is None and cause.key != "backward.twice.why_stepped":
        why.append(ctx.say("backward.twice.why_no_edit"))
    facts = [f for f in (_fact(ctx, n) for n in names) if f is not None and f.kind != "module"]
    return ctx.diagnosis(
        "backward-twice", ERROR, title=title, summary=ctx.say("backward.twice.summary"),
        what=ctx.say("backward.twice.what", code=site.text(ctx, site.call) if site and site.call else "backward()",
                     lineno=lineno or "?", tensor=label),
        why=_joined(ctx, why), where=ctx.where(lineno), lines=lines, names=names, tensors=facts, fix=fix)


@dataclass(frozen=True)
class Cause:
    key: str  # catalog key of the explanation; key + "_title" is the card's title
    lines: Tuple[int, ...]
    names: Tuple[str, ...]
    fix: Optional[Fix]
    params: Dict[str, Any]


def _twice_cause(ctx: RuleContext, site: Site) -> Optional[Cause]:
    path = _path_to(site.tree, site.stmt)
    if path is None:
        return None
    loop_at = max((i for i, (owner, _, _) in enumerate(path) if isinstance(owner, _LOOPS)), default=None)
    if loop_at is not None:
        loop = path[loop_at][0]
        found = _carried_state(ctx, site, loop) or _graph_before_loop(ctx, site, loop, path[loop_at - 1]
                                                                       if loop_at else None)
        if found is not None:
            return found
    return _second_backward(ctx, site, path[-1])


# A path is [(owner, body, index)]: `owner.body[index]` leads to the failing statement (owner None: the cell).
PathStep = Tuple[Optional[ast.AST], List[ast.stmt], int]


def _path_to(tree: ast.Module, target: ast.stmt) -> Optional[List[PathStep]]:
    """From the innermost function (or the cell) down to `target`."""
    def walk(owner: Optional[ast.AST], body: List[ast.stmt], trail: List[PathStep]) -> Optional[List[PathStep]]:
        for i, stmt in enumerate(body):
            here = trail + [(owner, body, i)]
            if stmt is target:
                return here
            if stmt.lineno <= target.lineno <= (stmt.end_lineno or stmt.lineno):
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, field, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        found = walk(stmt, inner, [] if isinstance(stmt, _SCOPES) else here)
                        if found:
                            return found
                for handler in getattr(stmt, "handlers", []) or []:
                    found = walk(handler, handler.body, here)
                    if found:
                        return found
        return None

    return walk(None, tree.body, [])


def _names_in(node: Optional[ast.AST], ctx_type: type = ast.Load) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx_type)} \
        if node is not None else set()


def _assigns(loop: ast.AST) -> Dict[str, List[ast.stmt]]:
    """name -> the statements in the loop body that bind it (nested functions left out)."""
    found: Dict[str, List[ast.stmt]] = {}
    for stmt in _statements(loop.body):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
            stmt, (ast.AnnAssign, ast.AugAssign, ast.For)) else []
        for name in set().union(*(_names_in(t, ast.Store) for t in targets)) if targets else ():
            found.setdefault(name, []).append(stmt)
    return found


def _statements(body: List[ast.stmt]) -> Iterator[ast.stmt]:
    for stmt in body:
        yield stmt
        if not isinstance(stmt, _SCOPES):
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    yield from _statements(inner)


def _carried_state(ctx: RuleContext, site: Site, loop: ast.AST) -> Optional[Cause]:
    """A tensor with a graph that one iteration hands to the next (`out, h = rnn(x, h)`) and that feeds the
    backward: the next backward runs into the previous iteration's freed graph."""
    assigned = _assigns(loop)
    feeds = _feeds(site, assigned)
    carried = []
    for name in sorted(feeds & set(assigned)):
        first = min(assigned[name], key=lambda s: s.lineno)
        reads = [n for s in _statements(loop.body) for n in ast.walk(getattr(s, "value", s))
                 if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        early = any(n.lineno < first.lineno for n in reads) or name in _names_in(getattr(first, "value", None))
        if early and _has_graph(ctx.names.lookup(name)):
            carried.append(name)
    if not carried:
        return None
    first_stmt = loop.body[0]
    fix = None
    if _own_lines(ctx, first_stmt):
        line = ctx.record.source_line(first_stmt.lineno)
        parts = [_detached(ctx, site, loop, n) for n in carried]
        text = f"{', '.join(carried)} = {', '.join(parts)}"
        fix = make_fix(ctx.record.source, [insert_line_before(ctx.record.source, first_stmt.lineno,
                                                               indent_of(line) + text)],
                       ctx.say("backward.twice.fix_detach", code=text, lineno=loop.lineno))
    made = min(assigned[carried[0]], key=lambda s: s.lineno).lineno
    return Cause("backward.twice.why_carried", (loop.lineno, made), tuple(carried), fix,
                 {"state": ", ".join(f"`{n}`" for n in carried), "lineno": made, "loop": loop.lineno})


def _feeds(site: Site, assigned: Dict[str, List[ast.stmt]]) -> Set[str]:
    """The names the receiver is computed from, inside the loop (itself included)."""
    feeds: Set[str] = set()
    todo = list(_names_in(site.receiver))
    while todo:
        name = todo.pop()
        if name in feeds:
            continue
        feeds.add(name)
        for stmt in assigned.get(name, ()):
            todo.extend(_names_in(getattr(stmt, "value", None)))
    return feeds


def _detached(ctx: RuleContext, site: Site, loop: ast.AST, name: str) -> str:
    value = ctx.names.lookup(name)
    expr = f"tuple(t.detach() for t in {name})" if isinstance(value, tuple) else \
        f"[t.detach() for t in {name}]" if isinstance(value, list) else f"{name}.detach()"
    starts_none = any(_binds_none(s, name) for s in assignments_to(site.tree, name) if s.lineno < loop.lineno)
    return f"{expr} if {name} is not None else None" if starts_none else expr


def _binds_none(stmt: ast.stmt, name: str) -> bool:
    """`h = None`, `h, c = None, None`: the state starts as None (the first iteration gets no state)."""
    pairs = []
    for target in getattr(stmt, "targets", [getattr(stmt, "target", None)]):
        value = getattr(stmt, "value", None)
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            pairs += list(zip(target.elts, value.elts))
        else:
            pairs.append((target, value))
    return any(isinstance(t, ast.Name) and t.id == name and isinstance(v, ast.Constant) and v.value is None
               for t, v in pairs)


def _has_graph(value: Any) -> bool:
    items = value if isinstance(value, (tuple, list)) else (value,)
    return any(isinstance(t, torch.Tensor) and t.grad_fn is not None for t in items[:8])


def _graph_before_loop(ctx: RuleContext, site: Site, loop: ast.AST,
                       outer: Optional[PathStep]) -> Optional[Cause]:
    """`loss` (or a tensor it is built on, `emb = C[xs]`) computed once before the loop and backpropagated in
    every iteration: move the statements that built that graph into the loop."""
    assigned = _assigns(loop)
    roots = sorted(n for n in _feeds(site, assigned) if n not in assigned and _has_graph(ctx.names.lookup(n)))
    if not roots:
        return None
    body, at = (outer[1], outer[2]) if outer is not None else (None, None)
    if body is None or body[at] is not loop:
        return None
    receiver = dotted(site.receiver)
    graph = receiver if receiver in roots else roots[0]
    key = "backward.twice.why_before_loop" if graph == receiver else "backward.twice.why_part_before_loop"
    need, moved = set(roots), []
    for stmt in reversed(body[:at]):
        targets = _names_in(stmt, ast.Store) if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else set()
        if targets & need and all(_has_graph(ctx.names.lookup(t)) for t in targets) and \
                not targets & set(assigned):
            moved.insert(0, stmt)
            need |= _names_in(stmt.value)
    made = next((s.lineno for s in reversed(body[:at]) if graph in _names_in(s, ast.Store)), None)
    params = {"graph": f"`{graph}`", "lineno": made or "?", "loop": loop.lineno}
    if not moved or not _movable(ctx, body[body.index(moved[0]):at], moved, loop):
        return Cause(key, tuple(n for n in (made, loop.lineno) if n), (graph,), None, params)
    src = ctx.record.source
    offs, lines = line_offsets(src), split_lines(src, keepends=True)
    first = loop.body[0]
    step = indent_of(lines[first.lineno - 1])[len(indent_of(lines[loop.lineno - 1])):]
    edits, moved_text = [], []
    for stmt in moved:
        end = stmt.end_lineno or stmt.lineno
        edits.append(TextEdit(offs[stmt.lineno - 1], offs[end], ""))
        moved_text += [step + ln if ln.strip() else ln for ln in lines[stmt.lineno - 1:end]]
    edits.append(TextEdit(offs[first.lineno - 1], offs[first.lineno - 1], "".join(moved_text)))
    span = _line_span([s.lineno for s in moved] + [moved[-1].end_lineno or moved[-1].lineno])
    fix = make_fix(src, edits, ctx.say("backward.twice.fix_move", lines=span, loop=loop.lineno))
    return Cause(key, (*(s.lineno for s in moved), loop.lineno), (graph,), fix, params)


def _movable(ctx: RuleContext, between: List[ast.stmt], moved: List[ast.stmt], loop: ast.AST) -> bool:
    """Nothing left before the loop reads what moves; every moved statement owns its lines."""
    if not all(_own_lines(ctx, s) for s in [*moved, loop.body[0]]):
        return False
    if loop.body[0].lineno == loop.lineno:
        return False
    gone = set().union(*(_names_in(s, ast.Store) for s in moved))
    header = loop.iter if isinstance(loop, (ast.For, ast.AsyncFor)) else loop.test
    return not any(_names_in(s) & gone for s in between if s not in moved) and not _names_in(header) & gone


def _line_span(linenos: List[int]) -> str:
    lo, hi = min(linenos), max(linenos)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _second_backward(ctx: RuleContext, site: Site, step: PathStep) -> Optional[Cause]:
    """An earlier backward() in the same block went through the same graph and freed it."""
    _, body, at = step
    earlier = [(s, c) for s in body[:at] for c in _calls(s) if _backward_receiver(c) is not None]
    if not earlier:
        return None
    stmt, call = earlier[-1]
    first = Site(site.tree, stmt, call, *_backward_receiver(call))
    params = {"first": first.text(ctx, first.receiver), "lineno": stmt.lineno}
    key = "backward.twice.why_same" if params["first"] == site.text(ctx, site.receiver) else \
        "backward.twice.why_second"
    stepped = any(isinstance(c.func, ast.Attribute) and c.func.attr == "step"
                  for s in body[body.index(stmt):at] for c in _calls(s))
    if any(k.arg == "retain_graph" for k in call.keywords) or not first.method:
        return Cause(key, (stmt.lineno,), (), None, params)
    if stepped:  # NB: a GAN: the step in between changed weights the first graph saved; retain_graph won't do
        return Cause("backward.twice.why_stepped", (stmt.lineno,), (), None, params)
    src = ctx.record.source
    _, end = node_span(src, call)
    text = ", retain_graph=True" if call.args or call.keywords else "retain_graph=True"
    fix = make_fix(src, [TextEdit(end - 1, end - 1, text)],
                   ctx.say("backward.twice.fix_retain", first=params["first"], lineno=stmt.lineno))
    return Cause(key, (stmt.lineno,), (), fix, params)


# -- out-with-grad --

@rule("out-with-grad", matches=(
    "add(): functions with out=... arguments don't support automatic differentiation, but one of the "
    "arguments requires grad.",
), fix="the out-of-place form: `c = torch.add(a, b)` for `torch.add(a, b, out=c)`")
def out_with_grad(ctx: RuleContext) -> Optional[Diagnosis]:
    """An `out=` call on tensors that require grad: autograd cannot record writes into a given tensor."""
    m = OUT.search(ctx.error_message) if isinstance(ctx.exception, RuntimeError) else None
    if m is None:
        return None
    lineno = ctx.record.error_lineno
    op_m = OUT_OP.search(ctx.error_message[max(0, m.start() - 84):m.start()])
    op = op_m["op"] if op_m else "?"
    site = Site.find(ctx)
    calls = [c for c in _calls(site.stmt) if any(k.arg == "out" for k in c.keywords)] if site else []
    call = calls[0] if len(calls) == 1 else None
    out_node = next(k.value for k in call.keywords if k.arg == "out") if call else None
    out = site.text(ctx, out_node) if call else ""
    graded = [f for f in ctx.facts_on_line(lineno) if f.requires_grad and f.name != out]
    why = [ctx.say("backward.out.why", op=op)]
    fix = _out_fix(ctx, site, call, out_node, out) if call else None
    if fix is None:
        why.append(ctx.say("backward.out.why_no_fix"))
    grads = ", ".join(f"`{f.name}`" for f in graded) or ctx.say("backward.out.an_input")
    return ctx.diagnosis(
        "out-with-grad", ERROR, title=ctx.say("backward.out.title", op=op, grads=grads),
        summary=ctx.say("backward.out.summary"),
        what=ctx.say("backward.out.what", code=site.text(ctx, call) if call else f"{op}(..., out=...)",
                     lineno=lineno or "?", grads=grads, out=f"`{out}`" if out else "out"),
        why=_joined(ctx, why), where=ctx.where(lineno), lines=[lineno],
        names=[f.name for f in graded] + ([out] if out else []), tensors=graded, fix=fix)


def _out_fix(ctx: RuleContext, site: Site, call: ast.Call, out_node: ast.expr, out: str) -> Optional[Fix]:
    """`torch.add(a, b, out=c)` -> `c = torch.add(a, b)`: only for a call that is the whole statement's value."""
    stmt = site.stmt
    if not (isinstance(stmt, ast.Expr) or isinstance(stmt, ast.Assign)) or stmt.value is not call:
        return None
    if not isinstance(out_node, (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple)):
        return None
    src = ctx.record.source
    args = [*call.args, *call.keywords]
    k = next(i for i, a in enumerate(args) if isinstance(a, ast.keyword) and a.arg == "out")
    _, kw_end = node_span(src, args[k].value)
    if k > 0:
        _, start = node_span(src, args[k - 1].value if isinstance(args[k - 1], ast.keyword) else args[k - 1])
        end = kw_end
    else:
        start = node_span(src, args[k].value)[0] - len("out=")
        end = node_span(src, args[k + 1])[0] if k + 1 < len(args) else kw_end
        if not src[start:start + 4] == "out=":
            return None
    call_start, _ = node_span(src, call)
    edits = [TextEdit(call_start, call_start, f"{out} = "), TextEdit(start, end, "")]
    return make_fix(src, edits, ctx.say("backward.out.fix", out=out, lineno=stmt.lineno))


# -- inference-tensor-backward --

@rule("inference-tensor-backward", matches=(
    "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor "
    "and use it in autograd. (torch 2.13 adds: or use `torch.no_grad()` instead of `torch.inference_mode()`)",
    "Inplace update to inference tensor outside InferenceMode is not allowed.",
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
), fix="`torch.no_grad()` instead of `torch.inference_mode()` where the tensor was made, else `x = x.clone()`")
def inference_tensor_backward(ctx: RuleContext) -> Optional[Diagnosis]:
    """A tensor made under torch.inference_mode() used where autograd (or its version counter) needs it."""
    m = INFERENCE.search(ctx.error_message) if isinstance(ctx.exception, RuntimeError) else None
    if m is None:
        return None
    variant = "inplace" if m["inplace"] else "requires" if m["requires"] else "saved"
    lineno = ctx.record.error_lineno
    tree = cell_tree(ctx.record.source)
    found = _inference_names(ctx, tree)
    name, block = found[0] if found else (None, None)
    plain = label = f"`{name}`" if name else ctx.say("backward.inference.unnamed")
    alias = next((n for n, _ in found if name and n != name and ctx.names.lookup(n) is _live(ctx, name)), None)
    if alias is not None:  # NB: the failing line is in a function and names it differently
        label = ctx.say("backward.inference.alias", name=label, alias=alias)
    module = name is not None and isinstance(_live(ctx, name), torch.nn.Module)
    title = ctx.say("backward.inference.title_module", module=label) if module else \
        ctx.say("backward.inference.title_" + variant, tensor=label)
    if module:
        label = ctx.say("backward.inference.parameters", module=label)
        plain = ctx.say("backward.inference.parameters", module=plain)
    why = [ctx.say("backward.inference.why"), ctx.say("backward.inference.why_" + variant, tensor=plain)]
    fix = None
    if block is not None:
        fix = _swap_fix(ctx, block)
        why.append(ctx.say("backward.inference.why_block", tensor=plain, lineno=block.lineno))
    elif name and "." not in name and not module and tree is not None:
        fix = _clone_fix(ctx, tree, name)
    if fix is None:
        why.append(ctx.say("backward.inference.why_no_fix"))
    facts = [f for f in (_fact(ctx, name),) if f is not None]
    lines = [lineno] + ([block.lineno] if block is not None else [])
    return ctx.diagnosis(
        "inference-tensor-backward", ERROR, title=title,
        summary=ctx.say("backward.inference.summary"),
        what=ctx.say("backward.inference.what_" + variant, lineno=lineno or "?", tensor=label,
                     code=" ".join(ctx.record.source_line(lineno).split())),
        why=_joined(ctx, why), where=ctx.where(lineno), lines=sorted(set(lines)), names=[name] if name else [],
        tensors=facts, fix=fix)


def _is_inference(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.is_inference()
    if isinstance(value, torch.nn.Module):
        return any(t.is_inference() for t in (*value.parameters(), *value.buffers()))
    return False


def _inference_names(ctx: RuleContext, tree: Optional[ast.Module]) -> List[Tuple[str, Optional[ast.AST]]]:
    """Inference tensors (or modules holding them) named on the failing line, then any the cell made under
    inference_mode; each with the `with`/decorator that made it, when the cell shows it."""
    on_line: List[str] = []
    for name in dotted_names(ctx.record.source_line(ctx.record.error_lineno)):
        try:
            if name not in on_line and _is_inference(ctx.names.lookup(name)):
                on_line.append(name)
        except Exception:  # NB: a proxy whose attributes raise
            continue
    blocks = _inference_blocks(ctx, tree) if tree is not None else {}
    found = [(n, blocks.get(n.split(".")[0])) for n in on_line]
    found += [(n, b) for n, b in blocks.items() if n not in on_line and _is_inference(_live(ctx, n))]
    # NB: stable sort: a tensor whose inference_mode block the cell shows first, the failing line's first
    return sorted(found, key=lambda p: p[1] is None)


def _live(ctx: RuleContext, name: str) -> Any:
    """The value a name has in the cell's namespace (the error frame may be a function's, with its own)."""
    return ctx.namespace.get(name) if name in ctx.namespace else ctx.names.lookup(name)


def _inference_blocks(ctx: RuleContext, tree: ast.Module) -> Dict[str, ast.AST]:
    """name -> the `with ...inference_mode()` item or `@...inference_mode()` decorator its value came from."""
    found: Dict[str, ast.AST] = {}
    decorated = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                if _inference_call(ctx, d):
                    decorated[node.name] = d
        if isinstance(node, (ast.With, ast.AsyncWith)):
            item = next((i.context_expr for i in node.items if _inference_call(ctx, i.context_expr)), None)
            if item is not None:
                for stmt in _statements(node.body):
                    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                        for name in _names_in(stmt, ast.Store):
                            found.setdefault(name, item)
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and \
                isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in decorated:
            for name in _names_in(stmt, ast.Store):
                found.setdefault(name, decorated[stmt.value.func.id])
    return found


def _inference_call(ctx: RuleContext, node: ast.AST) -> bool:
    """`torch.inference_mode()` (no arguments), `torch` under any alias."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "inference_mode" and not node.args and not node.keywords):
        return False
    owner = dotted(node.func.value)
    module = ctx.names.lookup(owner) if owner else None
    return module in (torch, torch.autograd, torch.autograd.grad_mode)


def _swap_fix(ctx: RuleContext, call: ast.Call) -> Optional[Fix]:
    src = ctx.record.source
    _, end = node_span(src, call.func)
    start = end - len("inference_mode")
    if src[start:end] != "inference_mode":
        return None
    owner = ctx.record.source[slice(*node_span(src, call.func.value))]
    return make_fix(src, [TextEdit(start, end, "no_grad")],
                    ctx.say("backward.inference.fix_swap", old=f"{owner}.inference_mode()",
                            new=f"{owner}.no_grad()", lineno=call.lineno))


def _clone_fix(ctx: RuleContext, tree: ast.Module, name: str) -> Optional[Fix]:
    stmt = enclosing_statement(tree, ctx.record.error_lineno)
    if stmt is None or not _own_lines(ctx, stmt):
        return None
    line = ctx.record.source_line(stmt.lineno)
    code = f"{name} = {name}.clone()"
    return make_fix(ctx.record.source, [insert_line_before(ctx.record.source, stmt.lineno, indent_of(line) + code)],
                    ctx.say("backward.inference.fix_clone", code=code, lineno=stmt.lineno))

