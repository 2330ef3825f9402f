"""Hostile input, fuzzed with Hypothesis: the engine, the fixes and the cards never break on it.

Seeds are real runs: the golden cases' cells, captured (exception, in-place ops, steps, warnings,
namespace) so that the rules get deep into their matching. Hypothesis then mutates them: cell text
(invalid Python, IPython magics, unicode, huge lines), error messages, line numbers, and namespaces
with weird keys and objects whose `__getattr__`/`__repr__`/`__str__`/`__eq__`/`__bool__`/`__class__`
raise. Whatever it makes:
- `diagnose` returns a list of Diagnosis and no rule crashes on it (a crash would be an internal-error
  note: the engine survives it, but the user loses the explanation);
- a proposed fix is a cell that parses (`grad_magic.edits.parses`), or there is none;
- every card renders; the HTML card has only the elements and attributes of a benign card, and the
  user's text shows up in it as text.
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import json
import linecache
import os
import signal
import warnings
import weakref
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple
from unittest import mock

import pytest
import torch
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import grad_magic
from grad_magic import cell as gm_cell, edits as gm_edits
from grad_magic.capture import Capture, CaptureOptions
from grad_magic.engine import diagnose, run_rule
from grad_magic.model import ERROR, WARNING, Diagnosis, Fix, SourceLine, TensorFact, TextEdit
from grad_magic.record import CapturedWarning, OpEvent, RunRecord, StepEvent, TensorSnapshot
from grad_magic.render import Card, mimebundle
from grad_magic.render.json import MIME
from grad_magic.rules.registry import RULES, Rule
from grad_magic.rules.context import RuleContext
from grad_magic.rules.generic import generic

CASES = Path(__file__).parent.parent / "cases"
# NB: CI runs a fixed, modest sample; to hunt, raise the count and let the seed vary (GRAD_MAGIC_FUZZ_RANDOM=1)
EXAMPLES = int(os.environ.get("GRAD_MAGIC_FUZZ_EXAMPLES", "60"))
RANDOM = bool(os.environ.get("GRAD_MAGIC_FUZZ_RANDOM"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not RANDOM,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

# -- hostile text --

FRAGMENTS = [
    "<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "' onmouseover='alert(1)", "</pre></div>",
    "<!--", "-->", "<![CDATA[", "]]>", "<style>*{}</style>", "<gmx-evil gmxattr=1>", "&amp;", "&lt;b&gt;",
    "{{7*7}}", "{% raw %}", "${x}", "{0}", "{name}", "%s", "\\", "\\n", "\t", "\r", "\r\n", "\x0c", "\x0b",
    "\x1c", "\x85", "\u2028", "\u2029", "\x00", "\u200b", "\u202e", "\ufeff", "é", "λ", "变量", "𝔵", "🔥",
    "\U0010ffff", "a" * 3000, "x = " + "(" * 120,
    "%time x", "%%bash", "!ls", "x?", "?x", "%%gradcheck", "%%gradcheck --fast", "%gradfix", "get_ipython()",
    "    ", "\t\t", ":", "def", "lambda: (yield)", "async def f():\n    await x", "x.grad", "w.data", "opt.step()",
    "loss.backward()", "y.mul_(2)", "x += 1", "model.to('cuda')", "torch.load(f)", "with torch.no_grad():",
    "line 999999", 'File "<ipython-input-1-abc>", line 3', "[torch.FloatTensor [3, 4]]", "cuda:0", "meta",
]
TEXTS = st.one_of(st.text(max_size=40), st.sampled_from(FRAGMENTS),
                  st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=8), max_size=4).map("".join))
NAMES = st.one_of(st.sampled_from(["", " ", "a.b", "x", "w", "loss", "model", "opt", "grad", "self", "None",
                                   "__class__", "__dict__", "In", "_", "λ", "变量", "𝔵", "a b", "1x",
                                   "x" * 500,
                                   "model.weight", "<script>", "def"]),
                  st.text(max_size=12))

# -- hostile objects --


class Boom(Exception):
    pass


class Hostile:
    """Every protocol raises: what a user object with a broken or lazy `__getattr__` looks like."""

    def __getattr__(self, name: str) -> Any:
        raise Boom(f"getattr {name}")

    def __repr__(self) -> str:
        raise Boom("repr")

    def __str__(self) -> str:
        raise Boom("str")

    def __eq__(self, other: object) -> bool:
        raise Boom("eq")

    def __hash__(self) -> int:
        raise Boom("hash")

    def __bool__(self) -> bool:
        raise Boom("bool")

    def __len__(self) -> int:
        raise Boom("len")

    def __iter__(self):
        raise Boom("iter")


class HostileClass:
    """`isinstance(obj, X)` reads `obj.__class__` when type(obj) is no X: this one raises."""

    @property
    def __class__(self):  # type: ignore[override]
        raise Boom("__class__")

    @property
    def __dict__(self):  # type: ignore[override]
        raise Boom("__dict__")


class HostileGetattribute:
    def __getattribute__(self, name: str) -> Any:
        raise Boom(f"getattribute {name}")


class Ambiguous:
    """A numpy array or a DataFrame: `==` is elementwise and truth is ambiguous."""

    def __eq__(self, other: object) -> "Ambiguous":  # type: ignore[override]
        return Ambiguous()

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise ValueError("The truth value of an array with more than one element is ambiguous.")


class HostileModule(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(2, 2)

    def parameters(self, recurse: bool = True):
        raise Boom("parameters")

    def named_parameters(self, *args: Any, **kwargs: Any):
        raise Boom("named_parameters")

    def __repr__(self) -> str:
        raise Boom("repr")


class HostileTensor(torch.Tensor):
    """A tensor subclass that supports no torch function (`.shape`, `.device`, ...), as a wrapper subclass
    with a partial `__torch_function__` refuses what it does not implement."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"torch function {getattr(func, '__name__', func)}")


def hostile_values() -> List[Any]:
    values: List[Any] = [Hostile(), HostileClass(), HostileGetattribute(), Ambiguous(), mock.MagicMock(),
                         HostileModule(), torch.zeros(2).as_subclass(HostileTensor), None, 0, "text", b"\xff",
                         float("nan"), [torch.ones(1)] * 3, {"w": torch.ones(1)}, Hostile, type,
                         torch.empty(10 ** 12, device="meta"), torch.zeros(0), torch.tensor(3),
                         torch.ones(2, dtype=torch.int64),
                         torch.ones(2, dtype=torch.complex64, requires_grad=True),
                         torch.nn.Parameter(torch.ones(2)), torch.ones(3, requires_grad=True) * 2,
                         torch.optim, torch.nn.Linear(1, 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NB: torch says these are prototypes
        values.append(torch.sparse_coo_tensor([[0]], [1.0], (2,)))
        values.append(torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]))  # .shape raises
    try:
        import numpy

        values.append(numpy.ones(3))
    except ImportError:  # pragma: no cover - numpy is in the dev extras
        pass
    return values


HOSTILE = hostile_values()
# NB: strategies draw an index: Hypothesis itself calls isinstance() on what a strategy returns
VALUE_INDEX = st.integers(0, len(HOSTILE) - 1)
KEYS = st.one_of(NAMES, NAMES, st.sampled_from([1, (1, 2), None, 2.5]))


class Unprintable(RuntimeError):
    def __str__(self) -> str:
        raise Boom("str of the user's exception")

    def __repr__(self) -> str:
        raise Boom("repr of the user's exception")


# -- seeds: real runs of the golden cases --

def _seed_cases() -> List[Path]:
    chosen: List[Path] = []
    for family in sorted(p for p in CASES.iterdir() if p.is_dir()):
        cells = sorted(p for p in family.glob("*.py") if not p.name.endswith(".setup.py"))
        chosen += cells[:3]
    return chosen


def capture_run(cell: str, setup: Optional[str], name: str) -> Tuple[RunRecord, Dict[str, Any]]:
    """The cell run as %%gradcheck runs it (IPython syntax transformed, the magic line counted), minus IPython."""
    namespace: Dict[str, Any] = {"__name__": "__main__"}
    if setup:
        exec(compile(gm_cell.python_of_cell(setup), f"<setup {name}>", "exec"), namespace)
    filename = f"<fuzz-seed {name}>"
    linecache.cache[filename] = (len(cell), None, cell.splitlines(True), filename)
    pad = "\n" if cell.startswith("%%") else ""
    code = compile(pad + gm_cell.python_of_cell(cell), filename, "exec")
    run = Capture(CaptureOptions(), filename=filename, source=cell)
    try:
        with run:
            exec(code, namespace)
    except BaseException:  # noqa: B036 -- every seed that fails is a seed
        pass
    return run.record, namespace


@functools.lru_cache(maxsize=1)
def seeds() -> List[Tuple[str, RunRecord, Dict[str, Any]]]:
    """NB: cached, not a fixture: Hypothesis prints a failing example's arguments, and these are big."""
    found = []
    with warnings.catch_warnings(record=True):  # NB: the capture records them; nobody needs them shown
        warnings.simplefilter("always")
        for case in _seed_cases():
            setup = case.with_name(case.stem + ".setup.py")
            record, namespace = capture_run(case.read_text(encoding="utf-8"),
                                            setup.read_text(encoding="utf-8") if setup.exists() else None,
                                            f"{case.parent.name}/{case.stem}")
            found.append((f"{case.parent.name}/{case.stem}", record, namespace))
    kinds = {d.kind for _, record, namespace in found for d in diagnose(record, namespace, "en")}
    assert len(kinds) >= 5, f"the seeds reach too few rules: {sorted(kinds)}"
    return found


# -- what every diagnosis must satisfy --

class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Set[str] = set()
        self.attrs: Set[str] = set()
        self.text: List[str] = []
        self.values: List[str] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            self.attrs.add(name)
            self.values.append(value or "")

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def elements(markup: str) -> Elements:
    parser = Elements()
    parser.feed(markup)
    parser.close()
    return parser


def full_card() -> Diagnosis:
    """A benign card with every section a card can have: the elements a card may contain."""
    source = "%%gradcheck\nimport torch\nw = torch.ones(2)\nw.mul_(2)\nw.sum().backward()\n"
    fixed = source.replace("w.mul_(2)", "w = w.mul(2)")
    return Diagnosis(
        kind="k", severity="error", title="t", summary="s", what="`w` was changed", why="y", where="h",
        source=source,  # NB: a name in backticks: the card shows it as <code>, one of its own elements
        lines=(SourceLine(4, "w.mul_(2)"), SourceLine(5, "w.sum().backward()")), names=("w",),
        tensors=(TensorFact("w", "tensor", "(2,)", "float32", "cpu", True, True, "MulBackward0", 1),),
        error_type="RuntimeError", error_message="boom\nsecond line",
        fix=Fix("d", fixed, (TextEdit(source.index("w.mul_"), source.index("w.mul_") + 9, "w = w.mul(2)"),)),
        versions=(("python", "3"), ("torch", "2")), notes=("n",))


BENIGN = [elements(mimebundle(dataclasses.replace(full_card(), severity=s, language=lang))["text/html"])
          for s in ("error", "warning") for lang in ("en", "zh")]
ALLOWED_TAGS = set().union(*(b.tags for b in BENIGN))
ALLOWED_ATTRS = set().union(*(b.attrs for b in BENIGN))


def _plain(text: str) -> str:
    """Without whitespace (the card's layout adds and trims it) and without a BOM (Pygments drops it)."""
    return "".join(text.replace("\ufeff", "").split())


def check_card(d: Diagnosis) -> None:
    """The card renders in every format; user text is text in the HTML, never an element or attribute."""
    assert isinstance(d, Diagnosis)
    str(Card(d))
    bundle = mimebundle(d)
    assert isinstance(bundle["text/plain"], str)
    json.dumps(bundle[MIME])
    for value in bundle.values():
        (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)).encode("utf-8")
    assert "text/html" in bundle, bundle["text/plain"][-300:]
    page = elements(bundle["text/html"])
    assert page.tags <= ALLOWED_TAGS, f"elements from user text: {page.tags - ALLOWED_TAGS}"
    assert page.attrs <= ALLOWED_ATTRS, f"attributes from user text: {page.attrs - ALLOWED_ATTRS}"
    # NB: the user's words survive as text (a field that became markup would be missing from it)
    shown = _plain("".join(page.text) + "".join(page.values))
    source_lines = gm_cell.split_lines(d.source)
    fields = [d.kind, d.title, d.summary, d.what, d.why, d.where, d.error_type,
              d.error_message if d.error_type else None, *d.notes,
              *(t.name for t in d.tensors), d.fix.description if d.fix else None,
              *(sl.text if sl.elsewhere else source_lines[sl.lineno - 1]
                for sl in d.lines if sl.elsewhere or 1 <= sl.lineno <= len(source_lines))]
    for field in fields:
        if field and len(field) < 1500 and field == grad_magic.render.common.clean(field):
            # NB: a span in backticks is shown as <code> with its text, without the backticks
            words = "".join(part for _, part in grad_magic.render.common.code_spans(field))
            assert _plain(words) in shown or _plain(field) in shown, f"{field[:200]!r} is not shown as text"
    if d.fix is not None and d.fix.source:  # NB: "" is a fix that leaves the running cell alone (schema 2)
        # NB: the fixed cell, as it goes into a notebook, travels whole in an attribute, escaped
        assert grad_magic.render.common.notebook_cell(d.fix.source) in page.values


def rule_crashes(record: RunRecord, namespace: Dict[Any, Any], language: str) -> List[str]:
    """Every rule that would run on this record, run alone: the ones that raise.

    NB: the engine turns a crash into a note on the first card (or into no card at all when the
    generic diagnosis itself crashes); run alone, each crash is seen and named."""
    failed = record.exception is not None and not isinstance(record.exception, KeyboardInterrupt)
    rules = [r for r in RULES.values() if failed or r.severity == WARNING]
    crashes = []
    for r in rules + ([Rule("generic", ERROR, generic, "")] if failed else []):
        try:
            run_rule(r, RuleContext(record, namespace, language))  # NB: behind its guard, as the engine runs it
        except Exception as e:
            crashes.append(f"{r.slug}: {type(e).__name__}: {e}"[:500])
    return crashes


def check_diagnoses(case: "Case", language: str) -> None:
    record, source = case.record, case.record.source
    found = diagnose(record, case.namespace, language)
    assert isinstance(found, list)
    crashes = rule_crashes(record, case.namespace, language)
    assert not crashes, f"rules crashed: {crashes}"
    if record.exception is not None and not isinstance(record.exception, KeyboardInterrupt):
        assert found and found[0].is_error, "a failed cell without an error card"
    for d in found:
        if d.fix is not None:
            assert gm_edits.parses(d.fix.source), f"{d.kind} proposed a fix that does not parse:\n{d.fix.source}"
            assert d.fix.source != source
        check_card(d)


# -- mutations of a seed --

@st.composite
def mutated_source(draw: Any, source: str) -> str:
    how = draw(st.sampled_from(["keep", "insert", "delete", "replace_line", "append", "prepend", "tabs", "crlf"]))
    if how == "keep" or not source:
        return source
    at = draw(st.integers(0, len(source)))
    if how == "insert":
        return source[:at] + draw(TEXTS) + source[at:]
    if how == "delete":
        return source[:at] + source[at + draw(st.integers(1, 40)):]
    lines = gm_cell.split_lines(source, keepends=True)
    if how == "replace_line":
        n = draw(st.integers(0, len(lines) - 1))
        lines[n] = draw(TEXTS) + "\n"
        return "".join(lines)
    if how == "append":
        return source + draw(TEXTS)
    if how == "prepend":  # NB: the record's line numbers no longer match the text
        first, _, rest = source.partition("\n")
        return first + "\n" + draw(TEXTS) + "\n" + rest
    if how == "tabs":
        return source.replace("    ", "\t")
    return source.replace("\n", "\r\n")


@st.composite
def mutated_exception(draw: Any, exc: Optional[BaseException]) -> Optional[BaseException]:
    how = draw(st.sampled_from(["keep", "keep", "message", "numbers", "truncate", "unprintable", "interrupt",
                                "none", "syntax"]))
    message = str(exc) if exc is not None else ""
    kind = type(exc) if exc is not None and type(exc).__init__ is BaseException.__init__ else RuntimeError
    if how == "keep":
        return exc
    if how == "message":
        at = draw(st.integers(0, len(message)))
        return kind(message[:at] + draw(TEXTS) + message[at:])
    if how == "numbers":
        import re

        big = draw(st.sampled_from(["0", "-1", "99999999999999999999999", "007", "1e9", ""]))
        return kind(re.sub(r"\d+", big, message))
    if how == "truncate":
        return kind(message[:draw(st.integers(0, max(0, len(message))))])
    if how == "unprintable":
        return Unprintable()
    if how == "interrupt":
        return KeyboardInterrupt(message)
    if how == "none":
        return None
    err = SyntaxError(draw(TEXTS), (draw(NAMES), draw(st.integers(-3, 10 ** 6)), draw(st.integers(-3, 99)),
                                   draw(TEXTS)))
    return err


@st.composite
def mutated_namespace(draw: Any, namespace: Dict[str, Any]) -> Dict[Any, Any]:
    ns: Dict[Any, Any] = dict(namespace)
    names = [k for k in ns if not str(k).startswith("__")]
    for _ in range(draw(st.integers(0, 4))):
        how = draw(st.sampled_from(["replace", "rename", "drop", "add"]))
        if how == "add" or not names:
            ns[draw(KEYS)] = HOSTILE[draw(VALUE_INDEX)]
            continue
        name = draw(st.sampled_from(names))
        if name not in ns:
            continue
        if how == "replace":
            ns[name] = HOSTILE[draw(VALUE_INDEX)]
        elif how == "rename":
            ns[draw(KEYS)] = ns.pop(name)
        else:
            del ns[name]
    return ns


def mutated_ops(draw: Any, ops: List[OpEvent], n_lines: int) -> List[OpEvent]:
    how = draw(st.sampled_from(["keep", "keep", "lines", "dead", "names"]))
    if how == "keep":
        return list(ops)
    out = []
    for op in ops:
        if how == "lines":
            op = dataclasses.replace(op, lineno=draw(st.one_of(st.none(), st.integers(-2, n_lines + 3))))
        elif how == "dead":
            op = dataclasses.replace(op, targets=tuple(dataclasses.replace(t, ref=None) for t in op.targets))
        else:
            op = dataclasses.replace(op, name=draw(TEXTS))
        out.append(op)
    return out


class Case:
    """A record and a namespace to diagnose; short in Hypothesis' report of a failing example.

    NB: not a dataclass: Hypothesis prints a dataclass field by field, calling the hostile objects' repr."""

    def __init__(self, name: str, record: RunRecord, namespace: Dict[Any, Any]) -> None:
        self.name, self.record, self.namespace = name, record, namespace

    def __repr__(self) -> str:
        r = self.record
        exc = f"{type(r.exception).__name__}: {str(r.exception)[:300]!r}" if not isinstance(
            r.exception, Unprintable) else "Unprintable()"
        return (f"Case({self.name}, error_lineno={r.error_lineno}, exception={exc}, "
                f"namespace keys={[k for k in self.namespace if not str(k).startswith('__')][:20]!r},\n"
                f"source=\n{r.source[:3000]})")


def hostile_dict(draw: Any, max_size: int) -> Dict[Any, Any]:
    return {draw(KEYS): HOSTILE[draw(VALUE_INDEX)] for _ in range(draw(st.integers(0, max_size)))}


@st.composite
def mutated_seed(draw: Any) -> Case:
    name, record, namespace = seeds()[draw(st.integers(0, len(seeds()) - 1))]
    source = draw(mutated_source(record.source))
    n_lines = len(gm_cell.split_lines(source))
    lineno = draw(st.sampled_from(["keep", "random", "none"]))
    mutated = dataclasses.replace(
        record, source=source, exception=draw(mutated_exception(record.exception)),
        error_lineno=(record.error_lineno if lineno == "keep" else None if lineno == "none"
                      else draw(st.integers(-3, n_lines + 3))),
        error_locals=[record.error_locals, None, {"x": Hostile(), 1: Ambiguous()}][draw(st.integers(0, 2))],
        inplace_ops=mutated_ops(draw, record.inplace_ops, n_lines),
        failed_ops=mutated_ops(draw, record.failed_ops, n_lines),
        warnings=[dataclasses.replace(w, message=draw(st.sampled_from([w.message, w.message[:50], ""])) + draw(
            st.sampled_from(["", "\n", draw(TEXTS)])), lineno=draw(st.integers(-1, 10 ** 6)))
                  for w in record.warnings])
    return Case(name, mutated, draw(mutated_namespace(namespace)))


# -- the properties --

def test_the_seeds_are_diagnosed_cleanly():
    """Unmutated, the seeds must pass every check (else the fuzzing below proves nothing)."""
    for name, record, namespace in seeds():
        check_diagnoses(Case(name, record, namespace), "en")


@FUZZ
@given(data=st.data())
def test_mutated_real_runs_never_break_the_engine_the_fix_or_the_card(data):
    case = data.draw(mutated_seed(), label="case")
    language = data.draw(st.sampled_from(["en", "zh"]), label="language")
    check_diagnoses(case, language)


@st.composite
def snapshots(draw: Any) -> TensorSnapshot:
    live = draw(st.sampled_from([None, torch.ones(2), torch.ones(2, requires_grad=True) * 1, torch.empty(0)]))
    return TensorSnapshot(ident=draw(st.integers(0, 2 ** 64)), shape=tuple(draw(st.lists(st.integers(0, 2 ** 40),
                                                                                       max_size=4))),
                          dtype=draw(st.sampled_from(["float32", "int64", "", "bogus"]) | TEXTS),
                          device=draw(st.sampled_from(["cpu", "cuda:0", "meta", "mps", ""]) | TEXTS),
                          version=draw(st.integers(-1, 2 ** 40)), requires_grad=draw(st.booleans()),
                          is_leaf=draw(st.booleans()), ref=weakref.ref(live) if live is not None else None)


@st.composite
def random_records(draw: Any) -> Case:
    """Records no real run makes: every field arbitrary."""
    source = draw(st.one_of(TEXTS, st.lists(TEXTS, max_size=8).map("\n".join),
                            st.lists(TEXTS, max_size=6).map(lambda ls: "%%gradcheck\n" + "\n".join(ls))))
    n = len(gm_cell.split_lines(source))
    lines = st.one_of(st.none(), st.integers(-2, n + 2))
    ops = st.lists(st.builds(OpEvent, name=st.sampled_from(["add_", "mul_", "__setitem__", "cat", "to"]) | TEXTS,
                             lineno=lines, targets=st.lists(snapshots(), max_size=3).map(tuple),
                             how=st.sampled_from(["method", "setitem", "inplace=True", "out=", "raised"])),
                   max_size=3)
    steps = st.lists(st.builds(StepEvent, optimizer=st.none(), optimizer_class=TEXTS, lineno=lines,
                               params_with_grad=st.integers(0, 5), stale_params=st.integers(0, 5)), max_size=3)
    warns = st.lists(st.builds(CapturedWarning, category=st.sampled_from(["UserWarning"]) | TEXTS,
                               message=TEXTS, filename=TEXTS, lineno=st.integers(-1, 99)), max_size=2)
    exception = draw(st.one_of(st.none(), st.builds(RuntimeError, TEXTS), st.builds(ValueError, TEXTS),
                               st.just(Unprintable()), st.builds(KeyboardInterrupt, TEXTS),
                               st.builds(lambda m: SyntaxError(m, ("<c>", 2, 1, "x")), TEXTS)))
    record = RunRecord(filename="<fuzz>", source=source, exception=exception, error_lineno=draw(lines),
                       error_locals=hostile_dict(draw, 3) if draw(st.booleans()) else None,
                       inplace_ops=draw(ops), failed_ops=draw(ops), steps=draw(steps), warnings=draw(warns),
                       dropped_events=draw(st.integers(0, 10)), versions=(("torch", draw(TEXTS)),))
    return Case("random", record, hostile_dict(draw, 6))


@FUZZ
@given(random_records(), st.sampled_from(["en", "zh"]))
@example(Case("deep", RunRecord(filename="<c>", source="%%gradcheck\n" + "x = [" * 300 + "\n",
                                exception=RuntimeError("boom"), error_lineno=2), {}), "en")
def test_arbitrary_records_never_break_the_engine_the_fix_or_the_card(case, language):
    check_diagnoses(case, language)


# -- the fix helpers on arbitrary cells --

@st.composite
def cells(draw: Any) -> str:
    body = draw(st.lists(st.one_of(TEXTS, st.sampled_from([
        "import torch", "x = torch.ones(3, requires_grad=True)", "for i in range(3):", "    y = x * 2",
        "    y.mul_(2)", "\ty.add_(1)", "loss = y.sum()", "loss.backward()", "def f(a):", "    return a.relu_()",
        "class M(torch.nn.Module):", "    def forward(self, x):", "        return x", "with torch.no_grad():",
        "    w -= 0.1 * w.grad", "if True: z = 1", "%time z = 1", "!echo hi", "x = 1; y = 2", "'''", "\"\"\"",
        "x = (1,", "     2)", "λ = 1", "变量 = λ + 1", "# comment", "", "\\", "x = 1 \\", "  + 2",
        "s = 'a\x0cb'", "# form\x0cfeed", "t = 'x\u2028y'  # line separator", "\x0cz = 3", "u = '\x85'"])),
        max_size=12))
    head = draw(st.sampled_from(["%%gradcheck\n", "%%gradcheck --fast\n", ""]))
    return head + "\n".join(body) + draw(st.sampled_from(["", "\n", "\r\n"]))


@FUZZ
@given(cells(), st.data())
def test_fix_helpers_never_propose_a_cell_that_does_not_parse(cell, data):
    """Any edit built with the helpers at any spot of any cell: make_fix gives a parsing cell or None."""
    lines = gm_cell.split_lines(cell)
    n = len(lines)
    assume(n > 0)
    lineno = data.draw(st.integers(1, n), label="lineno")
    edits: List[TextEdit] = []
    how = data.draw(st.sampled_from(["insert", "wrap", "replace_node", "raw"]), label="how")
    tree = gm_cell.cell_tree(cell)
    if how == "insert":
        edits = [gm_edits.insert_line_before(cell, lineno, gm_cell.indent_of(lines[lineno - 1]) +
                                          data.draw(TEXTS, label="text"))]
    elif how == "wrap":
        last = data.draw(st.integers(lineno, n), label="last")
        edits = gm_edits.wrap_in_block(cell, lineno, last, data.draw(st.sampled_from(
            ["with torch.no_grad()", "if True", "try", "for _ in range(1)", "with x("]), label="header"))
    elif how == "replace_node" and tree is not None:
        stmt = gm_cell.enclosing_statement(tree, lineno)
        assume(stmt is not None)
        start, end = gm_cell.node_span(cell, stmt)
        edits = [TextEdit(start, end, data.draw(TEXTS, label="text"))]
        gm_cell.body_indent(cell, stmt.lineno)
        gm_cell.assignments_to(tree, data.draw(NAMES, label="name"))
    else:
        start = data.draw(st.integers(0, len(cell)), label="start")
        end = data.draw(st.integers(start, len(cell)), label="end")
        edits = [TextEdit(start, end, data.draw(TEXTS, label="text"))]
    fix = gm_edits.make_fix(cell, edits, "fuzz")
    assert fix is None or gm_edits.parses(fix.source)
    if fix is not None:
        assert gm_cell.cell_tree(fix.source) is not None or not fix.source.startswith("%%")


SNIPPETS = ["import torch", "x = torch.ones(3, requires_grad=True)",
            "for i in range(3):\n    y = x * 2\n    y.mul_(2)",
            "def f(a):\n\treturn a.relu_()", "class M:\n    def forward(self, x):\n        return x",
            "with torch.no_grad():\n    w -= 0.1 * w.grad", "if True: z = 1", "x = 1; y = 2", "x = (1,\n     2)",
            "λ = 1", "变量 = λ + 1  # 注释", "# comment", "", "x = 1 \\\n  + 2", "s = 'a\x0cb'",
            "# form\x0cfeed",
            "t = 'x\u2028y'  # a line separator in a string", "\x0cz = 3", "u = '\x85'; v = 1",
            "w = '\u2029' + \"\x1c\"", "q = '''\nmulti\x0bline\n'''", "loss.backward()", "fire = '🔥'"]


@st.composite
def python_cells(draw: Any) -> str:
    """Cells of plain Python (they parse), with line breaks and odd characters of every kind."""
    body = draw(st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=8))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    head = draw(st.sampled_from(["%%gradcheck" + newline, ""]))
    return head + newline.join(b.replace("\n", newline) for b in body) + draw(st.sampled_from(["", newline]))


@FUZZ
@given(python_cells())
def test_a_node_span_is_exactly_the_nodes_source(cell):
    """`node_span` finds the characters ast says a statement spans (the base of every minimal edit)."""
    tree = gm_cell.cell_tree(cell)
    magic = cell.startswith("%%")
    assume(tree is not None and gm_cell.python_of_cell(cell) == (cell.partition("\n")[2] if magic else cell))
    python = ("\n" if magic else "") + gm_cell.python_of_cell(cell)  # NB: no IPython syntax: the cell's text
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            start, end = gm_cell.node_span(cell, node)
            assert cell[start:end] == ast.get_source_segment(python, node), ast.dump(node)[:200]


@FUZZ
@given(st.one_of(TEXTS, cells(), st.binary(max_size=60).map(lambda b: b.decode("utf-8", "surrogateescape"))))
def test_parsing_helpers_answer_for_any_text(text):
    """`parses`, `python_of_cell` and `cell_tree` answer (True/False, text, tree/None) for any text."""
    assert gm_edits.parses(text) in (True, False)
    gm_cell.cell_tree(text)
    gm_cell.line_offsets(text)


# -- cards built directly from hostile fields --

@st.composite
def hostile_diagnoses(draw: Any) -> Diagnosis:
    source = draw(st.one_of(TEXTS, cells()))
    n = len(gm_cell.split_lines(source))
    fixed = draw(st.one_of(st.none(), TEXTS, cells()))
    facts = st.builds(TensorFact, name=NAMES, kind=TEXTS, shape=TEXTS, dtype=TEXTS, device=TEXTS,
                      requires_grad=st.none() | st.booleans(), is_leaf=st.none() | st.booleans(),
                      grad_fn=st.none() | TEXTS, version=st.none() | st.integers(-1, 2 ** 63))
    return Diagnosis(
        kind=draw(TEXTS), severity=draw(st.sampled_from(["error", "warning"])), title=draw(TEXTS),
        summary=draw(TEXTS), what=draw(TEXTS), why=draw(TEXTS), where=draw(TEXTS), source=source,
        lines=tuple(SourceLine(draw(st.integers(-1, n + 2)), draw(TEXTS)) for _ in range(draw(st.integers(0, 3)))),
        names=tuple(draw(st.lists(NAMES, max_size=3))), tensors=tuple(draw(st.lists(facts, max_size=2))),
        error_type=draw(st.none() | TEXTS), error_message=draw(st.none() | TEXTS),
        fix=None if fixed is None else Fix(draw(TEXTS), fixed, ()),
        versions=tuple(draw(st.lists(st.tuples(TEXTS, TEXTS), max_size=2))),
        notes=tuple(draw(st.lists(TEXTS, max_size=2))), language=draw(st.sampled_from(["en", "zh", "xx", ""])))


@FUZZ
@given(hostile_diagnoses())
def test_cards_show_user_text_only_as_text(d):
    check_card(d)


# -- huge input: the engine stays linear --

class Overtime(BaseException):
    """NB: a BaseException: the engine turns a rule's Exception into a note and would go on."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Fail (do not hang) past `seconds`; the regex engine checks for signals while it runs."""
    def stop(signum: int, frame: Any) -> None:
        raise Overtime(f"more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


N = 200_000
HUGE_MESSAGES = {
    "word": "x" * N, "digits": "1" * N, "spaces": " " * N, "words": "ab " * (N // 3), "newlines": "\n" * N,
    "brackets": "[" * N, "quotes": "'" * N, "colons": "a:" * (N // 2),
    "device_head": "Expected all tensors to be on the same device, but got " + "x" * N,
    "device_method": "addmm: expected 'mat1' to be " + "x" * N,
    "inplace_head": "one of the variables needed for gradient computation has been modified by an inplace "
                    "operation: [torch.FloatTensor [" + "1, " * (N // 3),
    "anomaly_frames": 'File "<ipython-input-1-ab>", line 1, in <module>\n' * (N // 50),
    "requires_grad": "element 0 of tensors does not require grad " * (N // 40),
}


@pytest.mark.parametrize("shape", sorted(HUGE_MESSAGES))
def test_huge_messages_are_diagnosed_in_bounded_time(shape):
    """200,000 characters of message: every rule's matching stays (near) linear, so a card comes at once
    (a pattern that backtracks quadratically takes hours on this and hangs the user's kernel)."""
    message = HUGE_MESSAGES[shape]
    source = "%%gradcheck\nimport torch\nx = torch.ones(2)\ny = x.to('meta') + x\n"
    record = RunRecord(filename="<c>", source=source, exception=RuntimeError(message), error_lineno=4,
                       warnings=[CapturedWarning("UserWarning", message, "<c>", 4)])
    with time_limit(10):
        found = diagnose(record, {"x": torch.ones(2)}, "en")
        mimebundle(found[0])


def test_huge_cells_are_diagnosed_in_bounded_time():
    lines = "%%gradcheck\n" + "x = x + 1  # " + "y" * 100 + "\n" * 1 + "x = 1\n" * 20_000 + "z = " + "a" * N + "\n"
    record = RunRecord(filename="<c>", source=lines, exception=RuntimeError("boom"), error_lineno=20_002)
    with time_limit(10):
        found = diagnose(record, {}, "en")
        mimebundle(found[0])
