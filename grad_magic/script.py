"""`python -m grad_magic [options] script.py args...`: a script run as `python script.py args...` runs it, under
the capture a `%%gradcheck` cell runs under, with its cards on stderr after the traceback.

The script's side stays plain Python's: the same `sys.argv`, a `__main__` module of its own (pickle and
multiprocessing's spawn find it), `sys.path[0]` the script's folder, its stdout and stderr untouched, its
traceback printed by `sys.excepthook` from the script's first frame on, exit code 1 after an uncaught error,
`SystemExit` (`sys.exit(3)`) passed through. The cards come after that, on stderr.

A thin layer, like the magic (magics.py / cellrun.py): the capture (capture.py), the rules (engine.py) and the
text and JSON renderers do the work; IPython is not imported. The script is no "cell": the capture runs with a
running cell of no lines (`SCRIPT`), so every frame of the user's files is read as a view of its file
(rules/elsewhere.py) and each card names its lines by file and line, and fixes them as diffs of those files.
The files change only with `--write`. Under torchrun each rank's cards are merged (ranks.py).
"""
from __future__ import annotations

import argparse
import atexit
import dataclasses
import importlib.util
import io
import json
import os
import signal
import sys
import types
from types import CodeType, FrameType, TracebackType
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from . import catalog, state
from .capture import Capture, CaptureOptions
from .live import LiveWatch, after_live
from .model import Diagnosis

SCRIPT = "<grad_magic script>"  # NB: the running "cell": no lines, so every frame of the script is a view


@dataclasses.dataclass(frozen=True)
class ScriptOptions:
    """What `python -m grad_magic` was asked: the script, its arguments and grad_magic's own options."""

    script: str
    args: Tuple[str, ...] = ()
    fast: bool = False
    json_dir: Optional[str] = None
    language: str = ""
    write: bool = False
    quiet: bool = False


def parse(argv: Sequence[str]) -> ScriptOptions:
    """grad_magic's options come before the script; everything after it is the script's."""
    parser = argparse.ArgumentParser(
        prog="python -m grad_magic", description=catalog.message("script.description"))
    parser.add_argument("--fast", action="store_true", help=catalog.message("script.help_fast"))
    parser.add_argument("--json", metavar="DIR", help=catalog.message("script.help_json"))
    parser.add_argument("--lang", choices=("en", "zh"), default="", help=catalog.message("script.help_lang"))
    parser.add_argument("--write", action="store_true", help=catalog.message("script.help_write"))
    parser.add_argument("--quiet", action="store_true", help=catalog.message("script.help_quiet"))
    parser.add_argument("script", help=catalog.message("script.help_script"))
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(list(argv))
    return ScriptOptions(ns.script, tuple(ns.args), ns.fast, ns.json, ns.lang, ns.write, ns.quiet)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """The entry point: never returns (it exits as the script would)."""
    options = parse(sys.argv[1:] if argv is None else argv)
    if options.language:
        state.set_language(options.language)
    path = os.path.abspath(options.script)
    try:
        code, text = _compiled(path)
    except OSError as e:  # NB: Python's own words and exit status for a script it cannot open
        print(f"{sys.executable}: can't open file {path!r}: [Errno {e.errno}] {e.strerror}", file=sys.stderr)
        raise SystemExit(2) from None
    module = _main_module(path)
    sys.argv[:] = [options.script, *options.args]
    sys.path[0] = os.path.dirname(path)
    _run(options, code, module)


def _compiled(path: str) -> Tuple[CodeType, str]:
    """The script's code, compiled as `python script.py` compiles it (its bytes, with their encoding line)."""
    with io.open_code(path) as f:
        data = f.read()
    return compile(data, path, "exec", dont_inherit=True), importlib.util.decode_source(data)


def _main_module(path: str) -> types.ModuleType:
    """A fresh `__main__` for the script, as Python makes one for `python script.py`; it stays in sys.modules
    (pickle, multiprocessing's spawn and atexit handlers look it up there)."""
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=path, __cached__=None, __package__=None, __spec__=None,
                           __builtins__=__builtins__, __loader__=None)
    sys.modules["__main__"] = module
    return module


def _run(options: ScriptOptions, code: CodeType, module: types.ModuleType) -> None:
    runner = sys._getframe()
    from .ranks import Ranks

    cards = Cards(options, Ranks.from_environment(options.json_dir))
    live = None if options.quiet else LiveWatch(module.__dict__, show=cards.show_live, language=options.language)
    run = Capture(CaptureOptions(anomaly=not options.fast, quiet=options.quiet), filename=SCRIPT, source="",
                  hidden_frames=_frames_out(runner), live=live)
    try:
        with run:
            exec(code, module.__dict__)
    except SystemExit:
        cards.report(run, module)  # NB: the silent cards of what ran; an exit is the user's intent, not an error
        raise
    except BaseException as exc:  # noqa: B902 -- the script's own outcome, told as Python tells it, then left
        _print_traceback(exc, code)
        cards.report(run, module)
        if isinstance(exc, KeyboardInterrupt):
            _die_of_sigint()
        raise SystemExit(1) from None
    cards.report(run, module)
    raise SystemExit(0)


def _frames_out(frame: Optional[FrameType]) -> FrozenSet[FrameType]:
    """The runner's frame and every frame out from it (runpy's, ours): none of them is the script's."""
    found = []
    while frame is not None:
        found.append(frame)
        frame = frame.f_back
    return frozenset(found)


def _print_traceback(exc: BaseException, code: CodeType) -> None:
    """The traceback as Python prints it for `python script.py`: from the script's frame on, without the
    trackers' frames (cellrun.as_in_a_plain_cell), through `sys.excepthook` (the script may have set its own)."""
    from .cellrun import as_in_a_plain_cell

    as_in_a_plain_cell(exc)
    tb: Optional[TracebackType] = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code is not code:
        tb = tb.tb_next
    exc.with_traceback(tb if tb is not None else exc.__traceback__)
    sys.stdout.flush()
    sys.excepthook(type(exc), exc, exc.__traceback__)


def _die_of_sigint() -> None:
    """What Python does after an uncaught KeyboardInterrupt: exit handlers, then die of SIGINT (exit status 130
    in a shell), so that whoever ran the script knows it was interrupted."""
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
    raise SystemExit(130)  # NB: where the signal does not end the process


class Cards:
    """The run's cards: shown on stderr (live ones while the script runs), written as JSON, merged across
    ranks, and their fixes written to the files with `--write`."""

    def __init__(self, options: ScriptOptions, ranks: Any) -> None:
        self.options = options
        self.ranks = ranks
        self.language = options.language or state.language()

    def show_live(self, d: Diagnosis) -> None:
        print(self.text(d), file=sys.stderr, flush=True)

    def report(self, run: Capture, module: types.ModuleType) -> None:
        """Diagnose the run and tell it. Never raises: the script's own outcome matters more."""
        try:
            self._report(run, module)
        except Exception as e:  # pragma: no cover - a bug of ours must not change the script's exit
            print(f"grad_magic: internal error: {type(e).__name__}: {e}", file=sys.stderr)

    def _report(self, run: Capture, module: types.ModuleType) -> None:
        from .engine import diagnose

        record, run.record = run.record, None
        found: List[Diagnosis] = []
        if record is not None:
            # NB: no generic card: a script's NameError or typo is for its traceback to tell, not a PyTorch matter
            found = [d for d in diagnose(record, module.__dict__, self.language) if d.kind != "generic"]
        found = [d for d in found if not (d.severity == "warning" and self.options.quiet)]
        live = run.live
        shown, notes = after_live(found, live)
        fixable = shown + (list(live.shown.values()) if live is not None else [])
        # NB: one writer: every rank of a job has the same files
        written = write_fixes(fixable) if self.options.write and self.ranks.rank <= 0 else {}
        texts = [(d, self.text(d, written)) for d in shown]
        self.ranks.tell(texts, [n.text for n in notes], self._json)

    def text(self, d: Diagnosis, written: Optional[Dict[Tuple[str, str], bool]] = None) -> str:
        from .render import text

        hint = fix_hint(d, written, self.options.write)
        if hint and self.options.write and self.ranks.rank > 0:
            hint = catalog.message("script.rank0_writes", d.language)
        return text.render(d, color=text.supports_color(sys.stderr), width=text.terminal_width(), hint=hint)

    def _json(self, d: Diagnosis, extra: Dict[str, Any]) -> Dict[str, Any]:
        from .render import json as json_card
        from .render.common import cleaned

        return cleaned({**json_card.render(d), "script": os.path.abspath(self.options.script), **extra})


def fix_hint(d: Diagnosis, written: Optional[Dict[Tuple[str, str], bool]], write: bool) -> str:
    """The line under a card's diff: whether its files were changed."""
    fixed = [c for c in (d.fix.elsewhere if d.fix is not None else ()) if c.file]
    if not fixed:
        return ""
    names = catalog.listing([f"`{os.path.basename(c.file)}`" for c in fixed], d.language)
    if not write:
        return catalog.message("script.not_written", d.language, files=names)
    if all((written or {}).get((c.file, c.source)) for c in fixed):
        return catalog.message("script.written", d.language, files=names)
    return catalog.message("script.changed_since", d.language, files=names)


def write_fixes(diagnoses: Sequence[Diagnosis]) -> Dict[Tuple[str, str], bool]:
    """`--write`: each card's fixed files written where the file still holds the text that ran (a second fix of
    the same file waits for the next run). (file, fixed text) -> whether it was written."""
    outcome: Dict[Tuple[str, str], bool] = {}
    for d in diagnoses:
        for c in d.fix.elsewhere if d.fix is not None else ():
            if c.file:
                outcome[(c.file, c.source)] = _write_file(c.file, c.original, c.source)
    return outcome


def _write_file(path: str, original: str, fixed: str) -> bool:
    try:
        with open(path, encoding="utf-8", newline="") as f:
            if f.read() != original:
                return False
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(fixed)
        return True
    except (OSError, UnicodeDecodeError):
        return False


def dumps(card: Dict[str, Any]) -> str:
    return json.dumps(card, ensure_ascii=False, indent=1)
