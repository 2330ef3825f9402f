"""Whether a file, or a traceback's text, is grad_magic's own code: by the package's folder, never by the word
"grad_magic" in a path (a checkout, and the virtual environment inside it, may be in a folder of that name)."""
from __future__ import annotations

import os

import grad_magic

PACKAGE = os.path.dirname(os.path.abspath(grad_magic.__file__))
# NB: both spellings of the folder: a traceback names a file as it was imported, through a symlink or not
FOLDERS = tuple(sorted({PACKAGE + os.sep, os.path.realpath(PACKAGE) + os.sep}))


def in_package(filename: str) -> bool:
    """A frame's file is one of grad_magic's modules (`<frozen ...>`, `<ipython-input-...>`: not)."""
    if filename.startswith("<"):
        return False
    return any(os.path.realpath(os.path.abspath(filename)).startswith(f) or os.path.abspath(filename).startswith(f)
               for f in FOLDERS)


def shows_package_frames(text: str) -> bool:
    """A traceback's text names a file of grad_magic's."""
    return any(folder in text for folder in FOLDERS)
