"""Rules of the conversions family: a tensor turned into something else (a NumPy array, a Python bool).

What it explains, and from what: torch's message (message.py: one parser per kind); the traceback (only to
tell whether the conversion happened on the cell's own line or inside a library it called) and the cell's
syntax; tensors are known by name, metadata only (culprit.py: the conversions to NumPy on the failing line;
culprit_bool.py: the truth test that got several values). Fixes are insertions on the failing line (fix.py):
`.detach()` / `.cpu()` before `.numpy()` (or after the argument of `np.array(...)`), and `(cond).all()` /
`.any()` around an ambiguous comparison. The cards are worded in card.py through catalog keys
`conversions.*`.

Order: numpy-on-grad-tensor, numpy-on-device-tensor, bool-ambiguous (card.py's order).
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers the rules
