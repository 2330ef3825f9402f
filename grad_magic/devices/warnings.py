"""`%grad_device`'s warnings: what the walk found that will fail or waste memory, said in one sentence each.

May touch: the walk's findings (rows, paths, device names, byte counts) -- strings and numbers, no tensor.
"""
from __future__ import annotations

import re
from typing import Dict, List, Tuple

from ..units import human_bytes
from .report import ROLE_GRAD, DeviceWarning, Found

MAX_COLLIDE_WARNINGS = 10  # will-collide warnings named one by one; the rest are summed up in one


def _module_spans(models: List[Tuple[str, Dict[str, List[str]]]]) -> List[DeviceWarning]:
    out = []
    for path, devices in models:
        if len(devices) > 1:
            parts = [f"{dev} ({len(paths)}, e.g. `{paths[0]}`)"
                     for dev, paths in sorted(devices.items(), key=lambda kv: -len(kv[1]))]
            out.append(DeviceWarning("module-spans-devices",
                                     f"`{path}` has parameters and buffers on {len(devices)} devices: "
                                     f"{', '.join(parts)}; move it whole with `{path}.to(device)`"))
    return out


def _state_off(state_off: Dict[Tuple[str, str, str], List[str]]) -> List[DeviceWarning]:
    return [DeviceWarning("optimizer-state-device",
                          f"`{paths[0]}`{f' and {len(paths) - 1} more' if len(paths) > 1 else ''} "
                          f"on {here}, but the parameter is on {there}: `{optimizer}.step()` will fail; "
                          f"move the state to {there}, or load the state dict after moving the model")
            for (optimizer, here, there), paths in state_off.items()]


def _will_collide(models: List[Tuple[str, Dict[str, List[str]]]], rows: List[Found],
                  owned: set) -> List[DeviceWarning]:
    """Loose tensors on another device than the model(s) -- only when every model sits on one device."""
    homes = {dev for _, devices in models for dev in devices}
    if len(homes) != 1 or any(len(devices) > 1 for _, devices in models):
        return []
    home = homes.pop()
    names = " and ".join(f"`{path}`" for path, _ in models)
    # NB: a 0-dim CPU tensor mixes with tensors on any device, so it never collides.
    loose = [row for row, tid, _, _ in rows if tid not in owned and row.role != ROLE_GRAD
             and row.device != home and not (row.device == "cpu" and row.shape == ())]
    out = [DeviceWarning("will-collide", f"`{row.path}` is on {row.device}; it will collide with "
                                         f"{names} on {home}") for row in loose[:MAX_COLLIDE_WARNINGS]]
    if len(loose) > MAX_COLLIDE_WARNINGS:
        out.append(DeviceWarning("will-collide", f"{len(loose) - MAX_COLLIDE_WARNINGS:,} more tensors "
                                                 f"are not on {home} either"))
    return out


def _kept_by_history(history_only: List[Found], scarce: Tuple[str, ...]) -> List[DeviceWarning]:
    """Tensors that only IPython's output history (`Out`, `_N`) still refers to, on a scarce device
    (`scarce`: device types, the package's `KEPT_BY_HISTORY_DEVICES`, read when the report is built)."""
    kept = [f for f in history_only if f[0].device.split(":")[0] in scarce]
    if not kept:
        return []
    roots = list(dict.fromkeys(re.match(r"[^.\[]*(\[\d+\])?", row.path).group(0) for row, *_ in kept))
    names = ", ".join(f"`{root}`" for root in roots[:5]) + (" …" if len(roots) > 5 else "")
    size = human_bytes(sum(dict((key, nbytes) for _, _, key, nbytes in kept).values()))
    return [DeviceWarning("kept-by-output-history",
                          f"{names} keep{'s' if len(roots) == 1 else ''} {len(kept)} tensor(s) "
                          f"({size}) on {', '.join(sorted({f[0].device for f in kept}))} alive that "
                          f"nothing else refers to; `%reset -f out` frees them")]
