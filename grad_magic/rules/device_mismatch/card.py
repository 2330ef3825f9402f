"""The card seam of `device-mismatch`: the rule and its card (catalog keys `devices.*`). Tensors that meet in
one op live on different devices (model on the GPU, inputs on the CPU).

May touch: the RuleContext (record, names, catalog); tensor metadata for the card's facts, never data.
Wording only through catalog keys.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from ... import catalog
from ...facts import shape_text, tensor_fact
from ...model import ERROR, Diagnosis, Fix, TensorFact
from ..context import RuleContext
from ..kit import failed_op
from ..places import with_lines
from ..registry import rule
from ..traced import marked as mark_born, odd_born
from .culprit import Party, Target, parties_of, same_device, target_device
from .culprit_chain import Chain
from .culprit_origins import Move, NoMove, Plan, find_moves
from .culprit_unregistered import Unregistered, unregistered
from .fix import cells_fix, moves_fix
from .message import DeviceError, parse_device_error

KIND = "device-mismatch"
# what each kind of move says: where the tensor came from (why) and the step of the fix
ORIGIN_KEYS = {"factory": "devices.why.created", "loop": "devices.why.loop", "use": "devices.why.use",
               "earlier": "devices.why.earlier", "module": "devices.why.module_made", "taken": "devices.why.taken",
               "buffer": "devices.why.attribute", "weight": "devices.why.weight",
               "comprehension": "devices.why.comprehension", "dict_loop": "devices.why.dict_loop",
               "operand": "devices.why.operand", "made": "devices.why.made",
               "passed": "devices.why.passed", "returned": "devices.why.returned", "batch": "devices.why.batch",
               "kept": "devices.why.kept"}
STEP_KEYS = {"factory": "devices.fix.factory", "loop": "devices.fix.loop", "use": "devices.fix.use",
             "earlier": "devices.fix.use", "module": "devices.fix.module", "buffer": "devices.fix.buffer",
             "weight": "devices.fix.weight", "comprehension": "devices.fix.comprehension",
             "dict_loop": "devices.fix.dict_loop", "operand": "devices.fix.operand", "made": "devices.fix.made",
             "batch": "devices.fix.module", "kept": "devices.fix.kept"}


@rule(KIND, raises=(RuntimeError, ValueError), parse=parse_device_error, matches=(
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (torch < 2.8)",
    "Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors on "
    "cuda:0 (torch >= 2.8)",
    "Tensor on device meta is not on the expected device cpu!",
    "addmm: expected 'mat2' to be a CPU tensor, but got a CUDA tensor",
    "Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu",
), fix="layers kept in a plain list / tuple / dict on a module (the model moved, they did not) held in "
        "`nn.ModuleList(...)` / `nn.ModuleDict(...)` where `__init__` assigns them; else move the odd one out: `.to(device)` when the cell has a device variable, else `.to(<other>.device)`; "
        "`device=` on a tensor created in the cell")
def device_mismatch(ctx: RuleContext, err: DeviceError) -> Optional[Diagnosis]:
    """Tensors on different devices met in one op (model on the GPU, inputs on the CPU)."""
    event = failed_op(ctx)
    op = (event.name if event is not None else None) or err.method
    operands = [t for t in (s.ref() for s in event.targets if s.ref is not None) if isinstance(t, torch.Tensor)] \
        if event is not None else []
    stray = unregistered(ctx, operands)
    if stray is not None:
        return _unregistered_card(ctx, operands, stray)
    found = chained(ctx, err, op)
    if found is not NOT_CHAINED:
        return found
    parties = parties_of(ctx, event)
    target = target_device(ctx, parties, err)
    lineno = event.lineno if event is not None and event.lineno else ctx.record.error_lineno
    plan = find_moves(ctx, target, lineno, parties) if target.device and not err.grad else None
    return mark_born(_diagnosis(ctx, err, op, lineno, parties, target, plan), _odd_born(ctx, target), ctx)


def _unregistered_card(ctx: RuleContext, operands: List[torch.Tensor], stray: Unregistered) -> Diagnosis:
    """Layers kept in a plain list / tuple / dict: the model moved, they did not (culprit_unregistered.py)."""
    lineno = ctx.record.error_lineno
    devices = list(dict.fromkeys(str(t.device) for t in operands))
    fields = dict(owner=stray.owner, attribute=stray.attribute, container=stray.container, lineno=lineno or "?",
                  assigned=stray.lineno, devices=catalog.listing(devices, ctx.language))
    at = stray.at
    d = at.diagnosis(
        KIND, ERROR, title=at.say("devices.unregistered.title", **fields),
        summary=at.say("devices.unregistered.summary", **fields), what=ctx.say("devices.unregistered.what", **fields),
        why=at.say("devices.unregistered.why", **fields), where=at.where(stray.lineno), lines=[stray.lineno],
        fix=stray.fix)
    return with_lines(d, ctx, [lineno])


def _odd_born(ctx: RuleContext, target: Target) -> Any:
    """Where the failing op's tensor on the odd device got there (traced.py): the factory without `device=`,
    the `.cpu()`, the earlier cell that made it."""
    meant = target.device
    return odd_born(ctx, lambda t: not same_device(str(t.device), meant)) if meant else None


NOT_CHAINED = object()  # the chain found no fix: the card of the view alone


def chained(ctx: RuleContext, err: DeviceError, op: Optional[str]) -> Any:
    """The card when the odd tensors were followed, from the frame where the op failed, to where they were
    made (a method, a helper, a class's `__init__`, the cell that built a loss or a batch): its lines and
    fixed copies in each cell. None when another view answers (the fix is in the running cell: that view
    says it); NOT_CHAINED when no fix was found that way."""
    chain = Chain(ctx, op)
    if err.grad or not chain.frames:
        return NOT_CHAINED
    inner = chain.innermost()
    parties = parties_of(inner, failed_op(inner))
    target = target_device(inner, parties, err)
    if target.device is None:
        return NOT_CHAINED
    plan = chain.plan(parties, target)
    moves = plan.moves
    steps = [m for m in moves if m.how in STEP_KEYS]
    if not steps or plan.failure is not None and not moves:
        return NOT_CHAINED
    running = chain.outer.filename
    primary = steps[0].file
    if primary == running and ctx.elsewhere:
        return None
    said = [_words(chain.said_in(m.file), STEP_KEYS[m.how], m, target) for m in steps]
    description = ctx.say("devices.step_sep").join(said)
    fix = cells_fix(chain.texts(), moves, running, chain.cells(), description[:1].upper() + description[1:])
    if fix is None:
        return NOT_CHAINED
    odd, rest = _sides(parties, target, err)
    sides = dict(odd=_labels(ctx, odd), odd_device=_devices_text(ctx, [p.device for p in odd]),
                 rest=_labels(ctx, rest), device=_devices_text(ctx, [p.device for p in rest] or [target.device]))
    op_text = f"`{op}`" if op else ctx.say("devices.an_op")
    lineno = inner.record.error_lineno
    what = [inner.say("devices.what", op=op_text, lineno=lineno or "?", listing=_listing(inner, parties, err)),
            inner.say("devices.what_arg", arg=err.arg, odd=err.odd) if err.arg and err.odd else ""]
    why = [inner.say("devices.why.rule"), _why_target(inner, target, sides)] + list(dict.fromkeys(
        _words(chain.said_in(m.file), ORIGIN_KEYS[m.how], m, target) for m in moves if m.how in ORIGIN_KEYS))
    marked = [(inner.record.filename, lineno)] + [(m.file, m.lineno) for m in steps]
    home = chain.said_in(primary)
    d = home.diagnosis(
        KIND, ERROR, title=catalog.tidy(ctx.say("devices.title", op=op_text, **sides), ctx.language),
        summary=catalog.tidy(ctx.say("devices.summary", **sides), ctx.language),
        what=catalog.tidy(catalog.sentences(what, ctx.language), ctx.language),
        why=catalog.tidy(catalog.sentences(why, ctx.language), ctx.language), where="",
        lines=sorted({n for f, n in marked if f == primary and n}), names=[p.name for p in parties if p.name],
        tensors=_facts(parties))
    d = _placed(chain, d, [(f, n) for f, n in marked if f != primary and n], fix, _where(inner, chain))
    return mark_born(d, _odd_born(ctx, target), ctx)


def _placed(chain: Chain, d: Diagnosis, marks: Sequence[Tuple[str, int]], fix: Fix, where: str) -> Diagnosis:
    """`d` (said from one cell) with the lines of the other cells marked, the fix and where the op failed."""
    for filename in dict.fromkeys(f for f, _ in marks):
        d = with_lines(d, chain.said_in(filename), [n for f, n in marks if f == filename])
    return dataclasses.replace(d, fix=fix, where=where)


def _where(inner: RuleContext, chain: Chain) -> str:
    """Where the op failed: `In [3], line 17, in Net.forward (called from line 4 of this cell)`."""
    lineno = inner.record.error_lineno
    if not inner.elsewhere:
        return inner.where(lineno)
    return catalog.message("where.via", inner.language, where=inner.where(lineno),
                           lineno=chain.outer.error_lineno)


def _diagnosis(ctx: RuleContext, err: DeviceError, op: Optional[str], lineno: Optional[int],
               parties: Sequence[Party], target: Target, plan: Optional[Plan]) -> Diagnosis:
    odd, rest = _sides(parties, target, err)
    odd_device = _devices_text(ctx, [p.device for p in odd] or list(err.devices[1:2]))
    device = _devices_text(ctx, [p.device for p in rest] or list(err.devices[:1]))
    sides = dict(odd=_labels(ctx, odd), odd_device=odd_device, rest=_labels(ctx, rest), device=device)
    op_text = f"`{op}`" if op else ctx.say("devices.an_op")
    fix = _fix(ctx, plan, target) if plan is not None else None
    # NB: a tensor placed on purpose makes the side that is meant unclear -- unless a fix was found anyway
    unclear = target.device is None or err.grad or plan is not None and fix is None and plan.unclear
    why = _why(ctx, err, parties, target, plan, fix is not None, unclear, sides)
    summary = "devices.summary_unclear" if unclear else "devices.summary"
    lines = [lineno] + ([m.lineno for m in plan.moves if m.how in STEP_KEYS] if fix is not None else [])
    what = [ctx.say("devices.what", op=op_text, lineno=lineno or "?", listing=_listing(ctx, parties, err)),
            ctx.say("devices.what_arg", arg=err.arg, odd=err.odd) if err.arg and err.odd else ""]
    return ctx.diagnosis(
        KIND, ERROR, title=catalog.tidy(ctx.say("devices.title", op=op_text, **sides), ctx.language),
        summary=catalog.tidy(ctx.say(summary, **sides), ctx.language),
        what=catalog.tidy(catalog.sentences(what, ctx.language), ctx.language),
        why=catalog.tidy(catalog.sentences(why, ctx.language), ctx.language), where=ctx.where(lineno),
        lines=sorted({n for n in lines if n}), names=[p.name for p in parties if p.name], tensors=_facts(parties),
        fix=fix)


def _why(ctx: RuleContext, err: DeviceError, parties: Sequence[Party], target: Target, plan: Optional[Plan],
         fixed: bool, unclear: bool, sides: Dict[str, str]) -> List[str]:
    """The rule, then which device is meant and where each odd tensor came from -- or why which side is
    meant is not clear, or why there is no fix."""
    if err.grad:
        return [ctx.say("devices.why.grad")]
    why = [ctx.say("devices.why.rule")]
    if unclear and plan is not None:
        return why + [_no_move(ctx, plan.failure)]
    if target.device is None:
        devices = _devices_text(ctx, [p.device for p in parties] or list(err.devices))
        return why + [ctx.say("devices.why.unclear", devices=devices)]
    why.append(_why_target(ctx, target, sides))
    if plan is None:
        return why
    return why + ([_origin(ctx, m, target) for m in plan.moves] if fixed else [_no_move(ctx, plan.failure)])


def _sides(parties: Sequence[Party], target: Target, err: DeviceError) -> Tuple[List[Party], List[Party]]:
    if target.device is not None:
        odd = [p for p in parties if not same_device(p.device, target.device)]
        return odd, [p for p in parties if same_device(p.device, target.device)]
    first = parties[0].device if parties else (err.devices[:1] or ("",))[0]
    return [p for p in parties if p.device != first], [p for p in parties if p.device == first]


def _label(ctx: RuleContext, p: Party) -> str:
    """`x`, `model`'s parameters, or an intermediate result (a tensor without a name)."""
    if p.module and not (p.name and isinstance(p.obj, torch.Tensor) and not isinstance(p.obj, torch.nn.Parameter)):
        return ctx.say("devices.parameters", module=f"`{p.module}`")
    return f"`{p.name}`" if p.name else ctx.say("devices.unnamed")


def _labels(ctx: RuleContext, parties: Sequence[Party]) -> str:
    """Each tensor (or module) once, the first four."""
    labels: List[str] = []
    for p in parties:
        label = _label(ctx, p)
        if label not in labels and (p.name or all(q.name is None for q in parties)):
            labels.append(label)
    if not labels:
        return ctx.say("devices.another")
    return catalog.listing(labels, ctx.language, most=4)


def _devices_text(ctx: RuleContext, devices: Sequence[str]) -> str:
    return catalog.listing(dict.fromkeys(devices), ctx.language) or "?"


def _names_text(ctx: RuleContext, names: Sequence[str]) -> str:
    return catalog.listing((f"`{n}`" for n in names), ctx.language)


def _listing(ctx: RuleContext, parties: Sequence[Party], err: DeviceError) -> str:
    if not parties:
        return ctx.say("devices.what_devices", devices=_devices_text(ctx, err.devices))
    items: List[str] = []
    for p in parties:
        item = ctx.say("devices.on", name=_label(ctx, p), device=p.device)
        if item not in items:
            items.append(item)
    return ctx.say("devices.list_sep").join(items[:8]) + ("…" if len(items) > 8 else "")


def _why_target(ctx: RuleContext, target: Target, sides: Dict[str, str]) -> str:
    if target.reason == "variable":
        return ctx.say("devices.why.variable", variable=target.variable, device=target.device)
    if target.reason == "module":
        return ctx.say("devices.why.module", module=f"`{target.module}`", device=target.device)
    return ctx.say("devices.why.placed", **sides)


def _words(ctx: RuleContext, key: str, move: Move, target: Target) -> str:
    names = _names_text(ctx, move.names)
    return ctx.say(key, name=names, names=names, lineno=move.lineno, odd_device=move.odd_device, expr=move.expr,
                   device=target.device, code=_clip(move.code), iterable=_clip(move.code), source=f"`{move.code}`")


def _origin(ctx: RuleContext, move: Move, target: Target) -> str:
    """Where the odd tensor came from: the why-sentence of one move."""
    return _words(ctx, ORIGIN_KEYS[move.how], move, target)


def _no_move(ctx: RuleContext, failure: Optional[NoMove]) -> str:
    """Why there is no fix ("" when nothing says why)."""
    if failure is None:
        return ""
    module = f"`{failure.names[0]}`" if failure.names else ""
    return ctx.say(f"devices.why.{failure.reason}", name=_names_text(ctx, failure.names), module=module,
                   odd_device=failure.odd_device, lineno=failure.lineno)


def _fix(ctx: RuleContext, plan: Plan, target: Target) -> Optional[Fix]:
    steps = [_words(ctx, STEP_KEYS[m.how], m, target) for m in plan.moves if m.how in STEP_KEYS]
    description = ctx.say("devices.step_sep").join(steps)
    return moves_fix(ctx.record.source, plan.moves, description[:1].upper() + description[1:])


def _facts(parties: Sequence[Party]) -> List[TensorFact]:
    facts: List[TensorFact] = []
    for p in parties:
        if not p.name or any(f.name == p.name for f in facts):
            continue
        if p.obj is not None:
            facts.append(tensor_fact(p.name, p.obj))
        else:
            facts.append(TensorFact(name=p.name, shape=shape_text(p.shape), dtype=p.dtype, device=p.device))
    return facts[:8]


def _clip(code: str, limit: int = 60) -> str:
    """A line of code as a sentence quotes it: at most `limit` characters."""
    return code if len(code) <= limit else code[:limit - 1] + "…"
