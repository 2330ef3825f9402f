"""Where a write is to be fixed, and which other writes spoiled saved tensors of the same backward.

- `place`: the view of the cell that holds the write -- the call that built an in-place module, else the op's
  innermost user frame (a block's `forward()` cells up), else the view the engine gave.
- `other_writes`: the writes behind every other saved tensor of the failing graph that torch finds changed
  (culprit.spoiled), each placed: undoing one write while another remains would fail the same way.

May touch: the run record, the views of other cells (places.view_on), what culprit.py and culprit_module.py
find. Never runs user code; makes no fix and no sentence.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from ...record import OpEvent, TensorSnapshot
from ..context import RuleContext
from ..places import view_on
from .culprit import spoiled, tied_writes, writing_op
from .culprit_module import ModuleWrite, module_write
from .message import SavedTensorError


@dataclass(frozen=True)
class Placed:
    """One write, seen from the cell where it is to be fixed."""

    here: RuleContext  # the view of that cell (or the engine's)
    event: OpEvent  # the op as that view has it (its line there)
    target: TensorSnapshot
    write: Optional[ModuleWrite]  # the in-place module and the call that built it, when a module wrote
    moved: bool  # whether `here` is another view than the engine's

    @property
    def site(self) -> Tuple[str, Optional[int], int]:
        """Where the fix edits: (cell or file, line, column); one site for every write its fix undoes."""
        if self.write is not None:
            return self.write.filename, self.write.call.lineno, self.write.call.col_offset
        return self.here.record.filename, self.event.lineno, -1


def place(ctx: RuleContext, event: OpEvent, target: TensorSnapshot) -> Placed:
    write = module_write(ctx, event)
    if write is not None:
        here = ctx if write.filename == ctx.record.filename else view_on(ctx, write.filename, write.call.lineno)
        if here is not None:
            return _placed(ctx, here, event, target, write)
    if event.frames and event.frames[0][0] != ctx.record.filename:
        here = view_on(ctx, *event.frames[0])
        if here is not None:
            return _placed(ctx, here, event, target, None)
    return Placed(ctx, event, target, None, False)


def _placed(ctx: RuleContext, here: RuleContext, event: OpEvent, target: TensorSnapshot,
            write: Optional[ModuleWrite]) -> Placed:
    if here is ctx:
        return Placed(ctx, event, target, write, False)
    index = next(i for i, e in enumerate(ctx.record.inplace_ops) if e is event)
    return Placed(here, here.record.inplace_ops[index], target, write, True)


def other_writes(ctx: RuleContext, err: SavedTensorError, first: Placed) -> Optional[List[Placed]]:
    """The writes behind the other spoiled saved tensors, one per site, `first`'s site left out; None when one
    of them is not found (the fix of the writes that are would not be enough)."""
    found: List[Placed] = []
    sites = {first.site}
    for other in spoiled(ctx):
        if other == err:
            continue
        write = writing_op(ctx, other, None)
        writes = [write] if write is not None else tied_writes(ctx, other, None)
        if not writes:
            return None
        for placed in (place(ctx, *w) for w in writes):
            if placed.site not in sites:
                sites.add(placed.site)
                found.append(placed)
    return found
