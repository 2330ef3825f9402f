"""The generic diagnosis: what is known about an error no rule recognises."""
from __future__ import annotations

from ..model import ERROR, Diagnosis
from .context import RuleContext


def generic(ctx: RuleContext) -> Diagnosis:
    """Any error: the original error, the cell line, and the tensors named on that line."""
    lineno = ctx.record.error_lineno
    tensors = ctx.facts_on_line(lineno)
    error_type = ctx.error_type or "Error"
    return ctx.diagnosis(
        "generic", ERROR,
        title=ctx.say("generic.title", error_type=error_type),
        summary=ctx.say("generic.summary"),
        what=ctx.say("generic.what", error_type=error_type, error_message=ctx.error_message),
        why=ctx.say("generic.why" if tensors else "generic.why_no_tensors"),
        where=ctx.where(lineno), lines=[lineno], names=[t.name for t in tensors], tensors=tensors)
