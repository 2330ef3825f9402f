"""The leaf family's rules and cards: leaf-modified-in-place (an error), then non-leaf-grad (a warning).

Each rule asks culprit.py for the write or the read and fix.py for the edit, and words the card only
through catalog keys `leaf.*` / `nonleaf.*`. May touch: what the other modules return, the RuleContext's
wording; of live objects, torch metadata only.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

import torch

from ... import catalog
from ...cell import cell_tree
from ...model import ERROR, WARNING, Diagnosis, Fix
from ..context import RuleContext
from ..kit import code_text, fact_for, grad_fn_name, quote
from ..places import with_lines
from ..registry import rule
from .culprit import (LeafWrite, bindings, is_update, leaf_write, made_before, makes_leaf, no_grad_header,
                      non_leaf_reads, pending_backward, reads_name, same_writes, siblings_of, static_target,
                      update_run, wrapped_leaf)
from .fix import made_fix, rebind_fix, retain_fix, update_fix, wrap_fix
from .message import LeafInPlace, match_non_leaf_grad, parse_leaf_inplace

KIND = "leaf-modified-in-place"
WARN_KIND = "non-leaf-grad"


@rule(KIND, raises=RuntimeError, parse=parse_leaf_inplace, matches=(
    "a leaf Variable that requires grad is being used in an in-place operation.",
    "a view of a leaf Variable that requires grad is being used in an in-place operation.",
), fix="the update wrapped in `with torch.no_grad():`")
def leaf_modified_in_place(ctx: RuleContext, err: LeafInPlace) -> Optional[Diagnosis]:
    """A leaf tensor that requires grad (a parameter) was changed in place outside torch.no_grad()."""
    lineno = ctx.record.error_lineno
    write = leaf_write(ctx)
    name, stmt = write.name, write.stmt
    shown = quote(name) or ctx.say("leaf.a_leaf")
    code = code_text(ctx.record.source, stmt) if stmt is not None else ""
    why = [ctx.say("leaf.why_view" if err.view else "leaf.why", name=shown)]
    fix, key, extra = _leaf_fix(ctx, write)
    why.append(ctx.say(key, name=shown, lineno=lineno, line=extra, code=code))
    facts = [f for f in [fact_for(name, write.leaf)] if f is not None] if write.leaf is not None and name else []
    return ctx.diagnosis(
        KIND, ERROR, title=ctx.say("leaf.title_view" if err.view else "leaf.title", name=shown),
        summary=ctx.say("leaf.summary", name=shown, lineno=lineno, code=code),
        what=ctx.say("leaf.what_view" if err.view else "leaf.what", name=shown, lineno=lineno, code=code),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno),
        lines=sorted({n for n in (extra or None, lineno) if n}), names=[name] if name else [], tensors=facts,
        fix=fix)


def _leaf_fix(ctx: RuleContext, write: LeafWrite) -> Tuple[Optional[Fix], str, Optional[int]]:
    """(fix, the key of the sentence saying what to do, a line the sentence names)."""
    tree, stmt, name = write.tree, write.stmt, write.name
    if tree is None or stmt is None or not name:
        return None, "leaf.why_no_fix", None
    if static_target(stmt) is None:  # NB: the write happened in code this line calls, outside the cell
        return None, "leaf.why_elsewhere", None
    pending = pending_backward(tree, stmt, name)
    if pending is not None:
        fix = rebind_fix(ctx, stmt, name)
        return fix, "leaf.why_pending" if fix is not None else "leaf.why_pending_no_fix", pending
    if not is_update(stmt):
        return None, "leaf.why_not_update", None
    siblings, i = siblings_of(tree, stmt)
    run = update_run(ctx, siblings, i)
    header = no_grad_header(ctx, tree)
    if header is None or run is None:
        return None, "leaf.why_no_fix", None
    more = same_writes(ctx, tree, stmt, run)
    fix = wrap_fix(ctx, run, header, more) if more is not None else None
    return fix, "leaf.why_wrap" if fix is not None else "leaf.why_no_fix", None


@rule(WARN_KIND, severity=WARNING, matches=(
    "UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed",
), fix="update the leaf in place under `torch.no_grad()` instead of rebinding it (`w = w - …`)")
def non_leaf_grad(ctx: RuleContext) -> Optional[Diagnosis]:
    """`.grad` was read on a tensor that is not a leaf (often a leaf rebound by `w = w + 1`): it is None."""
    warned = [w for w in ctx.record.warnings if match_non_leaf_grad(w.message)]
    if not warned:
        return None
    tree = cell_tree(ctx.record.source)
    found = non_leaf_reads(ctx, tree, {w.lineno for w in warned if w.filename == ctx.record.filename})
    if not found:
        return _unnamed(ctx)
    name, read_line, obj = found[0]
    names = list(dict.fromkeys(n for n, _, _ in found))
    return _explain_non_leaf(ctx, tree, name, read_line, obj, names)


def _unnamed(ctx: RuleContext) -> Diagnosis:
    return ctx.diagnosis(
        WARN_KIND, WARNING, title=ctx.say("nonleaf.title_unnamed"), summary=ctx.say("nonleaf.summary_unnamed"),
        what=ctx.say("nonleaf.what_unnamed"), why=ctx.say("nonleaf.why_leaf_only"), where=ctx.where(None))


def _explain_non_leaf(ctx: RuleContext, tree: ast.Module, name: str, read_line: int, obj: torch.Tensor,
                      names: List[str]) -> Diagnosis:
    grad_fn = grad_fn_name(obj) or "?"
    title, line, fix, why = _why_not_leaf(ctx, tree, name, read_line, grad_fn, names)
    at = line if isinstance(line, Made) else None
    fields = dict(
        title=title, summary=ctx.say("nonleaf.summary", name=name, lineno=read_line),
        what=ctx.say("nonleaf.what", name=name, lineno=read_line, grad_fn=grad_fn),
        why=catalog.sentences([ctx.say("nonleaf.why_leaf_only"), *why], ctx.language), names=names,
        tensors=[f for f in [fact_for(name, obj)] if f is not None], fix=fix)
    if at is None:
        return ctx.diagnosis(WARN_KIND, WARNING, where=ctx.where(read_line),
                             lines=sorted({n for n in (read_line, line) if n}), **fields)
    d = at.ctx.diagnosis(WARN_KIND, WARNING, where=at.ctx.where(at.lines[0]), lines=at.lines, **fields)
    return with_lines(d, ctx, [at.call_line, read_line])


@dataclass(frozen=True)
class Made:
    """The tensors were made in a helper of another cell: the view on it, the lines that made them there, and
    the line of this cell that called it."""

    ctx: RuleContext
    lines: List[int]
    call_line: int


def _made_in_helper(ctx: RuleContext, name: str, grad_fn: str, names: List[str], at: RuleContext,
                    made: ast.Assign, call: int) -> Tuple[str, Made, Optional[Fix], List[str]]:
    """`w1, b1 = make_params()` where make_params makes each with `requires_grad=True` and then an op: all of
    them are fixed there, in the helper's cell."""
    src = at.record.source
    others = [m for m in (made_before(ctx, cell_tree(ctx.record.source), n) for n in names if n != name)
              if m is not None and m[0].record.filename == at.record.filename and wrapped_leaf(m[1].value)]
    more = sorted({id(m[1]): m[1] for m in others if m[1] is not made}.values(), key=lambda s: s.lineno)
    fix = made_fix(at, made, name, more)
    why = [at.say("nonleaf.why_made", name=name, lineno=made.lineno, code=code_text(src, made), grad_fn=grad_fn)]
    lines = sorted([made.lineno, *(s.lineno for s in more)])
    return at.say("nonleaf.title_made", name=name, lineno=made.lineno), Made(at, lines, call), fix, why


def _why_not_leaf(ctx: RuleContext, tree: ast.Module, name: str, read_line: int, grad_fn: str, names: List[str]
                  ) -> Tuple[str, Union[int, Made, None], Optional[Fix], List[str]]:
    """(title, the binding's line -- or where a helper of another cell made it --, fix, sentences) of why
    `name` is not a leaf: rebound, made by an op on a fresh leaf (here or in a helper that returned it), or an
    intermediate result. NB: the nonleaf messages put `name` in backticks themselves."""
    src = ctx.record.source
    binds = bindings(tree, name)
    rebinds = [s for s in binds if reads_name(s.value, name)]
    if rebinds and (binds[0] in rebinds or makes_leaf(binds[0].value)):
        r = rebinds[0]
        fix = update_fix(ctx, tree, r, name, names, no_grad_header(ctx, tree))
        why = [ctx.say("nonleaf.why_rebound", name=name, lineno=r.lineno, code=code_text(src, r)),
               ctx.say("nonleaf.why_rebound_fix" if fix is not None else "nonleaf.why_rebound_no_fix", name=name)]
        return ctx.say("nonleaf.title_rebound", name=name, lineno=r.lineno), r.lineno, fix, why
    helper = made_before(ctx, tree, name) if not binds else None
    if helper is not None and wrapped_leaf(helper[1].value) is not None:
        return _made_in_helper(ctx, name, grad_fn, names, *helper)
    if binds and wrapped_leaf(binds[0].value) is not None:
        b = binds[0]
        why = [ctx.say("nonleaf.why_made", name=name, lineno=b.lineno, code=code_text(src, b), grad_fn=grad_fn)]
        return ctx.say("nonleaf.title_made", name=name, lineno=b.lineno), b.lineno, made_fix(ctx, b, name), why
    b = binds[-1] if binds else None
    fix = retain_fix(ctx, tree, b, name, read_line) if b is not None else None
    why = [ctx.say("nonleaf.why_intermediate", name=name, grad_fn=grad_fn)]
    return ctx.say("nonleaf.title_intermediate", name=name), b.lineno if b is not None else None, fix, why
