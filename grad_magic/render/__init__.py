"""Renderers: one Diagnosis in, text / HTML out. Never imports torch; never changes a Diagnosis."""
from __future__ import annotations

from typing import Dict

from ..model import Diagnosis


def mimebundle(d: Diagnosis) -> Dict[str, str]:
    """The display bundle of one card. A renderer that fails falls back to the plain text card."""
    from . import html, text

    bundle = {"text/plain": text.render(d, color=False)}
    try:
        bundle["text/html"] = html.render(d)
    except Exception as e:  # NB: the card must never hide the user's error; text is always there
        bundle["text/plain"] += f"\n(html card failed: {type(e).__name__})"
    return bundle
