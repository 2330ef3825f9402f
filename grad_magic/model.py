"""The data model every room shares: what a diagnosis says, as plain strings and numbers.

This module may not import torch, IPython or any renderer. A `Diagnosis` never holds a live tensor,
never holds HTML: rules build it, fixes fill its `fix`, renderers read it (`render.Card` shows one).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Tuple

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class SourceLine:
    """One line of the user's cell, numbered as the editor shows it (the magic line is line 1)."""

    lineno: int
    text: str


@dataclass(frozen=True)
class TensorFact:
    """What is known about one object the user named, as strings (never the object itself)."""

    name: str
    kind: str = "tensor"  # "tensor", "parameter", "module", "optimizer"
    shape: str = ""
    dtype: str = ""
    device: str = ""
    requires_grad: Optional[bool] = None
    is_leaf: Optional[bool] = None
    grad_fn: Optional[str] = None
    version: Optional[int] = None


@dataclass(frozen=True)
class TextEdit:
    """Replace `source[start:end]` with `text` (character offsets into the original cell)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Fix:
    """A proposed fixed cell: the complete source, exactly as it would be inserted."""

    description: str
    source: str
    edits: Tuple[TextEdit, ...]


@dataclass(frozen=True)
class Diagnosis:
    """One explained problem. `kind` is a stable slug and part of the public API."""

    kind: str
    severity: str
    title: str
    summary: str
    what: str
    why: str
    where: str
    source: str = ""
    lines: Tuple[SourceLine, ...] = ()
    names: Tuple[str, ...] = ()
    tensors: Tuple[TensorFact, ...] = ()
    error_type: Optional[str] = None
    error_message: Optional[str] = None
    fix: Optional[Fix] = None
    versions: Tuple[Tuple[str, str], ...] = ()
    notes: Tuple[str, ...] = ()
    language: str = "en"
    extra: Tuple[Tuple[str, str], ...] = field(default=())

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR
