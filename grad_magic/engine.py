"""Diagnose a run: apply the rules to a RunRecord and remember the result.

Never raises: a rule that crashes becomes a note, and if everything fails the user's own error is
still shown by whoever called us.
"""
from __future__ import annotations

import dataclasses
from typing import AbstractSet, Any, List, Mapping, Optional

from . import state
from .bounds import bounded
from .guard import agreeing, guarded
from .model import ERROR, WARNING, Diagnosis
from .record import RunRecord
from . import rules  # noqa: F401 -- registers every rule family, in order
from .rules.registry import Rule, rules_of
from .rules.context import RuleContext
from .rules.elsewhere import with_reruns
from .rules.generic import generic


MAX_VIEWS = 6  # user frames outside the running cell a rule reads the run from, innermost first


def diagnose(record: RunRecord, namespace: Mapping[str, Any], language: str = "") -> List[Diagnosis]:
    """The diagnoses of one run, most important first: the error (if any), then warnings."""
    ctx = RuleContext(record, namespace, language)
    notes: List[str] = []
    found: List[Diagnosis] = []
    # NB: an interrupt or a `sys.exit()` is the user's intent, not an error to explain
    if record.exception is not None and not isinstance(record.exception, (KeyboardInterrupt, SystemExit)):
        error = _first_match(ctx, notes) or _safe_generic(ctx, notes)
        if error is not None:
            found.append(error)
    for r in rules_of(WARNING):
        d = _apply(r, ctx, notes)
        if d is not None:
            found.append(d)
    if record.compiled and found and found[0].severity == ERROR:
        notes.append(ctx.say("note.compiled_region"))  # NB: what ran compiled has no line of the user's here
    if notes and found:
        found[0] = dataclasses.replace(found[0], notes=found[0].notes + tuple(notes))
    # NB: bounded last: the guard reads whole cells
    return bounded(agreeing([with_reruns(guarded(d), record) for d in found]))


def diagnose_silent(record: RunRecord, namespace: Mapping[str, Any], kinds: AbstractSet[str],
                    language: str = "") -> List[Diagnosis]:
    """The warning rules of `kinds` only, on the record of a run still under way (live.py: no exception yet,
    the steps so far). Never raises; remembers nothing (`%gradfix` keeps the last finished cell's cards)."""
    try:
        ctx = RuleContext(record, namespace, language)
        found = [d for d in (_apply(r, ctx, []) for r in rules_of(WARNING) if r.slug in kinds) if d is not None]
        return bounded(agreeing([guarded(d) for d in found]))
    except Exception:  # NB: a bug here must never reach the user's training loop
        return []


def diagnose_and_remember(record: RunRecord, namespace: Mapping[str, Any]) -> List[Diagnosis]:
    try:
        found = diagnose(record, namespace)
    except Exception:  # NB: a bug in the engine must never hide the user's error
        found = []
    state.remember(found)
    return found


def _first_match(ctx: RuleContext, notes: List[str]) -> Optional[Diagnosis]:
    """The first rule that explains the error. Each rule reads the run from the innermost user frame out (a
    method in an earlier cell, the helper that called it, then the running cell): the first view where it
    finds the lines to show wins; a rule that explains the error but finds no line anywhere answers from
    the running cell, as a plain cell's card would."""
    views = [ctx.view(f) for f in reversed(ctx.record.frames)
             if f.site.filename != ctx.record.filename][:MAX_VIEWS] + [ctx]
    for r in rules_of(ERROR):
        unplaced = None
        for view in views:
            d = _apply(r, view, notes)
            if d is not None and (view is ctx or any(sl.elsewhere for sl in d.lines)):
                return d
            unplaced = unplaced or d
        if unplaced is not None:
            return unplaced
    return None


def _safe_generic(ctx: RuleContext, notes: List[str]) -> Optional[Diagnosis]:
    return _apply(Rule("generic", ERROR, generic, ""), ctx, notes)


def run_rule(r: Rule, ctx: RuleContext) -> Optional[Diagnosis]:
    """One rule on one run, behind its guard: the exception type it explains, torch's message parsed once per
    diagnosis. A rule that crashes raises here (the engine makes that a note; the fuzz tests name it)."""
    if r.parse is None:
        return r.fn(ctx)
    if not isinstance(ctx.exception, r.raises):
        return None
    parsed = ctx.memo(("parse", r.parse), lambda: r.parse(ctx.error_message))
    return r.fn(ctx, parsed) if parsed is not None else None


def _apply(r: Rule, ctx: RuleContext, notes: List[str]) -> Optional[Diagnosis]:
    try:
        return run_rule(r, ctx)
    except Exception as e:
        notes.append(ctx.say("note.internal_error", slug=r.slug, error=f"{type(e).__name__}: {e}"))
        return None
