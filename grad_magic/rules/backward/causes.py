"""backward-twice's causes and remedies as data: what the culprit modules find, what fix.py applies.

A `Cause` names the catalog key that explains it, the lines and names it involves, and the `Remedy` the fix
applies when the cell allows one; `view` is the context of the cell the cause lives in when that is not the
rule's own (a module's `forward` three cells up). Pure data: ast nodes of the user's text, names, numbers.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Tuple, Union


@dataclass(frozen=True)
class State:
    """A state one iteration (or one cell) hands to the next, to be detached."""

    name: str  # `h`, or an attribute `self.hidden`
    container: str  # "tuple" or "list" of tensors, "" for a tensor
    starts_none: bool  # `h = None` before the loop: the first iteration gets no state


@dataclass(frozen=True)
class Detach:
    """Remedy: `h = h.detach()` as the loop body's first statement."""

    loop: ast.stmt
    states: Tuple[State, ...]


@dataclass(frozen=True)
class DetachAt:
    """Remedy: `h = h.detach()` on a line of its own before `stmt` (the statement that carries the state on)."""

    stmt: ast.stmt
    states: Tuple[State, ...]


@dataclass(frozen=True)
class DetachReads:
    """Remedy: `.detach()` after each of `reads` (the shared tensor, where the first loss reads it)."""

    reads: Tuple[ast.Name, ...]
    lineno: int  # the first loss's backward()
    each: bool = False  # every iteration's loss reads it (a critic's loop), not the first of two losses


@dataclass(frozen=True)
class Move:
    """Remedy: the statements that build the graph moved to the top of the loop body."""

    loop: ast.stmt
    moved: Tuple[ast.stmt, ...]


@dataclass(frozen=True)
class Drop:
    """Remedy: the statement deleted (a `loss.backward()` of the user's that a library makes again)."""

    stmt: ast.stmt


@dataclass(frozen=True)
class Retain:
    """Remedy: `retain_graph=True` on the earlier backward() call."""

    call: ast.Call
    first: str  # the text of what that call differentiates
    lineno: int


@dataclass(frozen=True)
class Recompute:
    """Remedy: each of `reads` (a tensor made before the first backward()) replaced by the expression that made
    it (`output` -> `model(images)`), so the second backward() goes through a graph of the current weights."""

    reads: Tuple[ast.Name, ...]
    value: str  # the text of that expression


@dataclass(frozen=True)
class Sum:
    """Remedy: `for loss in losses: loss.backward()` replaced by `sum(losses).backward()`."""

    loop: ast.For
    losses: str  # the text of the loop's iterable


Remedy = Union[Drop, Detach, DetachAt, DetachReads, Move, Recompute, Retain, Sum]


@dataclass(frozen=True)
class Cause:
    key: str  # catalog key of the explanation; key + "_title" is the card's title
    lines: Tuple[int, ...]
    names: Tuple[str, ...]
    params: Mapping[str, Any]
    remedy: Optional[Remedy] = None
    view: Any = None  # the RuleContext of the cell the cause is in, when it is not the rule's
