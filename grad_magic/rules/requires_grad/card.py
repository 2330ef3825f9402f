"""The requires_grad family's rules and cards: missing-requires-grad, then integer-requires-grad.

Each rule gets torch's message parsed (message.py), asks culprit*.py for the cause and fix.py for the edit,
and words the card only through catalog keys `missing_rg.*` / `int_rg.*`. May touch: what the other modules
return, the RuleContext's wording and facts; of live objects, torch metadata only.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Set, Tuple

import torch

from ... import catalog
from ...cell import cell_tree, enclosing_statement
from ...facts import dtype_name
from ...model import ERROR, Diagnosis, Fix, TensorFact
from ..context import RuleContext
from ..kit import callee_name, code_text, fact_for, line_code, quote
from ..places import root, view_on, with_lines
from ..registry import rule
from ..traced import Born, born, failing_operands, from_data, inference_named, marked
from .culprit import (CUT, FROZEN, LEAF, NO_GRAD, NONDIFF, OUTSIDE, BackwardSite, Cause, Loss, Scope,
                      backward_site, copies_tensors, cut_kind, freeze_statement, grad_evidence, last_child,
                      modules_called, short_cut)
from .culprit_integer import integer_tensor
from .culprit_trace import Tracer
from .culprit_units import Unit
from .culprit_where import (decorated, freeze_helper, freezing_line, frozen_where, frozen_whole, module_name,
                            short_op)
from .fix import (cut_fix, float_fix, frozen_parameter_fix, leaf_fix, no_grad_fix, soft_argmax_fix,
                  soft_threshold_fix)
from .fix_frozen import helper_fix, listed_fix
from .message import NoGradFn, NotFloat, parse_no_grad_fn, parse_not_float

KIND = "missing-requires-grad"
INT_KIND = "integer-requires-grad"


@rule(KIND, raises=RuntimeError, parse=parse_no_grad_fn, matches=(
    "element 0 of tensors does not require grad and does not have a grad_fn",
), fix="per cause: `requires_grad=True` on the creating call; the forward moved out of `torch.no_grad()`; "
       "the `.detach()` / `.data` cut dropped -- in the cell (an earlier one's helper, method or forward) where "
       "the cause is")
def missing_requires_grad(ctx: RuleContext, err: NoGradFn) -> Optional[Diagnosis]:
    """backward() was called on a tensor that has no graph: nothing on its way requires grad."""
    d = _missing(ctx, err)
    if (d is None or d.fix is None) and inference_named(ctx) is not None:
        return None  # NB: no fix here, an inference tensor on the failing line: inference-tensor-backward's card
    # (backward/no_graph.py) says why, and fixes a Lightning Trainer's inference_mode
    return marked(d, _cut_at(ctx), ctx) if d is not None else None


def _cut_at(ctx: RuleContext) -> Optional[Born]:
    """Where the run cut the graph (traced.py): the `with torch.no_grad():` around the op that ran with grad
    mode off on a tensor that required grad, else that op's line."""
    top = root(ctx)
    lineage = top.record.lineage
    for t in failing_operands(ctx)[:1] if lineage is not None else ():
        birth = lineage.cut(t)
        frames = birth.frames if birth is not None else ()
        for filename, lineno in frames:  # NB: innermost first: the block may be in a caller of the helper
            at = view_on(top, filename, lineno)
            tree = cell_tree(at.record.source) if at is not None else None
            blocks = [w for w in ast.walk(tree) if isinstance(w, (ast.With, ast.AsyncWith))
                      and w.lineno < lineno <= (w.end_lineno or w.lineno)
                      and any(_GRAD_OFF.search(ast.unparse(i.context_expr)) for i in w.items)] if tree else []
            if blocks:
                return Born(at, max(blocks, key=lambda w: w.lineno).lineno, birth)
        for filename, lineno in frames[:1]:
            at = view_on(top, filename, lineno)
            return Born(at, lineno, birth) if at is not None else None
        if birth is None:  # NB: no op cut it: made anew from numbers (`torch.tensor(total)` after `.item()`)
            made = born(ctx, t, lambda m: not m.requires_grad)
            return (from_data(ctx, made) if made is not None and made.birth is not None
                    and made.birth.op in _FROM_NUMBERS else None)
    return None


# NB: torch's constructors from Python data; a factory (`randn`, `zeros`) made data, not a loss from numbers
_FROM_NUMBERS = frozenset({"tensor", "as_tensor", "asarray", "from_numpy", "scalar_tensor"})


_GRAD_OFF = re.compile(r"\b(no_grad|inference_mode|set_grad_enabled)\b")


def _missing(ctx: RuleContext, err: NoGradFn) -> Optional[Diagnosis]:
    tree = cell_tree(ctx.record.source)
    site = backward_site(ctx, tree, err.index) if tree is not None else None
    if site is None or site.target is None:
        return _unknown(ctx, None, None, unseen=tree is not None)
    tracer = Tracer(ctx, tree, site.scope, site.stmt.lineno)
    flow = tracer.expr(site.target, site.scope, site.stmt.lineno)
    loss = Loss.of(ctx, site)
    causes = [] if flow.grad else list(flow.causes)
    if loss.tensor is not None and loss.tensor.is_inference() and not any(c.kind == NO_GRAD for c in causes):
        return _unknown(ctx, loss, "missing_rg.why_inference")
    for kind, explain in ((NO_GRAD, _no_grad), (CUT, _cut), (NONDIFF, _nondiff), (FROZEN, _frozen)):
        found = [c for c in causes if c.kind == kind]
        if found:
            return explain(ctx, _at(ctx, tracer, found[0]), site, loss, [c for c in found if c.where == found[0].where])
    leaves = [c for c in causes if c.kind in (LEAF, OUTSIDE)]
    if leaves:
        return _leaves(ctx, tracer, site, loss, leaves)
    why = None if torch.is_grad_enabled() else "missing_rg.why_grad_mode_off"
    return _unknown(ctx, loss, why)


@dataclass(frozen=True)
class At:
    """The cell the causes are in: the view on it (the rule's own context for its own cell), what the trace
    read there."""

    ctx: RuleContext
    unit: Unit
    path: Set[ast.stmt]  # the statements of that cell the loss was traced through
    here: bool  # the cell the rule reads (where backward() was called)


def _at(ctx: RuleContext, tracer: Tracer, cause: Cause) -> At:
    unit = cause.unit if cause.unit is not None else tracer.units.home
    return At(ctx if cause.unit is None else unit.ctx, unit, tracer.path_in(unit), cause.unit is None)


def _diagnosis(ctx: RuleContext, loss: Optional[Loss], *, title: str, summary: str, why: Sequence[str],
               lines: Sequence[Optional[int]], names: Sequence[str], tensors: Sequence[Optional[TensorFact]],
               fix: Optional[Fix], at: Optional[At] = None) -> Diagnosis:
    """The card: in the cell of the causes (`at`, its lines `lines`), with backward()'s line of this one."""
    line = ctx.record.error_lineno
    what = ctx.say("missing_rg.what", loss=loss.text, lineno=loss.lineno, call=loss.call) if loss is not None else \
        ctx.say("missing_rg.what_unseen", lineno=line)
    shown = sorted({n for n in lines if n})
    facts = (loss.facts() if loss is not None else []) + [t for t in tensors if t is not None]
    fields = dict(title=title, summary=summary, what=what, why=catalog.sentences(why, ctx.language),
                  names=list(dict.fromkeys(n for n in names if n)), tensors=list({f.name: f for f in facts}.values()),
                  fix=fix)
    if at is None or at.here:
        mine = sorted(set(shown) | ({loss.lineno} if loss is not None and at is not None else set())) or [line]
        return ctx.diagnosis(KIND, ERROR, where=ctx.where(line), lines=mine, **fields)
    d = at.ctx.diagnosis(KIND, ERROR, where=at.ctx.where(shown[0] if shown else None), lines=shown, **fields)
    return with_lines(d, ctx, [loss.lineno if loss is not None else line])


def _unknown(ctx: RuleContext, loss: Optional[Loss], why_key: Optional[str], unseen: bool = True) -> Diagnosis:
    """What is known when the cause was not found; `unseen`: backward() ran in code outside the cell."""
    line = ctx.record.error_lineno
    why = [ctx.say("missing_rg.why_graph")]
    if loss is None and unseen:
        code = " ".join(line_code(ctx.record.source_line(line)).split())
        why.append(ctx.say("missing_rg.why_unseen", lineno=line, code=code))
    why.append(ctx.say(why_key) if why_key else ctx.say("missing_rg.why_unknown"))
    tensors = _facts_on_line(ctx, line)
    title, summary = (ctx.say("missing_rg.title_unknown", loss=loss.text),
                      ctx.say("missing_rg.summary_unknown", loss=loss.text)) if loss is not None else \
        (ctx.say("missing_rg.title_unseen"),
         ctx.say("missing_rg.summary_unseen" if unseen else "missing_rg.summary_unread", lineno=line))
    return _diagnosis(ctx, loss, title=title, summary=summary, why=why, lines=[line],
                      names=[t.name for t in tensors], tensors=tensors, fix=None)


def _facts_on_line(ctx: RuleContext, lineno: Optional[int]) -> Sequence[TensorFact]:
    try:
        return ctx.facts_on_line(lineno)
    except RuntimeError:  # NB: facts of an inference tensor (its version) or a no_grad view torch will not give
        return ()


def _leaves(ctx: RuleContext, tracer: Tracer, site: BackwardSite, loss: Loss, leaves: List[Cause]) -> Diagnosis:
    """Leaves made without requires_grad: those the cells train (`.grad` read, given to an optimizer), else
    all; fixed where they are made when that is one cell, else named in each cell."""
    named = list(dict.fromkeys(leaves))
    units = {c.where: _at(ctx, tracer, c) for c in named}
    evidence = grad_evidence(tracer.tree).union(*(grad_evidence(a.unit.tree) for a in units.values()))
    chosen = [c for c in named if c.name in evidence] or named
    places = list(dict.fromkeys(c.where for c in chosen))
    at = units[places[0]]
    shown = {c: quote(c.name) if c.name else f"`{code_text(units[c.where].ctx.record.source, c.node)}`"
             for c in chosen}
    names = catalog.listing(list(shown.values()), ctx.language)
    why = [ctx.say("missing_rg.why_graph")]
    for c in chosen:
        a = units[c.where].ctx
        why.append(a.say("missing_rg.why_leaf", name=shown[c], lineno=c.lineno,
                         code=code_text(a.record.source, c.stmt or c.node)) if c.kind == LEAF else
                   a.say("missing_rg.why_outside", name=shown[c]))
    used = [c for c in chosen if c.name in evidence]
    fix = leaf_fix(at.ctx, chosen, at.unit.torch) if len(places) == 1 else None
    if used:
        why.append(ctx.say("missing_rg.why_evidence", names=catalog.listing([quote(c.name) for c in used],
                                                                            ctx.language)))
    elif len(chosen) > 1:
        why.append(ctx.say("missing_rg.why_no_evidence" if fix is not None else "missing_rg.why_no_evidence_no_fix"))
    if fix is None and any(c.kind == OUTSIDE for c in chosen):
        why.append(ctx.say("missing_rg.why_outside_fix"))
    d = _diagnosis(
        ctx, loss, title=ctx.say("missing_rg.title_leaf", loss=loss.text, names=names),
        summary=ctx.say("missing_rg.summary_leaf", loss=loss.text, names=names), why=why,
        lines=[c.lineno for c in chosen if c.where == places[0]], names=[c.name for c in chosen],
        tensors=[_fact(site.scope, c) for c in chosen], fix=fix, at=at)
    for where in places[1:]:  # NB: leaves of several cells: each cell's lines, no fix
        d = with_lines(d, units[where].ctx, [c.lineno for c in chosen if c.where == where])
    return d


def _fact(scope: Scope, cause: Cause) -> Optional[TensorFact]:
    obj = cause.obj if cause.obj is not None else scope.live(cause.name) if cause.name and cause.unit is None \
        else None
    return fact_for(cause.name, obj) if obj is not None else None


def _no_grad(ctx: RuleContext, at: At, site: BackwardSite, loss: Loss, found: List[Cause]) -> Diagnosis:
    a = at.ctx
    first = min(found, key=lambda c: c.lineno or 0)
    block = first.node
    header = code_text(a.record.source, block).splitlines()[0].rstrip(":") if not isinstance(
        block, ast.expr) else "@" + code_text(a.record.source, block)
    names = [c.name for c in found if c.name]
    name = quote(names[0]) if names else loss.text
    why = [ctx.say("missing_rg.why_graph"),
           a.say("missing_rg.why_no_grad", name=name, lineno=first.lineno, header=header, block_line=block.lineno)]
    # NB: a decorator is dropped from the function it is written on (a helper or method the loss came through)
    fn = decorated(at.unit.tree, block) if isinstance(block, ast.expr) or not at.here else site.scope.node
    fix = no_grad_fix(a, at.path, site.stmt.lineno if at.here else None, fn, block) \
        if isinstance(block, (ast.With, ast.expr)) else None
    if fix is None:
        why.append(a.say("missing_rg.why_no_grad_no_fix", header=header))
    elif isinstance(block, ast.With) and modules_called(a, block, at.path) > 1:
        why.append(a.say("missing_rg.why_no_grad_part", header=header))
    return _diagnosis(
        ctx, loss, title=a.say("missing_rg.title_no_grad", name=name, header=header),
        summary=a.say("missing_rg.summary_no_grad", name=name, lineno=first.lineno, header=header, loss=loss.text),
        why=why, lines=[block.lineno, first.lineno], names=names, tensors=[], fix=fix, at=at)


def _cut(ctx: RuleContext, at: At, site: BackwardSite, loss: Loss, found: List[Cause]) -> Diagnosis:
    a = at.ctx
    c = found[0]
    how = cut_kind(c.node)
    cut = short_cut(c.node)
    # NB: after `.item()` / `.numpy()` the name holds a number or an array: say what lost its grad instead
    name = quote(c.name) if c.name and how in ("detach", "data", "copy") else f"`{loss.text}`"
    code = code_text(a.record.source, enclosing_statement(at.unit.tree, c.lineno) if c.lineno else None) or cut
    why = [ctx.say("missing_rg.why_graph"),
           a.say(f"missing_rg.why_cut_{how}", name=name, lineno=c.lineno, cut=cut, code=code)]
    fix, key = cut_fix(a, at.unit.tree, c, copies_tensors(a, c.node))
    why.append(a.say(key, name=name, lineno=c.lineno, cut=cut))
    return _diagnosis(
        ctx, loss, title=a.say("missing_rg.title_cut", cut=cut, lineno=c.lineno, loss=loss.text),
        summary=a.say("missing_rg.summary_cut", cut=cut, lineno=c.lineno, loss=loss.text),
        why=why, lines=[c.lineno], names=[c.name], tensors=[], fix=fix, at=at)


def _nondiff(ctx: RuleContext, at: At, site: BackwardSite, loss: Loss, found: List[Cause]) -> Diagnosis:
    """argmax, a comparison, an integer cast: the honest fix computes the loss from the scores, never
    `requires_grad=True` (which would run and train nothing)."""
    a = at.ctx
    c = found[0]
    op = short_op(a.record.source, c.node)
    code = code_text(a.record.source, enclosing_statement(at.unit.tree, c.lineno) if c.lineno else None) or op
    fix = soft_argmax_fix(a, at.unit, c) or soft_threshold_fix(a, at.unit, c)
    soft = "missing_rg.why_nondiff_threshold" if fix is not None and c.inner is not None else \
        "missing_rg.why_nondiff_soft"
    why = [ctx.say("missing_rg.why_graph"),
           a.say("missing_rg.why_nondiff", op=op, lineno=c.lineno, code=code, name=quote(c.name) or f"`{op}`"),
           a.say(soft if fix is not None else "missing_rg.why_nondiff_no_fix", op=op)]
    return _diagnosis(
        ctx, loss, title=a.say("missing_rg.title_nondiff", op=op, lineno=c.lineno, loss=loss.text),
        summary=a.say("missing_rg.summary_nondiff", op=op, lineno=c.lineno, loss=loss.text),
        why=why, lines=[c.lineno], names=[c.name], tensors=[], fix=fix, at=at)


def _frozen(ctx: RuleContext, at: At, site: BackwardSite, loss: Loss, found: List[Cause]) -> Diagnosis:
    a = at.ctx
    c = found[0]
    name, obj = module_name(ctx, c.name, c.obj), c.obj
    whole = frozen_whole(ctx, [module_name(ctx, f.name, f.obj) for f in found if f.obj is not None])
    if whole is not None:  # NB: the backbone and the head frozen: the whole model is
        name, obj = whole
    freeze = freeze_statement(at.unit.tree, c.name)
    elsewhere = frozen_where(ctx, obj, name) if freeze is None else None
    why = [ctx.say("missing_rg.why_graph"),
           a.say("missing_rg.why_frozen", name=quote(name), lineno=c.lineno,
                 count=sum(1 for _ in obj.parameters()) if obj is not None else 0)]
    if freeze is not None:
        why.append(a.say("missing_rg.why_frozen_here", lineno=freeze.lineno, code=code_text(a.record.source, freeze)))
    elif elsewhere is not None:
        froze = freezing_line(elsewhere[1], name)
        why.append(elsewhere[0].say("missing_rg.why_frozen_here", lineno=froze, code=code_text(
            elsewhere[0].record.source, elsewhere[1]) if froze == elsewhere[1].lineno else
            elsewhere[0].record.source_line(froze).strip()))
    else:
        why.append(ctx.say("missing_rg.why_frozen_before", name=quote(name)))
    head = last_child(name, obj)
    fixed = _head_kept(ctx, elsewhere, name, obj) if elsewhere is not None and "." not in name else None
    why.append(ctx.say("missing_rg.why_frozen_fix" if fixed is not None else "missing_rg.why_frozen_no_fix"
                       if head != name else "missing_rg.why_frozen_no_fix_all", name=name, head=head))
    facts = [fact_for(name, obj)] if obj is not None else []
    fields = dict(title=ctx.say("missing_rg.title_frozen", name=quote(name)),
                  summary=ctx.say("missing_rg.summary_frozen", name=quote(name), loss=loss.text), why=why,
                  names=[name], tensors=facts)
    if fixed is not None:  # NB: the card in the cell of the fix (the helper's, or the one calling it)
        view, line, fix = fixed
        d = _diagnosis(ctx, loss, lines=[line], fix=fix, at=At(view, at.unit, set(), False), **fields)
        return with_lines(with_lines(d, elsewhere[0], [elsewhere[1].lineno]), at.ctx, [c.lineno])
    d = _diagnosis(ctx, loss, lines=[freeze.lineno if freeze is not None else None, c.lineno], fix=None, at=at,
                   **fields)
    return with_lines(d, elsewhere[0], [freezing_line(elsewhere[1], name)]) if elsewhere is not None else d


def _head_kept(ctx: RuleContext, elsewhere: Tuple[RuleContext, ast.stmt], name: str, model: Any
               ) -> Optional[Tuple[RuleContext, int, Fix]]:
    """(view, line, fix) keeping the model's head trainable where the user's freeze helper froze it all: the
    list of names the statement gives it, else the helper's freeze loop (fix_frozen.py)."""
    children = [n for n, _ in model.named_children()] if isinstance(model, torch.nn.Module) else []
    found = freeze_helper(root(ctx), elsewhere[1], name) if len(children) >= 2 else None
    if found is None:
        return None
    place, call, param = found
    fix = listed_fix(elsewhere[0], call, children)
    if fix is not None:
        return elsewhere[0], call.lineno, fix
    fn = place.node
    loops = [n for n in ast.walk(fn) if isinstance(n, ast.For) and isinstance(n.iter, ast.Call)
             and callee_name(n.iter) in ("parameters", "named_parameters")]
    line = loops[0].lineno if len(loops) == 1 else freeze_statement(fn, "").lineno  # type: ignore[arg-type, union-attr]
    view = view_on(ctx, place.ctx.record.filename, line) if param else None
    fix = helper_fix(view, fn, param, children) if view is not None and param else None
    return (view, line, fix) if fix is not None else None


@rule(INT_KIND, raises=RuntimeError, parse=parse_not_float, matches=(
    "Only Tensors of floating point and complex dtype can require gradients",
    "only Tensors of floating point dtype can require gradients (older torch)",
), fix="a floating point tensor (`dtype=torch.float32`, `1.0` literals, `.float()`)")
def integer_requires_grad(ctx: RuleContext, err: NotFloat) -> Optional[Diagnosis]:
    """requires_grad was asked of an integer (or bool) tensor: only floating point can have gradients."""
    lineno = ctx.record.error_lineno
    found = integer_tensor(ctx)
    call, name = found.call, found.name
    subject = quote(name) if name else (f"`{code_text(ctx.record.source, call)}`" if call is not None else
                                        ctx.say("int_rg.the_tensor"))
    dtype = found.dtype or ctx.say("int_rg.an_integer")
    why = [ctx.say("int_rg.why", name=subject, dtype=dtype)]
    if call is not None and callee_name(call) in ("tensor", "arange") and \
            not any(k.arg == "dtype" for k in call.keywords):
        why.append(ctx.say("int_rg.why_literal", call=callee_name(call)))
    made = found.at or ctx  # NB: the cell whose line made it
    fix = float_fix(made, call, subject, found.more) if call is not None else None
    if found.constant is not None:
        fix = frozen_parameter_fix(ctx, found.constant, subject)
        why.append(ctx.say("int_rg.why_constant", name=subject, attr=found.attr))
    why.append(ctx.say("int_rg.why_fix" if fix is not None and found.constant is None else
                       "int_rg.why_fix_constant" if fix is not None else "int_rg.why_no_fix",
                       default=dtype_name(torch.get_default_dtype())))
    facts = [f for f in [fact_for(name, found.tensor)] if f is not None] if name and found.tensor is not None else []
    d = made.diagnosis(
        INT_KIND, ERROR, title=ctx.say("int_rg.title", name=subject, dtype=dtype),
        summary=ctx.say("int_rg.summary_constant" if found.constant is not None else "int_rg.summary",
                        name=subject, dtype=dtype),
        what=ctx.say("int_rg.what", lineno=lineno, name=subject, dtype=dtype),
        why=catalog.sentences(why, ctx.language), where=made.where(call.lineno) if found.at else ctx.where(lineno),
        lines=sorted({n for n in (getattr(call, "lineno", None), None if found.at else lineno,
                                  *(c.lineno for c in found.more)) if n}),
        names=[name] if name else [], tensors=facts, fix=fix)
    return with_lines(d, ctx, [lineno]) if found.at is not None else d
