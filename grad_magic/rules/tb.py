"""The traceback as evidence: its entries, the call at the instruction each one raised in (`co_positions`), and
what a frame's variables hold there. Never runs user code: variables and dict-held attributes only.
"""
from __future__ import annotations

import ast
import builtins
import functools
import linecache
from typing import Any, List, Optional, Tuple

from ..names import attribute_without_code

UNKNOWN = object()  # NB: a value no frame holds (computed on the line itself: `torch.empty(x.size)`)


def entries_of(exc: Optional[BaseException]) -> List[Any]:
    tb = exc.__traceback__ if exc is not None else None
    found = []
    while tb is not None:
        found.append(tb)
        tb = tb.tb_next
    return found


def call_at(tree: Optional[ast.Module], entry: Any) -> Optional[ast.Call]:
    """The call at the instruction that raised, by its position (`co_positions`)."""
    return node_at(tree, entry, (ast.Call,))


def node_at(tree: Optional[ast.Module], entry: Any, kinds: Tuple[type, ...]) -> Any:
    """The node of one of `kinds` (a call, a binary operation, ...) the instruction that raised evaluates."""
    try:
        span = tuple(list(entry.tb_frame.f_code.co_positions())[entry.tb_lasti // 2])
    except (IndexError, TypeError, ValueError):
        return None
    if tree is None or None in span:
        return None
    first, last, start, end = span
    for node in ast.walk(tree):
        if isinstance(node, kinds) and (node.lineno, node.end_lineno, node.col_offset, node.end_col_offset) == \
                (first, last, start, end):
            return node
    return None


@functools.lru_cache(maxsize=16)
def file_tree(filename: str) -> Optional[ast.Module]:
    try:
        return ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return None


def value_in(frame: Any, node: Optional[ast.AST]) -> Any:
    """What a variable or a dict-held attribute chain holds in `frame` (no property, no user code runs)."""
    if isinstance(node, ast.Name):
        for space in (frame.f_locals, frame.f_globals, vars(builtins)):
            if node.id in space:
                return space[node.id]
        return UNKNOWN
    if isinstance(node, ast.Attribute):
        owner = value_in(frame, node.value)
        if owner is UNKNOWN or owner is None:
            return UNKNOWN
        found = attribute_without_code(owner, node.attr)
        return UNKNOWN if found is None else found
    return UNKNOWN


def local_value_in(frame: Any, node: Optional[ast.AST]) -> Any:
    """What `node` (a name or dict-held attribute chain) holds in `frame`; UNKNOWN when nothing there does."""
    return value_in(frame, node)
