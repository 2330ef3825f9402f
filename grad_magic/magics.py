"""The IPython magics: option parsing and wiring only. The work lives in importable modules."""
from __future__ import annotations

from typing import Any, List, Optional

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from traitlets import Bool, Unicode, observe
from traitlets.config import Configurable

from . import catalog, state
from .alwayson import AlwaysOn
from .capture import CaptureOptions
from .cellrun import body_awaits, in_terminal, report_watched, run_cell_checked, run_cell_checked_async
from .render.common import fixed_cells, place_label


class GradMagic(Configurable):
    """Settings: `%config GradMagic.language = "zh"` (or `c.GradMagic.language` in ipython_config.py)."""

    language = Unicode("", help="Language of the cards: 'en' or 'zh'; empty: $GRAD_MAGIC_LANG, "
                                "else the locale.").tag(config=True)
    always_on = Bool(False, help="Watch every cell as `%gradcheck on` does, from the moment the extension "
                                 "loads (`c.GradMagic.always_on = True` in ipython_config.py).").tag(config=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.language:  # NB: a value from the config file arrives before observers are armed
            state.set_language(self.language)
        if self.always_on and self.parent is not None:
            watch_of(self.parent).start()

    @observe("language")
    def _language_changed(self, change: Any) -> None:
        state.set_language(change["new"] or None)

    @observe("always_on")
    def _always_on_changed(self, change: Any) -> None:
        watch = watch_of(self.parent) if self.parent is not None else None
        if watch is not None:
            watch.start() if change["new"] else watch.stop()


_WATCHES: "dict[int, AlwaysOn]" = {}  # id(shell) -> its always-on watch


def watch_of(shell: Any) -> AlwaysOn:
    """The shell's always-on watch (made on first use; off until started)."""
    watch = _WATCHES.get(id(shell))
    if watch is None or watch.shell is not shell:
        watch = _WATCHES[id(shell)] = AlwaysOn(shell, report_watched)
    return watch


def forget_watch(shell: Any) -> None:
    """`%unload_ext`: the watch off and forgotten."""
    watch = _WATCHES.pop(id(shell), None)
    if watch is not None:
        watch.stop()


@magics_class
class GradMagics(Magics):
    @magic_arguments()
    @argument("--fast", action="store_true",
              help="no anomaly detection (near plain speed); in-place, device and optimizer tracking stay on")
    @argument("--no-nan-check", action="store_true",
              help="anomaly detection without its NaN check in backward")
    @argument("--quiet", action="store_true", help="show cards for errors only, not for warnings")
    @argument("-h", "--help", action="store_true", help="show this help and run nothing")
    @line_cell_magic
    def gradcheck(self, line: str, cell: Optional[str] = None) -> Any:
        """Run the cell as usual, under torch anomaly detection and grad_magic's tracking hooks.

        When the cell fails -- or silently goes wrong, like gradients never zeroed -- a card explains
        what happened, why and where, and proposes a fixed cell (%gradfix puts it in the next input).
        The cell's namespace, line numbers, result and errors are those of a plain cell. In a notebook the
        card comes above the error; in terminal IPython, after the traceback, so that it stays in view.

        As a line magic: `%gradcheck on` watches every following cell (at --fast cost; a cell marked
        %%gradcheck still runs in full mode), `%gradcheck on --quiet` without warning cards, `%gradcheck off`
        stops, `%gradcheck` says whether it is on, `%gradcheck details` shows the last cards in full (text).
        """
        __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame in tracebacks
        if cell is None:
            return self._always_on(line)
        args = _parse(self.gradcheck, line)
        if args.help:
            print(_usage(self.gradcheck, full=True))
            return None
        options = CaptureOptions(anomaly=not args.fast, check_nan=not args.no_nan_check,
                                 quiet=args.quiet)
        if body_awaits(self.shell, cell):
            # NB: the cell was made `await get_ipython().run_cell_magic(...)` (cellrun.awaited_magic_call):
            # IPython awaits what this returns, in its own loop
            return run_cell_checked_async(self.shell, line, cell, options)
        return run_cell_checked(self.shell, line, cell, options)

    def _always_on(self, line: str) -> None:
        words = line.split()
        watch = watch_of(self.shell)
        if words in (["on"], ["on", "--quiet"]):
            watch.start(quiet=len(words) == 2)
            print(catalog.message("always.on_quiet" if len(words) == 2 else "always.on"))
        elif words == ["off"]:
            status = watch.status()
            watch.stop()
            print(catalog.message("always.off", cells=status.cells, cards=status.cards))
        elif words == ["details"]:
            self._details()
        elif not words:
            status = watch.status()
            print(catalog.message("always.status_on" if status.on else "always.status_off",
                                  cells=status.cells, cards=status.cards))
        else:
            raise UsageError(catalog.message("always.usage", line=line.strip()))

    @staticmethod
    def _details() -> None:
        """The last run's cards in full, as text: what a terminal's short card leaves out."""
        from .render import text

        shown = state.last_diagnoses()
        if not shown:
            print(catalog.message("always.no_cards"))
        for d in shown:
            print(text.render(d, color=text.supports_color(), width=text.terminal_width()) + "\n")

    @line_magic
    def gradfix(self, line: str) -> None:
        """Put the fixed cell proposed by the last %%gradcheck run into the next input. A fix that changes
        earlier cells too gives one cell at a time, earlier cells first: `%gradfix 2` for the second."""
        d = next((d for d in state.last_diagnoses() if d.fix is not None), None)
        cells = fixed_cells(d) if d is not None else []
        if line.strip() and not line.strip().isdigit():
            raise UsageError(catalog.message("gradfix.usage", line=line.strip()))
        index = int(line.strip()) if line.strip() else 1
        if not cells:
            print(catalog.message("gradfix.none"))
            return
        if not 1 <= index <= len(cells):
            print(catalog.message("gradfix.out_of_range", index=index, count=len(cells)))
            return
        cell, description = cells[index - 1], d.fix.description
        if not cell.this and cell.cell is None:
            self._file_fix(d, cell)
            return
        if in_terminal(self.shell) and getattr(self.shell, "simple_prompt", False):
            # NB: a plain-input terminal (`ipython --simple-prompt`, Emacs, pipes) cannot pre-fill
            # the prompt: the fixed cell is printed to copy instead.
            print(catalog.message("gradfix.printed", description=description))
            print(cell.source + "\n", end="")
        else:
            # NB: in a terminal, with its final newline the cursor sits on an empty last line, so Enter runs it
            self.shell.set_next_input(cell.source + ("\n" if in_terminal(self.shell) else ""), replace=False)
            print(catalog.message("gradfix.inserted", description=description))
        _say_which(d, cells, index)


    def _file_fix(self, d: Any, cell: Any) -> None:
        """A fix of the user's own file: never its text in a cell (that would define a second copy beside the
        module's); the file is the user's to change, as the diff shows. The next input is the cell that
        reloads the module once it is changed, and the cells that used it are named to run again."""
        place = place_label(d.language, cell.cell, cell.file, cell.this)
        if not cell.reload:
            print(catalog.message("gradfix.restart", d.language, place=place))
        else:
            then = catalog.message("gradfix.reload_then", d.language,
                                   cells=", ".join(f"In [{n}]" for n in cell.rerun)) if cell.rerun \
                else catalog.message("gradfix.reload_failing", d.language)
            print(catalog.message("gradfix.reload", d.language, place=place, then=then))
            if in_terminal(self.shell) and getattr(self.shell, "simple_prompt", False):
                print(cell.reload)  # NB: a plain-input terminal cannot pre-fill the prompt: to copy
            else:
                self.shell.set_next_input(cell.reload + ("\n" if in_terminal(self.shell) else ""), replace=False)
        for sign, text in cell.diff:
            print(f"{sign} {text}" if sign in "+-" else "...")


def _say_which(d: Any, cells: List[Any], index: int) -> None:
    if len(cells) == 1 and cells[0].this:
        return
    place = place_label(d.language, cells[index - 1].cell, cells[index - 1].file, cells[index - 1].this)
    print(catalog.message("gradfix.which", place=place, index=index, count=len(cells)))
    if index < len(cells):
        later = cells[index]
        print(catalog.message("gradfix.next", index=index + 1,
                              place=place_label(d.language, later.cell, later.file, later.this)))


def _parse(magic: Any, line: str) -> Any:
    try:
        return parse_argstring(magic, line)
    except UsageError as e:
        raise UsageError(f"{e}\n{_usage(magic)}\nRun `%%gradcheck --help` for the options.") from None


def _usage(magic: Any, full: bool = False) -> str:
    """argparse's usage text, spelled as the user types the cell magic."""
    text = magic.parser.format_help() if full else magic.parser.format_usage()
    return text.replace("::\n\n  %gradcheck", "usage: %%gradcheck", 1).strip()
