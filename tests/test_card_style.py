"""The card style checks (card_style.py, docs/CARD_STYLE.md): each one fires on text that breaks it, and none
fires on plain text, in English and in Chinese."""
from __future__ import annotations

from dataclasses import replace

import pytest

import grad_magic
from card_style import SENTENCE_UNITS_ZH, SENTENCE_WORDS, TITLE_CHARS, length, sentences, style_problems
from gm_shell import run
from grad_magic.model import ERROR, Diagnosis, Fix, TensorFact
from test_cases import also_in_chinese

GOOD_EN = Diagnosis(
    kind="saved-tensor-modified-in-place", severity=ERROR,
    title="`h` was changed in place after autograd saved it for backward",
    summary="backward() needs the value `h` had in the forward pass, but `h.relu_()` on line 7 changed it.",
    what="backward() stopped: a tensor it saved during the forward pass (`h`: float32, shape (3,)) is now at "
         "version 1, but it was saved at version 0.",
    why="To compute gradients, autograd keeps some tensors from the forward pass: line 6 (`y = h.exp()`) saved "
        "`h` because its backward (ExpBackward0) needs that value. Afterwards `h.relu_()` on line 7 changed `h` "
        "in place.",
    where="line 7 of the cell (the in-place op); the tensor was saved on line 6",
    tensors=(TensorFact(name="h"), TensorFact(name="F.log_softmax(xb @ W, dim=1)")),
    fix=Fix(description="use the out-of-place `h.relu()` on line 7", source="", edits=()),
)
GOOD_ZH = replace(
    GOOD_EN, language="zh",
    title="`h` 在被 autograd 保存用于反向传播之后，又被原地修改了",
    summary="backward() 需要 `h` 在前向传播时的值，但第 7 行的 `h.relu_()` 修改了它。",
    what="backward() 中止：前向传播时保存的一个张量（`h`：float32，形状 (3,)）当前版本号为 1，而保存时的版本号是 0。",
    why="为了计算梯度，autograd 会保留前向传播中的一些张量：第 6 行（`y = h.exp()`）保存了 `h`，因为它的反向函数 "
        "ExpBackward0 需要用到这个值。之后第 7 行的 `h.relu_()` 原地修改了 `h`。",
    where="单元格第 7 行（原地操作）；该张量是在第 6 行保存的",
    fix=Fix(description="第 7 行改用非原地的 `h.relu()`", source="", edits=()),
)


@pytest.mark.parametrize("d", [GOOD_EN, GOOD_ZH], ids=["en", "zh"])
def test_plain_short_text_passes(d):
    assert style_problems(d) == []


def test_sentences_are_split_at_their_ends_not_inside_code_or_abbreviations():
    text = "Call `x.grad.zero_()` first, e.g. in the loop. then `loss.backward()` works... twice? Yes."
    assert sentences(text, "en") == ["Call \x00 first, e.g in the loop.", "then \x00 works… twice?", "Yes."]
    assert sentences("先调用 `x.grad.zero_()`。然后再试！好吗？", "zh") == ["先调用 \x00。", "然后再试！", "好吗？"]
    assert length("Call `model.fc.weight.grad` on line 7.", "en") == 5
    assert length("第 17 行的 `loss.backward()` 中止了。", "zh") == 9  # 第 w 行的 w 中止了。


def _one(d, **fields) -> list:
    return style_problems(replace(d, **fields))


def test_a_long_sentence_fails_in_english():
    long = "The value " + "that it kept " * 9 + "is gone."
    assert length(long, "en") > SENTENCE_WORDS
    assert any("why: a sentence of" in p for p in _one(GOOD_EN, why=long))
    assert _one(GOOD_EN, why=long.replace(" that it kept", "", 5)) == []


def test_a_long_sentence_fails_in_chinese_by_characters():
    long = "这个张量" + "在前向传播之后被原地修改" * 5 + "。"
    assert length(long, "zh") > SENTENCE_UNITS_ZH
    assert any("what: a sentence of" in p and "characters" in p for p in _one(GOOD_ZH, what=long))
    assert _one(GOOD_ZH, what="这个张量在前向传播之后被原地修改。" * 4) == []


def test_a_long_title_and_a_summary_of_three_sentences_fail():
    assert any(p.startswith("title:") for p in _one(GOOD_EN, title="`h` " + "x" * TITLE_CHARS))
    assert any(p.startswith("title: more than one") for p in _one(GOOD_EN, title="`h` changed. It was saved"))
    three = "It stopped. It was saved. It changed."
    assert any(p.startswith("summary: 3 sentences") for p in _one(GOOD_EN, summary=three))
    assert any(p.startswith("summary: 3 sentences") for p in _one(GOOD_ZH, summary="它中止了。它被保存了。它被修改了。"))
    assert _one(GOOD_EN, summary="It stopped. It was saved.") == []


def test_a_long_where_and_a_long_fix_fail():
    assert any(p.startswith("where:") for p in _one(GOOD_EN, where="line 7 " + "and line 8 " * 10))
    fix = Fix(description="move " + "the line and " * 12 + "done", source="", edits=())
    assert any(p.startswith("fix: a sentence") for p in _one(GOOD_EN, fix=fix))


def test_a_noun_said_twice_over_fails():
    said = "To compute gradients, autograd keeps some tensors: line 11 (`y = h.exp()`) saved the saved tensor."
    assert any("said twice over ('saved the saved')" in p for p in _one(GOOD_EN, why=said))
    assert any("said twice over" in p for p in _one(GOOD_ZH, why="第 11 行（`y = h.exp()`）保存了 被保存的张量。"))
    # code is not prose: `x` may follow `x` in a sentence
    assert _one(GOOD_EN, why="Line 4 computes `x = x * x` on `x`.") == []


def test_a_word_three_times_in_a_row_fails():
    assert any("three times in a row" in p for p in _one(GOOD_EN, summary="It stopped stopped stopped."))
    assert any("three times in a row" in p for p in _one(GOOD_ZH, summary="它中止了了了。"))
    assert _one(GOOD_EN, summary="It had had a value.") == []


def test_internal_jargon_fails_in_both_languages():
    assert any("jargon 'provenance'" in p for p in _one(GOOD_EN, why="The provenance of `h` is line 6."))
    assert any("jargon 'rule'" in p for p in _one(GOOD_EN, what="The rule found `h` on line 6."))
    assert any("jargon '溯源'" in p for p in _one(GOOD_ZH, why="`h` 的溯源是第 6 行。"))
    # in code the words are the user's own
    assert _one(GOOD_EN, why="`rule` on line 6 is a tensor.") == []


def test_a_tensor_row_named_by_a_phrase_fails():
    for d, name in ((GOOD_EN, "the saved tensor"), (GOOD_EN, "a parameter of opt"), (GOOD_ZH, "被保存的张量")):
        assert any("a row named by a phrase" in p for p in _one(d, tensors=(TensorFact(name=name),)))
    assert _one(GOOD_EN, tensors=(TensorFact(name="(unnamed)"),)) == []
    assert _one(GOOD_ZH, tensors=(TensorFact(name="（未命名）"),)) == []


def test_an_unnamed_saved_tensor_is_not_called_the_saved_tensor(shell, monkeypatch):
    """The user study's "line 11 ... saved the saved tensor": an in-place module in an nn.Sequential wrote over
    a tensor no name of the cell holds (the Sigmoid's output). The card calls it "an unnamed tensor", its table
    row is marked unnamed, and both languages pass the style checks."""
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    chinese = also_in_chinese(monkeypatch)
    run(shell, "%%gradcheck\nimport torch, torch.nn as nn\n"
               "net = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.ReLU(inplace=True))\n"
               "net(torch.randn(2, 3)).sum().backward()\n")
    kind = "saved-tensor-modified-in-place"
    d = next(x for x in grad_magic.last_diagnoses() if x.kind == kind)
    zh = next(x for x in chinese if x.kind == kind)
    assert "saved an unnamed tensor because" in d.why and "saved tensor" not in d.why + d.what
    assert "保存了一个无名张量，" in zh.why and "被保存的张量" not in zh.why + zh.what
    assert [t.name for t in d.tensors] == ["(unnamed)"] and [t.name for t in zh.tensors] == ["（未命名）"]
    assert style_problems(d) == [] and style_problems(zh) == []
