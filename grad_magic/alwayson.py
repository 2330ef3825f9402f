"""Always on: `%gradcheck on` watches every following cell at `--fast` cost, as `%pdb on` watches for errors.

IPython wiring only. IPython runs each cell exactly as it would without grad_magic (its own compile, line
numbers, `Out`, `%debug`, stacked cell magics, top-level `await`); its `pre_run_cell` event puts a capture's
hooks on (`capture.Capture` with `CaptureOptions(anomaly=False)`: no anomaly mode) and its `post_run_cell`
event takes them off and shows the cards, below the cell's output and traceback. What stays the user's:

- a `%%gradcheck` cell runs as before, in full mode (the watch steps aside for it), and so do grad_magic's own
  line magics (`%gradfix` must still find the last card's fix);
- a cell run from inside a cell (`get_ipython().run_cell(...)`, `%run -i`, `%%capture`) is part of the outer
  cell's run; when it fails (IPython shows its traceback there), its card is shown with it: inside `%%capture`,
  among what it captures;
- the traceback IPython shows is a plain cell's: the tracking hooks' frames are taken out of it before
  IPython formats it (`showtraceback`, wrapped while the watch is on), so `sys.last_traceback` and `%debug`
  see what a plain cell leaves;
- `%gradcheck off` (or unloading the extension) takes every hook off, also the ones of the cell it runs in;
- fast mode's patches of torch's in-place entry points and the `zero_grad` wrappers of Optimizer and Module stay
  on from `on` to `off` (lighttrack.py, stephooks.py: putting them on and off changes the class, and Python 3.13
  stops caching a class's attributes after ~1,000 changes; between cells they pass each call on at once).

A silent bug's card comes while the cell runs, as under `%%gradcheck` (live.py, from the optimizer step hooks);
`on --quiet` shows error cards only, at the end of the cell.

The cell's compiled name is known only once IPython compiles it (after `pre_run_cell`): it is predicted with
IPython's own naming (`compile.get_code_name`) and checked when the cell ends.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple

from .capture import Capture, CaptureOptions
from .cell import GRADCHECK_LINE, MAX_STACKED
from .cellrun import as_in_a_plain_cell
from .lighttrack import LightTracker
from .live import LiveWatch
from .sources import Sources
from .stephooks import ZERO_GRAD_OWNERS, ZeroGradWatch
from .threadwatch import ThreadErrors

_OWN_LINE_MAGICS = ("%gradcheck", "%gradfix", "%grad_device", "%load_ext", "%unload_ext", "%reload_ext")


@dataclass(frozen=True)
class Status:
    """What `%gradcheck` says about the watch."""

    on: bool
    quiet: bool = False
    cells: int = 0  # cells watched since it was turned on
    cards: int = 0  # cards shown since it was turned on


class AlwaysOn:
    """The watch over one shell's cells. `start()` / `stop()` are idempotent; `stop()` leaves nothing on."""

    def __init__(self, shell: Any, show: Callable[[Any, Capture, CaptureOptions], int]) -> None:
        self.shell = self._shell = shell
        self._show = show  # (shell, capture, options) -> how many cards: diagnose the run and show its cards
        self._options = CaptureOptions(anomaly=False)
        self._run: Optional[Capture] = None
        self._predicted: Optional[str] = None
        self._inner = 0  # cells run from inside the watched cell
        self._inner_cells: List[Tuple[Optional[str], str]] = []  # (predicted name, text) of each, innermost last
        self._armed = False
        self._held: Optional[LightTracker] = None  # NB: fast mode's patches, on from start() to stop()
        self._held_zero_grad: List[ZeroGradWatch] = []  # NB: and zero_grad's wrappers
        self._cells = 0
        self.cards = 0
        self._number: Optional[int] = None  # In [k] of the watched cell under way
        self._threads = ThreadErrors(shell, show, lambda: self._number if self._run is not None else None)

    # -- on and off --

    def start(self, quiet: bool = False) -> None:
        self._options = CaptureOptions(anomaly=False, quiet=quiet)
        if self._armed:
            return
        self._armed = True  # NB: set first: stop() undoes whatever of the rest got on
        try:
            events = self._shell.events
            events.register("pre_run_cell", self._pre)
            events.register("post_run_cell", self._post)
            self._shell.showtraceback = _plain_tracebacks(self._shell, self)
            self._threads.options = self._options
            self._threads.install()
            self._held = LightTracker(None, records=False)  # NB: noted before it goes on: stop() takes it off
            self._held.install()
            for owner, params in ZERO_GRAD_OWNERS:
                self._held_zero_grad.append(ZeroGradWatch(owner, params, None))
                self._held_zero_grad[-1].install()
        except BaseException:  # NB: an interrupt half way: not armed, nothing left on
            self.stop()
            raise
        self._cells = self.cards = 0

    def stop(self) -> None:
        """Every hook off: the events, the traceback wrapper, and the capture of a cell under way (the
        `%gradcheck off` cell's own: closed without a card)."""
        self._armed = False
        events = self._shell.events
        for name, callback in (("pre_run_cell", self._pre), ("post_run_cell", self._post)):
            while callback in events.callbacks.get(name, ()):
                events.unregister(name, callback)
        if "showtraceback" in vars(self._shell):
            del self._shell.showtraceback  # NB: the class's method again
        self._threads.uninstall()
        run, self._run, self._inner = self._run, None, 0
        self._inner_cells.clear()
        if run is not None:
            run.close()
        held, self._held = self._held, None
        if held is not None:
            held.uninstall()
        while self._held_zero_grad:
            self._held_zero_grad[-1].uninstall()
            self._held_zero_grad.pop()

    def status(self) -> Status:
        return Status(self._armed, self._options.quiet, self._cells, self.cards + self._threads.cards)

    @property
    def running(self) -> bool:
        """A watched cell is under way (its hooks are on)."""
        return self._run is not None

    # -- each cell --

    def _pre(self, info: Any = None) -> None:
        if self._run is not None:
            self._inner += 1  # NB: a cell run from the watched cell: the outer capture watches it
            raw = getattr(info, "raw_cell", None)
            try:
                name = _predicted_name(self._shell, info, raw)[0] if isinstance(raw, str) else None
            except Exception:
                name = None
            self._inner_cells.append((name, raw if isinstance(raw, str) else ""))
            return
        raw = getattr(info, "raw_cell", None)
        if not isinstance(raw, str) or _steps_aside(raw):
            return
        try:
            filename, number = _predicted_name(self._shell, info, raw)
            run = Capture(self._options, filename=filename, source=raw,
                          sources=Sources(self._shell, (filename, number, raw)),
                          live=None if self._options.quiet else LiveWatch(self._shell.user_ns))
            self._predicted, self._number = filename, number
            self._threads.cell_started()
            self._run = run  # NB: before its hooks go on: an interrupt on any line leaves them to _post or stop()
            run.__enter__()  # NB: takes off what it put on if it fails; then the cell runs unwatched
        except Exception:
            self._run = None
            return
        self._cells += 1

    def _post(self, result: Any = None) -> None:
        if self._inner:
            self._inner -= 1
            name, raw = self._inner_cells.pop() if self._inner_cells else (None, "")
            self._inner_failed(result, name, raw)
            return
        run = self._run
        if run is None:
            return
        run.close()  # NB: first, before anything here can fail; idempotent, finished again by stop()
        self._run = None
        self._threads.cell_ended(self._number)
        exc = getattr(result, "error_in_exec", None)
        try:
            run.__exit__(type(exc) if exc is not None else None, exc, None)
        except Exception:
            return
        if run.record is not None and not _compiled_as(self._shell, self._predicted, result):
            return  # NB: the name was not the one IPython gave the cell: no line of it is known; no card
        self.cards += self._show(self._shell, run, self._options) + (len(run.live.shown) if run.live else 0)


    def _inner_failed(self, result: Any, name: Optional[str], raw: str) -> None:
        """A cell run from inside the watched one failed (IPython showed its traceback there: `%%capture`,
        `get_ipython().run_cell(...)`): its card now, in that cell's output (inside `%%capture`, among what it
        captures), from what the outer capture has recorded so far."""
        exc = getattr(result, "error_in_exec", None)
        run = self._run
        if run is None or name is None or not isinstance(exc, Exception) or not _compiled_as(self._shell, name, result):
            return
        try:
            record = run.inner_record(exc, name, raw)
        except Exception:
            return
        self.cards += self._show(self._shell, _Inner(record), self._options)


@dataclass
class _Inner:
    """What `show` reads of a capture, for an inner cell's record: no live card was its."""

    record: Any
    live: Any = None


def _steps_aside(raw: str) -> bool:
    """A `%%gradcheck` cell (it runs in full mode), and a cell of grad_magic's own line magics only."""
    if raw.startswith("%%"):
        return any(GRADCHECK_LINE.match(line) for line in raw.split("\n", MAX_STACKED)[:MAX_STACKED]
                   if line.startswith("%%"))
    lines = [line.strip() for line in raw.splitlines() if line.strip() and not line.strip().startswith("#")]
    return bool(lines) and all(line.startswith(_OWN_LINE_MAGICS) for line in lines)


def _predicted_name(shell: Any, info: Any, raw: str) -> Tuple[str, Optional[int]]:
    """The compiled name IPython will give the cell about to run, and its number.

    NB: IPython 9 counts the cell before `pre_run_cell`, IPython 7 and 8 after it has run; ipykernel 6+ names a
    cell by its raw text alone, IPython's own compiler by the transformed text and the number.
    """
    import IPython

    number = shell.execution_count
    if IPython.version_info[0] >= 9 and getattr(info, "store_history", False):
        number -= 1
    transformed = getattr(info, "transformed_cell", None)
    if transformed is None:
        transformed = shell.transform_cell(raw)
    return shell.compile.get_code_name(raw, transformed, number), number


def _compiled_as(shell: Any, predicted: Optional[str], result: Any) -> bool:
    """Whether IPython compiled the cell under the predicted name (or it never got to compile it)."""
    if getattr(result, "error_before_exec", None) is not None:
        return False
    names = getattr(shell.compile, "_filename_map", None)
    if names is None or predicted is None:
        return predicted is not None
    return predicted in names


def _plain_tracebacks(shell: Any, watch: AlwaysOn) -> Callable[..., Any]:
    """`shell.showtraceback`, wrapped: while a watched cell runs, the error's traceback (and those it chains to)
    loses the tracking hooks' frames before IPython formats and stores it, as `%%gradcheck` does for its cell."""
    original = type(shell).showtraceback.__get__(shell)

    def showtraceback(exc_tuple: Any = None, *args: Any, **kwargs: Any) -> Any:
        if watch.running:
            try:
                value = exc_tuple[1] if exc_tuple is not None else _handled()
                if isinstance(value, BaseException):
                    as_in_a_plain_cell(value)
                    exc_tuple = (type(value), value, value.__traceback__)
            except Exception:  # NB: never in place of the user's traceback
                pass
        return original(exc_tuple, *args, **kwargs)

    return showtraceback


def _handled() -> Optional[BaseException]:
    import sys

    return sys.exc_info()[1]
