"""The card's own details: the diff's hunk header, code in backticks, the words of the tensor table, comments a
fix leaves behind, long lines, and buttons that only a live card arms (issue 19)."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import grad_magic
from cards import card
from gm_shell import run
from grad_magic.edits import make_fix
from grad_magic.model import ERROR, Diagnosis, Fix, SourceLine, TensorFact, TextEdit
from grad_magic.render import html, json, text
from grad_magic.render.common import diff_lines

SOURCE = "%%gradcheck\nw = torch.tensor([1.0])\nx = torch.tensor([2.0])\nloss = (w * x).sum()\n"
FIXED = "%%gradcheck\nw = torch.tensor([1.0], requires_grad=True)\nx = torch.tensor([2.0], requires_grad=True)\n" \
        "loss = (w * x).sum()\n"


def diagnosis(source: str = SOURCE, fixed: str = FIXED, **fields) -> Diagnosis:
    values = dict(kind="missing-requires-grad", severity=ERROR, title="`w` needs a gradient",
                  summary="`w` was made without `requires_grad=True`.", what="Line 2 makes `w`.",
                  why="A leaf's `requires_grad` is False unless asked.", where="line 2 (`w = ...`)",
                  source=source, lines=(SourceLine(2, source.splitlines()[1]),),
                  tensors=(TensorFact("w", shape="(1,)", dtype="torch.float32", device="cpu",
                                      requires_grad=False, version=0),),
                  fix=Fix("Give `w` `requires_grad=True`", fixed, ()), language="en")
    values.update(fields)
    return Diagnosis(**values)


class _Text(HTMLParser):
    """The text inside each element of a class, and the text of every <code>."""

    def __init__(self) -> None:
        super().__init__()
        self.stack, self.code, self.by_class = [], [], {}

    def handle_starttag(self, tag, attrs):
        self.stack.append((tag, dict(attrs).get("class") or ""))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data):
        if any(tag == "code" for tag, _ in self.stack):
            self.code.append(data)
        for _, css in self.stack:
            for name in css.split():
                self.by_class.setdefault(name, []).append(data)


def parsed(page: str) -> _Text:
    found = _Text()
    found.feed(page)
    return found


def test_the_cards_show_no_hunk_header_before_the_first_hunk():
    """The fix's sentence says where; a hunk header (`@@ -2,2 +2,2 @@`) is noise to a reader: none before the
    first hunk, a gap mark between hunks. The JSON keeps them for other readers."""
    d = diagnosis()
    assert ("@", "@@ -2,2 +2,2 @@") in diff_lines(d)
    page = html.render(d)
    assert "@@" not in page
    assert "@@" not in text.render(d)
    assert {"sign": "@", "text": "@@ -2,2 +2,2 @@"} in json.render(d)["fix"]["diff"]


def test_code_in_backticks_is_code_in_the_html_card():
    page = html.render(diagnosis(title="`w` needs <b>a</b> gradient"))
    found = parsed(page)
    assert "w" in found.code and "requires_grad=True" in found.code
    for key in ("summary",):
        assert "`" not in "".join(found.by_class.get("gm-" + key, []))
    assert "<b>a</b>" not in page and "&lt;b&gt;a&lt;/b&gt;" in page  # still escaped by the template
    assert not re.search(r"<(h3|dd|p)[^>]*>[^<]*`", page), "a backtick left in a heading or an explanation"


def test_the_html_card_says_the_tensor_flags_as_python_does():
    page = html.render(diagnosis())
    assert "<td>False</td>" in page


def test_long_fixed_lines_wrap_in_the_html_card():
    page = html.render(diagnosis())
    style = page[page.index("<style>"):page.index("</style>")]
    # NB: break-spaces, not pre-wrap: pre-wrap lets a run of spaces hang past the edge, and code after it
    assert re.search(r"\.gm-card \.gm-diff[^{]*\{[^}]*white-space:break-spaces", style), style
    assert re.search(r"\.gm-fixed[^{]*\{[^}]*white-space:break-spaces", style)


def test_html_buttons_show_only_with_the_cards_own_style():
    """A frontend that sanitises an untrusted output drops the card's inline handlers and its <style>:
    the buttons then stay hidden (the `hidden` attribute), instead of showing and doing nothing."""
    page = html.render(diagnosis())
    assert re.search(r'<div class="gm-actions" hidden="hidden">', page)
    style = page[page.index("<style>"):page.index("</style>")]
    assert ".gm-card .gm-actions{display:flex" in style  # NB: the author style that overrides `hidden`


def test_a_fix_drops_a_comment_that_names_what_it_changes():
    source = "w = torch.tensor([1.0])  # no requires_grad\nx = torch.tensor([2.0])  # an input\n"
    at = source.index("])") + 1
    fix = make_fix(source, [TextEdit(at, at, ", requires_grad=True")], "d")
    assert fix.source.splitlines()[0] == "w = torch.tensor([1.0], requires_grad=True)"
    assert fix.source.splitlines()[1] == "x = torch.tensor([2.0])  # an input"


def test_a_fix_keeps_a_comment_that_names_nothing_it_changes():
    source = "y = model(x)  # shape (B, T)\nloss = y.sum()\n"
    at = source.index("model")
    fix = make_fix(source, [TextEdit(at, at + len("model(x)"), "model(x.float())")], "d")
    assert fix.source.splitlines()[0] == "y = model(x.float())  # shape (B, T)"


def test_a_fix_keeps_comments_inside_strings_and_whole_comment_lines():
    source = "# requires_grad below\nw = torch.tensor([1.0]); s = '# requires_grad'\n"
    at = source.index("])") + 1
    fix = make_fix(source, [TextEdit(at, at, ", requires_grad=True")], "d")
    assert fix.source == "# requires_grad below\nw = torch.tensor([1.0], requires_grad=True); s = '# requires_grad'\n"


def test_the_readme_cell_loses_its_lying_comment(shell):
    cell = ("%%gradcheck\nimport torch\nw = torch.tensor([1.0])          # no requires_grad\nx = torch.tensor([2.0])\n"
            "loss = (w * x).sum()\nloss.backward()\n")
    d = card(shell, cell, "missing-requires-grad", raises=RuntimeError)
    assert "requires_grad=True" in d.fix.source and "# no requires_grad" not in d.fix.source


def test_train_eval_card_names_no_block_the_cell_does_not_use_and_agrees_with_one_layer(shell):
    run(shell, "import torch\nfrom torch import nn\nclassifier = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), "
               "nn.Dropout(0.5), nn.Linear(8, 3))\ntest_x, test_y = torch.randn(64, 4), torch.randint(0, 3, (64,))\n")
    cell = ("%%gradcheck\ncorrect = 0\nwith torch.inference_mode():\n    predicted = classifier(test_x).argmax(dim=1)\n"
            "    correct += (predicted == test_y).sum().item()\nprint(correct / 64)\n")
    d = card(shell, cell, "train-eval-mode")
    assert "`classifier.2` (Dropout)" in d.why
    assert "no_grad" not in d.why, d.why  # the cell turned gradients off with inference_mode()
    assert "(Dropout) make " not in d.why, d.why
    grad_magic.state.set_language("zh")
    try:
        zh = card(shell, cell, "train-eval-mode")
    finally:
        grad_magic.state.set_language(None)
    assert "no_grad" not in zh.why, zh.why
