"""grad_magic: PyTorch autograd and device errors that explain themselves in the notebook.

    %load_ext grad_magic
    %%gradcheck            # on a cell: run it under anomaly detection and tracking hooks
    %gradfix               # put the last proposed fixed cell into the next input

Python API, without IPython: `with grad_magic.capture() as run: ...`, `last_diagnoses()`.
"""
from __future__ import annotations

from typing import Any

from .capture import Capture, CaptureOptions, capture
from .model import Diagnosis, Fix, SourceLine, TensorFact, TextEdit
from . import built, state
from .state import last_diagnoses, last_diagnosis

__version__ = "0.1.0"
__all__ = ["Capture", "CaptureOptions", "Diagnosis", "Fix", "SourceLine", "TensorFact", "TextEdit",
           "capture", "last_diagnoses", "last_diagnosis", "load_ipython_extension",
           "unload_ipython_extension"]

_MAGIC_CLASSES: tuple = ()
_CONFIGURABLE: Any = None
_UNDO_FORMATTERS: Any = None


def load_ipython_extension(shell: Any) -> None:
    """`%load_ext grad_magic`: register the magics and the `GradMagic` settings."""
    from .magics import GradMagic, GradMagics
    from .render import formatters_registered

    global _MAGIC_CLASSES, _CONFIGURABLE, _UNDO_FORMATTERS
    if _UNDO_FORMATTERS is None:
        _UNDO_FORMATTERS = formatters_registered(shell)
    from .cellrun import awaited_magic_call

    built.start(shell)
    if awaited_magic_call not in shell.input_transformers_post:
        shell.input_transformers_post.append(awaited_magic_call)
    _CONFIGURABLE = GradMagic(parent=shell)
    shell.configurables.append(_CONFIGURABLE)
    classes = [GradMagics]
    try:
        from .device_magic import DeviceMagics

        classes.append(DeviceMagics)
    except ImportError:  # pragma: no cover - the device report ships in the same package
        pass
    for cls in classes:
        shell.register_magics(cls)
    _MAGIC_CLASSES = tuple(classes)


def unload_ipython_extension(shell: Any) -> None:
    """`%unload_ext grad_magic`: remove every magic and setting the extension registered."""
    global _MAGIC_CLASSES, _CONFIGURABLE, _UNDO_FORMATTERS
    from .cellrun import awaited_magic_call
    from .magics import forget_watch

    if not _reloading(shell):  # NB: `%reload_ext` keeps `%gradcheck on` and the record of where models were built
        forget_watch(shell)  # NB: first: `%gradcheck on` leaves hooks on every cell until it is off
        built.stop()
    while awaited_magic_call in shell.input_transformers_post:
        shell.input_transformers_post.remove(awaited_magic_call)
    if _UNDO_FORMATTERS is not None:
        _UNDO_FORMATTERS()
        _UNDO_FORMATTERS = None
    if _CONFIGURABLE is not None and _CONFIGURABLE in shell.configurables:
        shell.configurables.remove(_CONFIGURABLE)
        state.set_language(None)
    _CONFIGURABLE = None
    for cls in _MAGIC_CLASSES:
        for kind, names in cls.magics.items():
            for name in names:
                shell.magics_manager.magics[kind].pop(name, None)
        shell.magics_manager.registry.pop(cls.__name__, None)
    _MAGIC_CLASSES = ()


def _reloading(shell: Any) -> bool:
    """Whether this unload is the first half of the shell's `%reload_ext` (its extension manager's
    `reload_extension` is on the stack)."""
    import sys

    manager = getattr(shell, "extension_manager", None)
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "reload_extension" and frame.f_locals.get("self") is manager:
            return True
        frame = frame.f_back
    return False
