"""Rules of the optimizer family: an optimizer stepped on gradients left over from earlier steps.

Reads the optimizer steps the capture recorded (`StepEvent.stale_params`: grads accumulated onto since
the previous step and never cleared) and the cell's syntax; never reads tensor data. The fix inserts
`<optimizer>.zero_grad()` where each step's gradients start: before the backward() that feeds it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..fixes import cell_tree, enclosing_statement, indent_of, insert_line_before, make_fix
from ..model import WARNING, Diagnosis, Fix, TextEdit
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
    by_id: Dict[Any, _Optimizer] = {}
    for step in ctx.record.steps:
        opt = step.optimizer() if step.optimizer is not None else None
        key = id(opt) if opt is not None else (step.optimizer_class, step.lineno)
        if key not in by_id:
            by_id[key] = _Optimizer(ctx.names.name_for(opt) if opt is not None else None,
                                    step.optimizer_class)
        by_id[key].steps.append(step)
    return [o for o in by_id.values() if o.stale]


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
    return ast.get_source_segment(source, call.func.value) if isinstance(inner, ast.Name) else None


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
