"""The cell as text and as Python: its lines, their offsets, the Python it runs, its syntax tree and the text
of a node -- all numbered as the editor shows them.

The one place that maps a cell to Python and line numbers: the cell runner compiles with `python_lines`,
the rules and renderers read `python_of_cell` / `cell_tree`, and both keep the editor's numbering.
May import IPython (its input transformer); never torch, never a renderer.
"""
from __future__ import annotations

import ast
import re
import textwrap
import warnings
from contextlib import contextmanager
from functools import lru_cache
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str, keepends: bool = False) -> List[str]:
    """The lines of a cell as Python, tracebacks and the editor number them: broken at LF, CRLF, CR only.

    NB: not `str.splitlines()`, which also breaks at form feeds, vertical tabs, NEL, the file/group/record
    separators and the Unicode line and paragraph separators: one of those in a string or a comment
    would shift every line number after it.
    """
    lines = _LINE.findall(text)
    return lines if keepends else [line.rstrip("\r\n") for line in lines]


def line_offsets(source: str) -> List[int]:
    """Offset of the first character of each line; index 0 is line 1."""
    offsets, total = [], 0
    for line in split_lines(source, keepends=True):
        offsets.append(total)
        total += len(line)
    offsets.append(total)
    return offsets


def utf8_col(line: str, col_bytes: int) -> int:
    """ast gives column offsets in UTF-8 bytes; edits work in characters."""
    return len(line.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))


GRADCHECK_LINE = re.compile(r"%%gradcheck(?:[ \t]|$)")
MAX_STACKED = 16  # cell magics looked at above a `%%gradcheck` line


def magic_lines(cell: str) -> int:
    """How many lines at the top of a cell are cell magics: the `%%gradcheck` line and the cell magics
    stacked above it (`%%time`, `%%capture`, each running the rest of the cell); 1 for a cell starting with
    another `%%` magic (what runs is its body), 0 for a cell without one."""
    if not cell.startswith("%%"):
        return 0
    for i, line in enumerate(cell.split("\n", MAX_STACKED)[:MAX_STACKED]):
        if not line.startswith("%%"):
            break
        if GRADCHECK_LINE.match(line):
            return i + 1
    return 1

@lru_cache(maxsize=16)  # NB: a pure function of the text; rules and fixes ask for the same cell often
def python_of_cell(cell: str) -> str:
    """The Python a cell runs: its `%%` magic lines dropped (see `magic_lines`), IPython syntax (%magic,
    !cmd) transformed.

    Line numbers stay the cell body's (line 1 is the cell's line 2): blank lines IPython drops at the top
    are put back, and a blank line stands for each magic line above the last.
    """
    header = magic_lines(cell)
    parts = cell.split("\n", header) if header else [cell]
    body = parts[header] if len(parts) > header else ""
    return python_lines(body, max(0, header - 1), _transform)


def python_lines(body: str, lines_above: int, transform: Callable[[str], str]) -> str:
    """The Python of a cell body, `transform`ed (IPython's input transforms), padded with blank lines so
    that each line keeps its number: `lines_above` for the lines over the body, and one for each blank line
    the transforms dropped at the top."""
    python = transform(body)
    dropped = leading_newlines(body) - leading_newlines(python)
    return "\n" * (lines_above + max(0, dropped)) + python


def _transform(body: str) -> str:
    """IPython's input transforms of a fresh TransformerManager; plain Python (most cells) without them."""
    python = plain_python(body)
    if python is not None:
        return python
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython is a dependency; kept for capture() without it
        return body
    with unshown_warnings():  # NB: IPython warns about lines broken at \x1c, \x85 or \u2028
        return TransformerManager().transform_cell(body)


@contextmanager
def unshown_warnings() -> Iterator[None]:
    """Warnings raised inside are not shown (the user saw the cell's own when it ran).

    NB: not `warnings.catch_warnings()`: leaving it bumps the filters' version, which empties every module's
    warning registry, so each "default" warning the user has seen once fires again. Only `showwarning` is
    swapped, and put back unless something inside replaced it too.
    """
    shown = warnings.showwarning
    warnings.showwarning = _unshown
    try:
        yield
    finally:
        if warnings.showwarning is _unshown:
            warnings.showwarning = shown


def _unshown(*args: object, **kwargs: object) -> None:
    return None


# NB: where IPython's input transforms act: an escape at the start of a line (%magic, !cmd, ?help,
# ,/; autocall), a help `?` anywhere, `= %magic` / `= !cmd`, pasted >>> / ... / In [N]: prompts.
_IPYTHON_SYNTAX = re.compile(r"^[ \t]*(?:[%!?,;/]|>>>|\.\.\.|In \[)|\?|=[ \t]*[%!]", re.MULTILINE)


def plain_python(body: str) -> Optional[str]:
    """What IPython's `transform_cell` makes of a body with none of its syntax in it (None if it has
    some): the body without its leading blank lines, spaces on blank lines dropped, ending in a newline. IPython tokenizes the whole
    cell to find out, ~25 us a line; most cells need none of it."""
    if _IPYTHON_SYNTAX.search(body):
        return None
    lines = (body if body.endswith("\n") else body + "\n").splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line and not line.isspace()), len(lines))
    if start == len(lines) or lines[start][:1].isspace():  # NB: IPython dedents an indented cell
        return None
    return textwrap.dedent("".join(lines[start:]))  # NB: as IPython: blank lines lose their spaces


def leading_newlines(text: str) -> int:
    return text[:len(text) - len(text.lstrip())].count("\n")


# -- finding the spot: the cell's own syntax tree, numbered as the editor shows it --

@lru_cache(maxsize=4)  # NB: every rule asks for the tree of the same cell (the cell, its fix)
def cell_tree(cell: str) -> Optional[ast.Module]:
    """The cell's Python as an ast whose line numbers are the cell's (the `%%` line is line 1).

    None when it does not parse. IPython syntax lines are transformed first; they keep their line.
    The tree is shared by all who ask: read it, never change it.
    """
    first, _, _ = cell.partition("\n")
    pad = "\n" if first.startswith("%%") else ""
    try:
        with unshown_warnings():  # NB: the cell's own SyntaxWarnings, which the user saw when it ran
            return ast.parse(pad + python_of_cell(cell))
    except (SyntaxError, ValueError):
        return None


@lru_cache(maxsize=4)  # NB: a tree of cell_tree (shared, never changed; kept as long as there): a cell run again
def names_in_order(tree: ast.AST) -> Tuple[str, ...]:
    """The identifiers the tree reads or writes (`ast.Name`), in the order the cell shows them, each once."""
    nodes = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Name)), key=lambda n: (n.lineno, n.col_offset))
    return tuple(dict.fromkeys(n.id for n in nodes))


@lru_cache(maxsize=4)
def callee_texts(cell: str) -> Tuple[str, ...]:
    """The cell text of each callee that is a name or an attribute (`model`, `net.encoder`), each once, in the
    order of `ast.walk` over `cell_tree(cell)`."""
    tree = cell_tree(cell)
    if tree is None:
        return ()
    texts = (segment(cell, n.func) or "" for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)))
    return tuple(dict.fromkeys(texts))


def node_span(cell: str, node: ast.AST, offsets: Optional[Sequence[int]] = None) -> tuple:
    """(start, end) character offsets of an ast node in the cell text."""
    lines, cached = _lines_and_offsets(cell)
    offs = offsets if offsets is not None else cached
    start = offs[node.lineno - 1] + utf8_col(lines[node.lineno - 1], node.col_offset)
    end = offs[node.end_lineno - 1] + utf8_col(lines[node.end_lineno - 1], node.end_col_offset)
    return start, end


def segment(cell: str, node: ast.AST) -> Optional[str]:
    """The cell text of an ast node: `ast.get_source_segment`, without splitting the cell on each call."""
    if getattr(node, "end_lineno", None) is None or getattr(node, "end_col_offset", None) is None:
        return None
    try:
        start, end = node_span(cell, node)
    except IndexError:  # NB: a node of another text
        return None
    return cell[start:end]


@lru_cache(maxsize=4)  # NB: the rules ask for spans in the same one or two cells many times per card
def _lines_and_offsets(cell: str) -> Tuple[Tuple[str, ...], Tuple[int, ...]]:
    return tuple(split_lines(cell)), tuple(line_offsets(cell))


def indent_of(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def body_indent(cell: str, lineno: int) -> str:
    """The indentation one level deeper than `lineno`, in the cell's own style (spaces or tabs)."""
    lines = split_lines(cell)
    indent = indent_of(lines[lineno - 1])
    deeper = [indent_of(ln) for ln in lines if ln.strip()]
    steps = [d[len(indent):] for d in deeper if d.startswith(indent) and len(d) > len(indent)]
    step = min(steps, key=len) if steps else "    "
    return indent + step


def enclosing_statement(tree: ast.Module, lineno: int) -> Optional[ast.stmt]:
    """The innermost statement that spans `lineno`."""
    best: Optional[ast.stmt] = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno and \
                    (node.end_lineno or 0) <= (best.end_lineno or 0):
                best = node
    return best


def assignments_to(tree: ast.Module, name: str) -> List[ast.stmt]:
    """Statements that bind `name` (plain, annotated or augmented assignment, for-targets)."""
    found: List[ast.stmt] = []
    for node in ast.walk(tree):
        targets: List[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, ast.For):
            targets = [node.target]
        for target in targets:
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                found.append(node)
                break
    return sorted(found, key=lambda n: n.lineno)


def qualname_at(tree: Optional[ast.Module], lineno: int) -> str:
    """The qualified name of the function a line is in (`Block.forward`, `train.<locals>.step` as Python
    names it), "" at a cell's top level or in a class body."""
    names: List[str] = []
    function = False
    body = list(tree.body) if tree is not None else []
    while body:
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and min([n.lineno] + [d.lineno for d in n.decorator_list]) <= lineno
                     <= (n.end_lineno or n.lineno)), None)  # NB: a decorator line is the function's
        if node is None:
            break
        if function:
            names.append("<locals>")
        names.append(node.name)
        function = not isinstance(node, ast.ClassDef)
        body = list(node.body)
    return ".".join(names) if function else ""


def body_of(tree: ast.Module, stmt: ast.stmt) -> Optional[List[ast.stmt]]:
    """The block (a body, an else or a finally) that holds `stmt`."""
    for n in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(n, field, None)
            if isinstance(body, list) and any(s is stmt for s in body):
                return body
    return None
