"""Variants of a real-notebook case (tests/notebooks, see tests/corpus.py) that keep the bug and change only how
it is written: a verdict must not depend on the spelling of the user's names, on where the cells are cut, or on
whether the `%%gradcheck` cell calls a helper.

Four transforms, each a pure function of the code cells' texts and the case's `grad_magic_case` metadata; each
gives a `Variant`: its cells, and the metadata with the culprit (cell In [k], line) and the reference fix moved
the same way. A transform that cannot apply gives the variant `skipped`, with the reason.

- `renamed`: every name the user's code binds becomes `zz_<i>`, the same in every cell and in the fix; line
  structure, keyword arguments, attributes, imports and builtins untouched.
- `merged`: the culprit's cell and the one before it (In [2] and In [3] when the culprit is in In [2]; the two
  cells before the last when it is in the last) become one cell.
- `split`: the culprit's cell cut in two at a top-level statement (the cell before it when the culprit is in
  the last cell, or alone in its own).
- `helper`: the `%%gradcheck` cell's body moved into `def _run_cell():` in a new cell before it; the last cell
  only calls it.

`run_variant` runs cells in an in-process IPython shell as tests/healthy.py does; `score` holds what grad_magic
said about a variant against the transformed case, as corpus.Outcome does for a notebook. This module touches
no file; it runs user code only in the shell it is given.

Used by tests/test_variants.py and scripts/variants_report.py.
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import io
import json
import re
import tokenize
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from corpus import MIME, Run, proposed_changes, runs_clean

Cells = List[str]
Meta = Dict[str, Any]
HELPER = "_run_cell"
RENAMED_PREFIX = "zz_"
# NB: `self` and `cls` are spelled so by convention, `_` is IPython's last result: renaming them tests nothing a
# user writes
_KEPT_ALWAYS = frozenset({"self", "cls", "_"})
_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Case:
    """A corpus notebook: its name, its code cells' texts, its `grad_magic_case` metadata."""

    name: str
    cells: Tuple[str, ...]
    meta: Meta


@dataclass(frozen=True)
class Variant:
    """One way of writing a case: the transform's name, the code cells, the case metadata moved to match
    (culprit cell and line, reference fix cells). `skipped` says why the transform does not apply (then the
    cells and metadata are the original's)."""

    name: str
    cells: Tuple[str, ...]
    case: Meta
    skipped: str = ""


def load(path: Path) -> Case:
    import nbformat

    nb = nbformat.read(path, as_version=4)
    meta = json.loads(json.dumps(nb.metadata["grad_magic_case"]))  # NB: plain dicts, not NotebookNodes
    return Case(path.stem, tuple(c.source for c in nb.cells if c.cell_type == "code"), meta)


def python_of(cell: str) -> str:
    """The cell as Python: lines that start with `%` or `!` (IPython magics, shell) emptied, numbering kept."""
    return "\n".join("" if line.startswith(("%", "!")) else line for line in cell.split("\n"))


def _variant(name: str, cells: Sequence[str], case: Meta, where: Callable[[int, int], Tuple[int, int]],
             fixes: Mapping[int, str]) -> Variant:
    """A variant whose culprit moves by `where(cell, line) -> (cell, line)` and whose fix is `fixes` (In [k] ->
    full text; cells the fix leaves as they are dropped)."""
    meta = copy.deepcopy(case)
    culprit = meta["culprit"]
    culprit["cell"], culprit["line"] = where(culprit["cell"], culprit["line"])
    meta["fix"] = [{"cell": k, "source": s} for k, s in sorted(fixes.items()) if s != cells[k - 1]]
    return Variant(name, tuple(cells), meta)


def _skipped(name: str, cells: Sequence[str], case: Meta, why: str) -> Variant:
    return Variant(name, tuple(cells), copy.deepcopy(case), skipped=why)


def _fixes(case: Meta) -> Dict[int, str]:
    return {f["cell"]: f["source"] for f in case.get("fix") or []}


# -- The baseline: the case as it is --

def original(cells: Sequence[str], case: Meta) -> Variant:
    return _variant("original", cells, case, lambda k, line: (k, line), _fixes(case))


# -- renamed --

def _scope_nodes(stmts: Sequence[ast.AST]) -> Iterator[ast.AST]:
    """Every node of these statements' own scope: a nested def, class, lambda or comprehension is yielded
    itself, but not entered."""
    todo = list(reversed(stmts))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
                                 ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            todo.extend(reversed(list(ast.iter_child_nodes(node))))


def _bound_here(node: ast.AST) -> List[str]:
    """The names `node` itself binds in the scope it belongs to."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in node.names if a.name != "*"]
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def scope_bindings(stmts: Sequence[ast.AST]) -> List[str]:
    """The names these statements bind in their own scope, in order of first binding."""
    return list(dict.fromkeys(name for node in _scope_nodes(stmts) for name in _bound_here(node)))


def _kept_names(tree: ast.AST) -> set:
    """Names bound here that must keep their spelling: imported names and module names, keyword-argument
    names (and so the parameters callers pass by keyword), names bound in a class body (they are read as
    attributes), and parameters whose name is also a string in the code (a dict unpacked with `**`)."""
    kept, params, strings = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            kept |= {part for a in node.names for part in (a.asname or a.name).split(".")}
            kept |= {part for a in node.names for part in a.name.split(".")}
        elif isinstance(node, ast.ImportFrom):
            kept |= {a.asname or a.name for a in node.names} | set((node.module or "").split("."))
        elif isinstance(node, ast.keyword) and node.arg:
            kept.add(node.arg)
        elif isinstance(node, ast.ClassDef):
            kept |= set(scope_bindings(node.body))
        elif isinstance(node, ast.arg):
            params.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            strings.add(node.value)
    return kept | (params & strings)


def rename_map(texts: Sequence[str]) -> Dict[str, str]:
    """The user's own names (bound in `texts`, not kept) -> `zz_<i>`, alphabetically; a new name never clashes
    with a word already in the texts."""
    # NB: one tree of every text: a parameter in one cell may be a dict key in another
    tree = ast.Module(body=[s for text in texts for s in ast.parse(python_of(text)).body], type_ignores=[])
    bound = {name for node in ast.walk(tree) for name in _bound_here(node)}
    bound |= {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    kept = _kept_names(tree) | _KEPT_ALWAYS | _BUILTINS
    words = set(re.findall(r"\w+", "\n".join(texts)))
    fresh = (f"{RENAMED_PREFIX}{i}" for i in count() if f"{RENAMED_PREFIX}{i}" not in words)
    own = sorted(n for n in bound - kept if not (n.startswith("__") and n.endswith("__")))
    return {name: next(fresh) for name in own}


def _masked(text: str) -> str:
    """The text with each magic or shell line made a comment of the same length (positions kept)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            lines[i] = line[:len(line) - len(stripped)] + "#" + stripped[1:]
    return "\n".join(lines)


def rename(text: str, mapping: Mapping[str, str]) -> str:
    """`text` with every name token in `mapping` replaced (not an attribute after a dot, not a magic line),
    f-string replacement fields included. Every other character stays."""
    edits, previous = [], ""
    for tok in tokenize.generate_tokens(io.StringIO(_masked(text)).readline):
        if tok.type == tokenize.NAME and tok.string in mapping and previous != ".":
            edits.append((tok.start, tok.end, mapping[tok.string]))
        elif tok.type == tokenize.STRING:
            new = _renamed_fstring(tok.string, mapping)
            if new != tok.string:
                edits.append((tok.start, tok.end, new))
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok.string
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    for (row, col), (end_row, end_col), new in reversed(edits):
        text = text[:starts[row - 1] + col] + new + text[starts[end_row - 1] + end_col:]
    return text


_STRING = re.compile(r"([A-Za-z]*)('''|\"\"\"|'|\")(.*)\2", re.S)


def _renamed_fstring(token: str, mapping: Mapping[str, str]) -> str:
    """An f-string token (one STRING token before Python 3.12) with its `{...}` fields renamed."""
    m = _STRING.fullmatch(token)
    if m is None or "f" not in m.group(1).lower():
        return token
    prefix, quote, body = m.groups()
    return prefix + quote + _renamed_fields(body, mapping) + quote


def _renamed_fields(body: str, mapping: Mapping[str, str]) -> str:
    out, i = [], 0
    while i < len(body):
        if body.startswith(("{{", "}}"), i):
            out.append(body[i:i + 2])
            i += 2
        elif body[i] == "{":
            end = _expression_end(body, i + 1)
            close = _field_close(body, end)
            expression = rename("(" + body[i + 1:end] + ")", mapping)[1:-1]
            # NB: the conversion and format spec may hold fields of their own (`{x:>{width}}`)
            out.append("{" + expression + _renamed_fields(body[end:close], mapping) + "}")
            i = close + 1
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def _expression_end(body: str, i: int) -> int:
    """Where a replacement field's expression that starts at `i` ends: its `!`, `:` or `}` at depth 0."""
    depth, quote = 0, ""
    while i < len(body):
        if quote:
            if body.startswith(quote, i):
                i, quote = i + len(quote), ""
                continue
        elif body[i] in "'\"":
            quote = body[i] * 3 if body.startswith(body[i] * 3, i) else body[i]
            i += len(quote)
            continue
        elif body[i] in "([{":
            depth += 1
        elif body[i] in ")]}" and depth:
            depth -= 1
        elif body[i] == "}" or (body[i] == ":" and not depth) or (body[i] == "!" and not depth
                                                                   and not body.startswith("!=", i)):
            return i
        i += 1
    return i


def _field_close(body: str, i: int) -> int:
    depth = 0
    for k in range(i, len(body)):
        if body[k] == "{":
            depth += 1
        elif body[k] == "}":
            if not depth:
                return k
            depth -= 1
    return len(body)


def renamed(cells: Sequence[str], case: Meta) -> Variant:
    fixes = _fixes(case)
    mapping = rename_map(list(cells) + list(fixes.values()))
    out = [rename(c, mapping) for c in cells]
    variant = _variant("renamed", out, case, lambda k, line: (k, line),
                       {k: rename(s, mapping) for k, s in fixes.items()})
    function = variant.case["culprit"].get("function")
    variant.case["culprit"]["function"] = mapping.get(function, function)
    return variant


# -- merged --

def _joined(first: str, second: str) -> Tuple[str, int]:
    """Two cells' texts as one (a blank line between), and how far the second one's lines moved down."""
    head = first.rstrip("\n")
    return head + "\n\n" + second, head.count("\n") + 2


def merged(cells: Sequence[str], case: Meta) -> Variant:
    n, culprit = len(cells), case["culprit"]["cell"]
    a = n - 2 if culprit == n else max(culprit - 1, 2)
    b = a + 1
    if a < 2 or b > n - 1:
        return _skipped("merged", cells, case, "no two adjacent cells between the first and the last")
    if cells[b - 1].startswith("%%"):
        return _skipped("merged", cells, case, f"In [{b}] is a cell magic")
    text, shift = _joined(cells[a - 1], cells[b - 1])

    def where(k: int, line: int) -> Tuple[int, int]:
        return (a, line + shift) if k == b else (k - 1 if k > b else k, line)

    fixes = _fixes(case)
    moved = {where(k, 1)[0]: s for k, s in fixes.items() if k not in (a, b)}
    if a in fixes or b in fixes:
        moved[a] = _joined(fixes.get(a, cells[a - 1]), fixes.get(b, cells[b - 1]))[0]
    out = list(cells[:a - 1]) + [text] + list(cells[b:])
    return _variant("merged", out, case, where, moved)


# -- split --

def _statements(cell: str) -> List[Tuple[int, int]]:
    """The cell's top-level statements as (first line, last line), decorators included."""
    body = ast.parse(python_of(cell)).body
    return [(min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])]), s.end_lineno) for s in body]


def _cut(text: str, line: int) -> Tuple[str, str]:
    """The text cut before `line` (1-based): the first part without its trailing blank lines."""
    lines = text.split("\n")
    return "\n".join(lines[:line - 1]).rstrip() + "\n", "\n".join(lines[line - 1:])


def _split_point(cells: Sequence[str], culprit: Mapping[str, int]) -> Optional[Tuple[int, int]]:
    """(In [k], the line the second part starts at): before the culprit's statement, else after it; else before
    the last statement of the cell before the culprit's."""
    k, n = culprit["cell"], len(cells)
    if 1 < k < n:
        spans = _statements(cells[k - 1])
        at = next((i for i, (first, last) in enumerate(spans) if first <= culprit["line"] <= last), None)
        if at is not None and at > 0:
            return k, spans[at][0]
        if at == 0 and len(spans) > 1:
            return k, spans[1][0]
    if 1 < k - 1 < n:
        spans = _statements(cells[k - 2])
        if len(spans) > 1:
            return k - 1, spans[-1][0]
    return None


def _cut_like(fixed: str, first: str, second: str) -> Optional[Tuple[str, str]]:
    """The fixed text of a cut cell cut at the same place: after the same first part, else before the same
    second part, else before the statement that has the same number; None when the fix has too few."""
    lines, head, tail = fixed.split("\n"), first.rstrip().split("\n"), second.split("\n")
    if lines[:len(head)] == head:
        return first, "\n".join(lines[len(head):]).lstrip("\n")
    if len(lines) > len(tail) and lines[-len(tail):] == tail:
        return "\n".join(lines[:-len(tail)]).rstrip() + "\n", second
    spans, before = _statements(fixed), len(_statements(first))
    return _cut(fixed, spans[before][0]) if len(spans) > before else None


def split(cells: Sequence[str], case: Meta) -> Variant:
    point = _split_point(cells, case["culprit"])
    if point is None:
        return _skipped("split", cells, case, "neither the culprit's cell nor the one before it has a "
                                              "top-level statement boundary to cut at")
    k, at = point
    first, second = _cut(cells[k - 1], at)

    def where(cell: int, line: int) -> Tuple[int, int]:
        if cell == k and line >= at:
            return k + 1, line - at + 1
        return (cell + 1 if cell > k else cell), line

    fixes = _fixes(case)
    moved = {where(c, 1)[0]: s for c, s in fixes.items() if c != k}
    if k in fixes:
        parts = _cut_like(fixes[k], first, second)
        if parts is None:
            return _skipped("split", cells, case, f"the reference fix of In [{k}] has fewer statements "
                                                  "than the cut needs")
        moved[k], moved[k + 1] = parts
    out = list(cells[:k - 1]) + [first, second] + list(cells[k:])
    return _variant("split", out, case, where, moved)


# -- helper --

def _helper_cell(body: str) -> Tuple[str, int]:
    """`def _run_cell():` with a `global` line for what the body binds at its top level, then the body
    indented (not the inside of a multi-line string); and how many lines come before the body."""
    names = scope_bindings(ast.parse(python_of(body)).body)
    head = [f"def {HELPER}():"] + ([f"    global {', '.join(names)}"] if names else [])
    inside = _inside_strings(_masked(body))
    lines = [line if (i in inside or not line.strip()) else "    " + line
             for i, line in enumerate(body.split("\n"), start=1)]
    return "\n".join(head + lines), len(head)


def _inside_strings(text: str) -> set:
    """The lines (1-based) that begin inside a multi-line string token."""
    rows = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            rows |= set(range(tok.start[0] + 1, tok.end[0] + 1))
    return rows


def _why_not_helper(body: str) -> str:
    if any(line.startswith("%%") for line in body.split("\n")):
        return "the cell has another cell magic"
    stmts = ast.parse(python_of(body)).body
    if not stmts:
        return "the cell has no statement"
    nodes = list(_scope_nodes(stmts))
    bad = [n for n in nodes if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global,
                                              ast.Nonlocal))
           or (isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names))]
    return f"the cell's top level has `{type(bad[0]).__name__}`, which a function body changes" if bad else ""


def helper(cells: Sequence[str], case: Meta) -> Variant:
    n = len(cells)
    magic, _, body = cells[-1].partition("\n")
    why = _why_not_helper(body) if magic.startswith("%%gradcheck") else "the last cell is not %%gradcheck"
    if why:
        return _skipped("helper", cells, case, why)
    defined, shift = _helper_cell(body)
    call = f"{magic}\n{HELPER}()\n"

    def where(k: int, line: int) -> Tuple[int, int]:
        return (n, line - 1 + shift) if k == n else (k, line)

    fixes = _fixes(case)
    moved = {k: s for k, s in fixes.items() if k != n}
    if n in fixes:
        fixed_magic, _, fixed_body = fixes[n].partition("\n")
        if fixed_magic != magic or _why_not_helper(fixed_body):
            return _skipped("helper", cells, case, "the reference fix changes the %%gradcheck line or cannot "
                                                   "move into a function")
        moved[n] = _helper_cell(fixed_body)[0]
    variant = _variant("helper", list(cells[:-1]) + [defined, call], case, where, moved)
    if variant.case["culprit"]["cell"] == n:
        variant.case["culprit"]["function"] = HELPER
    return variant


TRANSFORMS: Dict[str, Callable[[Sequence[str], Meta], Variant]] = {
    "renamed": renamed, "merged": merged, "split": split, "helper": helper}


BASELINE = "original"


def variants(case: Case) -> List[Variant]:
    """The case's four variants (some possibly skipped), in the order of TRANSFORMS."""
    return [transform(case.cells, case.meta) for transform in TRANSFORMS.values()]


def syntax_problems(variant: Variant) -> List[str]:
    """Each cell, and each reference fix cell, of the variant that is not valid Python (magic lines aside)."""
    texts = [(f"In [{k}]", c) for k, c in enumerate(variant.cells, start=1)]
    texts += [(f"the fix of In [{f['cell']}]", f["source"]) for f in variant.case.get("fix") or []]
    found = []
    for label, text in texts:
        try:
            ast.parse(python_of(text))
        except SyntaxError as e:
            found.append(f"{label} does not parse: {e}")
    return found


# -- Running and scoring --

def make_shell() -> Any:
    """The process's IPython shell with captured display output and a history kept in memory (workers in
    other processes write no shared history file)."""
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    sh = InteractiveShell.instance(config=config)
    sh.display_pub = CapturingDisplayPublisher()
    sh.display_pub.shell = sh
    return sh


def run_variant(shell: Any, cells: Sequence[str]) -> Tuple[List[Tuple[int, str]], List[Dict[str, Any]]]:
    """Runs the cells, in order, in a fresh session of `shell` (its display publisher capturing), each stored
    in history so that cell k is In [k]; the first cell loads grad_magic. Every cell runs, as a notebook run
    with errors allowed does. The errors (In [k], exception name) and the cards shown; the cells' own output
    is dropped."""
    shell.reset(new_session=True)
    before = len(shell.display_pub.outputs)
    errors = []
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for k, cell in enumerate(cells, start=1):
                result = shell.run_cell(cell, store_history=True)
                if not result.success:
                    errors.append((k, type(result.error_in_exec or result.error_before_exec).__name__))
    finally:
        if "grad_magic" in shell.extension_manager.loaded:
            shell.run_line_magic("unload_ext", "grad_magic")
    shown = [o["data"] for o in shell.display_pub.outputs[before:]]
    del shell.display_pub.outputs[before:]
    return errors, [d[MIME] for d in shown if MIME in d]


@dataclass(frozen=True)
class VariantOutcome:
    """What grad_magic said about one variant, against the transformed case (corpus.Outcome's definitions).
    `problems` say why the variant is not a valid case (a bug of the transform, never grad_magic's)."""

    kind_right: bool
    culprit_named: bool
    fix_proposed: bool
    fix_clean: bool
    problems: Tuple[str, ...]
    case: str = ""
    variant: str = ""
    card_kind: str = ""  # the card of the expected kind, else the first card's; "" when none
    named: Tuple[Tuple[Any, int], ...] = ()  # the card's (cell, lineno) lines
    want: Tuple[int, int] = (0, 0)  # the culprit's (In [k], line)
    fixable: bool = True  # the case has a reference fix
    skipped: str = ""

    @property
    def valid(self) -> bool:
        return not self.problems and not self.skipped

    @property
    def right(self) -> bool:
        """Same kind, culprit named, and the fix clean (where the case has a certain fix)."""
        return self.kind_right and self.culprit_named and (self.fix_clean or not self.fixable)


def _with(cells: Sequence[str], changes: Sequence[Tuple[Any, str]]) -> List[str]:
    out = list(cells)
    for target, source in changes:
        out[(len(out) if target == "this" else target) - 1] = source
    return out


def _validity(variant: Variant, original: Run, reference: Optional[Run]) -> List[str]:
    """Why the variant is not a valid case: it does not fail as the case says, or its reference fix is not
    clean."""
    found, case = [], variant.case
    if case.get("silent", False):
        if original.errors:
            found.append(f"a silent case raised: {original.errors}")
    elif [k for k, _ in original.errors] != [len(variant.cells)]:
        found.append(f"the errors are not the last cell's alone: {original.errors}")
    if reference is not None and not runs_clean(reference, case["kind"]):
        found.append(f"the reference fix does not run clean: errors {reference.errors}, "
                     f"cards {[c['kind'] for c in reference.cards]}")
    return found


def score(case: Case, variant: Variant, shell: Any = None) -> VariantOutcome:
    """Runs the variant, grad_magic's proposed fix (when the card of the right kind has one) and the
    reference fix in `shell` (default: this process's `make_shell()`)."""
    want = (variant.case["culprit"]["cell"], variant.case["culprit"]["line"])
    fixable = bool(variant.case.get("fix"))
    blank = dict(case=case.name, variant=variant.name, want=want, fixable=fixable)
    if variant.skipped:
        return VariantOutcome(False, False, False, False, (), skipped=variant.skipped, **blank)
    found = syntax_problems(variant)
    if found:
        return VariantOutcome(False, False, False, False, tuple(found), **blank)
    shell = shell if shell is not None else make_shell()
    original = Run(*run_variant(shell, variant.cells))
    kind = variant.case["kind"]
    card = next((c for c in original.cards if c["kind"] == kind), original.cards[0] if original.cards else None)
    kind_right = card is not None and card["kind"] == kind
    named = tuple((ln.get("cell"), ln["lineno"]) for ln in card["lines"]) if card else ()
    proposed_cells = _with(variant.cells, proposed_changes(card)) if kind_right and card.get("fix") else None
    proposed = Run(*run_variant(shell, proposed_cells)) if proposed_cells is not None else None
    reference_cells = _with(variant.cells, [(f["cell"], f["source"]) for f in variant.case.get("fix") or []])
    reference = None
    if fixable:
        # NB: grad_magic's fix is often the reference fix to the byte: the same cells run once
        same = proposed_cells == reference_cells
        reference = proposed if same else Run(*run_variant(shell, reference_cells))
    return VariantOutcome(kind_right, kind_right and want in named, proposed is not None,
                          runs_clean(proposed, kind), tuple(_validity(variant, original, reference)),
                          card_kind=card["kind"] if card else "", named=named, **blank)


# -- Worker processes (scripts/variants_report.py) --
# NB: here, not in the script: a worker's IPython shell takes the place of its `__main__`, where the pool would
# look the task function up
_WORKER_SHELL: Any = None


def start_worker() -> None:
    """A pool worker's initializer: its own shell, and one core for torch (two workers on two cores)."""
    import torch

    global _WORKER_SHELL
    torch.set_num_threads(1)
    _WORKER_SHELL = make_shell()


def score_task(task: Tuple[str, str]) -> VariantOutcome:
    """Scores (notebook path, transform name or BASELINE) in the worker's shell."""
    path, transform = task
    case = load(Path(path))
    make = original if transform == BASELINE else TRANSFORMS[transform]
    return score(case, make(case.cells, case.meta), _WORKER_SHELL)
