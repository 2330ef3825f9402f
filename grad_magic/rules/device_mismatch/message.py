"""The message seam of `device-mismatch`: torch's text -> `DeviceError` (the devices it names, the argument it
singled out, the kernel).

Reads every wording torch 2.1 ... 2.13 uses, and the older ones still quoted online (and PyTorch Geometric's).
May touch: the message text only -- no torch, no tensor, no cell, no catalog.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

_D = r"[A-Za-z_]+(?::\d+)?"  # a device as torch prints it: cpu, cuda:0, meta, mps:0
# (pattern, whether the second device is that of an argument torch singled out: "second" yes, "arg" when the
# message names the argument, None no: it is just the first device that differed)
_PATTERNS: Tuple[Tuple[re.Pattern, Optional[str]], ...] = (
    # torch >= 2.8, the dispatcher's device check
    (re.compile(rf"Expected all tensors to be on the same device, but got (?P<arg>\w+) is on (?P<second>{_D}), "
                rf"different from other tensors on (?P<first>{_D})(?: \(when checking argument in method "
                r"(?P<method>\w+)\))?"), "second"),
    # torch <= 2.7 (the dispatcher, "arugment" before 1.10, "common device" before 1.9) and every version's
    # TensorIterator and fake tensors (no parenthesis)
    (re.compile(rf"Expected all tensors to be on the same (?:common )?device, but found at least two devices, "
                rf"(?P<first>{_D}) and (?P<second>{_D})!(?: \(when checking ar(?:gu|ug)ment for argument "
                r"(?P<arg>\w+) in method (?P<method>\w+)\))?"), "arg"),
    # decompositions and meta kernels (torch._prims_common.check_same_device)
    (re.compile(rf"Tensor on device (?P<second>{_D}) is not on the expected device (?P<first>{_D})!"), None),
    # RNN, LSTM, GRU (ATen's RNN check)
    (re.compile(rf"Input and (?P<arg>hidden|parameter) tensors are not at the same device, found input tensor "
                rf"at (?P<first>{_D}) and (?:hidden|parameter) tensor at (?P<second>{_D})"), None),
    # CPU kernels that check by hand (addmm, sparse add/mul, sspaddmm)
    (re.compile(r"(?:Expected all tensors to be on the same device\. )?(?<!\w)(?P<method>\w+):? expected '(?P<arg>\w+)' "
                r"to be (?:a )?(?P<first>CPU|CUDA)(?: tensor)?, but got (?:a (?P<second>CPU|CUDA) tensor|tensor on "
                rf"(?:device: )?(?P<second2>{_D})|(?P<second3>CPU|CUDA))"), "second"),
    # kernels that check two arguments by hand: masked_fill on CUDA ("expected self and mask to be on the same
    # device, but got mask on cpu and self on cuda:0"), linalg's solvers ("Expected b and A ..., but found b on")
    (re.compile(rf"[Ee]xpected \w+ and \w+ to be on the same device, but (?:got|found) (?P<arg>\w+) on "
                rf"(?P<second>{_D}) and \w+ on (?P<first>{_D})"), "second"),
    # torch 1.x
    (re.compile(r"Expected object of device type (?P<first>\w+) but got device type (?P<second>\w+) for argument "
                r"#\d+ '(?P<arg>\w+)' in call to (?P<method>\w+)"), "second"),
    # cudnn/miopen (TensorUtils checkSameGPU): device indices, -1 is the CPU
    (re.compile(r"Expected tensor for argument #\d+ '\w+' to have the same device as tensor for argument #\d+ "
                r"'(?P<arg>\w+)'; but device (?P<first>-?\d+) does not equal (?P<second>-?\d+) \(while checking "
                r"arguments for (?P<method>\w+)\)"), "second"),
    (re.compile(rf"Unhandled FakeTensor Device Propagation for (?P<method>[\w.]+), found two different devices "
                rf"(?P<first>{_D}), (?P<second>{_D})"), None),
    (re.compile(rf"Expected divisor \(b\) to be on the same device \((?P<first>{_D})\) as dividend \(a\), but it "
                rf"is found on (?P<second>{_D})!"), "second"),
    (re.compile(rf"indices should be either on cpu or on the same device as the indexed tensor \((?P<first>{_D})\)"),
     None),
    # torch_scatter / torch_sparse (PyTorch Geometric)
    (re.compile(rf"All input tensors must be on the same device\. Received (?P<first>{_D}) and (?P<second>{_D})"),
     None),
)
_GRAD = re.compile(r"attempting to assign a gradient (?:with device type '(?P<second>\w+)' to a tensor with device "
                   r"type '(?P<first>\w+)'|located on device with index '(?P<second_i>\d+)' to a tensor located "
                   r"on device with index '(?P<first_i>\d+)')")


@dataclass(frozen=True)
class DeviceError:
    """What torch's message says: the devices it names, the argument it singled out, the kernel."""

    devices: Tuple[str, ...] = ()
    odd: Optional[str] = None  # the device of the argument torch singled out (it may still be the right one)
    arg: Optional[str] = None
    method: Optional[str] = None
    grad: bool = False  # `.grad = g` with g elsewhere: no op to fix


def parse_device_error(message: str) -> Optional[DeviceError]:
    """None when `message` is not a device mismatch; what it says otherwise."""
    for pattern, odd in _PATTERNS:
        m = pattern.search(message)
        if m is not None:
            groups = m.groupdict()
            second = groups.get("second") or groups.get("second2") or groups.get("second3")
            devices = tuple(_device_text(d) for d in (groups["first"], second) if d)
            singled = odd == "second" or odd == "arg" and groups.get("arg")
            return DeviceError(devices, _device_text(second) if singled and second else None, groups.get("arg"),
                               _kernel(groups.get("method")))
    m = _GRAD.search(message)
    if m is not None:
        if m["first"]:
            return DeviceError((m["first"], m["second"]), m["second"], grad=True)
        return DeviceError((f"cuda:{m['first_i']}", f"cuda:{m['second_i']}"), f"cuda:{m['second_i']}", grad=True)
    if message.startswith("Expected all tensors to be on the same device"):
        return DeviceError()
    return None


def _device_text(text: str) -> str:
    """`CUDA` -> cuda, `-1` -> cpu, `0` -> cuda:0 (checkSameGPU's indices), else as printed."""
    if re.fullmatch(r"-?\d+", text):
        return "cpu" if text == "-1" else f"cuda:{text}"
    return text.lower() if text in ("CPU", "CUDA") else text


def _kernel(method: Optional[str]) -> Optional[str]:
    """`wrapper_CUDA_addmm` -> addmm, `wrapper_CUDA__index_select` -> index_select."""
    if not method:
        return None
    # NB: torch >= 1.10 puts the dispatch key first (`wrapper_CUDA_`, `wrapper_Meta_`); 1.8 and 1.9 did not
    m = re.fullmatch(r"wrapper_[A-Z][A-Za-z0-9]*_(?:(?:out|self|Tensor|Scalar|input|default)_)?_?(?P<op>\w+)",
                     method)
    return m["op"] if m else method[len("wrapper_"):] if method.startswith("wrapper_") else method
