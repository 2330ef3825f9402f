"""Mechanical checks of a card's wording (docs/CARD_STYLE.md): what a test can tell about short, plain words.

`style_problems(d)` reads one `Diagnosis`'s text fields -- title, summary, what, why, where, the fix's
description and the tensor table's names -- in the diagnosis's own language (`d.language`, "en" or "zh") and
returns one line per problem found; an empty list means the card passes. It never reads a rendered card: the
layout of the cards is the renderers' business, the words are the catalog's.

How a sentence is measured:
- English: code in backticks counts as one word; a sentence ends at `.`, `!` or `?` before a space (so
  `x.grad` does not end one; nor do `e.g.`, `i.e.`, `etc.` and `...`).
- Chinese: a sentence ends at `。`, `！` or `？`; its length is its characters, a run of Latin letters, digits
  or code (`loss.backward()`, `float32`) counting as one, spaces not at all.
"""
from __future__ import annotations

import re
from typing import Iterable, List, Tuple

# -- limits (measured on every golden card, both languages; see docs/CARD_STYLE.md) --
SENTENCE_WORDS = 28  # English words in one sentence of summary, what, why or fix (aim for 25)
SENTENCE_UNITS_ZH = 55  # Chinese characters (a Latin word or code counting as one) in one sentence (aim for 50)
TITLE_CHARS = 120  # an English title, in characters
TITLE_UNITS_ZH = 45  # a Chinese title, in units as above
WHERE_WORDS = 25  # `where` names a place: a short phrase
WHERE_UNITS_ZH = 40
SUMMARY_SENTENCES = 2

# Words of the tool's own insides, which a user never needs (case-insensitive, whole words in English).
JARGON_EN = ("provenance", "lineage", "culprit", "run record", "tracker", "snapshot", "verdict", "heuristic",
             "catalog", "captured", "capture", "rule", "rules", "TensorFact", "Diagnosis", "grad_magic's hook",
             "our hook", "the hook grad_magic")
JARGON_ZH = ("溯源", "谱系", "罪魁", "运行记录", "追踪器", "快照", "规则", "捕获", "钩子")

# A tensor table row is named as code names it: never a phrase standing in for a name.
PLACEHOLDER_NAME = {"en": re.compile(r"^(?:the|a|an)\s|\bsaved tensor\b", re.I),
                    "zh": re.compile(r"被保存的张量|^(?:一个|某个|该)|张量$")}

_CODE = re.compile(r"`[^`]*`")
_ABBREVIATION = re.compile(r"\b(e\.g|i\.e|etc|vs|cf)\.", re.I)
_EN_END = re.compile(r"(?<=[.!?])\s+")
_ZH_END = re.compile(r"(?<=[。！？])")
_LATIN_RUN = re.compile(r"\x00|[A-Za-z0-9_.%\-\[\]()=/*+,:<>'\"]+")
# "saved the saved tensor": a word, then an article, then the same word again
_ECHO_EN = re.compile(r"\b([A-Za-z]{3,})\s+(?:the|a|an)\s+\1\b", re.I)
# "保存了被保存的张量": a two-character word, then (after 了/着/过, 被 or a space) the same word again
_ECHO_ZH = re.compile(r"([\u4e00-\u9fff]{2})[了着过]?\s*被?\1")
_THRICE_EN = re.compile(r"\b([A-Za-z]+)(?:\s+\1\b){2}", re.I)
_THRICE_ZH = re.compile(r"([\u4e00-\u9fff])\1\1")


def _plain(text: str) -> str:
    """`text` with code in backticks as one opaque token (NUL), so its dots and words do not count."""
    return _CODE.sub("\x00", text)


def sentences(text: str, language: str) -> List[str]:
    text = _plain(text).strip()
    if language == "zh":
        return [s for s in _ZH_END.split(text) if s.strip()]
    text = _ABBREVIATION.sub(r"\1", text.replace("...", "…"))
    return [s for s in _EN_END.split(text) if s.strip()]


def length(sentence: str, language: str) -> int:
    """Words in an English sentence; characters in a Chinese one, a Latin run or code counting as one."""
    if language == "zh":
        return len(re.sub(r"\s", "", _LATIN_RUN.sub("w", _plain(sentence))))
    return len(_plain(sentence).split())


def _fields(d) -> List[Tuple[str, str]]:
    fields = [("title", d.title), ("summary", d.summary), ("what", d.what), ("why", d.why), ("where", d.where)]
    if d.fix is not None:
        fields.append(("fix", d.fix.description))
    return [(name, text) for name, text in fields if text]


def _long_sentences(field: str, text: str, language: str) -> Iterable[str]:
    most = SENTENCE_UNITS_ZH if language == "zh" else SENTENCE_WORDS
    unit = "characters" if language == "zh" else "words"
    for s in sentences(text, language):
        n = length(s, language)
        if n > most:
            yield f"{field}: a sentence of {n} {unit} (at most {most}): {s.strip()[:80]!r}…"


def _shape_problems(field: str, text: str, language: str) -> Iterable[str]:
    zh = language == "zh"
    if field == "title":
        n, most = (length(text, language), TITLE_UNITS_ZH) if zh else (len(text), TITLE_CHARS)
        if n > most:
            yield f"title: {n} {'characters' if zh else 'characters'} (at most {most})"
        if len(sentences(text, language)) > 1:
            yield "title: more than one sentence"
    elif field == "where":
        n, most = (length(text, language), WHERE_UNITS_ZH) if zh else (len(text.split()), WHERE_WORDS)
        if n > most:
            yield f"where: {n} {'characters' if zh else 'words'} (at most {most})"
    else:
        if field == "summary" and len(sentences(text, language)) > SUMMARY_SENTENCES:
            yield f"summary: {len(sentences(text, language))} sentences (at most {SUMMARY_SENTENCES})"
        yield from _long_sentences(field, text, language)


def _word_problems(field: str, text: str, language: str) -> Iterable[str]:
    plain = _plain(text)
    if language == "zh":
        jargon = [w for w in JARGON_ZH if w in plain]
        echo, thrice = _ECHO_ZH.search(plain), _THRICE_ZH.search(plain)
    else:
        jargon = [w for w in JARGON_EN if re.search(rf"\b{re.escape(w)}\b", plain, re.I)]
        echo, thrice = _ECHO_EN.search(plain), _THRICE_EN.search(plain)
    for word in jargon:
        yield f"{field}: internal jargon {word!r}"
    if echo is not None:
        yield f"{field}: a word said twice over ({echo.group(0)!r})"
    if thrice is not None:
        yield f"{field}: a word three times in a row ({thrice.group(0)!r})"


def style_problems(d) -> List[str]:
    """Every style problem of one diagnosis's text, in its language; [] when it has none."""
    language = "zh" if d.language == "zh" else "en"
    problems: List[str] = []
    for field, text in _fields(d):
        problems.extend(_shape_problems(field, text, language))
        problems.extend(_word_problems(field, text, language))
    for t in d.tensors:
        if PLACEHOLDER_NAME[language].search(t.name):
            problems.append(f"tensors: a row named by a phrase, not a name ({t.name!r})")
    return problems
