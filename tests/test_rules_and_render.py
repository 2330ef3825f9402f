"""The rule registry, the generic diagnosis, the catalog and the first card."""
from __future__ import annotations

from html.parser import HTMLParser

import pytest
import torch

import grad_magic
from grad_magic import catalog
from grad_magic.engine import diagnose
from grad_magic.record import RunRecord
from grad_magic.render import Card, mimebundle, text
from grad_magic.rules.registry import RULES, rule
from gm_shell import displayed, run


def test_duplicate_slug_fails_at_registration():
    @rule("test-duplicate-slug")
    def first(ctx):
        return None

    try:
        with pytest.raises(ValueError, match="test-duplicate-slug"):
            @rule("test-duplicate-slug")
            def second(ctx):
                return None
    finally:
        RULES.pop("test-duplicate-slug")


def test_a_crashing_rule_becomes_a_note_and_the_error_is_still_diagnosed():
    @rule("test-crashing-rule")
    def crashing(ctx):
        raise ZeroDivisionError("rule bug")

    try:
        record = RunRecord(filename="<cell>", source="x = 1\n", exception=RuntimeError("user error"))
        found = diagnose(record, {})
    finally:
        RULES.pop("test-crashing-rule")
    assert [d.kind for d in found] == ["generic"]
    assert found[0].error_message == "user error"
    assert any("test-crashing-rule" in n and "rule bug" in n for n in found[0].notes)


def test_first_matching_rule_wins():
    calls = []

    def make(slug):
        @rule(slug)
        def r(ctx):
            calls.append(slug)
            return ctx.diagnosis(slug, "error", title="t", summary="s", what="w", why="y", where="h")
        return r

    make("test-first")
    make("test-second")
    try:
        found = diagnose(RunRecord(filename="<c>", source="", exception=ValueError()), {})
    finally:
        RULES.pop("test-first"), RULES.pop("test-second")
    assert found[0].kind == "test-first"
    assert "test-second" not in calls


def test_generic_diagnosis_names_the_tensors_on_the_failing_line(shell):
    """An error no rule knows (NB: a dim out of range, which no rule claims): the generic card, with the
    tensors named on the failing line and their facts."""
    result = run(shell, "%%gradcheck\nimport torch\na = torch.zeros(2)\nb = torch.zeros(3, dtype=torch.float64)\n"
                        "c = torch.cat([a, b], dim=5)\n")
    assert isinstance(result.error_in_exec, IndexError)
    d = grad_magic.last_diagnosis()
    assert d.kind == "generic" and not d.notes
    assert [sl.lineno for sl in d.lines] == [5]
    facts = {t.name: t for t in d.tensors}
    assert facts["a"].dtype == "float32" and facts["b"].dtype == "float64"
    assert facts["b"].shape == "(3,)" and facts["b"].device == "cpu"
    assert facts["a"].requires_grad is False


def test_generic_diagnosis_finds_module_parameters_by_dotted_name(shell):
    run(shell, "%%gradcheck\nimport torch\nmodel = torch.nn.Linear(2, 2)\n"
               "y = torch.cat([model.weight, torch.zeros(1, 2, device='meta')])\n")
    names = [t.name for t in grad_magic.last_diagnosis().tensors]
    assert "model.weight" in names


def test_every_message_has_every_language_with_the_same_parameters():
    import string

    def params(text):
        return {f for _, f, _, _ in string.Formatter().parse(text) if f}

    for key, entry in catalog.MESSAGES.items():
        assert set(entry) == {"en", "zh"}, key
        assert params(entry["en"]) == params(entry["zh"]), key


def test_language_switch_changes_the_card(monkeypatch):
    record = RunRecord(filename="<c>", source="x\n", exception=RuntimeError("boom"), error_lineno=1)
    english = diagnose(record, {}, language="en")[0]
    chinese = diagnose(record, {}, language="zh")[0]
    assert english.what != chinese.what and "单元格" in chinese.title
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    assert grad_magic.state.language() == "zh"


HOSTILE = ['</script><script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "{{7*7}}"]


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(name for name, _ in attrs)


@pytest.mark.parametrize("hostile", HOSTILE)
def test_html_card_escapes_user_text(hostile):
    source = f"%%gradcheck\n{hostile} = 1\n"
    record = RunRecord(filename="<c>", source=source, exception=RuntimeError(hostile), error_lineno=2)
    d = diagnose(record, {}, language="en")[0]
    html = mimebundle(d)["text/html"]
    parser = _Elements()
    parser.feed(html)
    assert "script" not in parser.tags and "img" not in parser.tags
    assert "onerror" not in parser.attrs
    assert "49" not in html.replace("#49", "")  # {{7*7}} is text, not a template expression


def test_text_card_shows_the_culprit_line_and_error(shell):
    run(shell, "%%gradcheck\nx = 1\nraise ValueError('nope')\n")
    text = displayed(shell)[0]["text/plain"]  # NB: the short card a terminal shows after the traceback
    assert ">   3 | raise ValueError('nope')" in text and "%gradcheck details" in text
    assert text.splitlines()[-1] == "grad_magic · error · generic"
    full = str(Card(grad_magic.last_diagnoses()[0]))
    assert ">   3 | raise ValueError('nope')" in full
    assert "ValueError: nope" in full
    assert "torch " + torch.__version__ in full


def test_config_sets_the_language_and_unload_restores_it(shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    shell.run_line_magic("config", 'GradMagic.language = "zh"')
    run(shell, "%%gradcheck\nraise ValueError('x')\n")
    assert grad_magic.last_diagnosis().language == "zh"
    assert "单元格" in displayed(shell)[0]["text/plain"]
    shell.config.GradMagic.language = ""  # NB: %config also writes the shell's config, which outlives unload
    shell.run_line_magic("unload_ext", "grad_magic")
    assert grad_magic.state.language() == "en"
    shell.run_line_magic("load_ext", "grad_magic")


def test_bundle_has_the_json_card_with_schema_version():
    from grad_magic.render.json import MIME

    record = RunRecord(filename="<c>", source="%%gradcheck\nx\n", exception=RuntimeError("boom"),
                       error_lineno=2)
    bundle = mimebundle(diagnose(record, {}, language="en")[0])
    card = bundle[MIME]
    assert card["schema_version"] == 2 and card["kind"] == "generic"
    assert card["error"] == {"type": "RuntimeError", "message": "boom"}
    assert card["labels"]["insert"] == "Insert fixed cell below"
    import json
    json.dumps(card)  # plain data


def test_huge_and_unencodable_messages_are_clipped_and_cleaned():
    import json

    huge = "x" * 1_000_000
    record = RunRecord(filename="<c>", source="%%gradcheck\n'\udcff'\n",
                       exception=RuntimeError(huge + "\udcff"), error_lineno=2)
    bundle = mimebundle(diagnose(record, {}, language="en")[0])
    for mime, value in bundle.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        text.encode("utf-8")  # no lone surrogate left
        assert len(text) < 100_000, mime


def test_a_bare_diagnosis_shows_as_its_card_while_the_extension_is_loaded(shell):
    """The model knows no renderer: `render.Card` shows a Diagnosis, and while grad_magic is loaded IPython's
    formatters show a bare one (what `grad_magic.last_diagnosis()` returns) as its card too."""
    from grad_magic.model import Diagnosis

    record = RunRecord(filename="<c>", source="x\n", exception=RuntimeError("boom"), error_lineno=1)
    d = diagnose(record, {}, language="en")[0]
    assert not hasattr(Diagnosis, "_repr_mimebundle_")
    data, _ = shell.display_formatter.format(d)
    assert data.keys() >= {"text/plain", "text/html"} and "boom" in data["text/html"]
    assert data["text/plain"] == text.render(d, width=text.terminal_width(), compact=True)
    shell.run_line_magic("unload_ext", "grad_magic")
    try:
        data, _ = shell.display_formatter.format(d)
        assert "text/html" not in data and data["text/plain"].startswith("Diagnosis(")
    finally:
        shell.run_line_magic("load_ext", "grad_magic")
