"""Facts about live objects as strings: shape, dtype, device, requires_grad, version.

Metadata only -- nothing here reads tensor data or synchronises a device -- and no user code: objects are
told apart by their type (never `isinstance`, which asks the object for its `__class__`), a module's
parameters are read from its registries (never a `parameters()` a subclass may override), and a tensor's
metadata with torch functions off (never a subclass's `__torch_function__`, never a user's mode).
"""
from __future__ import annotations

from typing import Any, Iterator, Optional

import torch

from .model import TensorFact
from .names import instance_dict, is_module, is_tensor

MAX_MODULES = 10_000  # modules of one model read for its devices and dtypes


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def shape_text(shape: Any) -> str:
    return "(" + ", ".join(str(int(n)) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def tensor_fact(name: str, t: torch.Tensor) -> TensorFact:
    with torch._C.DisableTorchFunction():
        return TensorFact(
            name=name, kind="parameter" if issubclass(type(t), torch.nn.Parameter) else "tensor",
            shape=shape_text(t.shape), dtype=dtype_name(t.dtype), device=str(t.device),
            requires_grad=t.requires_grad, is_leaf=t.is_leaf,
            grad_fn=type(t.grad_fn).__name__ if t.grad_fn is not None else None,
            version=None if t.is_inference() else t._version)


def module_fact(name: str, m: torch.nn.Module) -> TensorFact:
    params = list(_registered(m, "_parameters"))
    tensors = params + list(_registered(m, "_buffers"))
    with torch._C.DisableTorchFunction():
        devices = sorted({str(t.device) for t in tensors})
        dtypes = sorted({dtype_name(p.dtype) for p in params})
        grads = {p.requires_grad for p in params}
    return TensorFact(name=name, kind="module", shape=type(m).__name__, dtype=", ".join(dtypes),
                      device=", ".join(devices), requires_grad=(True in grads) if grads else None)


def _registered(module: Any, registry: str) -> Iterator[torch.Tensor]:
    """The tensors in `registry` (`_parameters`, `_buffers`) of the module and every module under it, each
    once, read from the registries' dicts."""
    seen, tensors, stack = set(), set(), [module]
    while stack and len(seen) < MAX_MODULES:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        own = instance_dict(m) or {}
        for t in list((own.get(registry) or {}).values()):
            if is_tensor(t) and id(t) not in tensors:
                tensors.add(id(t))
                yield t
        stack.extend(reversed([s for s in list((own.get("_modules") or {}).values()) if s is not None]))


def fact_for(name: str, obj: Any) -> Optional[TensorFact]:
    if is_tensor(obj):
        return tensor_fact(name, obj)
    if is_module(obj):
        return module_fact(name, obj)
    return None
