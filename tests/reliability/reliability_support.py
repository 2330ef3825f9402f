"""What the reliability tests share: a snapshot of every piece of global state a cell run may touch.

`snapshot(shell)` is compared before and after a cell: torch's modes and flags, optimizer hooks, warnings,
hooks of `sys`, the shell's own methods, and the identity of every attribute of the torch namespaces and
classes the tool works with (a monkeypatch left behind shows up as a changed object).
"""
from __future__ import annotations

import builtins
import signal
import sys
import warnings
from typing import Any, Dict, List

import torch
import torch.fx.traceback
import torch.optim.optimizer as optimizer_module
from torch.overrides import _get_current_function_mode_stack

from grad_magic import lighttrack

# NB: namespaces whose attributes must be the same objects after a cell as before it.
PATCHABLE = {
    "torch": torch, "torch.Tensor": torch.Tensor, "torch._C.TensorBase": torch._C.TensorBase,
    "torch.nn.functional": torch.nn.functional, "torch.autograd": torch.autograd,
    "torch.autograd.graph": torch.autograd.graph, "torch.nn.Module": torch.nn.Module,
    "torch.nn.Linear": torch.nn.Linear, "torch.optim.Optimizer": torch.optim.Optimizer,
    "torch.optim.SGD": torch.optim.SGD, "torch.overrides": torch.overrides, "warnings": warnings,
    "builtins": builtins, "torch.fx.traceback": torch.fx.traceback, "torch._C._nn": torch._C._nn, "torch._VF": torch._VF,
}
_VOLATILE = {"builtins": {"_"}}  # IPython's displayhook sets builtins._ to the last result


def warm_up() -> None:
    """What torch does once per process, done before any snapshot: patch an optimizer class's `step`,
    import sympy on the first meta-device op (which adds a warning filter)."""
    p = torch.nn.Parameter(torch.zeros(1))
    for cls in (torch.optim.SGD, torch.optim.Adam):
        cls([p], lr=0.1).step()
    try:
        torch.cat([torch.zeros(2), torch.zeros(3, device="meta")])
    except RuntimeError:
        pass


def attributes() -> Dict[str, Dict[str, Any]]:
    return {name: {k: v for k, v in vars(ns).items() if k not in _VOLATILE.get(name, ())}
            for name, ns in PATCHABLE.items()}


def changed_attributes(before: Dict[str, Dict[str, Any]], after: Dict[str, Dict[str, Any]]) -> List[str]:
    """Attributes replaced or removed (a new attribute is a lazy import, not a patch left behind)."""
    return [f"{ns}.{key}" for ns, items in before.items() for key, value in items.items()
            if after[ns].get(key, _MISSING) is not value]


_MISSING = object()


def snapshot(shell: Any = None) -> Dict[str, Any]:
    state = {
        "anomaly": torch.is_anomaly_enabled(),
        "check_nan": torch.is_anomaly_check_nan_enabled(),
        "grad_enabled": torch.is_grad_enabled(),
        # NB: the modes' classes, bottom first: a mode left on says whose it is
        "function_modes": tuple(f"{type(m).__module__}.{type(m).__qualname__}"
                                for m in _get_current_function_mode_stack()),
        "dispatch_modes": torch._C._len_torch_dispatch_stack(),
        "optimizer_pre_hooks": dict(optimizer_module._global_optimizer_pre_hooks),
        "optimizer_post_hooks": dict(optimizer_module._global_optimizer_post_hooks),
        "warning_filters": list(warnings.filters),
        "showwarning": warnings.showwarning,
        "excepthook": sys.excepthook,
        "displayhook": sys.displayhook,
        "stdout": sys.stdout,
        "stderr": sys.stderr,
        "trace": sys.gettrace(),
        "profile": sys.getprofile(),
        "sigint": signal.getsignal(signal.SIGINT),
        "light_patches": lighttrack.leftovers(),  # NB: a wrapper left where torch had none is a new attribute
    }
    if shell is not None:
        own = vars(shell)
        state.update({
            # NB: an instance attribute would shadow the method: a patch on this shell
            "showtraceback_patched": "showtraceback" in own or "showsyntaxerror" in own,
            "showtraceback": type(shell).showtraceback,
            "display_pub": shell.display_pub,
            "displayhook_obj": shell.displayhook,
            "display_formatter_patched": "format" in vars(shell.display_formatter),
        })
    return state


def differences(before: Dict[str, Any], after: Dict[str, Any]) -> Dict[str, Any]:
    return {k: (before[k], after.get(k)) for k in before if after.get(k, _MISSING) != before[k]}


def clear_last_error(shell: Any) -> None:
    """Let go of what IPython keeps of the last error: `sys.last_*` and its traceback formatter's `tb`
    (through them, the frames of the failing cell and of torch, with their tensors)."""
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            delattr(sys, name)
    for formatter in (shell.InteractiveTB, shell.SyntaxTB):
        vars(formatter).pop("tb", None)


def live_tensors() -> int:
    import gc

    return sum(1 for o in gc.get_objects() if issubclass(type(o), torch.Tensor))  # NB: no __class__ read


def live_objects_of(package: str) -> Dict[str, int]:
    """Live instances of classes defined in `package`, by class name."""
    import gc

    counts: Dict[str, int] = {}
    for o in gc.get_objects():
        module = type(o).__dict__.get("__module__", "")
        if isinstance(module, str) and (module == package or module.startswith(package + ".")):
            name = type(o).__qualname__
            counts[name] = counts.get(name, 0) + 1
    return counts
