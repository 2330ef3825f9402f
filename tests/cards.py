"""The tests' one way to get a diagnosis: from a hand-made run record (`diagnosis`) or from a cell run through
a real shell under %%gradcheck (`card`).

NB: a module of its own, not conftest.py: test folders with a conftest of their own shadow `import conftest`.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Type

import grad_magic
from grad_magic.engine import diagnose
from grad_magic.model import Diagnosis
from grad_magic.record import OpEvent, RunRecord
from gm_shell import run


def record_of(source: str, message: str = "", lineno: Optional[int] = None, *,
              error_type: Optional[Type[BaseException]] = RuntimeError, **fields: Any) -> RunRecord:
    """A run record of `source` that raised `error_type(message)` on `lineno` (no error when error_type is None);
    `fields` are any other RunRecord fields (error_locals, failed_ops, inplace_ops, warnings, ...)."""
    exc = error_type(message) if error_type is not None else None
    return RunRecord(filename="<cell>", source=source, exception=exc, error_lineno=lineno, **fields)


def diagnosis(source: str, message: str = "", lineno: Optional[int] = None, *, kind: Optional[str] = None,
              namespace: Optional[Mapping[str, Any]] = None, language: str = "en",
              error_type: Optional[Type[BaseException]] = RuntimeError, **fields: Any) -> Diagnosis:
    """The first diagnosis of a hand-made run; when `kind` is given it must be that kind."""
    found = diagnose(record_of(source, message, lineno, error_type=error_type, **fields), dict(namespace or {}),
                     language)
    assert found, "no diagnosis"
    if kind is not None:
        assert found[0].kind == kind, [(d.kind, d.notes) for d in found]
    return found[0]


def failed(name: str, lineno: int, targets: Sequence[Any] = ()) -> OpEvent:
    """The tracker's record of a torch call `name` that raised on `lineno` with these tensor arguments."""
    return OpEvent(name, lineno, tuple(targets), "raised")


def card(shell, cell: str, kind: str, *, raises: Optional[Type[BaseException]] = None,
         no_notes: bool = False) -> Diagnosis:
    """Run `cell` in the shell and return its diagnosis of `kind` (which must be there); `raises`: the cell
    must fail with that type; `no_notes`: the card must carry no internal-error note."""
    result = run(shell, cell)
    if raises is not None:
        assert isinstance(result.error_in_exec, raises), repr(result.error_in_exec)
    found = [d for d in grad_magic.last_diagnoses() if d.kind == kind]
    assert found, [(d.kind, d.notes) for d in grad_magic.last_diagnoses()]
    if no_notes:
        assert not found[0].notes, found[0].notes
    return found[0]
