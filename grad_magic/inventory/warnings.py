"""`%grad_device`'s warnings: what the walk found that will fail or waste memory, said in one sentence each
(catalog keys `inventory.warn.*`, in the report's language).

May touch: the walk's findings (rows, paths, device names, byte counts) -- strings and numbers, no tensor.
"""
from __future__ import annotations

import re
from typing import Dict, List, Tuple

from .. import catalog
from ..units import human_bytes
from .report import ROLE_GRAD, DeviceWarning, Found

MAX_COLLIDE_WARNINGS = 10  # will-collide warnings named one by one; the rest are summed up in one

Models = List[Tuple[str, Dict[str, List[str]]]]  # (a model's path, device -> the paths of its tensors there)


def module_spans(models: Models, language: str) -> List[DeviceWarning]:
    out = []
    for path, devices in models:
        if len(devices) > 1:
            parts = [catalog.message("inventory.warn.module_part", language, device=dev, count=len(paths),
                                     example=paths[0])
                     for dev, paths in sorted(devices.items(), key=lambda kv: -len(kv[1]))]
            out.append(DeviceWarning("module-spans-devices", catalog.message(
                "inventory.warn.module_spans", language, path=path, count=len(devices),
                parts=catalog.message("list.comma", language).join(parts))))
    return out


def state_off(found: Dict[Tuple[str, str, str], List[str]], language: str) -> List[DeviceWarning]:
    """Optimizer state on another device than its parameter: (optimizer, state's device, parameter's
    device) -> the state's paths."""
    out = []
    for (optimizer, here, there), paths in found.items():
        state = f"`{paths[0]}`"
        if len(paths) > 1:
            state = catalog.message("inventory.and_more", language, first=state, count=len(paths) - 1)
        # NB: tidy: `{state} 在` loses its space when state ends in Chinese ("... 等另外 1 个在 meta 上")
        out.append(DeviceWarning("optimizer-state-device", catalog.tidy(catalog.message(
            "inventory.warn.state_device", language, state=state, here=here, there=there, optimizer=optimizer),
            language)))
    return out


def will_collide(models: Models, rows: List[Found], owned: set, language: str) -> List[DeviceWarning]:
    """Loose tensors on another device than the model(s) -- only when every model sits on one device."""
    homes = {dev for _, devices in models for dev in devices}
    if len(homes) != 1 or any(len(devices) > 1 for _, devices in models):
        return []
    home = homes.pop()
    names = catalog.listing((f"`{path}`" for path, _ in models), language)
    # NB: a 0-dim CPU tensor mixes with tensors on any device, so it never collides.
    loose = [row for row, tid, _, _ in rows if tid not in owned and row.role != ROLE_GRAD
             and row.device != home and not (row.device == "cpu" and row.shape == ())]
    out = [DeviceWarning("will-collide", catalog.message("inventory.warn.will_collide", language, path=row.path,
                                                         device=row.device, models=names, home=home))
           for row in loose[:MAX_COLLIDE_WARNINGS]]
    if len(loose) > MAX_COLLIDE_WARNINGS:
        out.append(DeviceWarning("will-collide", catalog.message(
            "inventory.warn.will_collide_more", language, count=f"{len(loose) - MAX_COLLIDE_WARNINGS:,}",
            home=home)))
    return out


def kept_by_history(history_only: List[Found], scarce: Tuple[str, ...], language: str) -> List[DeviceWarning]:
    """Tensors that only IPython's output history (`Out`, `_N`) still refers to, on a scarce device
    (`scarce`: device types, build.py's `KEPT_BY_HISTORY_DEVICES`, read when the report is built)."""
    kept = [f for f in history_only if f[0].device.split(":")[0] in scarce]
    if not kept:
        return []
    comma = catalog.message("list.comma", language)
    roots = list(dict.fromkeys(re.match(r"[^.\[]*(\[\d+\])?", row.path).group(0) for row, *_ in kept))
    names = comma.join(f"`{root}`" for root in roots[:5]) + (" …" if len(roots) > 5 else "")
    size = human_bytes(sum(dict((key, nbytes) for _, _, key, nbytes in kept).values()))
    key = "inventory.warn.kept_one" if len(roots) == 1 else "inventory.warn.kept_many"
    return [DeviceWarning("kept-by-output-history", catalog.message(
        key, language, names=names, count=len(kept), size=size,
        devices=comma.join(sorted({f[0].device for f in kept}))))]
