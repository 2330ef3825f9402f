"""Renderers: one Diagnosis in, text / HTML / JSON out. Never imports torch; never changes a Diagnosis.

`Card` is the one card object a frontend displays: `_repr_mimebundle_` gives every format from one Diagnosis
(the model itself knows no renderer). `formatters_registered` lets IPython show a bare Diagnosis (what
`grad_magic.last_diagnosis()` returns) as its card while the extension is loaded.
"""
from __future__ import annotations

from typing import Any, Callable, Dict

from ..model import Diagnosis


class Card:
    """A Diagnosis as it is shown: every format in a notebook, the text card (no colour) in `str()`."""

    __slots__ = ("diagnosis",)

    def __init__(self, diagnosis: Diagnosis) -> None:
        self.diagnosis = diagnosis

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Dict[str, str]:
        return mimebundle(self.diagnosis)

    def __str__(self) -> str:
        from . import text

        return text.render(self.diagnosis, color=False)

    def __repr__(self) -> str:
        return f"Card({self.diagnosis.kind!r})"


def formatters_registered(shell: Any) -> Callable[[], None]:
    """Show a bare Diagnosis as its card in this shell; returns the undo (which puts back what was there)."""
    formatter = shell.display_formatter.mimebundle_formatter
    previous = formatter.for_type(Diagnosis, lambda d, include=None, exclude=None: mimebundle(d))

    def undo() -> None:
        formatter.pop(Diagnosis, None)
        if previous is not None:
            formatter.for_type(Diagnosis, previous)

    return undo


def mimebundle(d: Diagnosis) -> Dict[str, str]:
    """The display bundle of one card. A renderer that fails falls back to the plain text card."""
    from . import html, json, text
    from .common import cleaned

    # NB: text/plain is what a terminal shows, after the traceback: the short card, at the terminal's width
    bundle: Dict[str, Any] = {"text/plain": text.render(d, color=text.supports_color(), width=text.terminal_width(),
                                                        compact=True)}
    for mime, renderer in (("text/html", html.render), (json.MIME, json.render)):
        try:
            bundle[mime] = renderer(d)
        except Exception as e:  # NB: the card must never hide the user's error; text is always there
            bundle["text/plain"] += f"\n({mime} card failed: {type(e).__name__}: {e})"
    return cleaned(bundle)
