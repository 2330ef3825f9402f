"""`%grad_device`'s data model: the options of one walk and the report it makes -- strings and numbers only.

May touch: torch only to check a device name in `DeviceOptions`, the catalog for why an option is refused. A report holds no live tensor, so keeping
it (in `Out`, say) keeps no memory alive. Its sentences (warnings, why an object was skipped) are written
when it is built, in its `language`; it knows no renderer: `grad_magic.render.inventory` shows it, and the
magic (`device_magic.py`) hands out a report that displays itself through that renderer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

import torch

from .. import catalog

SORTS = ("size", "name", "device")

ROLE_TENSOR, ROLE_PARAMETER, ROLE_BUFFER, ROLE_GRAD, ROLE_STATE = (
    "tensor", "parameter", "buffer", "grad", "optimizer state")


@dataclass(frozen=True)
class DeviceOptions:
    device: Optional[str] = None  # "cuda" matches every cuda:N; "cuda:0" only that one
    include_private: bool = False  # `_names` and IPython's output history too (`%grad_device --all`)
    depth: int = 6  # containers opened below a namespace name
    sort: str = "size"  # "size" (largest first), "name" or "device"
    max_tensors: int = 200_000
    time_limit: float = 3.0  # seconds; then the walk stops and the report names what it did not walk

    def __post_init__(self) -> None:
        if self.sort not in SORTS:
            raise OptionError("inventory.usage.sort", sort=self.sort, sorts=", ".join(SORTS))
        if self.depth < 0 or self.max_tensors < 1 or not self.time_limit > 0:
            raise OptionError("inventory.usage.bounds")
        if self.device is not None:
            try:
                torch.device(self.device)
            except RuntimeError:  # a typo such as "gpu": say so now, not "no tensors found" later
                raise OptionError("inventory.usage.device", device=self.device) from None


class OptionError(ValueError):
    """An option `DeviceOptions` refuses: the catalog's `key` says why (in English as the error's text; the
    magic says it in the chosen language)."""

    def __init__(self, key: str, **params: object) -> None:
        super().__init__(catalog.message(key, "en", **params))
        self.key, self.params = key, params


@dataclass(frozen=True, init=False)
class TensorRow:
    path: str  # how to reach it from the namespace: `batch['x']`, `model.fc.weight.grad`
    role: str  # tensor, parameter, buffer, grad, optimizer state
    shape: Tuple[int, ...]
    dtype: str  # "float32"
    device: str  # "cpu", "cuda:0", "meta"
    requires_grad: bool
    is_leaf: bool
    grad_fn: Optional[str]
    nbytes: int  # numel * element size: what this view shows, not its storage; 0 on `meta` (no memory)

    def __init__(self, path: str, role: str, shape: Tuple[int, ...], dtype: str, device: str,
                 requires_grad: bool, is_leaf: bool, grad_fn: Optional[str], nbytes: int) -> None:
        # NB: one dict update, not the nine frozen setattrs dataclass writes: a third of the walk's time
        # at 10k tensors. Still frozen: assigning a field afterwards raises FrozenInstanceError.
        self.__dict__.update(path=path, role=role, shape=shape, dtype=dtype, device=device,
                             requires_grad=requires_grad, is_leaf=is_leaf, grad_fn=grad_fn, nbytes=nbytes)


@dataclass(frozen=True)
class DeviceTotal:
    count: int  # tensors (rows) on the device
    bytes: int  # each storage counted once, however many views share it


@dataclass(frozen=True)
class DeviceWarning:
    kind: str  # stable slug: module-spans-devices, optimizer-state-device, will-collide, ...
    message: str  # one sentence in the report's language; `names` in backticks


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str  # in the report's language


@dataclass(frozen=True, repr=False)
class DeviceReport:
    rows: Tuple[TensorRow, ...]
    totals: Dict[str, DeviceTotal]  # device -> total, largest first
    warnings: Tuple[DeviceWarning, ...]
    skipped: Tuple[Skipped, ...]
    options: DeviceOptions = field(default_factory=DeviceOptions)
    language: str = "en"  # of the warnings and reasons; the renderer writes its labels in it too

    def __repr__(self) -> str:
        # NB: a few numbers, not the dataclass's repr of every row (a namespace may hold 100k tensors)
        return (f"{type(self).__name__}(rows={len(self.rows)}, devices={list(self.totals)}, "
                f"warnings={len(self.warnings)}, skipped={len(self.skipped)})")


Found = Tuple[TensorRow, int, Any, int]  # (row, id of the tensor, storage key, storage bytes)
