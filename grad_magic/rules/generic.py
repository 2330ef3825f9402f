"""The generic diagnosis: what is known about an error no rule recognises.

It never pretends to know more: the user's line nearest the failure (in an earlier cell, a file of theirs, or
the `__getitem__` a DataLoader worker ran), the line of the running cell that led there, the library call in
between, the tensors on the failing line, and what torch's message means in plain words (rules/plain.py).
"""
from __future__ import annotations

from .. import catalog
from ..model import ERROR, Diagnosis
from .context import RuleContext
from .places import with_lines
from .plain import fill, library_call, plain_words, worker_error
from .step_output import STEP_WORDS, step_returns


def generic(ctx: RuleContext) -> Diagnosis:
    """Any error: the original error, the user's lines on the way to it, and the tensors named there."""
    frames = ctx.record.frames
    inner = frames[-1] if frames and frames[-1].site.filename != ctx.record.filename else None
    view = ctx.view(inner) if inner is not None else ctx
    lineno = view.record.error_lineno
    # NB: a worker's frame is read from its traceback's text: it has no variables, and the namespace's are not its
    seen = inner is None or inner.local_names is not None
    tensors = view.facts_on_line(lineno) if seen else ()
    error_type = ctx.error_type or "Error"
    words = plain_words(ctx.error_message)
    sources = ctx.record.sources
    call = library_call(ctx.exception, sources.is_user) if sources is not None else ""
    why = catalog.sentences([
        view.say("generic.why" if tensors else "generic.why_no_tensors") if seen else "",
        view.say("generic.via", call=call) if call else "",
        view.say("generic.worker") if worker_error(ctx.error_message) else ""], ctx.language)
    if words is not None:
        name, params = words
        title = ctx.say(f"plain.{name}.title", **params)
        summary = ctx.say(f"plain.{name}.means", **fill(params))
    else:
        title, summary = ctx.say("generic.title", error_type=error_type), ctx.say("generic.summary")
    step = step_returns(ctx, words[0]) if words is not None and words[0] in STEP_WORDS else None
    if step is not None:  # NB: no tensor on the fit() line is to blame: what the step returned is
        why = catalog.sentences([ctx.say("plain.step_returned", value=step[2]),
                                 view.say("generic.via", call=call) if call else ""], ctx.language)
    d = view.diagnosis(
        "generic", ERROR, title=title, summary=summary,
        what=ctx.say("generic.what", error_type=error_type, error_message=ctx.error_message),
        why=why, where=view.where(lineno), lines=[lineno], names=[t.name for t in tensors], tensors=tensors)
    # NB: Lightning refused what the user's training_step returned: its return lines are where that was made
    return with_lines(d, step[0].ctx, step[1]) if step is not None else d
