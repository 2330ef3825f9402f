"""Facts about live objects as strings: shape, dtype, device, requires_grad, version.

Metadata only -- nothing here reads tensor data or synchronises a device.
"""
from __future__ import annotations

from typing import Any, Optional

import torch

from .model import TensorFact


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def shape_text(shape: Any) -> str:
    return "(" + ", ".join(str(int(n)) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def tensor_fact(name: str, t: torch.Tensor) -> TensorFact:
    return TensorFact(
        name=name, kind="parameter" if isinstance(t, torch.nn.Parameter) else "tensor",
        shape=shape_text(t.shape), dtype=dtype_name(t.dtype), device=str(t.device),
        requires_grad=t.requires_grad, is_leaf=t.is_leaf,
        grad_fn=type(t.grad_fn).__name__ if t.grad_fn is not None else None, version=None if t.is_inference() else t._version)


def module_fact(name: str, m: torch.nn.Module) -> TensorFact:
    devices = sorted({str(p.device) for p in m.parameters()} | {str(b.device) for b in m.buffers()})
    dtypes = sorted({dtype_name(p.dtype) for p in m.parameters()})
    grads = {p.requires_grad for p in m.parameters()}
    return TensorFact(name=name, kind="module", shape=type(m).__name__, dtype=", ".join(dtypes),
                      device=", ".join(devices), requires_grad=(True in grads) if grads else None)


def fact_for(name: str, obj: Any) -> Optional[TensorFact]:
    if isinstance(obj, torch.Tensor):
        return tensor_fact(name, obj)
    if isinstance(obj, torch.nn.Module):
        return module_fact(name, obj)
    return None
