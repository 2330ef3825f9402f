"""The precision guard (grad_magic/guard.py): a fix is offered only when it is its own edits applied to the
code that ran, compiles, and changes only what the card's evidence points to."""
from __future__ import annotations

from typing import Optional, Tuple

import pytest

from grad_magic.edits import apply_edits
from grad_magic.engine import diagnose
from grad_magic.guard import agreeing, guarded, withheld_because
from grad_magic.model import CellFix, Diagnosis, Fix, SourceLine, TextEdit
from grad_magic.record import RunRecord
from grad_magic.rules.registry import RULES, rule

CELL = "%%gradcheck\nx = torch.ones(3)\ny = x.relu_()\nprint(y)\n"
EARLIER = (
    "class Block(nn.Module):\n"      # 1
    "    def __init__(self):\n"      # 2
    "        super().__init__()\n"   # 3
    "        self.act = nn.ReLU()\n"  # 4
    "\n"                             # 5
    "    def forward(self, x):\n"    # 6
    "        h = x.sigmoid()\n"      # 7
    "        h += 1\n"               # 8
    "        return h\n"             # 9
    "\n"                             # 10
    "def unrelated(a):\n"            # 11
    "    return a.relu_()\n"         # 12
)


def replace(source: str, old: str, new: str) -> TextEdit:
    at = source.index(old)
    return TextEdit(at, at + len(old), new)


def card(lines: Tuple[SourceLine, ...], fix: Optional[Fix]) -> Diagnosis:
    return Diagnosis(kind="k", severity="error", title="t", summary="s", what="w", why="y", where="h",
                     source=CELL, lines=lines, fix=fix)


def this_cell_fix(*edits: TextEdit, source: Optional[str] = None) -> Fix:
    return Fix("d", source if source is not None else apply_edits(CELL, edits), tuple(edits))


def earlier_fix(*edits: TextEdit, cell: int = 2) -> Fix:
    return Fix("d", "", (), (CellFix(cell, "", EARLIER, apply_edits(EARLIER, edits), tuple(edits)),))


FORWARD_LINE = SourceLine(8, "        h += 1", cell=2, function="Block.forward", elsewhere=True)
CALLING_LINE = SourceLine(3, "y = x.relu_()")


def test_a_fix_of_the_named_line_passes():
    d = card((CALLING_LINE,), this_cell_fix(replace(CELL, "x.relu_()", "x.relu()")))
    assert withheld_because(d) is None
    assert guarded(d) is d


def test_a_fix_whose_text_is_not_its_edits_is_withheld():
    edit = replace(CELL, "x.relu_()", "x.relu()")
    d = card((CALLING_LINE,), this_cell_fix(edit, source=CELL.replace("x.relu_()", "x.relu(); import os")))
    assert withheld_because(d) == "guard.inconsistent"


def test_a_fix_that_does_not_compile_is_withheld():
    d = card((CALLING_LINE,), this_cell_fix(replace(CELL, "x.relu_()", "x.relu(inplace=1, inplace=2)")))
    assert withheld_because(d) == "guard.does_not_compile"


def test_a_fix_of_a_cell_the_card_does_not_name_is_withheld():
    d = card((CALLING_LINE,), earlier_fix(replace(EARLIER, "h += 1", "h = h + 1")))
    assert withheld_because(d) == "guard.unnamed_cell"
    named = card((FORWARD_LINE, CALLING_LINE), earlier_fix(replace(EARLIER, "h += 1", "h = h + 1")))
    assert withheld_because(named) is None


def test_an_edit_in_another_function_of_the_named_cell_is_withheld():
    d = card((FORWARD_LINE, CALLING_LINE), earlier_fix(replace(EARLIER, "a.relu_()", "a.relu()")))
    assert withheld_because(d) == "guard.outside_evidence"


@pytest.mark.parametrize("old, new", [("h = x.sigmoid()", "h = x.sigmoid().clone()"),  # same function
                                      ("        return h\n", "        return h.clone()\n")])
def test_an_edit_in_the_function_of_a_named_line_passes(old, new):
    d = card((FORWARD_LINE, CALLING_LINE), earlier_fix(replace(EARLIER, old, new)))
    assert withheld_because(d) is None


def test_an_edit_next_to_a_named_line_passes_across_scopes():
    line = SourceLine(11, "def unrelated(a):", cell=2, function="", elsewhere=True)
    d = card((line,), earlier_fix(replace(EARLIER, "    return a.relu_()", "    return a.relu()")))
    assert withheld_because(d) is None


def test_the_engine_withholds_a_failing_fix_and_says_why():
    @rule("test-guarded-rule", raises=ZeroDivisionError)
    def proposes_elsewhere(ctx):
        wrong = earlier_fix(replace(EARLIER, "h += 1", "h = h + 1"))  # NB: a cell the card never names
        return ctx.diagnosis("test-guarded-rule", "error", title="t", summary="s", what="w", why="y",
                             where="h", lines=[2], fix=wrong)

    try:
        record = RunRecord(filename="<cell>", source=CELL, exception=ZeroDivisionError("boom"), error_lineno=3)
        found = diagnose(record, {})
    finally:
        RULES.pop("test-guarded-rule")
    assert found[0].kind == "test-guarded-rule"
    assert found[0].fix is None
    assert any("not offered" in n and "does not point to" in n for n in found[0].notes), found[0].notes


def warning_card(lines, fix) -> Diagnosis:
    return Diagnosis(kind="w", severity="warning", title="t", summary="s", what="w", why="y", where="h",
                     source=CELL, lines=lines, fix=fix)


def test_two_cards_never_fix_one_line_two_ways():
    error = card((CALLING_LINE,), this_cell_fix(replace(CELL, "x.relu_()", "x.relu()")))
    other = warning_card((CALLING_LINE,), this_cell_fix(replace(CELL, "x.relu_()", "x.detach().relu_()")))
    same = warning_card((CALLING_LINE,), this_cell_fix(replace(CELL, "x.relu_()", "x.relu()")))
    kept = agreeing([error, other, same])
    assert kept[0] is error and kept[2] is same
    assert kept[1].fix is None and any("same line" in n for n in kept[1].notes)


def test_new_lines_inserted_before_one_line_do_not_disagree():
    at = CELL.index("y = ")
    one = warning_card((CALLING_LINE,), this_cell_fix(TextEdit(at, at, "opt.zero_grad()\n")))
    two = warning_card((CALLING_LINE,), this_cell_fix(TextEdit(at, at, "model.train()\n")))
    assert agreeing([one, two]) == [one, two]
