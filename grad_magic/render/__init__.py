"""Renderers: one Diagnosis in, text / HTML out. Never imports torch; never changes a Diagnosis."""
from __future__ import annotations

from typing import Any, Dict

from ..model import Diagnosis


def mimebundle(d: Diagnosis) -> Dict[str, str]:
    """The display bundle of one card. A renderer that fails falls back to the plain text card."""
    from . import html, json, text
    from .common import cleaned

    bundle: Dict[str, Any] = {"text/plain": text.render(d, color=text.supports_color())}
    for mime, renderer in (("text/html", html.render), (json.MIME, json.render)):
        try:
            bundle[mime] = renderer(d)
        except Exception as e:  # NB: the card must never hide the user's error; text is always there
            bundle["text/plain"] += f"\n({mime} card failed: {type(e).__name__}: {e})"
    return cleaned(bundle)
