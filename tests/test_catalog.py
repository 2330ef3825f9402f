"""The message catalog: every message in every language, with the same parameters, and Chinese that is Chinese."""
from __future__ import annotations

import re
import string
from importlib import import_module
from pathlib import Path

import pytest

from grad_magic import catalog

CHINESE = re.compile(r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")


def params(text: str) -> set:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def is_neutral(text: str) -> bool:
    """Text the same in every language: a placeholder, an identifier, punctuation -- no sentence."""
    return len(re.sub(r"\{\w+\}", "", text).split()) <= 1


@pytest.mark.parametrize("key", sorted(catalog.MESSAGES))
def test_every_message_has_every_language_with_the_same_parameters(key):
    entry = catalog.MESSAGES[key]
    assert set(entry) == {"en", "zh"}
    assert params(entry["en"]) == params(entry["zh"])
    assert CHINESE.search(entry["zh"]) or (entry["zh"] == entry["en"] and is_neutral(entry["en"])), \
        "the Chinese text is not Chinese"


def test_the_neutral_exception_cannot_hide_an_untranslated_sentence():
    assert not is_neutral("No fix was proposed.") and is_neutral("requires_grad") and is_neutral("{size}")


def test_every_family_module_is_merged():
    modules = {p.stem for p in Path(catalog.__file__).parent.glob("*.py") if p.stem != "__init__"}
    assert modules == set(catalog.FAMILIES)
    for family in catalog.FAMILIES:
        own = import_module(f"grad_magic.catalog.{family}").MESSAGES
        assert own and all(catalog.MESSAGES[key] is entry for key, entry in own.items()), family


def test_sentences_and_lists_are_joined_per_language():
    assert catalog.sentences(["A.", "", "B."], "en") == "A. B."
    assert catalog.sentences(["甲。", "乙。"], "zh") == "甲。乙。"
    assert catalog.sentences(["the input.", "the target."], "en", capitalise=True) == "The input. The target."
    assert catalog.listing(["`a`", "`b`", "`c`"], "en") == "`a`, `b` and `c`"
    assert catalog.listing(["`a`", "`b`"], "zh") == "`a` 和 `b`"
    assert catalog.listing(["`a`"], "en") == "`a`"
