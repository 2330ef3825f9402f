"""The card seam of `device-mismatch`: the rule and its card (catalog keys `devices.*`). Tensors that meet in
one op live on different devices (model on the GPU, inputs on the CPU).

May touch: the RuleContext (record, names, catalog); tensor metadata for the card's facts, never data.
Wording only through catalog keys.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ... import catalog
from ...facts import shape_text, tensor_fact
from ...model import ERROR, Diagnosis, Fix, TensorFact
from ..context import RuleContext
from ..kit import failed_op
from ..registry import rule
from .culprit import Party, Target, parties_of, same_device, target_device
from .culprit_origins import Move, NoMove, Plan, find_moves
from .fix import moves_fix
from .message import DeviceError, parse_device_error

KIND = "device-mismatch"
# what each kind of move says: where the tensor came from (why) and the step of the fix
ORIGIN_KEYS = {"factory": "devices.why.created", "loop": "devices.why.loop", "use": "devices.why.use",
               "earlier": "devices.why.earlier", "module": "devices.why.module_made", "taken": "devices.why.taken"}
STEP_KEYS = {"factory": "devices.fix.factory", "loop": "devices.fix.loop", "use": "devices.fix.use",
             "earlier": "devices.fix.use", "module": "devices.fix.module"}


@rule(KIND, raises=(RuntimeError, ValueError), parse=parse_device_error, matches=(
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (torch < 2.8)",
    "Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors on "
    "cuda:0 (torch >= 2.8)",
    "Tensor on device meta is not on the expected device cpu!",
    "addmm: expected 'mat2' to be a CPU tensor, but got a CUDA tensor",
    "Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu",
), fix="move the odd one out: `.to(device)` when the cell has a device variable, else `.to(<other>.device)`; "
        "`device=` on a tensor created in the cell")
def device_mismatch(ctx: RuleContext, err: DeviceError) -> Optional[Diagnosis]:
    """Tensors on different devices met in one op (model on the GPU, inputs on the CPU)."""
    event = failed_op(ctx)
    parties = parties_of(ctx, event)
    target = target_device(ctx, parties, err)
    lineno = event.lineno if event is not None and event.lineno else ctx.record.error_lineno
    op = (event.name if event is not None else None) or err.method
    plan = find_moves(ctx, target, lineno, parties) if target.device and not err.grad else None
    return _diagnosis(ctx, err, op, lineno, parties, target, plan)


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
    if p.module:
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
