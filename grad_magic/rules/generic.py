"""The generic diagnosis: what is known about an error no rule recognises.

It never pretends to know more: the user's line nearest the failure (in an earlier cell, a file of theirs, or
the `__getitem__` a DataLoader worker ran), the line of the running cell that led there, the library call in
between, the tensors on the failing line, and what torch's message means in plain words (rules/plain.py).
"""
from __future__ import annotations

from .. import catalog
from ..model import ERROR, Diagnosis
from .context import RuleContext
from .plain import fill, library_call, plain_words, worker_error


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
    return view.diagnosis(
        "generic", ERROR, title=title, summary=summary,
        what=ctx.say("generic.what", error_type=error_type, error_message=ctx.error_message),
        why=why, where=view.where(lineno), lines=[lineno], names=[t.name for t in tensors], tensors=tensors)
