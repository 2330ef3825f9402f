"""Culprits from what the run recorded (provenance.py): the failing op's operands, followed back through the ops
that carried the odd property (a device, a dtype, a batch size) to the user line whose op gave it, or to the
earlier cell that bound a tensor made before the run.

The rules' toolkit for provenance: a rule says which operand is odd and what it carries; this module finds
the line. May touch: the run's lineage and failed ops (weak references), the NameIndex, the cells' ast.
Never runs user code.
"""
from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple

import torch

from .. import built, catalog
from ..cell import assignments_to, cell_tree, enclosing_statement, qualname_at
from ..model import Diagnosis
from ..provenance import MAX_HOPS, Birth, Meta, meta_of
from .configured import Configured, configured_at
from .context import RuleContext
from .places import global_assignment, root, view_on, with_lines
from .samples import field_line


@dataclass(frozen=True)
class Born:
    """Where a tensor got what it carries: the view on that cell or file and the line; `birth` is the op that
    gave it (None: a global an earlier cell bound, before the run)."""

    at: RuleContext
    lineno: int
    birth: Optional[Birth]
    configured: Optional[Configured] = None  # the line that handed a Dataset the transform that made it


def failing_operands(ctx: RuleContext) -> List[torch.Tensor]:
    """The tensors the failing op read, still alive."""
    top = root(ctx)
    if not top.record.failed_ops:
        return []
    found = (s.ref() for s in top.record.failed_ops[-1].targets if s.ref is not None)
    return [t for t in found if isinstance(t, torch.Tensor)]


def born(ctx: RuleContext, tensor: torch.Tensor, carries: Callable[[Meta], bool]) -> Optional[Born]:
    """Where `tensor` got the property `carries` tests: the user line of the op that gave it, or the statement
    of an earlier cell that bound the tensor made before the run."""
    top = root(ctx)
    lineage = top.record.lineage
    if lineage is None:
        return None
    found = lineage.origin(tensor, carries)
    if found.birth is not None:
        for filename, lineno in found.birth.frames[:1]:
            at = view_on(top, filename, lineno)
            if at is None:
                return None
            batch = lineage.made(found.birth) if found.sampled and found.birth.stacked else None
            field = field_line(at, lineno, batch) if batch is not None else None
            if field is not None:  # NB: the samples carry it, and no op of the user's that the run saw made them
                return Born(field[0], field[1], None)
            return Born(at, lineno, found.birth, configured_at(top, found.birth.frames) if found.sampled else None)
        return None
    if found.root is None:
        return None
    for name in top.names.names_for(found.root):
        if name.isidentifier() and top.namespace.get(name) is found.root:
            place = global_assignment(top, name)
            if place is not None:
                return Born(place.ctx, place.node.lineno, None)
    return None


def odd_born(ctx: RuleContext, odd: Callable[[Meta], bool]) -> Optional[Born]:
    """`born` of the first failing operand that `odd` is true of, following what it is true of."""
    for t in failing_operands(ctx):
        if _safe(odd, meta_of(t)):
            return born(ctx, t, lambda m: _safe(odd, m))
    return None


def made_with(ctx: RuleContext, tensor: torch.Tensor, carries: Callable[[Meta], bool], keyword: str
              ) -> Optional[Born]:
    """The nearest op on `tensor`'s way back (through inputs that carry the property) that was given `keyword`
    (`reduction=` of a loss), at its user line."""
    top = root(ctx)
    lineage = top.record.lineage
    if lineage is None:
        return None
    for birth in lineage.origin(tensor, carries).path:
        if keyword in birth.keywords:
            for filename, lineno in birth.frames[:1]:
                at = view_on(top, filename, lineno)
                return Born(at, lineno, birth) if at is not None else None
    return None


def built_at(ctx: RuleContext, tensor: torch.Tensor) -> Optional[Born]:
    """Where the nearest parameter `tensor` was computed from was built (built.py): the classifier whose
    weight made the logits -- its `nn.Linear(...)` line in the user's `__init__`, or the cell line that built
    a library's model. Walks back through the ops the run recorded, nearest inputs first."""
    top = root(ctx)
    lineage = top.record.lineage
    first = lineage.birth_of(tensor) if lineage is not None else None
    queue, seen = ([first] if first is not None else []), set()
    while queue and len(seen) < MAX_HOPS:
        birth = queue.pop(0)
        if id(birth) in seen:
            continue
        seen.add(id(birth))
        for i in birth.inputs:
            param = i.ref() if i.ref is not None else None
            for filename, lineno in built.frames_of(param)[:1] if param is not None else ():
                at = view_on(top, filename, lineno)
                if at is not None:
                    return Born(at, lineno, None)
        queue.extend(i.parent for i in birth.inputs if i.parent is not None)
    return None


def target_values_born(ctx: RuleContext, target: torch.Tensor, label: Optional[int]) -> Optional[Born]:
    """Where a loss's class labels got their values: followed back through integer tensors to the op that made
    them from data (a list, an array) or to the earlier cell that bound them; then, reading that statement, the
    line holding the out-of-range label as a literal (`[12, 60, -1, -1]`), else the data it converts."""
    return from_data(ctx, born(ctx, target, lambda m: not m.dtype.is_floating_point), label)


def from_data(ctx: RuleContext, found: Optional[Born], literal: Optional[int] = None) -> Optional[Born]:
    """`found` (where a tensor got what it carries) refined, when the op made it from Python data rather than
    from tensors (`torch.tensor(total)`, `torch.as_tensor(mask)`, a literal bound in an earlier cell): the line
    of the statement holding `literal`, else the last assignment, in the same function, of the data the line
    converts (`total += loss.item()` before `torch.tensor(total)`)."""
    if found is None or found.birth is not None and found.birth.inputs:
        return found  # NB: made from other tensors by an op of the user's: that line says it
    tree = cell_tree(found.at.record.source)
    stmt = enclosing_statement(tree, found.lineno) if tree is not None else None
    if tree is None or stmt is None:
        return found
    line = _literal_line(stmt, literal) if literal is not None else None
    if line is not None:
        return Born(found.at, line, found.birth)
    read = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            and n.lineno == found.lineno}
    scope = qualname_at(tree, stmt.lineno)
    before = [a for name in read for a in assignments_to(tree, name)
              if a.lineno < stmt.lineno and qualname_at(tree, a.lineno) == scope]
    return Born(found.at, max(a.lineno for a in before), found.birth) if before else found


def _literal_line(stmt: ast.stmt, label: int) -> Optional[int]:
    for node in ast.walk(stmt):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
                isinstance(node.operand, ast.Constant) and type(node.operand.value) is int and \
                -node.operand.value == label:
            return node.lineno
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value == label >= 0:
            return node.lineno
    return None


def marked(d: Diagnosis, place: Optional[Born], ctx: RuleContext) -> Diagnosis:
    """`d` with the line where the odd tensor was born marked too (in its cell), when it is not there yet; and
    the line that handed its Dataset the transform that made it, said."""
    if place is None:
        return d
    d = with_lines(d, place.at, [place.lineno])
    given = place.configured
    if given is None:
        return d
    said = given.at.say("samples.configured", dataset=given.dataset, attribute=given.attribute,
                        lineno=given.lineno, code=given.code)
    return dataclasses.replace(with_lines(d, given.at, [given.lineno]),
                               why=catalog.sentences([d.why, said], ctx.language))


def _safe(test: Callable[[Meta], bool], m: Meta) -> bool:
    try:
        return bool(test(m))
    except Exception:  # NB: a tensor subclass whose metadata raises
        return False


def inference_named(ctx: RuleContext) -> Optional[Tuple[RuleContext, str, torch.Tensor]]:
    """(the view on the failing frame, name, tensor): the first name the statement that failed reads whose value
    there is an inference tensor -- in the innermost user frame of the traceback (the same from every view)."""
    top = root(ctx)
    frames = [f for f in top.record.frames if f.local_names is not None]
    for frame in frames[-1:]:
        view = view_on(top, frame.site.filename, frame.site.lineno)
        tree = cell_tree(view.record.source) if view is not None else None
        stmt = enclosing_statement(tree, frame.site.lineno) if tree is not None else None
        found = _inference_named(frame.local_names, stmt) if stmt is not None else None
        if found is not None:
            return (view, *found)
    return None


def _inference_named(local: Any, stmt: ast.stmt) -> Optional[Tuple[str, torch.Tensor]]:
    """The first name the statement reads whose value in the frame (`local`) is an inference tensor."""
    for node in sorted((n for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)),
                       key=lambda n: (n.lineno, n.col_offset)):
        value = local.get(node.id)
        if type(value) is torch.Tensor or type(value) is torch.nn.Parameter:
            if value.is_inference():
                return node.id, value
    return None
