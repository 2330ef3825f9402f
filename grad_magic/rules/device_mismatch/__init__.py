"""The device_mismatch family: tensors that meet in one op live on different devices (device-mismatch).

Reads the error message (message.py: every wording torch 2.1 ... 2.13 uses, and the older ones still quoted
online); the failing op's tensor arguments as the tracker recorded them, the user's names for them and which
device is meant (culprit.py; a tensor with no plain name is named by its path from the frame's variables:
`self.pe`, `state[1]`, `batch["attention_mask"]`, culprit_paths.py); where each odd tensor came from in the
cell (culprit_origins.py, its ast in culprit_scopes.py), followed across frames and cells when the op failed
in a method or helper (culprit_chain.py: to the caller that passed it, into the helper that returned it, to a
global made by an earlier cell), what the failing line itself says (culprit_line.py: a factory or operand with
no name, a tensor the line hands a library, how a function names the device) and what a model holds
(culprit_held.py: a plain tensor attribute, layers in a plain list, a loss's weight -- also one a helper
makes --, a model never moved) and what crosses a `return` or a tuple (culprit_returns.py: the (h, c) pair a
helper returns, both items; `h, c = state`; a module's output taken from a kept tensor).
Reads tensor and module metadata only (device), never data. The fix (fix.py) moves the odd one out to where
the rest live, in whichever cell that is: `device=` on the call that created it, `.to(...)` at the top of the
loop that yields it or where the op uses it, `register_buffer` / `nn.ModuleList` in `__init__`, `.to(device)`
where a model, a loss's weight or a dict batch is made; when which side is meant is not clear, no fix. The
rule and its card: card.py (catalog keys `devices.*`).
"""
from . import card  # noqa: F401 -- registers device-mismatch
