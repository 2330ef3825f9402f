"""Every sentence grad_magic says, once per language.

Rules and renderers ask for a message by key and pass named parameters; wording lives only here, one
module per family of messages (`core`, then one per rule family), each with a `MESSAGES` dict of
`key -> {"en": ..., "zh": ...}`. A key defined twice fails at import; a test fails when a key lacks a
language or two languages disagree on the parameters.
"""
from __future__ import annotations

import re
from importlib import import_module
from typing import Dict, Iterable

from .. import state

FAMILIES = ("core", "plain", "requires_grad", "leaf", "inplace", "optimizer", "devices", "loading", "backward",
            "backward_across", "conversions", "dtypes", "shapes", "batch_dims", "target_size", "channels", "collate", "arguments", "memory", "device_assert", "numerics", "training", "inventory",
            "distributed", "bounds", "live", "always", "script")


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


def sentences(parts: Iterable[str], language: str = "", capitalise: bool = False) -> str:
    """Sentences one after another, empty ones left out: a space between them in English, none in Chinese.
    `capitalise`: each English sentence starts with a capital (parts written to follow a colon)."""
    parts = [p for p in parts if p]
    if (language or state.language()) == "zh":
        return "".join(parts)
    return " ".join(p[:1].upper() + p[1:] for p in parts) if capitalise else " ".join(parts)


def listing(items: Iterable[str], language: str = "", most: int = 0) -> str:
    """`a`, `b` and `c` in the card's language; with `most`, a longer list is cut there and ends in `…`."""
    items = list(items)
    if most and len(items) > most:
        return message("list.comma", language).join(items[:most] + ["…"])
    if len(items) < 2:
        return "".join(items)
    return message("list.last", language, head=message("list.comma", language).join(items[:-1]), last=items[-1])


# A line number in a sentence, and how it says which cell the line is in (`place`: `In [3]`, `model.py`).
_LINE_REFERENCE = {
    "en": (re.compile(r"\b[Ll]ines? \d+(?:[-–]\d+)?(?:(?:, | and )\d+(?:[-–]\d+)?)*(?: of (?:the|this) cell)?"),
           lambda m, place: re.sub(r" of (?:the|this) cell$", "", m.group(0)) + f" of {place}"),
    # NB: a space before the place after a Chinese character ("在 In [3] 第 7 行"), none at the start
    "zh": (re.compile(r"(?:单元格)?第 \d+(?:[-–]\d+)? 行"),
           lambda m, place: (" " if m.start() and _CJK.match(m.string, m.start() - 1) else "")
           + f"{place} " + m.group(0).replace("单元格", "")),
}
_CJK = re.compile(r"[\u4e00-\u9fff]")


def lines_in(text: str, language: str, place: str) -> str:
    """`text` with each line number it gives said to be in `place`: "on line 9" -> "on line 9 of In [3]"."""
    pattern, rewrite = _LINE_REFERENCE.get(language or state.language(), _LINE_REFERENCE["en"])
    return pattern.sub(lambda m: rewrite(m, place), text) if place else text


_SPACE_IN_CHINESE = re.compile(r"(?<=[\u4e00-\u9fff]) (?=[\u4e00-\u9fff])")


def tidy(text: str, language: str = "") -> str:
    """`text` as its language writes it: Chinese puts no space between two Chinese characters, so the space a
    template keeps before a parameter goes when the parameter ends in one (`{rest} 在` with rest = "`model` 的参数"
    -> "`model` 的参数在"). English text is returned as it is."""
    if (language or state.language()) != "zh":
        return text
    return _SPACE_IN_CHINESE.sub("", text)
