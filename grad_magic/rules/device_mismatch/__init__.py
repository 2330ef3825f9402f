"""The device_mismatch family: tensors that meet in one op live on different devices (device-mismatch).

Reads the error message (message.py: every wording torch 2.1 ... 2.13 uses, and the older ones still quoted
online); the failing op's tensor arguments as the tracker recorded them, the user's names for them and which
device is meant (culprit.py); where each odd tensor came from in the cell (culprit_origins.py). Reads tensor
and module metadata only (device), never data. The fix (fix.py) moves the odd one out to where the rest live:
`device=` on the call that created it, `.to(...)` at the top of the loop that yields it or where the op uses
it, or `.to(device)` on a model the cell's `device` says belongs elsewhere; when which side is meant is not
clear, no fix. The rule and its card: card.py (catalog keys `devices.*`).
"""
from . import card  # noqa: F401 -- registers device-mismatch
