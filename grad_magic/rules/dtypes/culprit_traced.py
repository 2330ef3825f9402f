"""The dtypes family's culprit from what the run recorded: the failing op's operand of the odd dtype, followed
back through the ops that carried that dtype (provenance.py) to the op that made it -- a `from_numpy`, a
`torch.tensor` of a float64 array, a cast -- or to a tensor an earlier cell made, which the namespace names.
Reading the code only turns that line into an edit (culprit_origin.made_by).

May touch: the run's lineage and failed ops (weak references to the operands), the NameIndex, the cells' ast.
Never runs user code.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch

from ...cell import cell_tree, enclosing_statement
from ...facts import dtype_name
from ..context import RuleContext
from ..configured import handed_array
from ..kit import one_line
from ..places import root, view_on
from .culprit_beyond import global_origin
from .culprit_origin import Origin, made_by


@dataclass(frozen=True)
class Traced:
    """Where the odd tensor got its dtype: the view on that cell or file, the statement's origin there, and the
    tensor the failing op read (with the user's names for it)."""

    at: RuleContext
    origin: Origin
    operand: torch.Tensor
    names: Tuple[str, ...]


def traced_origin(ctx: RuleContext, dtype: str, want: str, position: Optional[int] = None) -> Optional[Traced]:
    """Follow the failing op's operand of `dtype` (the one at `position`, when given: a loss's target is its
    second) back to where it was made with it."""
    top = root(ctx)
    lineage = top.record.lineage
    if lineage is None or not top.record.failed_ops:
        return None
    operands = [s.ref() for s in top.record.failed_ops[-1].targets if s.ref is not None]
    if position is not None:
        operands = operands[position:position + 1]
    odd = next((t for t in operands if isinstance(t, torch.Tensor) and dtype_name(t.dtype) == dtype), None)
    if odd is None:
        return None
    found = lineage.origin(odd, lambda m: m.dtype == odd.dtype)
    names = tuple(top.names.names_for(odd)) or (tuple(top.names.names_for(found.root))
                                                 if found.root is not None else ())
    birth = found.birth
    if birth is None:  # NB: made before the run: the earlier cell that bound it
        made = global_origin(top, top.names.names_for(found.root), want, found.root) \
            if found.root is not None else None
        if made is not None:
            return Traced(made[1], made[0], odd, names)
        if not found.path:
            return None
        handed = handed_array(top, found.path[-1].frames, found.root) if found.root is not None else None
        if handed is not None:  # NB: a Dataset holds it (`TensorDataset(torch.from_numpy(x), ...)`), no name does
            place, call = handed
            name = names[0] if names else one_line(place.ctx.record.source, call)
            return Traced(place.ctx, made_by(place.ctx, name, place.node, want, call, "from_numpy"), odd, names)
        birth = found.path[-1]  # NB: read a tensor no name holds, made by an op the tracker does not see
    for filename, lineno in birth.frames[:1]:
        at = view_on(top, filename, lineno)
        tree = cell_tree(at.record.source) if at is not None else None
        stmt = enclosing_statement(tree, lineno) if tree is not None else None
        if at is None or stmt is None:
            return None
        return Traced(at, _made(at, stmt, want, names[0] if names else "", birth.op), odd, names)
    return None


def _made(at: RuleContext, stmt: ast.stmt, want: str, name: str, op: str = "") -> Origin:
    """The statement's origin: how its value made the tensor (the op the run saw: `op`), when it binds one name."""
    targets: List[ast.expr] = list(stmt.targets) if isinstance(stmt, ast.Assign) else []
    if len(targets) == 1 and isinstance(targets[0], ast.Name):
        return made_by(at, targets[0].id, stmt, want, born_by=op)
    value = getattr(stmt, "value", None)
    if isinstance(value, ast.expr):  # NB: `return torch.from_numpy(a)`, `yield ...`, `out = a, b`
        return made_by(at, name, stmt, want, value, born_by=op)
    return Origin(name, stmt, "other")
