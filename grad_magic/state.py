"""Process-wide state of the extension: the last run's diagnoses and the chosen language.

Holds only Diagnosis objects (strings): no reference to any user object survives a run.
"""
from __future__ import annotations

import locale
import os
from typing import List, Optional

from .model import Diagnosis

LANGUAGES = ("en", "zh")
_last: List[Diagnosis] = []
_language: Optional[str] = None


def remember(diagnoses: List[Diagnosis]) -> None:
    global _last
    _last = list(diagnoses)


def last_diagnoses() -> List[Diagnosis]:
    """The last run's diagnoses, most important first (possibly empty)."""
    return list(_last)


def last_diagnosis() -> Optional[Diagnosis]:
    return _last[0] if _last else None


def set_language(language: Optional[str]) -> None:
    global _language
    if language is not None and language not in LANGUAGES:
        raise ValueError(f"grad_magic: language must be one of {', '.join(LANGUAGES)}, not {language!r}")
    _language = language


def language() -> str:
    """`set_language`, else $GRAD_MAGIC_LANG, else the locale (zh_* -> "zh"), else English."""
    chosen = _language or os.environ.get("GRAD_MAGIC_LANG", "")
    if chosen in LANGUAGES:
        return chosen
    for value in (os.environ.get("LC_ALL"), os.environ.get("LC_MESSAGES"), os.environ.get("LANG"),
                  _locale_name()):
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def _locale_name() -> Optional[str]:
    try:
        return locale.getlocale()[0]
    except ValueError:
        return None
