"""Run a `%%gradcheck` body in IPython with a plain cell's semantics, under a capture session.

IPython wiring only (the work lives in capture/engine): the body is transformed like any cell
(%magics, !cmd), compiled against the cell's own cached name so tracebacks read `Cell In[N], line L`
with the editor's line numbers (the `%%gradcheck` line is line 1), executed in the user namespace, and
its last expression becomes the cell's value. On failure the user's own exception propagates (the
cell is marked failed) after the card is shown.
"""
from __future__ import annotations

import ast
import dataclasses
import io
import sys
import tokenize
from inspect import CO_COROUTINE
from types import CodeType, TracebackType
from typing import Any, List, Optional, Tuple

from .capture import HIDDEN_CODE, Capture, CaptureOptions
from .model import Diagnosis
from . import state
from .engine import diagnose, diagnose_and_remember
from .cell import GRADCHECK_LINE, MAX_STACKED, python_lines
from .live import LiveWatch, after_live
from .sources import Sources, in_terminal
from .stacks import plain_traceback_once, plumbing_frames, traceback_without_dispatch

MAGIC_LINE = "%%gradcheck"
_SHOWN = "_grad_magic_shown"  # set on an exception whose card is shown, so an outer %%gradcheck stays quiet


def cell_text(line: str, body: str) -> str:
    """The cell as the user typed it (best reconstruction): magic line, then the body."""
    return MAGIC_LINE + (" " + line.strip() if line.strip() else "") + "\n" + body


def run_cell_checked(shell: Any, line: str, body: str, options: CaptureOptions) -> Any:
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame in tracebacks
    run, filename, above = _capture_for(shell, line, body, options, sys._getframe())
    try:
        with run:
            codes, last = _compile(shell, body, filename, above)
            # NB: run here, not in a helper: one frame less between IPython and the cell
            for code in codes:
                exec(code, shell.user_global_ns, shell.user_ns)
            value = eval(last, shell.user_global_ns, shell.user_ns) if last is not None else None
    except BaseException as exc:
        if _failed(shell, run, options, exc, filename):
            return None
        raise exc.with_traceback(_from_cell(exc.__traceback__, filename))
    _report(shell, run, options)
    return value


async def run_cell_checked_async(shell: Any, line: str, body: str, options: CaptureOptions) -> Any:
    """`run_cell_checked` for a body with top-level `await` (`body_awaits`): compiled as IPython's autoawait
    compiles a cell, awaited in the loop IPython runs the cell in (the kernel's, or the terminal's runner)."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame in tracebacks
    run, filename, above = _capture_for(shell, line, body, options, sys._getframe())
    try:
        with run:
            with shell.compile.extra_flags(ast.PyCF_ALLOW_TOP_LEVEL_AWAIT):
                codes, last = _compile(shell, body, filename, above)
            for code in (*codes, last):
                if code is None:
                    continue
                value = eval(code, shell.user_global_ns, shell.user_ns)
                if code.co_flags & CO_COROUTINE:
                    value = await value
            value = value if last is not None else None
    except BaseException as exc:
        if _failed(shell, run, options, exc, filename):
            return None
        raise exc.with_traceback(_from_cell(exc.__traceback__, filename))
    _report(shell, run, options)
    return value


def _capture_for(shell: Any, line: str, body: str, options: CaptureOptions,
                 runner: Any) -> Tuple[Capture, str, int]:
    """The capture of one cell run, the cell's cached name and the lines above its `%%gradcheck` line;
    `runner`: the frame of the cell runner (its plumbing is left out of anomaly traces)."""
    source, above = _cell_as_typed(shell, line, body)
    number = _cell_number(shell)
    filename = shell.compile.cache(source, number)
    return Capture(options, filename=filename, source=source, hidden_frames=plumbing_frames(runner),
                   sources=Sources(shell, (filename, number, source)),
                   live=None if options.quiet else LiveWatch(shell.user_ns)), filename, above


def body_awaits(shell: Any, body: str) -> bool:
    """Whether the body needs IPython's autoawait: top-level `await`, `async for` or `async with`, with
    autoawait on (as IPython decides it for a cell: the code compiled with top-level await is a coroutine)."""
    if not getattr(shell, "autoawait", False) or ("await" not in body and "async" not in body):
        return False
    try:
        code = compile(python_lines(body, 0, shell.transform_cell), "<cell>", "exec",
                       ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
        return False
    return bool(code.co_flags & CO_COROUTINE)


def awaited_magic_call(lines: List[str]) -> List[str]:
    """IPython input transformer: a `%%gradcheck` cell whose body needs autoawait becomes
    `await get_ipython().run_cell_magic('gradcheck', ...)`, so IPython runs the cell as it runs any cell with
    top-level await; the magic then returns `run_cell_checked_async`'s coroutine for IPython to await."""
    if len(lines) != 1 or not lines[0].startswith(_MAGIC_CALL):
        return lines
    try:
        call = ast.parse(lines[0], mode="eval").body
        line, body = (ast.literal_eval(a) for a in call.args[1:3])
    except (SyntaxError, ValueError, AttributeError, TypeError):
        return lines
    shell = _shell()
    if shell is None or not isinstance(body, str) or not body_awaits(shell, body):
        return lines
    return ["await " + lines[0]]


_MAGIC_CALL = "get_ipython().run_cell_magic('gradcheck', "


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    return get_ipython()


def _failed(shell: Any, run: Capture, options: CaptureOptions, exc: BaseException, filename: str) -> bool:
    """After the body raised: hooks off, the card shown, the traceback as a plain cell's. True when the
    error was a syntax error shown as a plain cell shows it (nothing to raise), False when `exc` is raised."""
    run.close()  # NB: a KeyboardInterrupt may have landed between installing and `with`
    if isinstance(exc, SyntaxError) and exc.filename == filename and _failed_before_running(shell, exc):
        return True
    _report(shell, run, options)
    as_in_a_plain_cell(exc)
    plain_traceback_once(shell, exc, (run_cell_checked.__code__, run_cell_checked_async.__code__))
    return False


def _cell_as_typed(shell: Any, line: str, body: str) -> Tuple[str, int]:
    """The cell as the user typed it, and how many lines stand above its `%%gradcheck` line.

    Lines above it are cell magics stacked on top (`%%time`, `%%capture`), which ran this magic with the
    rest of the cell: the cell in IPython's input history (stored before it runs) has them, and the
    editor counts them. Without such lines (or history): the magic line and the body.
    """
    own = cell_text(line, body)
    try:
        raw = shell.history_manager.input_hist_raw[-1]
    except (AttributeError, IndexError, TypeError):
        return own, 0
    if not isinstance(raw, str) or not raw.startswith("%%"):
        return own, 0
    lines = raw.split("\n", MAX_STACKED)
    for above, text in enumerate(lines[:MAX_STACKED]):
        if not text.startswith("%%"):
            break
        typed = raw.split("\n", above + 1)[-1] if above < len(lines) - 1 else ""
        if GRADCHECK_LINE.match(text) and text[len(MAGIC_LINE):].strip() == line.strip() and _alike(typed, body):
            # NB: the body as typed: IPython hands the magic its whitespace-only lines emptied, and a fix must
            # leave them as the user wrote them
            own = cell_text(line, typed.rstrip("\n") + body[len(body.rstrip("\n")):])
            return ("\n".join(lines[:above]) + "\n" + own if above else own), above
    return own, 0


def _alike(typed: str, body: str) -> bool:
    """The same text but for lines of spaces that one of them has empty."""
    def lines(text: str) -> list:
        return [ln if ln.strip() else "" for ln in text.rstrip("\n").split("\n")]
    return lines(typed) == lines(body)


def _cell_number(shell: Any) -> int:
    """The N of `In[N]` for the running cell: the number IPython gave the frame that called us.

    NB: IPython 9 counts up before running a cell, IPython 7 after, so `execution_count` alone is off by
    one in one of them; the cell's own compiled name is right in both.
    """
    names = getattr(shell.compile, "_filename_map", {})
    frame = sys._getframe(1)
    while frame is not None:
        number = names.get(frame.f_code.co_filename)
        if number is not None:
            return number
        frame = frame.f_back
    return shell.execution_count


def _compile(shell: Any, body: str, filename: str, above: int = 0) -> Tuple[List[CodeType], Optional[CodeType]]:
    """Compile the body with its line numbers shifted to where the editor shows them (below the magic
    line and the `above` lines over it): the code to run in order, and the last expression whose value is
    the cell's (None when no value shows).

    Which values show is IPython's `ast_node_interactivity` ('last_expr', 'all', 'last', 'none',
    'last_expr_or_assign'), decided as `InteractiveShell.run_ast_nodes` decides it: statements whose values
    show are compiled in 'single' mode (they call the display hook, as in a plain cell); a trailing `;`
    silences them all (IPython's own tokenizer check).
    """
    # NB: IPython's cleanup transforms drop leading blank lines; python_lines pads them back.
    python = python_lines(body, 1 + above, shell.transform_cell)
    tree = shell.transform_ast(shell.compile.ast_parse(python, filename=filename))
    nodes = list(tree.body)
    shown = _shown_nodes(nodes, getattr(shell, "ast_node_interactivity", "last_expr"))
    # NB: the check reads from the last statement's first line on: the tokens before it cannot end the cell
    if shown and _ends_with_semicolon(shell, "".join(python.splitlines(True)[tree.body[-1].lineno - 1:])):
        nodes, shown = [n for n in nodes if not isinstance(n, _ValueOf)], 0
    last = None
    if shown and isinstance(nodes[-1], ast.Expr):
        node = nodes.pop()
        last, shown = shell.compile(ast.Expression(node.value), filename, "eval"), shown - 1
    quiet, loud = nodes[:len(nodes) - shown], nodes[len(nodes) - shown:]
    codes = [shell.compile(ast.Module(quiet, []), filename, "exec")]
    if loud:
        codes.append(shell.compile(ast.Interactive(loud), filename, "single"))
    return codes, last


class _ValueOf(ast.Expr):
    """The `x` IPython adds after a trailing `x = ...` in 'last_expr_or_assign' mode, to show its value."""


def _shown_nodes(nodes: List[ast.stmt], interactivity: str) -> int:
    """How many of the last top-level statements show their values (InteractiveShell.run_ast_nodes)."""
    if not nodes:
        return 0
    if interactivity == "last_expr_or_assign":
        target = _single_target(nodes[-1])
        if isinstance(target, ast.Name):
            nodes.append(ast.fix_missing_locations(ast.copy_location(
                _ValueOf(ast.Name(target.id, ast.Load())), nodes[-1])))
        interactivity = "last_expr"
    if interactivity == "last_expr":
        interactivity = "last" if isinstance(nodes[-1], ast.Expr) else "none"
    return {"none": 0, "last": 1, "all": len(nodes)}.get(interactivity, 0)


def _single_target(node: ast.stmt) -> Optional[ast.AST]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return node.targets[0]
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return node.target
    return None


def _report(shell: Any, run: Capture, options: CaptureOptions) -> None:
    """Diagnose and show the cards. Never raises: the user's own outcome matters more."""
    try:
        if run.record is None or _is_own_syntax_error(run.record):
            return
        exc = run.record.exception
        if exc is not None and getattr(exc, _SHOWN, False):
            return  # NB: a %%gradcheck nested in this one has already shown this error's card
        diagnoses = diagnose_and_remember(run.record, shell.user_ns)
        run.record = None  # NB: drop the record (and its references) as soon as it is diagnosed
        # NB: a kind shown live is not shown again: a line says how long the cell ran after it
        diagnoses, notes = after_live(diagnoses, run.live)
        cards = [d for d in diagnoses if not (d.severity == "warning" and options.quiet)] + notes
        if exc is not None and cards and in_terminal(shell):
            _show_after_the_traceback(shell, cards)
        else:
            _show(cards)
        if exc is not None:
            setattr(exc, _SHOWN, True)
    except Exception:
        pass


def report_watched(shell: Any, run: Capture, options: CaptureOptions) -> int:
    """The cards of a cell the always-on watch ran (alwayson.py), shown from IPython's `post_run_cell`: below
    the cell's output and traceback, in a notebook as in a terminal. Remembered for `%gradfix` only when there
    are cards, so that a later healthy cell does not take away the fix. The number of cards shown; never raises."""
    try:
        record, run.record = run.record, None
        if record is None or _is_own_syntax_error(record):
            return 0
        # NB: no generic card: a watched cell's NameError or typo is the user's to read, not a PyTorch matter
        diagnoses = [d for d in diagnose(record, shell.user_ns) if d.kind != "generic"]
        if not diagnoses:
            return 0
        note = getattr(run, "note", "")  # NB: a thread's card (threadwatch.py): which thread, which cell started it
        if note:
            diagnoses = [dataclasses.replace(d, notes=(note, *d.notes)) for d in diagnoses]
        state.remember(diagnoses)
        diagnoses, notes = after_live(diagnoses, run.live)  # NB: a kind shown live is not shown again
        cards = [d for d in diagnoses if not (d.severity == "warning" and options.quiet)]
        _show(cards + notes)
        return len(cards)
    except Exception:
        return 0


def _show(diagnoses: List[Any]) -> None:
    from IPython.display import display

    from .render import Card

    for d in diagnoses:
        display(Card(d) if isinstance(d, Diagnosis) else d)  # NB: else a live card's note (live.LiveNote)


def _show_after_the_traceback(shell: Any, diagnoses: List[Any]) -> None:
    """In a terminal the traceback comes after the cell, and a long one would push a card shown before it off
    the screen: the cards are shown once the cell is over (IPython's `post_run_cell`), below the traceback.
    NB: in a notebook the card stays above the error, where the output area keeps both in view."""
    def show(*args: Any) -> None:
        try:
            shell.events.unregister("post_run_cell", show)
        except ValueError:
            pass
        _show(diagnoses)

    shell.events.register("post_run_cell", show)


def _failed_before_running(shell: Any, exc: SyntaxError) -> bool:
    """A syntax error in the body, as a plain cell has it: Python's message alone (no frames of IPython's or
    ours) and the cell failed before anything ran (`error_before_exec`). False where IPython's running cell
    cannot be reached (then the error is raised, as any other)."""
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    if result is None or not hasattr(result, "error_before_exec"):
        return False
    shell.showsyntaxerror()  # NB: reads the error being handled, as IPython's run_cell does
    result.error_before_exec = exc
    return True


def _is_own_syntax_error(record: Any) -> bool:
    """Python's own message for a syntax error in the cell says it all: no card."""
    exc = record.exception
    return isinstance(exc, SyntaxError) and exc.filename == record.filename


def as_in_a_plain_cell(exc: BaseException) -> None:
    """The tracebacks of the error and of the errors it chains to, without the op tracker's frames and
    torch's dispatch to it, nor the warning recorder's (what a plain cell shows; `stacks.without_dispatch`)."""
    seen = set()
    while exc is not None and id(exc) not in seen and len(seen) < 100:
        seen.add(id(exc))
        tb = exc.__traceback__
        try:
            cleaned = traceback_without_dispatch(tb, HIDDEN_CODE)
        except Exception:  # NB: never in place of the user's error: then the traceback stays as it was
            cleaned = tb
        if cleaned is not tb:
            exc.with_traceback(cleaned)
        exc = exc.__cause__ or exc.__context__


def _from_cell(tb: Optional[TracebackType], filename: str) -> Optional[TracebackType]:
    """The traceback from the cell's own frame inward (our frames in between are noise)."""
    start = tb
    while start is not None and start.tb_frame.f_code.co_filename != filename:
        start = start.tb_next
    return start if start is not None else tb


def _ends_with_semicolon(shell: Any, python: str) -> bool:
    """A trailing `;` silences the value, as in a plain cell: IPython's own check (its tokenizer), on the
    Python the body runs."""
    check = getattr(type(shell.displayhook), "semicolon_at_end_of_expression", None)
    try:
        return bool(check(python)) if check is not None else _semicolon_last(python)
    except (tokenize.TokenError, SyntaxError):
        return False


def _semicolon_last(python: str) -> bool:
    """IPython 7's `DisplayHook.quiet()` test, which has no function of its own there."""
    for token in reversed(list(tokenize.generate_tokens(io.StringIO(python).readline))):
        if token.type in (tokenize.ENDMARKER, tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            continue
        return token.type == tokenize.OP and token.string == ";"
    return False
