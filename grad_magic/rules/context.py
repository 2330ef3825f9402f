"""What a rule sees: the run record, the user's names, and helpers to say things in the user's words.

Rules read from here and return a `Diagnosis`; they never render and never touch IPython.
"""
from __future__ import annotations

import ast
import io
import keyword
import os
import tokenize
from functools import cached_property
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from .. import catalog, state
from ..facts import fact_for
from ..cell import cell_tree, qualname_at, split_lines
from ..model import Diagnosis, Fix, SourceLine, TensorFact
from ..names import NameIndex, Touched
from ..record import ANOMALY_REPORT, RunRecord, distinct_steps
from ..sources import Frame
from .elsewhere import from_view, seen_from


class RuleContext:
    """The run as seen from the running cell -- or, for a `view`, from one user frame in another cell or
    file (a method defined three cells up): there `record` is that frame's (rules/elsewhere.py)."""

    def __init__(self, record: RunRecord, namespace: Mapping[str, Any], language: str = "",
                 shared: Optional[Dict[Any, Any]] = None) -> None:
        self.record = record
        self.namespace = namespace
        self.language = language or state.language()
        self._memo: Dict[Any, Any] = {}
        self._shared: Dict[Any, Any] = {} if shared is None else shared  # NB: parsed messages, across views

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """`compute()` once per diagnosis for `key`: for work several rules (or one rule twice) ask for,
        like a scan of every name of the namespace. Keys starting with "parse" hold for every view."""
        memo = self._shared if isinstance(key, tuple) and key[:1] == ("parse",) else self._memo
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    def rebased(self, record: RunRecord) -> "RuleContext":
        """The same run read from `record`: the running cell's record, or a copy of it placed on another line
        or frame (what was parsed, touched and indexed for this diagnosis is shared)."""
        return RuleContext(record, self.namespace, self.language, self._shared)

    def view(self, frame: Frame) -> "RuleContext":
        """This run seen from `frame`, a user frame outside the running cell."""
        running = self.record.outer if self.record.outer is not None else self.record  # NB: never a view of a view
        return RuleContext(seen_from(running, frame), self.namespace, self.language, self._shared)

    @property
    def elsewhere(self) -> bool:
        """Whether this is a view from another cell or file than the running cell."""
        return self.record.focus is not None

    # -- the error --
    @property
    def exception(self) -> Optional[BaseException]:
        return self.record.exception

    @property
    def error_type(self) -> Optional[str]:
        exc = self.record.exception
        return type(exc).__name__ if exc is not None else None

    @cached_property
    def error_message(self) -> str:
        exc = self.record.exception
        if exc is None:
            return ""
        try:
            return str(exc)
        except Exception as e:  # a user exception whose __str__ raises
            return f"<unprintable {type(exc).__name__}: {type(e).__name__}>"

    # -- the cell --
    @cached_property
    def source_lines(self) -> List[str]:
        return split_lines(self.record.source)  # NB: numbered as Python numbers lines

    def line(self, lineno: Optional[int]) -> Optional[SourceLine]:
        if lineno is None or not 1 <= lineno <= len(self.source_lines):
            return None
        record = self.record
        return SourceLine(lineno, self.source_lines[lineno - 1], record.cell,
                          "" if record.cell is not None or not self.elsewhere else record.filename,
                          qualname_at(cell_tree(record.source), lineno), self.elsewhere)

    # -- names --
    @cached_property
    def names(self) -> NameIndex:
        """The names as this view's line sees them: its frame's variables, then the namespace. One index per
        frame and diagnosis, shared by the views and re-based contexts that read the same frame (an index
        of a large namespace is the dearest thing a card builds)."""
        error_locals = self.record.error_locals
        key = ("names", id(error_locals), id(self.namespace))  # NB: the index holds both: the ids stay theirs
        if key not in self._shared:
            self._shared[key] = NameIndex(error_locals, self.namespace, touched=self.touched)
        return self._shared[key]

    @property
    def touched(self) -> Touched:
        """What this run touched (the same from every view): only these objects may be blamed."""
        if "touched" not in self._shared:
            running = self.record.outer if self.record.outer is not None else self.record
            self._shared["touched"] = touched_by(running, self.namespace)
        return self._shared["touched"]

    def facts_on_line(self, lineno: Optional[int]) -> Tuple[TensorFact, ...]:
        """Tensors and modules named on a cell line, in the order they appear."""
        found: List[TensorFact] = []
        for dotted in dotted_names(self.record.source_line(lineno)):
            parts = dotted.split(".")
            while parts:  # `b.to` names `b`: the longest prefix that is a tensor or module
                name = ".".join(parts)
                try:
                    fact = fact_for(name, self.names.lookup(name))
                except Exception:  # NB: a tensor subclass or proxy whose attributes raise is no fact
                    fact = None
                if fact is not None:
                    if all(f.name != name for f in found):
                        found.append(fact)
                    break
                parts.pop()
        return tuple(found)

    # -- wording --
    def say(self, key: str, **params: object) -> str:
        text = catalog.message(key, self.language, **params)
        if self.elsewhere:  # NB: every line number a view knows is one of its cell's: say which cell
            text = catalog.lines_in(text, self.language, self.place)
        return text

    @property
    def place(self) -> str:
        """How the card names the cell (or file) of this view: `In [3]`, `model.py`; "" for the running cell."""
        record = self.record
        if not self.elsewhere:
            return ""
        return f"In [{record.cell}]" if record.cell is not None else os.path.basename(record.filename)

    def where(self, lineno: Optional[int]) -> str:
        if not lineno:
            return self.say("where.unknown")
        if self.elsewhere:
            function = qualname_at(cell_tree(self.record.source), lineno)
            key = "where.elsewhere_in" if function else "where.elsewhere"
            return catalog.message(key, self.language, place=self.place, lineno=lineno, function=function)
        return self.say("where.line", lineno=lineno)

    def diagnosis(self, kind: str, severity: str, *, title: str, summary: str, what: str, why: str,
                  where: str, lines: Sequence[Optional[int]] = (), names: Sequence[str] = (),
                  tensors: Sequence[TensorFact] = (), fix: Optional[Fix] = None) -> Diagnosis:
        """A Diagnosis carrying this run's error, source and versions."""
        shown = tuple(sl for sl in (self.line(n) for n in lines) if sl is not None)
        d = Diagnosis(
            kind=kind, severity=severity, title=title, summary=summary, what=what, why=why, where=where,
            source=self.record.source, lines=shown, names=tuple(names), tensors=tuple(tensors),
            error_type=self.error_type, error_message=self.error_message if self.exception else None,
            fix=fix, versions=self.record.versions, language=self.language, cell=self.record.cell,
            trace=next((w.message for w in self.record.warnings if w.message.startswith(ANOMALY_REPORT)), ""))
        return from_view(d, self.record) if self.elsewhere else d


def touched_by(record: RunRecord, namespace: Mapping[str, Any]) -> Touched:
    """What a run touched: every name the running cell spells; in each user frame outside it (the
    traceback's, and those where the tracker saw an op or a step) the names of the statement the frame
    is in and the frame's own variables; the tracked tensors and optimizers still alive."""
    names: Set[str] = set(_names_in(cell_tree(record.source)))
    trees: Dict[str, Optional[ast.Module]] = {}
    sites = [(f.site.filename, f.site.lineno) for f in record.frames]
    steps = distinct_steps(record.steps)
    events: List[Any] = [*record.inplace_ops, *record.failed_ops, *steps]
    sites += [site for e in events for site in e.frames]
    for filename, lineno in sites:
        if filename == record.filename:
            continue
        if filename not in trees:
            trees[filename] = cell_tree(record.sources.text(filename)) if record.sources is not None else None
        names.update(_names_in(_statement_at(trees[filename], lineno)))
    for frame in record.frames:
        if frame.local_names is not None and frame.local_names is not namespace:
            names.update(k for k in list(frame.local_names) if type(k) is str)
    refs = [s.ref for e in (*record.inplace_ops, *record.failed_ops) for s in e.targets] + \
        [e.optimizer for e in steps]
    ids = {id(obj) for obj in (ref() for ref in refs if ref is not None) if obj is not None}
    return Touched(frozenset(names), frozenset(ids))


def _statement_at(tree: Optional[ast.Module], lineno: int) -> Optional[ast.AST]:
    """The top-level statement of `tree` around `lineno` (a whole `def` or `class`)."""
    for stmt in tree.body if tree is not None else ():
        if stmt.lineno <= lineno <= (stmt.end_lineno or stmt.lineno):
            return stmt
    return None


def _names_in(node: Optional[ast.AST]) -> Iterable[str]:
    for n in ast.walk(node) if node is not None else ():
        if isinstance(n, ast.Name):
            yield n.id
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            yield from n.names


def dotted_names(line: str) -> List[str]:
    """`out = model.fc(x.grad, dim=1) + w` -> ['out', 'model.fc', 'x.grad', 'w'] (names: not attributes
    of calls, not a call's keywords)."""
    names: List[str] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return names
    current: List[str] = []
    previous = ""
    depth = 0  # NB: brackets open: `name=` inside them is a keyword (`out=c`), outside an assignment
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth = max(0, depth - 1)
        if tok.type == tokenize.NAME and depth and not current and previous != "." and i + 1 < len(tokens) \
                and tokens[i + 1].string == "=":
            previous = tok.string
            continue
        if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string) and (
                not current or previous == "."):
            if not current and previous == ".":  # attribute of a call or subscript: not a name
                previous = tok.string
                continue
            current.append(tok.string)
        elif tok.type == tokenize.OP and tok.string == "." and current:
            pass
        else:
            if current:
                names.append(".".join(current))
                current = []
        previous = tok.string
    if current:
        names.append(".".join(current))
    return names
