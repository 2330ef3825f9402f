"""The variant transforms (tests/variants.py) on small synthetic cases: a renamed case keeps its line numbers,
keyword arguments, attributes and imports, and renames inside f-strings; merge, split and helper move the
culprit and the reference fix with the cells. Over the real corpus (texts only, nothing run): every variant is
valid Python and its culprit line is the original's line. One small run checks the runner and the scoring."""
from __future__ import annotations

import pytest

import variants as V
from corpus import cases

LOAD = "%load_ext grad_magic"


def case(cell: int, line: int, fixes=(), function: str = "<module>") -> dict:
    return {"kind": "some-kind", "silent": False, "culprit": {"cell": cell, "line": line, "function": function},
            "fix": [{"cell": k, "source": s} for k, s in fixes]}


def run_plain(cells) -> dict:
    """The cells run with `exec` in one namespace, magic lines left out (no IPython, no torch)."""
    ns: dict = {}
    for cell in cells:
        exec(V.python_of(cell), ns)
    return ns


# -- renamed --

NET = '''import math
import torch.nn as nn
lr = 0.1
class Net(nn.Module):
    scale = 2
    def __init__(self, width=4, depth=1):
        super().__init__()
        self.width = width * depth

    def forward(self, x):
        return x * self.width
model = Net(width=3)
'''
LOOP = '''%%gradcheck
for step in range(2):
    out = model.forward(step)
    print(f"{step!r:>{lr}} {out * Net.scale:.2f} {{step}} {math.pi}")
'''


def test_rename_keeps_lines_keywords_attributes_and_imports():
    cells = [LOAD, NET, LOOP]
    out = V.renamed(cells, case(3, 3)).cells
    assert [c.count("\n") for c in out] == [c.count("\n") for c in cells]
    assert out[0] == LOAD and out[2].startswith("%%gradcheck\n")
    m = V.rename_map(cells)
    assert out[1] == (
        "import math\nimport torch.nn as nn\n"
        f"{m['lr']} = 0.1\n"
        f"class {m['Net']}(nn.Module):\n"
        "    scale = 2\n"  # NB: a class attribute, read as one
        f"    def __init__(self, width=4, {m['depth']}=1):\n"  # NB: `width` is passed by keyword
        "        super().__init__()\n"
        f"        self.width = width * {m['depth']}\n\n"
        f"    def forward(self, {m['x']}):\n"
        f"        return {m['x']} * self.width\n"
        f"{m['model']} = {m['Net']}(width=3)\n")


def test_rename_is_consistent_across_cells_and_inside_fstrings():
    cells = [LOAD, NET, LOOP]
    mapping = V.rename_map(cells)
    assert set(mapping) == {"Net", "depth", "lr", "model", "out", "step", "x"}
    assert all(new.startswith("zz_") for new in mapping.values())
    loop = V.rename(LOOP, mapping)
    m = mapping
    assert (f'print(f"{{{m["step"]}!r:>{{{m["lr"]}}}}} {{{m["out"]} * {m["Net"]}.scale:.2f}} {{{{step}}}} '
            f'{{math.pi}}")') in loop
    assert f"{m['out']} = {m['model']}.forward({m['step']})" in loop
    ns = run_plain(V.renamed([LOAD, NET, LOOP.replace("print", "str")], case(3, 3)).cells)
    assert ns[m["model"]].width == 3


def test_rename_keeps_names_passed_by_keyword_or_by_dict_key():
    cells = [LOAD, "def f(a, b, c):\n    return a + b + c\n",
             '%%gradcheck\nbatch = {"a": 1, "b": 2}\nf(c=3, **batch)\n']
    mapping = V.rename_map(cells)
    assert set(mapping) == {"batch", "f"}
    assert run_plain(V.renamed(cells, case(3, 2)).cells)[mapping["batch"]] == {"a": 1, "b": 2}


def test_rename_handles_nested_quotes_comparisons_and_leaves_attributes():
    mapping = {"d": "zz_0", "x": "zz_1"}
    assert V.rename('y = f"{d[\'x\'] != x} {obj.x} {x=}"\n', mapping) == \
        'y = f"{zz_0[\'x\'] != zz_1} {obj.x} {zz_1=}"\n'
    assert V.rename("%time x = 1\nx.d = d\n", mapping) == "%time x = 1\nzz_1.d = zz_0\n"


def test_rename_moves_the_fix_and_the_culprit_function():
    cells = [LOAD, "def train(model):\n    return model\n", "%%gradcheck\ntrain(1)\n"]
    v = V.renamed(cells, case(2, 2, [(2, "def train(model):\n    return model * 2\n")], function="train"))
    m = V.rename_map(cells + ["def train(model):\n    return model * 2\n"])
    assert v.case["culprit"] == {"cell": 2, "line": 2, "function": m["train"]}
    assert v.case["fix"] == [{"cell": 2, "source": f"def {m['train']}({m['model']}):\n    return {m['model']} * 2\n"}]


# -- merged --

FIVE = [LOAD, "a = 1\nb = 2\n", "c = a + b", "d = c * 2\ne = d + 1\n", "%%gradcheck\nprint(e)\n"]


def test_merge_joins_the_culprit_cell_with_the_one_before():
    v = V.merged(FIVE, case(4, 2, [(4, "d = c * 3\ne = d + 1\n"), (5, "%%gradcheck\nprint(e + 0)\n")]))
    assert v.cells == (LOAD, FIVE[1], "c = a + b\n\nd = c * 2\ne = d + 1\n", FIVE[4])
    assert (v.case["culprit"]["cell"], v.case["culprit"]["line"]) == (3, 4)
    assert v.cells[2].split("\n")[3] == "e = d + 1"
    assert v.case["fix"] == [{"cell": 3, "source": "c = a + b\n\nd = c * 3\ne = d + 1\n"},
                             {"cell": 4, "source": "%%gradcheck\nprint(e + 0)\n"}]


def test_merge_takes_cells_2_and_3_for_a_culprit_in_2_and_the_two_before_the_last_for_one_in_it():
    v = V.merged(FIVE, case(2, 2, [(4, "d = 0\ne = 0\n")]))
    assert v.cells[1] == "a = 1\nb = 2\n\nc = a + b" and len(v.cells) == 4
    assert (v.case["culprit"]["cell"], v.case["culprit"]["line"]) == (2, 2)
    assert v.case["fix"] == [{"cell": 3, "source": "d = 0\ne = 0\n"}]
    v = V.merged(FIVE, case(5, 2))
    assert v.cells[2] == "c = a + b\n\nd = c * 2\ne = d + 1\n"
    assert (v.case["culprit"]["cell"], v.case["culprit"]["line"]) == (4, 2)
    assert V.merged([LOAD, "a = 1", "%%gradcheck\na\n"], case(3, 2)).skipped


# -- split --

def test_split_cuts_before_the_culprits_statement_else_after_it():
    cell = "import math\n\ndef f(x):\n    return x + 1\n\ny = f(1)\n"
    cells = [LOAD, cell, "%%gradcheck\nprint(y)\n"]
    v = V.split(cells, case(2, 4, [(2, cell.replace("x + 1", "x + 2")), (3, "%%gradcheck\nprint(y, 0)\n")]))
    assert v.cells[1:3] == ("import math\n", "def f(x):\n    return x + 1\n\ny = f(1)\n")
    assert (v.case["culprit"]["cell"], v.case["culprit"]["line"]) == (3, 2)
    assert v.case["fix"] == [{"cell": 3, "source": "def f(x):\n    return x + 2\n\ny = f(1)\n"},
                             {"cell": 4, "source": "%%gradcheck\nprint(y, 0)\n"}]
    v = V.split(cells, case(2, 1))
    assert v.cells[1:3] == ("import math\n", "def f(x):\n    return x + 1\n\ny = f(1)\n")
    assert (v.case["culprit"]["cell"], v.case["culprit"]["line"]) == (2, 1)
    assert run_plain(v.cells)["y"] == 2


def test_split_cuts_the_cell_before_a_culprit_in_the_last_cell_and_skips_when_none_can_be_cut():
    cells = [LOAD, "a = 1\nb = 2\n", "%%gradcheck\nprint(a + b)\n"]
    v = V.split(cells, case(3, 2, [(3, "%%gradcheck\nprint(a - b)\n")]))
    assert v.cells == (LOAD, "a = 1\n", "b = 2\n", cells[2])
    assert (v.case["culprit"]["cell"], v.case["culprit"]["line"]) == (4, 2)
    assert v.case["fix"] == [{"cell": 4, "source": "%%gradcheck\nprint(a - b)\n"}]
    assert "statement boundary" in V.split([LOAD, "a = 1\n", "%%gradcheck\nprint(a)\n"], case(3, 2)).skipped


def test_split_cuts_a_fix_that_changes_both_sides_at_the_same_statement():
    cells = [LOAD, "a = 1\nb = 2\n", "%%gradcheck\nprint(a + b)\n"]
    v = V.split(cells, case(2, 2, [(2, "a = 10\nb = 20\n")]))
    assert v.case["fix"] == [{"cell": 2, "source": "a = 10\n"}, {"cell": 3, "source": "b = 20\n"}]


# -- helper --

LAST = '%%gradcheck --no-nan-check\ntotal = 0\nfor i in range(3):\n    total += i\ndoc = """x\ny"""\nprint(total)\n'


def test_helper_moves_the_body_into_a_function_that_sets_its_globals():
    cells = [LOAD, "start = 1\n", LAST]
    v = V.helper(cells, case(3, 4, [(3, LAST.replace("+= i", "+= i * start"))]))
    assert v.cells[-1] == "%%gradcheck --no-nan-check\n_run_cell()\n"
    assert v.cells[2].split("\n")[:4] == ["def _run_cell():", "    global total, i, doc", "    total = 0",
                                          "    for i in range(3):"]
    assert '    doc = """x\ny"""' in v.cells[2]  # NB: the inside of a string stays as it was
    assert v.case["culprit"] == {"cell": 3, "line": 5, "function": "_run_cell"}
    assert v.cells[2].split("\n")[4] == "        total += i"
    assert v.case["fix"] == [{"cell": 3, "source": V._helper_cell(LAST.replace("+= i", "+= i * start")
                                                                .partition("\n")[2])[0]}]
    ns = run_plain(v.cells)
    assert (ns["total"], ns["doc"]) == (3, "x\ny")


def test_helper_leaves_an_earlier_culprit_and_skips_a_top_level_return():
    cells = [LOAD, "start = 1\n", LAST]
    v = V.helper(cells, case(2, 1, [(2, "start = 2\n")]))
    assert v.case["culprit"]["cell"] == 2 and v.case["fix"] == [{"cell": 2, "source": "start = 2\n"}]
    assert len(v.cells) == 4
    assert "Return" in V.helper([LOAD, "%%gradcheck\nreturn 1\n"], case(2, 2)).skipped


# -- Over the real corpus: texts only --

@pytest.mark.parametrize("path", cases(), ids=[p.stem for p in cases()])
def test_every_variant_of_the_corpus_parses_and_keeps_its_culprit_line(path):
    c = V.load(path)
    cell, line = c.meta["culprit"]["cell"], c.meta["culprit"]["line"]
    mapping = V.rename_map(list(c.cells) + [f["source"] for f in c.meta["fix"]])
    for v in V.variants(c):
        if v.skipped:
            continue
        assert not V.syntax_problems(v), (v.name, V.syntax_problems(v))
        moved = v.cells[v.case["culprit"]["cell"] - 1].split("\n")[v.case["culprit"]["line"] - 1]
        text = V.rename(c.cells[cell - 1], mapping) if v.name == "renamed" else c.cells[cell - 1]
        assert moved.strip() == text.split("\n")[line - 1].strip(), v.name


# -- The runner and the scoring, on one small crash --

SAVED = [LOAD, "import torch\nw = torch.ones(3, requires_grad=True)\n",
         "%%gradcheck\ns = w.sigmoid()\ns.mul_(2)\ns.sum().backward()\n"]


def test_run_variant_numbers_cells_and_scores_a_variant():
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    import grad_magic

    sh = InteractiveShell.instance()
    publisher, sh.display_pub = sh.display_pub, CapturingDisplayPublisher()
    sh.display_pub.shell = sh
    try:
        errors, cards = V.run_variant(sh, SAVED)
        assert errors == [(3, "RuntimeError")]
        kind = cards[0]["kind"]
        fixed = "%%gradcheck\ns = w.sigmoid()\ns = s.mul(2)\ns.sum().backward()\n"
        c = V.Case("saved", tuple(SAVED), case(3, 3, [(3, fixed)]) | {"kind": kind})
        outcome = V.score(c, V.helper(c.cells, c.meta), sh)
        assert outcome.valid, outcome.problems
        assert outcome.want == (3, 4) and outcome.kind_right
    finally:
        sh.display_pub = publisher
        grad_magic.state.remember([])
