"""The `device-mismatch` rule: tensors that meet in one op live on different devices (model on the GPU,
inputs on the CPU), and its card.

May touch: the RuleContext (record, names, catalog); tensor and module metadata (device) only, never data.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from ...facts import shape_text, tensor_fact
from ...edits import make_fix
from ...model import ERROR, Diagnosis, Fix, TensorFact
from ..context import RuleContext
from ..registry import rule
from .fix import Plan, Planner
from .messages import DeviceError, parse_device_error
from .parties import Party, Target, failed_op, parties_of, same_device, target_device

KIND = "device-mismatch"


@rule(KIND, matches=(
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (torch < 2.8)",
    "Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors on "
    "cuda:0 (torch >= 2.8)",
    "Tensor on device meta is not on the expected device cpu!",
    "addmm: expected 'mat2' to be a CPU tensor, but got a CUDA tensor",
    "Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu",
), fix="move the odd one out: `.to(device)` when the cell has a device variable, else `.to(<other>.device)`; "
        "`device=` on a tensor created in the cell")
def device_mismatch(ctx: RuleContext) -> Optional[Diagnosis]:
    """Tensors on different devices met in one op (model on the GPU, inputs on the CPU)."""
    if not isinstance(ctx.exception, (RuntimeError, ValueError)):
        return None
    err = parse_device_error(ctx.error_message)
    if err is None:
        return None
    event = failed_op(ctx)
    parties = parties_of(ctx, event)
    target = target_device(ctx, parties, err)
    lineno = event.lineno if event is not None and event.lineno else ctx.record.error_lineno
    op = (event.name if event is not None else None) or err.method
    plan = Planner(ctx, target, lineno).plan(parties) if target.device and not err.grad else None
    return _diagnosis(ctx, err, op, lineno, parties, target, plan)


def _diagnosis(ctx: RuleContext, err: DeviceError, op: Optional[str], lineno: Optional[int],
               parties: Sequence[Party], target: Target, plan: Optional[Plan]) -> Diagnosis:
    odd, rest = _sides(parties, target, err)
    odd_device = _devices_text(ctx, [p.device for p in odd] or list(err.devices[1:2]))
    device = _devices_text(ctx, [p.device for p in rest] or list(err.devices[:1]))
    sides = dict(odd=_labels(ctx, odd), odd_device=odd_device, rest=_labels(ctx, rest), device=device)
    op_text = f"`{op}`" if op else ctx.say("devices.an_op")
    title = _tidy(ctx, ctx.say("devices.title", op=op_text, **sides))
    fix = _fix(ctx, plan) if plan is not None and plan.edits else None
    why = [ctx.say("devices.why.rule")]
    # NB: a tensor placed on purpose makes the side that is meant unclear -- unless a fix was found anyway
    unclear = target.device is None or err.grad or plan is not None and fix is None and plan.unclear
    if err.grad:
        why = [ctx.say("devices.why.grad")]
    elif unclear and plan is not None:
        why.append(plan.failure)
    elif target.device is None:
        why.append(ctx.say("devices.why.unclear", devices=_devices_text(ctx, [p.device for p in parties]
                                                                          or list(err.devices))))
    else:
        why.append(_why_target(ctx, target, sides))
        if plan is not None:
            why += plan.origins if fix is not None else [plan.failure] if plan.failure else []
    summary = "devices.summary_unclear" if unclear else "devices.summary"
    lines = [lineno] + (plan.lines if fix is not None and plan is not None else [])
    return ctx.diagnosis(
        KIND, ERROR, title=title, summary=_tidy(ctx, ctx.say(summary, **sides)),
        what=_sentences(ctx, [ctx.say("devices.what", op=op_text, lineno=lineno or "?",
                                      listing=_listing(ctx, parties, err)),
                              ctx.say("devices.what_arg", arg=err.arg, odd=err.odd) if err.arg and err.odd else ""]),
        why=_sentences(ctx, why), where=ctx.where(lineno), lines=sorted({n for n in lines if n}),
        names=[p.name for p in parties if p.name], tensors=_facts(parties), fix=fix)


def _sides(parties: Sequence[Party], target: Target, err: DeviceError) -> Tuple[List[Party], List[Party]]:
    if target.device is not None:
        odd = [p for p in parties if not same_device(p.device, target.device)]
        return odd, [p for p in parties if same_device(p.device, target.device)]
    first = parties[0].device if parties else (err.devices[:1] or ("",))[0]
    return [p for p in parties if p.device != first], [p for p in parties if p.device == first]


def _labels(ctx: RuleContext, parties: Sequence[Party]) -> str:
    """`x`, `model`'s parameters, an intermediate result: each tensor (or module) once."""
    labels: List[str] = []
    for p in parties:
        label = ctx.say("devices.parameters", module=f"`{p.module}`") if p.module else p.label(ctx)
        if label not in labels and (p.name or all(q.name is None for q in parties)):
            labels.append(label)
    if not labels:
        return ctx.say("devices.another")
    return ctx.say("devices.and").join(labels[:4]) + ("…" if len(labels) > 4 else "")


def _devices_text(ctx: RuleContext, devices: Sequence[str]) -> str:
    return ctx.say("devices.and").join(dict.fromkeys(devices)) or "?"


def _listing(ctx: RuleContext, parties: Sequence[Party], err: DeviceError) -> str:
    if not parties:
        return ctx.say("devices.what_devices", devices=_devices_text(ctx, err.devices))
    items: List[str] = []
    for p in parties:
        label = ctx.say("devices.parameters", module=f"`{p.module}`") if p.module else p.label(ctx)
        item = ctx.say("devices.on", name=label, device=p.device)
        if item not in items:
            items.append(item)
    return ctx.say("devices.list_sep").join(items[:8]) + ("…" if len(items) > 8 else "")


def _why_target(ctx: RuleContext, target: Target, sides: Dict[str, str]) -> str:
    if target.reason == "variable":
        return ctx.say("devices.why.variable", variable=target.variable, device=target.device)
    if target.reason == "module":
        return ctx.say("devices.why.module", module=f"`{target.module}`", device=target.device)
    return ctx.say("devices.why.placed", **sides)


def _fix(ctx: RuleContext, plan: Plan) -> Optional[Fix]:
    description = ctx.say("devices.step_sep").join(plan.steps)
    return make_fix(ctx.record.source, plan.edits, description[:1].upper() + description[1:])


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


def _sentences(ctx: RuleContext, parts: Sequence[str]) -> str:
    return _tidy(ctx, ("" if ctx.language == "zh" else " ").join(p for p in parts if p))


def _tidy(ctx: RuleContext, text: str) -> str:
    """Chinese puts no space between two Chinese characters (`model` 的参数 在 -> `model` 的参数在)."""
    return re.sub(r"(?<=[\u4e00-\u9fff]) (?=[\u4e00-\u9fff])", "", text) if ctx.language == "zh" else text
