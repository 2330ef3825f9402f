"""Where the code that ran came from: notebook cells (`In [k]`) and the user's own files, by compiled name.

A traceback, anomaly mode's forward trace and the op tracker all give (filename, line) pairs. This room
tells which of them are the user's own code -- any cell IPython ran (it keeps each cell's compiled name and
number), the user's own `.py` files -- and which are libraries (torch, the standard library, anything
installed, grad_magic itself), and hands back each cell's text as the user typed it.

Torch-free; reads IPython's compile cache and input history, never the notebook file.
"""
from __future__ import annotations

import linecache
import os
import re
import site
import sys
import sysconfig
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

_IPYTHON_7_NAME = re.compile(r"<ipython-input-(\d+)-[0-9a-f]+>")  # IPython 7 (Colab): `<ipython-input-5-…>`
MAX_FRAMES = 8  # user frames kept per recorded event, innermost first
MAX_KNOWN = 256  # file names whose user-or-library answer is remembered


@dataclass(frozen=True)
class Site:
    """One line of the user's code that ran."""

    filename: str
    lineno: int
    function: str = "<module>"  # the code's qualified name: `Block.forward`, `train`, `<module>`
    cell: Optional[int] = None  # In [k] when the code is a notebook cell's


@dataclass(frozen=True)
class Frame:
    """A user frame of a traceback: where, and the frame's variables (the names rules look up there)."""

    site: Site
    local_names: Optional[Mapping[str, Any]] = None


def frame_at(depth: int) -> Optional[FrameType]:
    """The frame `depth` calls out from the caller (0: the caller's own), or None where the stack is not that
    deep: what torch calls from its autograd worker threads (a CUDA backward runs there: tensor hooks, custom
    Functions' backward, anomaly mode's stack capture, its warnings) has no Python frames under it, and
    `sys._getframe` raises there."""
    try:
        return sys._getframe(depth + 1)
    except ValueError:
        return None


# NB: what always runs under a user's cells, wherever it is installed
_HOSTS = ("IPython", "ipykernel", "traitlets", "tornado", "zmq", "jupyter_client", "torch")


def _library_roots() -> Tuple[str, ...]:
    paths = {sysconfig.get_paths().get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        paths.update(site.getsitepackages())
        paths.add(site.getusersitepackages())
    except AttributeError:  # pragma: no cover - virtualenv's old site module
        pass
    paths.add(os.path.dirname(os.path.abspath(__file__)))  # grad_magic itself, wherever it is installed
    # NB: packages installed outside the interpreter's own folders (`pip install --target DIR` with DIR on
    # PYTHONPATH, as on hosted GPU machines; a folder of wheels unpacked by hand): pip leaves a `*.dist-info`
    # beside them. Else IPython's own `run_code` frame would pass for the user's code, under every cell.
    paths.update(p for p in sys.path if p and _installed_into(p))
    for name in _HOSTS:
        module = sys.modules.get(name)
        if isinstance(getattr(module, "__file__", None), str):
            paths.add(os.path.dirname(os.path.abspath(module.__file__)))
    return tuple(sorted(os.path.join(os.path.realpath(p), "") for p in paths if p))


def _installed_into(folder: str) -> bool:
    """Whether pip installed a distribution into `folder` (a sys.path entry)."""
    try:
        with os.scandir(folder) as entries:
            return any(e.name.endswith(".dist-info") and e.is_dir() for e in entries)
    except OSError:
        return False


_LIBRARIES = _library_roots()


class Sources:
    """The user's code by compiled name: which names are the user's, their cell numbers and text.

    `shell`: the IPython shell (its compile cache and input history), or None outside IPython; `current`:
    the running cell's compiled name, number and text as typed (a `%%gradcheck` cell).
    """

    def __init__(self, shell: Any = None, current: Optional[Tuple[str, Optional[int], str]] = None) -> None:
        self._shell = shell
        self._current = current
        self._user: Dict[str, bool] = {}
        self._names: Mapping[str, int] = getattr(getattr(shell, "compile", None), "_filename_map", None) or {}

    @property
    def current_filename(self) -> Optional[str]:
        return self._current[0] if self._current else None

    def cell_number(self, filename: str) -> Optional[int]:
        if self._current and filename == self._current[0]:
            return self._current[1]
        number = self._names.get(filename)
        if number is None:
            match = _IPYTHON_7_NAME.fullmatch(filename)
            number = int(match.group(1)) if match else None
        return number

    def cells(self) -> List[Tuple[int, str]]:
        """(In [k], compiled name) of every cell IPython ran, newest first: for a number run more than once (a
        session reset counts from 1 again), the one whose text is the input history's, else the newest."""
        names = list(self._names.items()) or [(f, self.cell_number(f)) for f in list(linecache.cache)
                                               if isinstance(f, str) and _IPYTHON_7_NAME.fullmatch(f)]
        by_number: Dict[int, List[str]] = {}
        for filename, number in names:
            if number is not None:
                by_number.setdefault(number, []).append(filename)
        found = []
        for number, filenames in by_number.items():
            typed = _typed_cell(self._shell, number)
            same = [f for f in filenames
                    if typed is not None and _same_lines(typed, "".join(linecache.getlines(f)))]
            found.append((number, (same or filenames)[-1]))
        return sorted(found, reverse=True)

    def typed(self, number: int) -> Optional[str]:
        """The text of In [number] as the user typed it (IPython's input history), None when not known."""
        return _typed_cell(self._shell, number)

    def is_user(self, filename: str) -> bool:
        """Cells and the user's own files; not libraries, not `<frozen …>` or `<string>` code."""
        known = self._user.get(filename)
        if known is None:
            if len(self._user) >= MAX_KNOWN:  # NB: each cell is a new file name; a long session sees thousands
                self._user.clear()
            known = self._user[filename] = self._is_user(filename)
        return known

    def _is_user(self, filename: str) -> bool:
        if self._current and filename == self._current[0] or self.cell_number(filename) is not None:
            return True
        if filename.startswith("<") or not filename.endswith(".py") or _generated(filename):
            return False
        return not os.path.realpath(filename).startswith(_LIBRARIES)

    def text(self, filename: str) -> str:
        """The cell as the user typed it (IPython's input history), else the file's text."""
        if self._current and filename == self._current[0]:
            return self._current[2]
        number = self.cell_number(filename)
        typed = _typed_cell(self._shell, number) if number is not None else None
        compiled = "".join(linecache.getlines(filename))
        if typed is not None and _same_lines(typed, compiled):
            return typed
        return compiled

    def site(self, code: Any, lineno: int) -> Site:
        filename = code.co_filename
        return Site(filename, lineno, getattr(code, "co_qualname", code.co_name), self.cell_number(filename))

    def stack(self, frame: Optional[FrameType], filename: Optional[str]) -> Tuple[Optional[int], Tuple[Tuple[str, int], ...]]:
        """From `frame` outwards: the innermost line run in `filename` (the running cell), and (filename,
        line) of the innermost user frames (at most MAX_FRAMES), innermost first."""
        found: List[Tuple[str, int]] = []
        while frame is not None:
            name = frame.f_code.co_filename
            if name == filename:
                if len(found) < MAX_FRAMES:
                    found.append((name, frame.f_lineno))
                return frame.f_lineno, tuple(found)
            if len(found) < MAX_FRAMES and self.is_user(name):
                found.append((name, frame.f_lineno))
            frame = frame.f_back
        return None, tuple(found)

    def frames(self, tb: Optional[TracebackType], exc: Optional[BaseException] = None) -> Tuple[Frame, ...]:
        """The user frames of a traceback, outermost first, each with its variables; then, for an error a
        DataLoader worker raised (`exc`), the user frames of the worker's own traceback, read from its text
        (`__getitem__`, the collate function: no variables, the worker process is gone)."""
        here = tuple(Frame(self.site(t.tb_frame.f_code, line), names)
                     for t, line, names in entries_with_names(tb) if self.is_user(t.tb_frame.f_code.co_filename))
        return here + self.worker_frames(exc)

    def worker_frames(self, exc: Optional[BaseException]) -> Tuple[Frame, ...]:
        """The user frames of the traceback text a DataLoader worker sent with its error (torch's
        `ExceptionWrapper`: "Caught X in DataLoader worker process N.\nOriginal Traceback ..."), outermost first."""
        text = str(exc) if exc is not None and type(exc).__module__ == "builtins" else ""
        head, found, trace = text.partition(_WORKER_TRACE)
        if not found or not _WORKER_CAUGHT.match(head):
            return ()
        sites = [Site(m["file"], int(m["line"]), m["function"], self.cell_number(m["file"]))
                 for m in _TRACE_LINE.finditer(trace)]
        return tuple(Frame(site, None) for site in sites if self.is_user(site.filename))


# NB: torch/_utils.py's ExceptionWrapper.reraise: "Caught {type} {where}.\nOriginal {traceback text}"
_WORKER_CAUGHT = re.compile(r"Caught \w+ in DataLoader worker process \d+\.\n")
_WORKER_TRACE = "Original Traceback (most recent call last):\n"
_TRACE_LINE = re.compile(r'^  File "(?P<file>[^"\n]+)", line (?P<line>\d+), in (?P<function>[^\n]+)$', re.M)


def in_terminal(shell: Any) -> bool:
    """Terminal IPython (prompt_toolkit or --simple-prompt), not a kernel."""
    try:
        from IPython.terminal.interactiveshell import TerminalInteractiveShell
    except ImportError:  # pragma: no cover - part of IPython
        return False
    return isinstance(shell, TerminalInteractiveShell)


def _generated(filename: str) -> bool:
    """Code torch.compile's inductor wrote to its cache (`/tmp/torchinductor_<user>/…/*.py`): torch's, not the user's."""
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    return f"{os.sep}torchinductor_" in filename or bool(cache) and filename.startswith(cache)


def _entries(tb: Optional[TracebackType]) -> Iterator[TracebackType]:
    while tb is not None:
        yield tb
        tb = tb.tb_next


_COMPREHENSIONS = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"})


def entries_with_names(tb: Optional[TracebackType]) -> List[Tuple[TracebackType, int, Mapping[str, Any]]]:
    """(entry, line, variables) of each traceback entry, outermost first; a comprehension's entry is folded into
    the entry of the line that runs it, their variables together (`[q(x) for q in self.heads]`: `q`, `x` and
    `self` at one line), as Python 3.12 runs comprehensions inline (PEP 709) and a rule reads a line's names."""
    found: List[Tuple[TracebackType, int, Mapping[str, Any]]] = []
    for t in _entries(tb):
        code = t.tb_frame.f_code
        if code.co_name in _COMPREHENSIONS and found:
            outer, line, names = found[-1]
            if outer.tb_frame.f_code.co_filename == code.co_filename and _spans(code, line):
                inner = {k: v for k, v in t.tb_frame.f_locals.items() if not k.startswith(".")}
                found[-1] = (outer, t.tb_lineno, {**names, **inner})  # NB: the comprehension's line: the op's own
                continue
        found.append((t, t.tb_lineno, t.tb_frame.f_locals))
    return found


def _spans(code: Any, line: int) -> bool:
    """Whether `line` is one of the lines of a comprehension's code (the statement that runs it)."""
    lines = [n for _, _, n in code.co_lines() if n is not None]
    return bool(lines) and min(lines) <= line <= max(lines)


def _typed_cell(shell: Any, number: int) -> Optional[str]:
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if not history or not 0 < number < len(history):
        return None
    return history[number]


def _same_lines(typed: str, compiled: str) -> bool:
    """Whether the cell as typed has the lines the compiled code numbers (IPython's transforms keep lines:
    a `%magic` line becomes one `get_ipython()` line); else edits on the typed text would miss."""
    a, b = typed.rstrip("\n").split("\n"), compiled.rstrip("\n").split("\n")
    if len(a) != len(b):
        return False
    return all(x == y or x.lstrip().startswith(("%", "!")) or y.strip() == "" for x, y in zip(a, b))


def plain_sources(filename: Optional[str], source: str) -> Sources:
    """Outside IPython: the block's own file is the "cell"."""
    return Sources(None, (filename, None, source) if filename else None)
