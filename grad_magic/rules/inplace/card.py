"""The inplace family's rule and card: saved-tensor-modified-in-place.

The rule gets torch's message parsed (message.py), asks culprit.py for the write (an in-place op, else an
optimizer step) and where the tensor was saved, culprit_module.py for the module that wrote and the line that
built it, culprit_spot.py for where the op is written, fix.py / fix_step.py for the edit, and words the card
only through catalog keys `inplace.saved.*`. The card is made from the cell where the write is: the op's
innermost user frame (a block's `forward()` cells up), the line that built an in-place module, else the view
the engine gave. May touch: what the other modules return, the RuleContext's wording; of live objects,
torch metadata only.
"""
from __future__ import annotations

import ast
import os
from typing import List, Optional, Tuple

import torch

from ... import catalog
from ...facts import shape_text, tensor_fact
from ...model import ERROR, Diagnosis, Fix, TensorFact
from ...cell import cell_tree, enclosing_statement, split_lines
from ...record import StepEvent, TensorSnapshot
from ..context import RuleContext
from ..kit import calls_in, dotted, line_code, one_line, optimizer_params, quote
from ..registry import rule
from .culprit import (Saved, anomaly_was_on, base_of, holds_any, live, saved_candidates, saved_tensor,
                      stepped_parameter, tied_writes, writing_op)
from .culprit_place import Placed, other_writes, place
from .culprit_forward import forward_from_graph, forward_of_step, refusing_node
from .culprit_spot import InPlaceSpot, inplace_spot
from .culprit_module import called_as, module_writer
from .fix import clone_input_fix, combined, flag_fix, spot_fix
from .fix_step import recompute_after_step
from .message import SavedTensorError, parse_saved_tensor_error

KIND = "saved-tensor-modified-in-place"


@rule(KIND, raises=RuntimeError, parse=parse_saved_tensor_error, matches=(
    "one of the variables needed for gradient computation has been modified by an inplace operation: "
    "[torch.FloatTensor [2]], which is output 0 of Sigmoid (torch < 2.13: SigmoidBackward0), is at version 1; "
    "expected version 0 instead",
), fix="the out-of-place form (`x = x + y`, `inplace=False`, `x = x.clone()` before a slice write); for an "
       "optimizer step between a forward and its backward, every backward before the step")
def saved_tensor_modified_in_place(ctx: RuleContext, err: SavedTensorError) -> Optional[Diagnosis]:
    """A tensor saved for backward was changed in place before backward used it."""
    saved = saved_tensor(ctx, err)
    found = writing_op(ctx, err, saved.line)
    tied = tied_writes(ctx, err, saved.line) if found is None else []
    if found is not None or tied:
        first = place(ctx, *(found or tied[-1]))
        here = first.here
        saved = saved_tensor(here, err) if first.moved else saved
        if saved.node is None:  # NB: no anomaly-mode trace (--fast, always-on): the graph after the failure tells
            saved = forward_from_graph(ctx, err, first) or saved
        fix, more = _complete(ctx, err, first, _write_fix(first), [place(ctx, *w) for w in tied[:-1]])
        if first.write is not None:
            return _from_module(here, saved, first, fix, more)
        backward = _backward(here, None if first.moved else here.record.error_lineno)
        return _from_inplace_op(here, saved, first, backward, fix, more)
    stepped = stepped_parameter(ctx, err)
    if stepped is not None:
        return _from_step(ctx, saved, *stepped)
    return _unseen(ctx, saved)


# -- the fix: the write's own, and the other writes over saved tensors of the same graph --

def _write_fix(p: Placed) -> Optional[Fix]:
    """The fix of one write, in the cell where it is: the flag of the module's constructor, else the op's
    out-of-place form; none for a parameter update (its order is the question) or a write through a view."""
    ctx = p.here
    if p.write is not None:
        tree = cell_tree(ctx.record.source)
        stmt = enclosing_statement(tree, p.write.call.lineno) if tree is not None else None
        return flag_fix(ctx, InPlaceSpot("keyword" if p.write.keyword else "positional", tree, stmt, p.write.flag,
                                         None, call=p.write.call)) if stmt is not None else None
    if p.target.is_leaf and p.target.requires_grad:
        return None
    spot = inplace_spot(ctx, p.event)
    written = live(p.target.ref)
    if spot is None and p.event.lineno is not None:  # NB: a module switched to in place after it was built
        writer = module_writer(p.event)
        return clone_input_fix(ctx, called_as(ctx, writer), p.event.lineno) if writer else None
    return spot_fix(ctx, spot, written is not None and written._is_view())


def _complete(ctx: RuleContext, err: SavedTensorError, first: Placed, fix: Optional[Fix], tied: List[Placed]
              ) -> Tuple[Optional[Fix], Optional[str]]:
    """`fix` extended to every other write that spoiled a saved tensor of this graph (in the same cell), the
    writes `tied` with `first` included; None and the reason in words when one of them cannot be fixed with it."""
    others = other_writes(ctx, err, first) if fix is not None else []
    if others is None:
        return None, catalog.message("inplace.saved.why_more_unseen", ctx.language)
    merged: List[Placed] = []
    for o in [*tied, *others]:
        if o.site != first.site and all(o.site != m.site for m in merged):
            merged.append(o)
    others = merged
    if not others:
        return fix, None
    here = first.here
    fixes = [_write_fix(o) if o.here.record.filename == here.record.filename else None for o in others]
    items = [catalog.message("inplace.saved.also_module", ctx.language, path=o.write.path, lineno=o.site[1])
             if o.write is not None else catalog.message("inplace.saved.also_line", ctx.language, lineno=o.site[1])
             for o in others]
    also = here.say("inplace.saved.fix_also", items=catalog.listing(items, ctx.language))
    whole = combined(here.record.source, [fix, *fixes], fix.description + also) \
        if fix is not None and all(fixes) else None
    if whole is not None:
        return whole, None
    places = [o.here.where(o.site[1]) for o in others]
    return None, catalog.message("inplace.saved.why_more", ctx.language,
                                 places=catalog.listing(places, ctx.language))


# -- the saved tensor, in words --

def _who_saved(ctx: RuleContext, saved: Saved, name: str) -> str:
    if saved.line is not None:
        return ctx.say("inplace.saved.why_saved", lineno=saved.line, name=name, node=saved.node,
                       code=_code_of(ctx, saved.line))
    if saved.node is not None and saved.site is not None and ctx.record.sources is not None:
        return _why_saved_in(ctx, saved, name, *saved.site)
    if saved.node is not None and not saved.forward_seen and not anomaly_was_on(ctx):
        return ctx.say("inplace.saved.why_saved_node_fast", name=name, node=saved.node)
    if saved.node is not None:
        key = "elsewhere" if saved.forward_seen else "unwatched"
        return ctx.say(f"inplace.saved.why_saved_{key}", name=name, node=saved.node)
    err = saved.err
    producer = ctx.say("inplace.saved.producer", output=err.output, grad_fn=err.grad_fn) if err.grad_fn else ""
    fast = "inplace.saved.why_saved_unknown" if anomaly_was_on(ctx) else "inplace.saved.why_saved_fast"
    return ctx.say(fast, name=name, producer=producer)


def _why_saved(ctx: RuleContext, saved: Saved, name: str) -> str:
    """Who saved the tensor, in words. NB: tidied, for the space a Chinese template keeps before a name goes
    when the name is a phrase ("保存了一个无名张量")."""
    return catalog.tidy(_who_saved(ctx, saved, name), ctx.language)


def _why_saved_in(ctx: RuleContext, saved: Saved, name: str, filename: str, lineno: int) -> str:
    """Who saved it, on a line of another cell than this view's (the running cell's forward line, a block's
    forward cells up). NB: worded without ctx.say, which would say the line is one of this view's cell."""
    outer = ctx.record.outer if ctx.record.outer is not None else ctx.record
    sources = ctx.record.sources
    if filename == outer.filename:
        where = catalog.message("where.line", ctx.language, lineno=lineno)
    else:
        number = sources.cell_number(filename)
        place = f"In [{number}]" if number is not None else os.path.basename(filename)
        where = catalog.message("where.elsewhere", ctx.language, place=place, lineno=lineno)
    code = line_code((split_lines(sources.text(filename)) + [""] * lineno)[lineno - 1])
    return catalog.message("inplace.saved.why_saved_at", ctx.language, where=where, code=code, name=name,
                           node=saved.node)


def _what(ctx: RuleContext, saved: Saved, name: str) -> str:
    err = saved.err
    # NB: "(an unnamed tensor: float32, …)" says nothing the tensor's description does not
    unnamed = "_unnamed" if name == ctx.say("inplace.saved.unnamed") else ""
    if err.version is None:
        return ctx.say(f"inplace.saved.what_bare{unnamed}", name=name)
    shape = shape_text(err.shape) if err.shape is not None else "?"
    tensor = ctx.say("inplace.saved.tensor", dtype=err.dtype or err.type_text, shape=shape)
    return ctx.say(f"inplace.saved.what{unnamed}", name=name, version=err.version, expected=err.expected,
                   tensor=tensor)


def _where(ctx: RuleContext, saved: Saved, lineno: Optional[int], key: str) -> str:
    where = ctx.where(lineno)
    if saved.line is not None and saved.line != lineno:
        where += ctx.say(key, lineno=saved.line)
    return where


# -- the four cards: the op seen, a module built in place, an optimizer step, nothing seen --

def _from_inplace_op(ctx: RuleContext, saved: Saved, p: Placed, backward: str, fix: Optional[Fix],
                     more: Optional[str]) -> Diagnosis:
    event, target = p.event, p.target
    written = live(target.ref)
    base = base_of(ctx, saved.err, written)
    spot = inplace_spot(ctx, event)
    view = quote(ctx.names.name_for(written) if written is not None else None) or \
        quote(spot.target if spot else None) or ctx.say("inplace.saved.unnamed")
    name = quote(ctx.names.name_for(base)) if base is not None else view
    op = _code_of(ctx, event.lineno) or f"{event.name}()"
    changed = dict(op=op, lineno=event.lineno, name=name, version=target.version, backward=backward)
    why = [_why_saved(ctx, saved, name), ctx.say("inplace.saved.why_changed_view", view=view, **changed)
           if base is not None else ctx.say("inplace.saved.why_changed", **changed)]
    if spot is not None and spot.form == "keyword" and spot.node.lineno != event.lineno:
        why.append(ctx.say("inplace.saved.why_keyword", op=event.name, lineno=spot.node.lineno))
    is_update = target.is_leaf and target.requires_grad
    if is_update:
        why.append(ctx.say("inplace.saved.why_update", name=name, lineno=event.lineno))
    elif more is not None:
        why.append(more)
    elif fix is None:
        why.append(ctx.say("inplace.saved.why_no_fix", lineno=event.lineno, name=name))
    facts = [tensor_fact(_row_name(ctx, name), base)] if base is not None else []
    facts.append(tensor_fact(_row_name(ctx, view), written) if written is not None
                 else _snapshot_fact(_row_name(ctx, view), target, saved.err))
    title = "inplace.saved.title_update" if is_update else "inplace.saved.title"
    return ctx.diagnosis(
        KIND, ERROR, title=catalog.sentences([ctx.say(title, name=name)], ctx.language, capitalise=True),
        summary=ctx.say("inplace.saved.summary", name=name, op=op, lineno=event.lineno),
        what=_what(ctx, saved, name), why=catalog.sentences(why, ctx.language),
        where=_where(ctx, saved, event.lineno, "inplace.saved.where_saved"),
        lines=_lines(saved.line, event.lineno, ctx.record.error_lineno),
        names=[_plain_name(n) for n in dict.fromkeys((name, view)) if n.startswith("`")], tensors=facts, fix=fix)


def _from_module(ctx: RuleContext, saved: Saved, p: Placed, fix: Optional[Fix], more: Optional[str]) -> Diagnosis:
    """An in-place module (`nn.ReLU(inplace=True)` in an `nn.Sequential`) wrote over the saved tensor: the card
    is made from the cell that built it, and the fix drops the flag there."""
    write, event, target = p.write, p.event, p.target
    assert write is not None
    built, backward_line = write.call.lineno, None if ctx.elsewhere else ctx.record.error_lineno
    tree = cell_tree(ctx.record.source)
    name = quote(_input_name(ctx, tree, event.lineno, write.called_as)) or ctx.say("inplace.saved.unnamed")
    changed = dict(path=write.path, cls=type(write.module).__name__, lineno=built, version=target.version,
                   backward=_backward(ctx, backward_line))
    why = [_why_saved(ctx, saved, name), ctx.say("inplace.saved.why_changed_module", **changed)]
    if event.lineno is not None and event.lineno != built:
        why.append(ctx.say("inplace.saved.why_module_ran", lineno=event.lineno, code=_code_of(ctx, event.lineno)))
    if more is not None:
        why.append(more)
    elif fix is None:
        why.append(ctx.say("inplace.saved.why_no_fix_module", lineno=built, path=write.path))
    return ctx.diagnosis(
        KIND, ERROR, title=ctx.say("inplace.saved.title_module", path=write.path),
        summary=ctx.say("inplace.saved.summary_module", path=write.path, lineno=built,
                        code=one_line(ctx.record.source, write.call)),
        what=_what(ctx, saved, name), why=catalog.sentences(why, ctx.language),
        where=_where(ctx, saved, built, "inplace.saved.where_saved_module"),
        lines=_lines(saved.line, event.lineno, built, backward_line), names=[write.path],
        tensors=[_snapshot_fact(_row_name(ctx, name), target, saved.err)], fix=fix)


def _input_name(ctx: RuleContext, tree: Optional[ast.Module], lineno: Optional[int], called_as: Optional[str]
                ) -> Optional[str]:
    """The name of the tensor an in-place module wrote: the argument of `self.act(h)` on the line that ran it."""
    stmt = enclosing_statement(tree, lineno) if tree is not None and lineno is not None and called_as else None
    found = {dotted(c.args[0]) for c in calls_in(stmt) if c.args and dotted(c.func) == called_as}
    return found.pop() if len(found) == 1 else None


def _from_step(ctx: RuleContext, saved: Saved, step: StepEvent, param: torch.Tensor) -> Diagnosis:
    if saved.node is None:  # NB: no anomaly-mode trace: the graph after the failure tells (culprit_forward)
        saved = forward_of_step(ctx, saved.err, param) or saved
    opt = step.optimizer() if step.optimizer is not None else None
    optimizer = (ctx.names.name_for(opt) if opt is not None else None) or step.optimizer_class
    name = quote(ctx.names.name_for(param)) or ctx.say("inplace.saved.a_parameter", optimizer=optimizer)
    fix = _recompute_fix(ctx, step, opt, optimizer)
    why = [_why_saved(ctx, saved, name),
           ctx.say("inplace.saved.why_step", optimizer=optimizer, lineno=step.lineno, name=name,
                   backward=_backward(ctx, ctx.record.error_lineno)),
           ctx.say("inplace.saved.why_step_recompute" if fix else "inplace.saved.why_step_fix",
                   optimizer=optimizer)]
    return ctx.diagnosis(
        KIND, ERROR, title=ctx.say("inplace.saved.title_step", name=name, optimizer=optimizer),
        summary=ctx.say("inplace.saved.summary_step", name=name, optimizer=optimizer, lineno=step.lineno),
        what=_what(ctx, saved, name), why=catalog.sentences(why, ctx.language),
        where=_where(ctx, saved, step.lineno, "inplace.saved.where_saved_step"),
        lines=_lines(saved.line, step.lineno, ctx.record.error_lineno),
        names=[optimizer, _plain_name(name)], tensors=[tensor_fact(_row_name(ctx, name), param)], fix=fix)


def _recompute_fix(ctx: RuleContext, step: StepEvent, opt: object, optimizer: str) -> Optional[Fix]:
    """The failing backward's loss computed again after the step (fix_step.py), when the step and the backward
    are both lines of this view's cell."""
    if step.lineno is None or ctx.record.error_lineno is None or opt is None:
        return None
    stepped = {id(p) for p in optimizer_params(opt)}

    def is_stepped(name: str) -> bool:
        return holds_any(ctx.names.lookup(name), stepped)

    def description(loss: str, lineno: int) -> str:
        return ctx.say("inplace.saved.fix_recompute", loss=loss, optimizer=optimizer, lineno=lineno)

    return recompute_after_step(ctx.record.source, step.lineno, ctx.record.error_lineno, is_stepped, description)


def _unseen(ctx: RuleContext, saved: Saved) -> Diagnosis:
    node = refusing_node(ctx, saved.err) if saved.node is None else None
    saved = Saved(saved.err, node, None, False) if node is not None else saved  # NB: the node, without a line
    found = saved_candidates(ctx, saved.err) if saved.err.shape is not None else []
    names = sorted({n for t in found for n in [ctx.names.name_for(t)] if n})
    name = quote(names[0]) if len(names) == 1 else ctx.say("inplace.saved.unnamed")
    unseen = "inplace.saved.why_unseen" if anomaly_was_on(ctx) else "inplace.saved.why_unseen_fast"
    why = [_why_saved(ctx, saved, name), ctx.say(unseen, name=name)]
    return ctx.diagnosis(
        KIND, ERROR, title=catalog.sentences([ctx.say("inplace.saved.title", name=name)], ctx.language,
                                             capitalise=True),
        summary=ctx.say("inplace.saved.summary_unseen", name=name),
        what=_what(ctx, saved, name), why=catalog.sentences(why, ctx.language),
        where=ctx.where(ctx.record.error_lineno), lines=_lines(saved.line, ctx.record.error_lineno),
        names=names[:1], tensors=[tensor_fact(names[0], found[0])] if len(names) == 1 and len(found) == 1 else [])


def _code_of(ctx: RuleContext, lineno: Optional[int]) -> str:
    """A cell line as code: stripped, without its comment."""
    return line_code(ctx.record.source_line(lineno))


def _plain_name(name: str) -> str:
    return name.strip("`")


def _row_name(ctx: RuleContext, name: str) -> str:
    """A tensor's name in the card's table: the name as code, or a mark for one without a name. NB: a name is
    quoted (`x`); an unquoted one is a phrase of the sentences ("an unnamed tensor", "a parameter of `opt`"),
    no name for a row."""
    return _plain_name(name) if name.startswith("`") else ctx.say("inplace.saved.unnamed_row")


def _backward(ctx: RuleContext, lineno: Optional[int]) -> str:
    """The backward() that failed: on its line, when that line is one of this view's cell. NB: a phrase for a
    sentence said through ctx.say, which says the line's cell (saying it here too would say it twice)."""
    key = "inplace.saved.backward_at" if lineno else "inplace.saved.backward"
    return catalog.message(key, ctx.language, lineno=lineno)


def _lines(*linenos: Optional[int]) -> List[int]:
    return sorted({n for n in linenos if n is not None})


def _snapshot_fact(name: str, t: TensorSnapshot, err: SavedTensorError) -> TensorFact:
    return TensorFact(name=name, shape=shape_text(t.shape), dtype=t.dtype, device=t.device,
                      requires_grad=t.requires_grad, is_leaf=t.is_leaf, version=err.version)
