"""Every sentence grad_magic says, once per language.

Rules and renderers ask for a message by key and pass named parameters; wording lives only here, one
module per family of messages (`core`, then one per rule family), each with a `MESSAGES` dict of
`key -> {"en": ..., "zh": ...}`. A key defined twice fails at import; a test fails when a key lacks a
language or two languages disagree on the parameters.
"""
from __future__ import annotations

from importlib import import_module
from typing import Dict

from .. import state

FAMILIES = ("core", "requires_grad", "leaf", "inplace", "optimizer", "devices", "loading",
            "backward", "conversions", "dtypes", "shapes", "memory", "numerics", "training")


def _merge() -> Dict[str, Dict[str, str]]:
    merged: Dict[str, Dict[str, str]] = {}
    for family in FAMILIES:
        for key, entry in import_module(f"{__name__}.{family}").MESSAGES.items():
            if key in merged:
                raise ValueError(f"grad_magic: message {key!r} is defined twice (in {family!r})")
            merged[key] = entry
    return merged


MESSAGES: Dict[str, Dict[str, str]] = _merge()


def message(key: str, language: str = "", **params: object) -> str:
    """The message `key` in `language` (default: the chosen language), filled with `params`."""
    entry = MESSAGES[key]
    text = entry.get(language or state.language()) or entry["en"]
    return text.format(**params) if params else text
