"""Rules of the optimizer family: an optimizer stepped on gradients left over from earlier steps.

Reads the optimizer steps the capture recorded (`StepEvent.stale_params`: grads accumulated onto since
the previous step and never cleared) and the cell's syntax; never reads tensor data. The fix inserts
`<optimizer>.zero_grad()` where each step's gradients start: before the backward() that feeds it.

Also here: empty-parameter-list (an optimizer built on no parameters: layers in a plain list or dict, a
used-up `.parameters()` generator) and optimizer-not-on-model (a warning: the optimizer steps parameters of a
discarded model, shaped like the one the cell calls). Both read only dicts, shapes and the cell's syntax.
"""
from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch

from ..facts import fact_for
from ..cell import assignments_to, cell_tree, enclosing_statement, indent_of, node_span, segment
from ..edits import insert_line_before, make_fix
from ..model import ERROR, WARNING, Diagnosis, Fix, TextEdit
from ..record import StepEvent
from .context import RuleContext
from .registry import rule

KIND = "grads-not-zeroed"
_BLOCKS = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class _Optimizer:
    """The steps of one optimizer in this run."""

    name: Optional[str]
    class_name: str
    steps: List[StepEvent] = field(default_factory=list)

    @property
    def stale(self) -> List[StepEvent]:
        return [s for s in self.steps if s.stale_params > 0]


def stale_optimizers(ctx: RuleContext) -> List[_Optimizer]:
    """Optimizers with at least one step on stale gradients, in the order they first stepped."""
    by_id: Dict[Any, Tuple[Any, _Optimizer]] = {}
    for step in ctx.record.steps:
        opt = step.optimizer() if step.optimizer is not None else None
        key = id(opt) if opt is not None else (step.optimizer_class, step.lineno)
        if key not in by_id:
            by_id[key] = (opt, _Optimizer(None, step.optimizer_class))
        by_id[key][1].steps.append(step)
    found = [(opt, o) for opt, o in by_id.values() if o.stale]
    for opt, o in found:  # NB: named only when stale: naming indexes the whole namespace
        o.name = ctx.names.name_for(opt) if opt is not None else None
    return [o for _, o in found]


@rule(KIND, severity=WARNING, matches=(
    "silent: an optimizer stepped again while its parameters' .grad still held the previous step's gradients",
), fix="`<optimizer>.zero_grad()` inserted where each step's gradients start")
def grads_not_zeroed(ctx: RuleContext) -> Optional[Diagnosis]:
    """optimizer.step() ran on gradients accumulated since its previous step, never zeroed."""
    found = stale_optimizers(ctx)
    if not found:
        return None
    tree = cell_tree(ctx.record.source)
    spots = [ZeroGradSpot.find(ctx, tree, o) if tree is not None else None for o in found]
    labels = [o.name or (s.receiver if s else None) or o.class_name for o, s in zip(found, spots)]
    first, label = found[0], labels[0]
    step = first.stale[0]
    stale_params = max(s.stale_params for s in first.stale)
    why = [ctx.say("optimizer.zero.why", optimizer=label)]
    if len(found) > 1:
        why.append(ctx.say("optimizer.zero.why_others", others=", ".join(f"`{n}`" for n in labels[1:])))
    fix = _fix(ctx, spots) if all(spots) else None
    if fix is None:
        why.append(ctx.say("optimizer.zero.why_no_fix", optimizer=label))
    lines = sorted({s.lineno for o in found for s in o.stale if s.lineno} |
                   {s.backward_line for s in spots if s and s.backward_line})
    return ctx.diagnosis(
        KIND, WARNING, title=ctx.say("optimizer.zero.title", optimizer=label),
        summary=ctx.say("optimizer.zero.summary", call=f"{spots[0].receiver if spots[0] else label}.step()",
                        lineno=step.lineno,
                        stale=len(first.stale), total=len(first.steps)),
        what=ctx.say("optimizer.zero.what", optimizer=label, cls=first.class_name,
                     total=len(first.steps), stale=len(first.stale), params=stale_params,
                     with_grad=max(s.params_with_grad for s in first.stale)),
        why=("" if ctx.language == "zh" else " ").join(why), where=ctx.where(step.lineno), lines=lines,
        names=[n for n in labels if n], fix=fix)


def _fix(ctx: RuleContext, spots: List["ZeroGradSpot"]) -> Optional[Fix]:
    src = ctx.record.source
    edits: Dict[Tuple[int, str], TextEdit] = {}
    for spot in spots:
        edit = spot.edit(src)
        edits.setdefault((edit.start, edit.text), edit)
    parts = dict.fromkeys(ctx.say("optimizer.zero.fix_before" if s.before else "optimizer.zero.fix_after",
                                  call=f"{s.receiver}.zero_grad()", lineno=s.anchor.lineno) for s in spots)
    described = ctx.say("optimizer.zero.fix", parts=ctx.say("optimizer.zero.joiner").join(parts))
    return make_fix(src, sorted(edits.values(), key=lambda e: e.start), described)


@dataclass(frozen=True)
class ZeroGradSpot:
    """Where `<receiver>.zero_grad()` goes: before `anchor` (a backward) or after it (a conditional step)."""

    receiver: str
    anchor: ast.stmt
    before: bool
    backward_line: Optional[int]

    @staticmethod
    def find(ctx: RuleContext, tree: ast.Module, opt: _Optimizer) -> Optional["ZeroGradSpot"]:
        lines = {s.lineno for s in opt.stale}
        if len(lines) != 1 or None in lines:
            return None  # NB: stale steps on several lines: where each one's gradients start is unclear
        step_stmt = enclosing_statement(tree, lines.pop())
        receiver = _step_receiver(ctx.record.source, step_stmt)
        if receiver is None:
            return None
        path = _path_to(tree, step_stmt)
        if path is None:
            return None
        if any(isinstance(body[i], ast.If) for body, i in path[:-1]):
            # a conditional step (accumulation every k batches): clear right after it
            return ZeroGradSpot(receiver, step_stmt, False, None) if _starts_line(ctx, step_stmt) else None
        for body, j in reversed(path):
            k = max((i for i in range(j) if _has_call(body[i], "step")), default=-1)
            b = next((i for i in range(k + 1, j) if _has_call(body[i], "backward")), None)
            if b is not None:
                return ZeroGradSpot(receiver, body[b], True, body[b].lineno)
            if k >= 0:
                return None
        body, j = path[0]
        if j > 0 and not any(_has_call(s, "backward") for s in body):
            return ZeroGradSpot(receiver, body[0], True, None)  # backward runs in a function: top of the loop
        return None

    def edit(self, source: str) -> TextEdit:
        line = source.splitlines()[self.anchor.lineno - 1]
        text = f"{indent_of(line)}{self.receiver}.zero_grad()"
        if self.before:
            return insert_line_before(source, self.anchor.lineno, text)
        end = self.anchor.end_lineno or self.anchor.lineno
        if end < len(source.splitlines()):
            return insert_line_before(source, end + 1, text)
        return TextEdit(len(source), len(source), ("" if source.endswith("\n") else "\n") + text + "\n")


def _step_receiver(source: str, stmt: Optional[ast.stmt]) -> Optional[str]:
    """`opt` in the statement `opt.step()` (no closure argument), else None."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    if not isinstance(call.func, ast.Attribute) or call.func.attr != "step" or call.args or call.keywords:
        return None
    inner = call.func.value
    while isinstance(inner, ast.Attribute):
        inner = inner.value
    return segment(source, call.func.value) if isinstance(inner, ast.Name) else None


def _path_to(tree: ast.Module, target: ast.stmt) -> Optional[List[Tuple[List[ast.stmt], int]]]:
    """(body, index) pairs from the innermost loop or function around `target` down to `target`."""
    def walk(body: List[ast.stmt], trail: List[Tuple[List[ast.stmt], int]]):
        for i, stmt in enumerate(body):
            here = trail + [(body, i)]
            if stmt is target:
                return here
            if stmt.lineno <= target.lineno <= (stmt.end_lineno or stmt.lineno):
                for name in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(stmt, name, None)
                    if inner:
                        found = walk(inner, [] if isinstance(stmt, _BLOCKS) and name == "body" else here)
                        if found:
                            return found
        return None

    return walk(tree.body, [])


def _has_call(node: ast.AST, attr: str) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == attr
               for n in ast.walk(node))


def _starts_line(ctx: RuleContext, stmt: ast.stmt) -> bool:
    line = ctx.record.source_line(stmt.lineno)
    return stmt.col_offset == len(indent_of(line))


# -- empty-parameter-list: an optimizer built on no parameters --

EMPTY_KIND = "empty-parameter-list"
# torch/optim/optimizer.py, Optimizer.__init__, unchanged from 0.4 to 2.13
_EMPTY = "optimizer got an empty parameter list"


@rule(EMPTY_KIND, matches=(
    "optimizer got an empty parameter list",
), fix="`nn.ModuleList([...])` around layers kept in a plain list, or `list(model.parameters())` for a "
       "generator that was used up")
def empty_parameter_list(ctx: RuleContext) -> Optional[Diagnosis]:
    """An optimizer was given no parameters: a model whose layers are in a plain list, or a used-up generator."""
    if not isinstance(ctx.exception, ValueError) or _EMPTY not in ctx.error_message:
        return None
    lineno = ctx.record.error_lineno
    tree = cell_tree(ctx.record.source)
    arg = _params_argument(ctx, tree, lineno) if tree is not None and lineno else None
    cause = _empty_cause(ctx, tree, arg) if arg is not None else None
    if cause is None:
        why, fix, names = [ctx.say("optimizer.empty.why_unknown")], None, []
    else:
        why, fix, names = [ctx.say(cause.key, **cause.params)], cause.fix, cause.names
        if fix is None:
            why.append(ctx.say(cause.no_fix_key, **cause.params))
    call = " ".join((segment(ctx.record.source, arg) or "").split()) if arg is not None else ""
    what = ctx.say("optimizer.empty.what", arg=call, lineno=lineno) if call else \
        ctx.say("optimizer.empty.what_unknown", lineno=lineno or "?")
    return ctx.diagnosis(
        EMPTY_KIND, ERROR, title=ctx.say("optimizer.empty.title"), summary=ctx.say("optimizer.empty.summary"),
        what=what, why=("" if ctx.language == "zh" else " ").join(why), where=ctx.where(lineno),
        lines=sorted({n for n in (lineno, cause.lineno if cause else None) if n}), names=names,
        tensors=[f for f in (fact_for(n, ctx.names.lookup(n)) for n in names[:1]) if f is not None], fix=fix)


@dataclass(frozen=True)
class _EmptyCause:
    key: str
    no_fix_key: str
    params: Dict[str, Any]
    names: List[str]
    lineno: Optional[int] = None
    fix: Optional[Fix] = None


def _params_argument(ctx: RuleContext, tree: ast.Module, lineno: int) -> Optional[ast.expr]:
    """The params argument of the one optimizer constructor on the failing line."""
    stmt = enclosing_statement(tree, lineno)
    if stmt is None:
        return None
    found = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
            func = ctx.names.lookup(segment(ctx.record.source, node.func) or "")
            if isinstance(func, type) and issubclass(func, torch.optim.Optimizer):
                arg = node.args[0] if node.args else next(
                    (k.value for k in node.keywords if k.arg == "params"), None)
                if arg is not None and not isinstance(arg, ast.Starred):
                    found.append(arg)
    return found[0] if len(found) == 1 else None


def _empty_cause(ctx: RuleContext, tree: ast.Module, arg: ast.expr) -> Optional[_EmptyCause]:
    src = ctx.record.source
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "parameters" \
            and not arg.args and not arg.keywords:
        owner = segment(src, arg.func.value) or ""
        module = ctx.names.lookup(owner)
        return _module_without_parameters(ctx, tree, owner, module) if isinstance(module, torch.nn.Module) \
            else None
    if isinstance(arg, ast.Name) and isinstance(ctx.names.lookup(arg.id), types.GeneratorType):
        return _used_up_generator(ctx, tree, arg.id)
    return None


def _module_without_parameters(ctx: RuleContext, tree: ast.Module, owner: str,
                               module: torch.nn.Module) -> _EmptyCause:
    cls = type(module).__name__
    hidden = [(k, v) for k, v in vars(module).items() if not k.startswith("_") and _holds_modules(v)]
    if len(hidden) != 1:
        return _EmptyCause("optimizer.empty.why_no_parameters", "optimizer.empty.why_no_parameters_fix",
                           {"model": owner, "cls": cls}, [owner])
    attr, value = hidden[0]
    wrapper = "ModuleDict" if isinstance(value, dict) else "ModuleList"
    params = {"model": owner, "cls": cls, "attr": attr, "container": type(value).__name__, "wrapper": wrapper}
    where = _self_assignment(tree, cls, attr)
    fix = None
    if where is not None:
        text = segment(ctx.record.source, where) or ""
        start, end = node_span(ctx.record.source, where)
        nn = "nn" if ctx.names.lookup("nn") is torch.nn else "torch.nn"
        new = f"{nn}.{wrapper}({text})"
        fix = make_fix(ctx.record.source, [TextEdit(start, end, new)],
                       ctx.say("optimizer.empty.fix_module_list", new=f"{nn}.{wrapper}(...)", attr=attr,
                               lineno=where.lineno))
    return _EmptyCause("optimizer.empty.why_plain_list", "optimizer.empty.why_plain_list_fix", params,
                       [owner, f"{owner}.{attr}"], where.lineno if where is not None else None, fix)


def _holds_modules(value: Any) -> bool:
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    return any(isinstance(v, torch.nn.Module) for v in items)


def _self_assignment(tree: ast.Module, cls: str, attr: str) -> Optional[ast.expr]:
    """The value in `self.<attr> = [...]` inside `class <cls>` in this cell (a list/dict display or comprehension)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for inner in ast.walk(node):
                if isinstance(inner, ast.Assign) and len(inner.targets) == 1 and \
                        isinstance(inner.targets[0], ast.Attribute) and inner.targets[0].attr == attr and \
                        isinstance(inner.targets[0].value, ast.Name) and inner.targets[0].value.id == "self":
                    found.append(inner.value)
    if len(found) != 1 or not isinstance(found[0], (ast.List, ast.ListComp, ast.Dict, ast.DictComp)):
        return None
    return found[0]


def _used_up_generator(ctx: RuleContext, tree: ast.Module, name: str) -> _EmptyCause:
    params = {"name": name}
    stmts = [s for s in assignments_to(tree, name) if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name)]
    fix, lineno = None, None
    if len(stmts) == 1:
        value = stmts[0].value
        lineno = stmts[0].lineno
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                value.func.attr in ("parameters", "named_parameters"):
            start, end = node_span(ctx.record.source, value)
            text = segment(ctx.record.source, value) or ""
            fix = make_fix(ctx.record.source, [TextEdit(start, start, "list("), TextEdit(end, end, ")")],
                           ctx.say("optimizer.empty.fix_list", new=f"list({text})", lineno=lineno))
    return _EmptyCause("optimizer.empty.why_generator", "optimizer.empty.why_generator_fix", params, [name],
                       lineno, fix)


# -- optimizer-not-on-model: an optimizer stepping parameters no called model uses --

STRAY_KIND = "optimizer-not-on-model"


@rule(STRAY_KIND, severity=WARNING, matches=(
    "silent: an optimizer stepped parameters that no name holds any more, shaped like those of a model the cell "
    "calls (the model was re-created after the optimizer was built)",
))
def optimizer_not_on_model(ctx: RuleContext) -> Optional[Diagnosis]:
    """optimizer.step() updated parameters of a discarded model, not the model the cell calls."""
    if not ctx.record.steps:
        return None
    called = _called_modules(ctx)
    if not called:
        return None
    for opt, step in _stepped_optimizers(ctx):
        params = _optimizer_params(opt)
        if not params:
            continue
        shapes = sorted(tuple(p.shape) for p in params)
        for model_name, model in called:
            own = list(model.parameters())
            if own and sorted(tuple(p.shape) for p in own) == shapes and \
                    not {id(p) for p in own} & {id(p) for p in params}:
                # NB: last, as it indexes the namespace: a parameter some name still holds (a
                # temperature `w`, another model) is no stray
                if any(ctx.names.name_for(p) is not None for p in params):
                    break
                return _stray_diagnosis(ctx, opt, step, model_name, model, len(params))
    return None


def _stray_diagnosis(ctx: RuleContext, opt: Any, step: StepEvent, model_name: str, model: Any,
                     count: int) -> Diagnosis:
    label = ctx.names.name_for(opt) or type(opt).__name__
    params = dict(optimizer=label, model=model_name, cls=type(opt).__name__, count=count,
                  lineno=step.lineno or "?")
    return ctx.diagnosis(
        STRAY_KIND, WARNING, title=ctx.say("optimizer.stray.title", **params),
        summary=ctx.say("optimizer.stray.summary", **params), what=ctx.say("optimizer.stray.what", **params),
        why=ctx.say("optimizer.stray.why", **params), where=ctx.where(step.lineno), lines=[step.lineno],
        names=[label, model_name],
        tensors=[f for f in (fact_for(label, opt), fact_for(model_name, model)) if f is not None])


def _stepped_optimizers(ctx: RuleContext) -> List[Tuple[Any, StepEvent]]:
    seen: Dict[int, Tuple[Any, StepEvent]] = {}
    for step in ctx.record.steps:
        opt = step.optimizer() if step.optimizer is not None else None
        if opt is not None and id(opt) not in seen:
            seen[id(opt)] = (opt, step)
    return list(seen.values())


def _optimizer_params(opt: Any) -> List[torch.Tensor]:
    """The tensors in the optimizer's param_groups, read from its __dict__ (no user code runs)."""
    groups = vars(opt).get("param_groups") if hasattr(opt, "__dict__") else None
    if not isinstance(groups, list):
        return []
    return [p for g in groups if isinstance(g, dict) for p in g.get("params", ()) if isinstance(p, torch.Tensor)]


def _called_modules(ctx: RuleContext) -> List[Tuple[str, torch.nn.Module]]:
    """Modules the cell calls by a name (`model(x)`, `net.encoder(x)`), in the order they appear."""
    tree = cell_tree(ctx.record.source)
    if tree is None:
        return []
    found: Dict[str, torch.nn.Module] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            name = segment(ctx.record.source, node.func) or ""
            module = ctx.names.lookup(name)
            if isinstance(module, torch.nn.Module):
                found.setdefault(name, module)
    return list(found.items())
