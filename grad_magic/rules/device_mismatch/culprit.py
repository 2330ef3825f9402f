"""The culprit seam of `device-mismatch`, part one: who met in the failing op, by the user's names for them,
and which device is meant -- the cell's `device` variable, the device of the module they belong to, or the
one accelerator in play. (Part two, where each odd tensor came from: culprit_origins.py.)

May touch: the recorded op's tensor arguments, the NameIndex, and tensor and module metadata (device, shape,
dtype) only, never data. No wording.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import torch

from ...record import OpEvent
from ..context import RuleContext, dotted_names
from ..kit import device_variables
from .culprit_paths import path_to, root_of
from .message import DeviceError


@dataclass(frozen=True)
class Party:
    """One tensor argument of the failing op."""

    name: Optional[str]  # the user's name for it, shortest first
    device: str
    obj: Optional[torch.Tensor] = field(compare=False, repr=False)
    module: Optional[str] = None  # `model.fc` when it is a parameter or buffer of a named module
    shape: Tuple[int, ...] = ()
    dtype: str = ""


def parties_of(ctx: RuleContext, event: Optional[OpEvent]) -> List[Party]:
    ctx.names.objects()  # NB: the device rule reads every name later (device_variable): index now, not scan per party
    found: Dict[int, Party] = {}
    for t in event.targets if event is not None else ():
        if t.ident not in found:
            obj = t.ref() if t.ref is not None else None
            found[t.ident] = _party(ctx, obj if isinstance(obj, torch.Tensor) else None, t.device, t.shape, t.dtype)
    if found:
        return list(found.values())
    # NB: nothing recorded (tracking off): the tensors and modules named on the line
    for dotted in dotted_names(ctx.record.source_line(ctx.record.error_lineno)):
        obj = ctx.names.lookup(dotted)
        tensors = [obj] if isinstance(obj, torch.Tensor) else list(obj.parameters()) \
            if isinstance(obj, torch.nn.Module) else []
        for t in tensors[:16]:
            if id(t) not in found:
                found[id(t)] = _party(ctx, t, str(t.device), tuple(t.shape), str(t.dtype).replace("torch.", ""))
    return list(found.values())


def _party(ctx: RuleContext, obj: Optional[torch.Tensor], device: str, shape: tuple, dtype: str) -> Party:
    # NB: the frame's own names first (`self.fc.weight`, not the namespace's `net.fc.weight`), shortest first
    own = ctx.record.error_locals if ctx.record.error_locals is not ctx.namespace else None
    names = sorted(ctx.names.names_for(obj), key=lambda n: (own is not None and n.split(".")[0] not in own,
                                                             len(n))) if obj is not None else []
    if not names and obj is not None and ctx.record.error_locals is not None:
        # NB: `self.pe`, `state[1]`, `inputs["mask"]`: by its path from the frame's own variables
        line = ctx.record.source_line(ctx.record.error_lineno)
        path = path_to(ctx.record.error_locals, obj, [root_of(n) for n in dotted_names(line)])
        if path is not None:
            return Party(path, device, obj, None, tuple(shape), dtype)
    module = next((n.rsplit(".", 1)[0] for n in names if "." in n
                   and isinstance(ctx.names.lookup(n.rsplit(".", 1)[0]), torch.nn.Module)), None)
    return Party(names[0] if names else None, device, obj, module, tuple(shape), dtype)


@dataclass(frozen=True)
class Target:
    device: Optional[str]  # None: not clear
    reason: str  # "variable", "module", "placed", "unclear"
    variable: Optional[str] = None  # the cell's `device`
    module: Optional[str] = None


def same_device(a: str, b: str) -> bool:
    """`cuda` (the current device) matches `cuda:0`; otherwise type and index must agree."""
    try:
        da, db = torch.device(a), torch.device(b)
    except (RuntimeError, TypeError):
        return a == b
    return da.type == db.type and (da.index is None or db.index is None or da.index == db.index)


def device_variable(ctx: RuleContext, devices: Sequence[str]) -> Optional[Tuple[str, str]]:
    """(name, device) of a variable like `device = torch.device("cuda")` naming one of `devices`."""
    found = []
    for name, value in device_variables(ctx):
        text = str(value) if isinstance(value, torch.device) else value if isinstance(value, str) else None
        match = next((d for d in devices if text and same_device(text, d)), None) if text else None
        if match is not None:
            found.append((name not in ("device", "dev"), len(name), name, match))
    return min(found)[2:] if found else None


def target_device(ctx: RuleContext, parties: Sequence[Party], err: DeviceError) -> Target:
    devices = list(dict.fromkeys(p.device for p in parties))
    if len(devices) < 2:
        devices = list(dict.fromkeys(err.devices))
    var = device_variable(ctx, devices)
    if var is not None:
        return Target(var[1], "variable", variable=var[0])
    modules = {p.module: p.device for p in parties if p.module}
    if modules and len(set(modules.values())) == 1:
        return Target(next(iter(modules.values())), "module", module=_common_prefix(list(modules)))
    accelerators = [d for d in devices if not d.startswith("cpu")]
    if len(devices) == 2 and len(accelerators) == 1 and not modules:
        return Target(accelerators[0], "placed")
    return Target(None, "unclear")


def _common_prefix(paths: List[str]) -> str:
    """`model.0`, `model.2` -> `model`: the module that holds them all."""
    parts = [p.split(".") for p in paths]
    common = []
    for level in zip(*parts):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return ".".join(common) or min(paths, key=len)
