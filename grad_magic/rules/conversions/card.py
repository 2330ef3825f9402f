"""The conversions family's rules and cards: numpy-on-grad-tensor, numpy-on-device-tensor, bool-ambiguous,
registered in that order.

Each rule gets torch's message parsed (message.py), asks culprit.py / culprit_bool.py where the conversion
happened and fix.py for the edit, and words the card only through catalog keys `conversions.*`. May touch:
what the other modules return and the RuleContext's wording.
"""
from __future__ import annotations

from typing import List, Optional

from ... import catalog
from ...facts import shape_text
from ...model import ERROR, Diagnosis, Fix
from ..context import RuleContext
from ..kit import dotted, fact_for, lookup, names_an_argument, one_line
from ..places import root, view_on, with_lines
from ..registry import rule
from .culprit import Conversion, converted_on_the_line, refused_conversions, sibling_conversions, statement_exprs
from .culprit_lists import ListFill, list_fill
from .culprit_bool import bool_sites, named_tensors, pinned_site, tensors_of_one_shape
from .culprit_init import BuiltWithTensors, built_with_tensors
from .fix import bool_fix, build_then_call_fix, detach_fix, host_fix, list_fix, to_host
from .message import Ambiguous, NeedsCpu, NeedsDetach, parse_ambiguous, parse_needs_cpu, parse_needs_detach

GRAD_KIND = "numpy-on-grad-tensor"
DEVICE_KIND = "numpy-on-device-tensor"
BOOL_KIND = "bool-ambiguous"


def _numpy_diagnosis(ctx: RuleContext, kind: str, key: str, found: List[Conversion], fix: Optional[Fix],
                     why: List[str], **params: object) -> Diagnosis:
    lineno = ctx.record.error_lineno
    first = found[0] if found else None
    expr = f"`{first.text}`" if first is not None else ctx.say("conversions.a_tensor")
    call = first.call if first is not None else "numpy()"
    tensors = [fact_for(c.text, c.tensor) for c in found if c.tensor is not None]
    return ctx.diagnosis(
        kind, ERROR, title=ctx.say(f"{key}.title", expr=expr, **params),
        summary=ctx.say(f"{key}.summary_meta" if params.get("device") == "meta" else f"{key}.summary", **params),
        what=ctx.say(f"{key}.what", expr=expr, call=call, lineno=lineno or "?", **params),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno), lines=[lineno],
        names=[c.text for c in found if c.tensor is not None], tensors=[t for t in tensors if t], fix=fix)


@rule(GRAD_KIND, raises=RuntimeError, parse=parse_needs_detach, matches=(
    "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
    "Can't call numpy() on Variable that requires grad. Use var.detach().numpy() instead. (older releases)",
), fix="`.detach()` before `.numpy()` (or on the tensor given to `np.array` / a plotting call)")
def numpy_on_grad_tensor(ctx: RuleContext, err: NeedsDetach) -> Optional[Diagnosis]:
    """`.numpy()` (or `np.array`) on a tensor that autograd is still tracking."""
    on_line, found = refused_conversions(ctx, lambda t: t.requires_grad)
    if any(names_an_argument(ctx, c.node, ctx.record.error_lineno) for c in found):
        return None  # NB: a helper's parameter: the caller's tensor is the one to detach
    fill = list_fill(ctx) if not found else None
    if fill is not None:
        return _list_card(ctx, fill)
    if not found and ctx.elsewhere and _caller_filled(ctx):
        return None  # NB: a list the helper was given: the running cell's view says where it was filled
    why = [ctx.say("conversions.grad.why")]
    fix = detach_fix(ctx, [*found, *sibling_conversions(ctx, found)]) if found else None
    if fix is None:
        why.append(ctx.say("conversions.grad.no_fix"))
    elif not on_line and found[0].call != "numpy()":
        why.append(ctx.say("conversions.via_library", call=found[0].call))
    d = _numpy_diagnosis(ctx, GRAD_KIND, "conversions.grad", found, fix, why)
    return _with_conversion_site(d, ctx)


def _with_conversion_site(d: Diagnosis, ctx: RuleContext) -> Diagnosis:
    """The card of the calling line, with the line of the user's helper (an earlier cell) that converted
    what the line passed it: where the error was raised, shown beside the fix."""
    frames = root(ctx).record.frames
    site = frames[-1].site if frames else None
    if site is None or site.filename == ctx.record.filename and site.lineno == ctx.record.error_lineno:
        return d
    view = view_on(ctx, site.filename, site.lineno)
    return with_lines(d, view, [site.lineno]) if view is not None and view is not ctx else d


def _caller_filled(ctx: RuleContext) -> bool:
    top = root(ctx)
    return top is not ctx and list_fill(top) is not None


def _list_card(ctx: RuleContext, fill: ListFill) -> Diagnosis:
    """numpy-on-grad-tensor for a list of tracked tensors: the fix where the list is filled (maybe a helper's
    cell, `at`), the failing line kept beside it."""
    at, lineno = fill.view, ctx.record.error_lineno
    fix = list_fix(at, fill)
    fill_lines = sorted({n.lineno for n in fill.items})
    shown = ", ".join(str(n) for n in fill_lines)
    why = [ctx.say("conversions.grad.why"), at.say("conversions.grad.why_list", fill=shown, suffix=fill.suffix)]
    if fix is None:
        why.append(ctx.say("conversions.no_parse"))
    name = fill.shown
    expr = at.say("conversions.grad.list_items", name=name)
    d = at.diagnosis(
        GRAD_KIND, ERROR, title=at.say("conversions.grad.title", expr=expr),
        summary=at.say("conversions.grad.summary"),
        what=ctx.say("conversions.grad.what_list", name=name, lineno=lineno or "?"),
        why=catalog.sentences(why, ctx.language), where=at.where(fill_lines[0]),
        lines=sorted(set(fill_lines) | ({lineno} if at is ctx and lineno else set())), names=[fill.name] if fill.name else [], fix=fix)
    return d if at is ctx else with_lines(d, ctx, [lineno])


@rule(DEVICE_KIND, raises=TypeError, parse=parse_needs_cpu, matches=(
    "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.",
    "can't convert meta device type tensor to numpy. … (any non-CPU device: mps:0, xpu:0, meta)",
    "can't convert CUDA tensor to numpy. Use Tensor.cpu() … (older releases)",
), fix="`.cpu()` (`.detach().cpu()` when it may require grad) before `.numpy()`; none for meta tensors")
def numpy_on_device_tensor(ctx: RuleContext, err: NeedsCpu) -> Optional[Diagnosis]:
    """`.numpy()` (or `np.array`) on a tensor that lives on a GPU (or another non-CPU device)."""
    device = err.device
    _, found = refused_conversions(ctx, lambda t: t.device.type != "cpu")
    if ctx.elsewhere and (not found or any(names_an_argument(ctx, c.node, ctx.record.error_lineno)
                                           for c in found)):
        return None  # NB: nothing converted on the helper's line, or the caller's tensor: the caller's story
    why = [ctx.say("conversions.device.meta" if device == "meta" else "conversions.device.why", device=device)]
    fix = None
    if device == "meta":
        pass  # NB: a meta tensor has no data: .cpu() would fail too, so there is nothing to propose
    elif found:
        fix = host_fix(ctx, found)
        if fix is not None and any(to_host(c) != ".cpu()" for c in found):
            known = [f"`{c.text}`" for c in found if c.tensor is not None and c.tensor.requires_grad]
            why.append(ctx.say("conversions.device.why_detach_known", names=catalog.listing(known, ctx.language)) if known
                       else ctx.say("conversions.device.why_detach"))
    if fix is None and device != "meta":
        why.append(ctx.say("conversions.device.no_fix"))
    return _numpy_diagnosis(ctx, DEVICE_KIND, "conversions.device", found, fix, why, device=device)


@rule(BOOL_KIND, raises=RuntimeError, parse=parse_ambiguous, matches=(
    "Boolean value of Tensor with more than one value is ambiguous",
    "Boolean value of Tensor with no values is ambiguous",
    "bool value of Tensor with more than one value is ambiguous (older releases)",
), fix="`if (t > 0).all():` / `while (loss > tol).any():` / `assert torch.equal(a, b)` for a comparison "
       "the line tests")
def bool_ambiguous(ctx: RuleContext, err: Ambiguous) -> Optional[Diagnosis]:
    """A tensor of several values used where Python needs one True or False (`if t > 0:`, `assert a == b`)."""
    built = built_with_tensors(ctx)
    if built is not None:
        return _built_card(ctx, built)
    empty = err.empty
    lineno = ctx.record.error_lineno
    stmt, exprs = statement_exprs(ctx, lineno)
    on_line = converted_on_the_line(ctx)
    site = pinned_site(bool_sites(ctx, stmt, exprs), empty) if on_line else None
    if ctx.elsewhere and (site is None or names_an_argument(ctx, site.node, lineno)):
        return None  # NB: a test of a helper's parameter: which test the caller meant is the caller's to say
    name = dotted(site.node) if site is not None else None
    why = [ctx.say("conversions.bool.why_empty" if empty else "conversions.bool.why", name=name or "t")]
    fix = None
    if site is not None and not empty:
        fix, key = bool_fix(ctx, site, tensors_of_one_shape(ctx, site))
        why.append(ctx.say(key, expr=site.text))
    elif site is None:
        why.append(ctx.say("conversions.bool.not_on_line" if not on_line else "conversions.bool.unsure"))
    expr = f"`{site.text}`" if site is not None else ctx.say("conversions.a_tensor")
    shape = ctx.say("conversions.bool.shape", shape=shape_text(site.shape)) \
        if site is not None and site.shape is not None else ""
    named = named_tensors(ctx, site)
    tensors = [fact_for(n, lookup(ctx, node)) for n, node in named]
    what = "conversions.bool.what_unknown" if site is None else "conversions.bool.what_empty" if empty \
        else "conversions.bool.what"
    return ctx.diagnosis(
        BOOL_KIND, ERROR, title=ctx.say("conversions.bool.title_empty" if empty else "conversions.bool.title",
                                        expr=expr),
        summary=ctx.say("conversions.bool.summary_empty" if empty else "conversions.bool.summary"),
        what=ctx.say(what, expr=expr, shape=shape, lineno=lineno or "?",
                     statement=site.statement if site is not None else "if"),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno), lines=[lineno],
        names=[n for n, _ in named], tensors=[t for t in tensors if t], fix=fix)


def _built_card(ctx: RuleContext, built: BuiltWithTensors) -> Diagnosis:
    """A module class called with the tensors (`nn.CrossEntropyLoss(logits, y)`): build it, then call it."""
    lineno = ctx.record.error_lineno
    code = one_line(ctx.record.source, built.call)
    fix = build_then_call_fix(ctx, built.call, ctx.say("conversions.bool.built_fix", cls=built.written,
                                                         lineno=lineno or "?"))
    return ctx.diagnosis(
        BOOL_KIND, ERROR, title=ctx.say("conversions.bool.built_title", cls=built.written),
        summary=ctx.say("conversions.bool.built_summary"),
        what=ctx.say("conversions.bool.built_what", lineno=lineno or "?", code=code, cls=built.written),
        why=ctx.say("conversions.bool.built_why", cls=built.written), where=ctx.where(lineno), lines=[lineno],
        fix=fix)
