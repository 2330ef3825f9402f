"""Rules of the leaf family: a tensor the user trains (a leaf that requires grad) changed the wrong way.

- `leaf-modified-in-place` (error): RuntimeError "a leaf Variable that requires grad is being used in an
  in-place operation." and "a view of a leaf Variable ..." (before torch 1.5: "... has been used in an
  in-place operation."). Forms: `w -= lr * w.grad`, `w += 1`, `w[0] = 1`, `w.copy_(...)`, `w.add_(1)`,
  `torch.sigmoid_(w)`. Fix: put the update (and the grad-clearing lines right beside it) under
  `with torch.no_grad():`; when a graph built from the leaf still waits for its backward() after the
  change, rebind instead (`a = a.add(1)`), as no_grad would break that backward.
- `non-leaf-grad` (warning): torch's UserWarning "The .grad attribute of a Tensor that is not a leaf Tensor
  is being accessed" (emitted on every access; Python shows it once per location, and under the capture the
  location is the tracker's, so one record per run). The `.grad` read in the cell whose tensor is not a
  leaf is named, with why: rebound out of place (`w = w + 1` on line N: `w` is no longer the leaf, its
  `.grad` stays None; fix, only for a manual update: `with torch.no_grad(): w += 1`), made by an op on a
  fresh leaf (`torch.randn(3, requires_grad=True) * 0.01`; fix: `(torch.randn(3) * 0.01).requires_grad_()`),
  or an intermediate result (fix: `out.retain_grad()` after it is computed).
  Note: the article's claim that `w = w + 1` raises "leaf variable has been moved into the graph interior"
  does not hold for torch 2.x: nothing is raised, only this warning when `.grad` is read.

What it reads: torch's message and warning (message.py); the failed op the tracker recorded, the cell's
ast and live objects through the NameIndex, torch metadata only (culprit.py). The edits are fix.py's; the
cards, worded through catalog keys `leaf.*` / `nonleaf.*`, are card.py's.

Order: `leaf-modified-in-place`, then the warning `non-leaf-grad` (card.py's order).
"""
from __future__ import annotations

from . import card  # noqa: F401 -- registers the rules
