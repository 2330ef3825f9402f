"""Rules of the devices family: tensors that meet in one op live on different devices.

Reads the error message (messages.py: every wording torch 2.1 ... 2.13 uses, and the older ones still quoted
online), the failing op's tensor arguments as the tracker recorded them, and the user's names for them
(parties.py); reads tensor and module metadata only (device), never data. The fix (fix.py) moves the odd one
out to where the rest live: `device=` on the call that created it, `.to(...)` at the top of the loop that
yields it or where the op uses it, or `.to(device)` on a model the cell's `device` says belongs elsewhere.
When which side is meant is not clear, no fix. The rule `device-mismatch` and its card: mismatch.py.
"""
from __future__ import annotations

# NB: every name the one-module version had is importable from here (the tests import some of them).
from .mismatch import (  # noqa: F401
    KIND, device_mismatch, _devices_text, _diagnosis, _facts, _fix, _labels, _listing, _sentences, _sides,
    _tidy, _why_target)
from .messages import (  # noqa: F401
    _D, _GRAD, _PATTERNS, DeviceError, parse_device_error, _device_text, _kernel)
from .parties import (  # noqa: F401
    _DEVICE_VARIABLE, Party, Target, device_variable, failed_op, parties_of, same_device, target_device,
    _common_prefix, _party)
from .fix import (  # noqa: F401
    _FACTORIES, _PLACING, _SCOPES, Plan, Planner, _short, _single_target, _walk_scope)
