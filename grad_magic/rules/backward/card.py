"""The backward family's rules and cards: backward-non-scalar, backward-twice, out-with-grad,
inference-tensor-backward, registered in that order.

Each rule gets torch's message parsed (message.py), asks culprit*.py for the cause and fix.py for the edit,
and words the card only through catalog keys `backward.*`. May touch: what the other modules return and
the RuleContext's wording; nothing live.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from ... import catalog
from ...cell import cell_tree, qualname_at
from ...model import ERROR, Diagnosis, Fix
from ..context import RuleContext
from ..kit import dotted, names_an_argument, one_line
from ..places import global_assignment, with_lines
from ..registry import rule
from ..traced import Born, born, failing_operands, made_with, marked
from .culprit import Refused, named_fact, out_call, reduction, refused_tensor
from .culprit_inference import inference_culprit
from .no_graph import no_graph_card
from .culprit_across import Found, twice_found
from .fix import clone_fix, out_fix, reduce_fix, swap_fix, twice_fix
from .message import (GraphFreed, InferenceTensor, NonScalar, OutWithGrad, parse_graph_freed,
                      parse_inference_tensor, parse_non_scalar, parse_out_with_grad)


@rule("backward-non-scalar", raises=RuntimeError, parse=parse_non_scalar, matches=(
    "grad can be implicitly created only for scalar outputs",
    "grad can be implicitly created only for real scalar outputs but got torch.complex64 (complex, torch >= 1.8)",
), fix="`.mean()` (a loss) or `.sum()` appended to the tensor backward() was called on")
def backward_non_scalar(ctx: RuleContext, err: NonScalar) -> Diagnosis:
    """backward() or autograd.grad() on a tensor with more than one element, without `gradient=`."""
    lineno = ctx.record.error_lineno
    refused = refused_tensor(ctx)
    site, fact, shape = refused.site, refused.fact, refused.shape
    label = f"`{refused.expr}`" if refused.expr else ctx.say("backward.scalar.unnamed")
    why, fix = _non_scalar_why(ctx, err, refused, label)
    variant = "_complex" if err.complex else "" if shape else "_unknown"
    code = one_line(ctx.record.source, site.call) if site and site.call else refused.call
    d = ctx.diagnosis(
        "backward-non-scalar", ERROR, title=ctx.say("backward.scalar.title" + variant, tensor=label, shape=shape),
        summary=ctx.say("backward.scalar.summary" + ("_complex" if err.complex else ""), call=refused.call),
        what=ctx.say("backward.scalar.what" + variant, code=code, lineno=lineno or "?", tensor=label,
                     shape=shape, dtype=fact.dtype if fact else "complex"),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno), lines=[lineno],
        names=[refused.name] if refused.name else [], tensors=[fact] if fact else [], fix=fix)
    return marked(d, _unreduced(ctx), ctx)


def _unreduced(ctx: RuleContext) -> Optional[Born]:
    """The loss call on the refused tensor's way back that was told not to reduce (`reduction="none"`), else
    the op that gave the tensor its shape, where that ran in another function or cell than the backward() (a
    model's `compute_loss` returning a per-sample column): the line that made the loss what backward() refused."""
    for t in failing_operands(ctx)[:1]:
        shape = tuple(t.shape)
        found = made_with(ctx, t, lambda m: m.shape == shape, "reduction")
        if found is not None:
            return found
        made = born(ctx, t, lambda m: m.shape == shape)
        if made is None or made.birth is None:
            return None
        here = ctx.record.error_lineno
        tree = cell_tree(ctx.record.source)
        elsewhere = made.at.record.filename != ctx.record.filename or here is None or \
            qualname_at(tree, made.lineno) != qualname_at(tree, here)
        return made if elsewhere else None
    return None


def _non_scalar_why(ctx: RuleContext, err: NonScalar, refused: Refused, label: str) -> Tuple[List[str], Optional[Fix]]:
    """(the why sentences, the fix): a reduction of the tensor, unless the card says why there is none."""
    if err.complex:
        dtype = refused.fact.dtype if refused.fact else "complex"
        return [ctx.say("backward.scalar.why_complex", tensor=label, dtype=dtype)], None
    shaped = ctx.say("backward.scalar.shape", shape=refused.shape) if refused.shape else ""
    why = [ctx.say("backward.scalar.why", tensor=label, shaped=shaped, call=refused.call)]
    reduce, reason = reduction(ctx, refused)
    fix = reduce_fix(ctx, refused.site, reduce) if reduce else None
    if fix is not None:
        why.append(ctx.say("backward.scalar.why_" + reduce, tensor=label))
    else:
        why.append(ctx.say(reason or "backward.scalar.why_no_fix", tensor=label))
    return why, fix


@rule("backward-twice", raises=RuntimeError, parse=parse_graph_freed, matches=(
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). … (torch >= 1.9)",
    "Trying to backward through the graph a second time, but the saved intermediate results have already been "
    "freed. (torch 1.0–1.8; 0.4: \"but the buffers have already been freed\")",
), fix="`h = h.detach()` for a state carried across iterations, cells or calls (`self.hidden` in `forward`); the "
       "forward pass moved into the loop; `sum(losses).backward()`; `D(fake.detach())` in a GAN's first loss; "
       "`retain_graph=True` on the first of two backward() calls")
def backward_twice(ctx: RuleContext, err: GraphFreed) -> Optional[Diagnosis]:
    """backward() through a graph whose saved tensors an earlier backward() already freed."""
    found = twice_found(ctx)
    if found is None:
        return None  # NB: a frame that called this one shows the cause; the engine tries it next
    cause, bctx, backward = found.cause, found.bctx, found.backward
    here = cause.view if cause is not None and cause.view is not None else ctx
    expr = one_line(bctx.record.source, backward.receiver) if backward is not None else ""
    label = f"`{expr}`" if expr else ctx.say("backward.twice.unnamed")
    names = [n for n in ([dotted(backward.receiver)] if backward is not None else []) if n]
    lines = [ctx.record.error_lineno] if here is ctx else []
    title, why, fix = here.say("backward.twice.title", tensor=label), [here.say("backward.twice.why")], None
    if cause is not None:
        # NB: a tuple in a cause's parameters is a list of names, said in the card's language
        params = {k: catalog.listing(v, ctx.language) if isinstance(v, tuple) else v for k, v in cause.params.items()}
        why.append(here.say(cause.key, tensor=label, **params))
        lines = sorted({*cause.lines, *lines} - {None})
        title = here.say(cause.key + "_title", tensor=label, **params)
        fix = twice_fix(here, cause.remedy) if cause.remedy is not None else None
    if cause is None:
        why.append(here.say("backward.twice.why_no_fix"))
    elif fix is None and cause.key not in _WORDS_ONLY:
        why.append(here.say("backward.twice.why_no_edit"))
    facts = [f for f in (named_fact(bctx, n) for n in names) if f is not None and f.kind != "module"]
    facts += [f for f in (named_fact(ctx, n) for n in (cause.names if cause else ()) if n not in names)
              if f is not None and f.kind != "module"]
    d = here.diagnosis(
        "backward-twice", ERROR, title=catalog.tidy(title, ctx.language), summary=ctx.say("backward.twice.summary"),
        what=catalog.tidy(_twice_what(ctx, found, label), ctx.language),
        why=catalog.tidy(catalog.sentences(why, ctx.language), ctx.language),
        where=here.where(lines[0] if here is not ctx else ctx.record.error_lineno), lines=lines,
        names=names + [n for n in (cause.names if cause else ()) if n not in names], tensors=facts, fix=fix)
    if backward is not None and bctx is not here:
        d = with_lines(d, bctx, [bctx.record.error_lineno])
    if cause is not None and cause.key == "backward.twice.why_earlier_graph":
        for name in cause.names:  # NB: the earlier cell that made the graph: where the forward pass ran
            place = global_assignment(ctx, name)
            if place is not None:
                d = with_lines(d, place.ctx, [place.node.lineno])
    return d


# NB: causes whose card says in words what to change: no "the cell's text does not allow that edit" after them
_WORDS_ONLY = ("backward.twice.why_stepped", "backward.twice.why_passed", "backward.twice.why_passed_loop",
               "backward.twice.why_earlier_graph")


def _twice_what(ctx: RuleContext, found: Found, label: str) -> str:
    """What stopped: the backward() call on this view's line, or the one in the frame it called."""
    bctx, backward, site = found.bctx, found.backward, found.site
    if backward is None and site is not None and site.call is None:  # NB: a library's backward(): Lightning's fit
        return ctx.say("backward.twice.what_library", code=one_line(ctx.record.source, site.stmt),
                       lineno=ctx.record.error_lineno or "?")
    if backward is None or backward.call is None:
        return ctx.say("backward.twice.what", code="backward()", lineno=ctx.record.error_lineno or "?", tensor=label)
    code = one_line(bctx.record.source, backward.call)
    if bctx is ctx:
        return ctx.say("backward.twice.what", code=code, lineno=ctx.record.error_lineno or "?", tensor=label)
    return catalog.message("backward.twice.what_inner", ctx.language, code=code, tensor=label,
                           where=bctx.where(bctx.record.error_lineno))


@rule("out-with-grad", raises=RuntimeError, parse=parse_out_with_grad, matches=(
    "add(): functions with out=... arguments don't support automatic differentiation, but one of the "
    "arguments requires grad.",
), fix="the out-of-place form: `c = torch.add(a, b)` for `torch.add(a, b, out=c)`")
def out_with_grad(ctx: RuleContext, err: OutWithGrad) -> Diagnosis:
    """An `out=` call on tensors that require grad: autograd cannot record writes into a given tensor."""
    lineno = ctx.record.error_lineno
    found = out_call(ctx)
    call, out, graded = found.call, found.out, found.graded
    why = [ctx.say("backward.out.why", op=err.op)]
    # NB: a helper's own parameter given as `out=`: rebinding it would leave the caller's tensor unfilled
    passed = isinstance(found.out_node, ast.Name) and names_an_argument(ctx, found.out_node, lineno)
    fix = out_fix(ctx, found.site, call, found.out_node, out) if call and not passed else None
    if fix is None:
        why.append(ctx.say("backward.out.why_passed", out=out) if passed else ctx.say("backward.out.why_no_fix"))
    grads = catalog.listing((f"`{f.name}`" for f in graded), ctx.language) or ctx.say("backward.out.an_input")
    code = one_line(ctx.record.source, call) if call else f"{err.op}(..., out=...)"
    return ctx.diagnosis(
        "out-with-grad", ERROR, title=ctx.say("backward.out.title", op=err.op, grads=grads),
        summary=ctx.say("backward.out.summary"),
        what=ctx.say("backward.out.what", code=code, lineno=lineno or "?", grads=grads,
                     out=f"`{out}`" if out else "out"),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno), lines=[lineno],
        names=[f.name for f in graded] + ([out] if out else []), tensors=graded, fix=fix)


@rule("inference-tensor-backward", raises=RuntimeError, parse=parse_inference_tensor, matches=(
    "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor "
    "and use it in autograd. (torch 2.13 adds: or use `torch.no_grad()` instead of `torch.inference_mode()`)",
    "Inplace update to inference tensor outside InferenceMode is not allowed.",
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
    "element 0 of tensors does not require grad and does not have a grad_fn (a tensor the line names is an "
    "inference tensor: a Lightning validate / test step, an inference_mode block)",
), fix="`torch.no_grad()` instead of `torch.inference_mode()` where the tensor was made, else `x = x.clone()`")
def inference_tensor_backward(ctx: RuleContext, err: InferenceTensor) -> Optional[Diagnosis]:
    """A tensor made under torch.inference_mode() used where autograd (or its version counter) needs it."""
    if err.variant == "nograd":  # NB: "does not require grad" of an inference tensor the failing line names
        return no_graph_card(ctx)
    lineno = ctx.record.error_lineno
    found = inference_culprit(ctx)
    name, block = found.name, found.block
    plain = label = f"`{name}`" if name else ctx.say("backward.inference.unnamed")
    if found.alias is not None:  # NB: the failing line is in a function and names it differently
        label = ctx.say("backward.inference.alias", name=label, alias=found.alias)
    title = ctx.say("backward.inference.title_module", module=label) if found.module else \
        ctx.say("backward.inference.title_" + err.variant, tensor=label)
    if found.module:
        label = ctx.say("backward.inference.parameters", module=label)
        plain = ctx.say("backward.inference.parameters", module=plain)
    why = [ctx.say("backward.inference.why"), ctx.say("backward.inference.why_" + err.variant, tensor=plain)]
    here = found.view or ctx  # NB: the cell of the block that made the tensor, when it is another cell
    fix = None
    if block is not None:
        fix = swap_fix(here, block)
        why.append(here.say("backward.inference.why_decorated" if found.maker else "backward.inference.why_block",
                            tensor=plain, lineno=block.lineno, function=f"`{found.maker}`"))
    elif name and "." not in name and not found.module and found.tree is not None:
        fix = clone_fix(ctx, found.tree, name)
    if fix is None:
        why.append(ctx.say("backward.inference.why_no_fix"))
    facts = [f for f in (named_fact(ctx, name),) if f is not None]
    lines: List[Optional[int]] = ([lineno] if here is ctx else []) + ([block.lineno] if block is not None else [])
    d = here.diagnosis(
        "inference-tensor-backward", ERROR, title=title, summary=ctx.say("backward.inference.summary"),
        what=ctx.say("backward.inference.what_" + err.variant, lineno=lineno or "?", tensor=label,
                     code=" ".join(ctx.record.source_line(lineno).split())),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno) if here is ctx else here.where(block.lineno),
        lines=sorted(set(lines)), names=[name] if name else [], tensors=facts, fix=fix)
    return d if here is ctx else with_lines(d, ctx, [lineno])
