"""Fault-injection soak: a thousand `%%gradcheck` cells in one shell, faults of every kind mixed in.

After every cell: torch's anomaly flags, modes and optimizer hooks, warnings, `sys` hooks and the shell's
methods are as before; no attribute of torch is left patched; the names the cell assigned before its
fault exist; the user's own exception is in `sys.last_value`. Across the run: every tensor a cell made is
freed once the user drops it (the tool keeps weak references only), and neither live tensors, nor the
tool's own objects, nor the memory its code allocated grow with the number of cells.
"""
from __future__ import annotations

import contextlib
import gc
import os
import random
import signal
import sys
import textwrap
import traceback
import tracemalloc
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Dict, Iterator, List, Optional, Tuple

import pytest
import torch

from IPython.core.displaypub import DisplayPublisher

import grad_magic
from grad_magic import lighttrack
import grad_magic.render.html
from grad_magic.rules.registry import RULES, rule
from reliability_support import (attributes, changed_attributes, clear_last_error, differences,
                                 live_objects_of, live_tensors, snapshot)

CELLS = 1000
CHECKPOINT = 100  # cells between two memory checkpoints (each costs a full gc and a heap scan)
TRACE_FROM = 500  # tracemalloc watches the second half (it slows every allocation while on)


class DisplayBroken(Exception):
    """Raised by the display machinery the faults install."""


# -- the cells: (source, the exception the user's code raises, a tag its message carries) --

def healthy(i: int) -> str:
    return f"""\
        %%gradcheck{random.Random(i).choice(["", " --fast", " --no-nan-check", " --quiet"])}
        import torch
        marker_{i} = {i}
        model = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            loss = model(torch.ones(5, 4)).pow(2).sum()
            loss.backward()
            opt.step()
        probe = torch.zeros(16)
        float(loss)
        """


def warns(i: int) -> str:
    return f"""\
        %%gradcheck
        import warnings
        marker_{i} = {i}
        probe = torch.ones(2)
        warnings.warn("soak-{i}")
        """


def user_error(i: int) -> str:
    return f"""\
        %%gradcheck
        import torch
        marker_{i} = {i}
        probe = torch.ones(3)
        def helper():
            local_probe = torch.ones(5, requires_grad=True) * 2
            raise ValueError("soak-{i}")
        helper()
        """


def unprintable_error(i: int) -> str:
    return f"""\
        %%gradcheck
        marker_{i} = {i}
        class Hostile(Exception):
            def __str__(self):
                raise RuntimeError("no str")
            def __repr__(self):
                raise RuntimeError("no repr")
        probe = torch.ones(3)
        raise Hostile("soak-{i}")
        """


def torch_error(i: int) -> str:
    return f"""\
        %%gradcheck
        import torch
        marker_{i} = {i}
        probe = torch.tensor([1.0])
        loss = (probe * 2).sum()
        loss.backward()
        """


def inplace_error(i: int) -> str:  # a rule with a fixed cell: the whole fix and render path runs
    return f"""\
        %%gradcheck
        import torch
        marker_{i} = {i}
        probe = torch.ones(3, requires_grad=True)
        y = probe.sigmoid()
        y.mul_(2)
        y.sum().backward()
        """


def device_error(i: int) -> str:
    return f"""\
        %%gradcheck
        import torch
        marker_{i} = {i}
        probe = torch.zeros(2)
        other = torch.zeros(3, device="meta")
        torch.cat([probe, other])
        """


def interrupt_in_loop(i: int) -> str:
    return f"""\
        %%gradcheck
        import torch
        marker_{i} = {i}
        for step in range(100):
            probe = torch.ones(4, requires_grad=True)
            (probe * 2).sum().backward()
            if step == 7:
                raise KeyboardInterrupt("soak-{i}")
        """


def interrupt_in_tensor_hook(i: int) -> str:
    return f"""\
        %%gradcheck
        import torch
        marker_{i} = {i}
        probe = torch.ones(3, requires_grad=True)
        hidden = probe * 2
        hidden.register_hook(lambda g: (_ for _ in ()).throw(KeyboardInterrupt("soak-{i}")))
        hidden.sum().backward()
        """


def interrupt_in_module_hook(i: int) -> str:
    return f"""\
        %%gradcheck
        import torch
        marker_{i} = {i}
        model = torch.nn.Linear(3, 1)
        def interrupt(module, grad_input, grad_output):
            raise KeyboardInterrupt("soak-{i}")
        model.register_full_backward_hook(interrupt)
        model(torch.ones(2, 3)).sum().backward()
        """


def interrupt_anywhere(i: int) -> str:
    """Ctrl-C at an arbitrary bytecode of a training loop: in torch, in the op tracker, in the step hooks."""
    return f"""\
        %%gradcheck
        import torch
        marker_{i} = {i}
        model = torch.nn.Linear(8, 8)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        _arm_interrupt()
        for step in range(20_000):
            opt.zero_grad()
            probe = model(torch.ones(4, 8))
            probe.relu_().sum().backward()
            opt.step()
        """


def syntax_error(i: int) -> str:
    return f"""\
        %%gradcheck
        marker_{i} = {i}
        y = (
        """


def value_shown(i: int) -> str:  # for the broken display hook: the cell has a value to show
    return f"""\
        %%gradcheck
        marker_{i} = {i}
        probe = torch.ones(2)
        {i} + 1
        """


# -- the faults: context managers around one cell --

@contextlib.contextmanager
def no_fault(shell: Any) -> Iterator[None]:
    yield


@contextlib.contextmanager
def raising_rules(shell: Any) -> Iterator[None]:
    """An error rule and a warning rule with a bug: each becomes a note; the user's error is still shown."""
    @rule("soak-crashing-error-rule")
    def crashing_error(ctx):
        raise ZeroDivisionError("rule bug")

    @rule("soak-crashing-warning-rule", severity="warning")
    def crashing_warning(ctx):
        raise AttributeError("rule bug")

    try:
        yield
    finally:
        RULES.pop("soak-crashing-error-rule", None)
        RULES.pop("soak-crashing-warning-rule", None)


@contextlib.contextmanager
def raising_renderer(shell: Any) -> Iterator[None]:
    def broken(d):
        raise DisplayBroken("html renderer bug")

    original, grad_magic.render.html.render = grad_magic.render.html.render, broken
    try:
        yield
    finally:
        grad_magic.render.html.render = original


class _RaisingPublisher(DisplayPublisher):
    def publish(self, *args: Any, **kwargs: Any) -> None:
        raise DisplayBroken("publisher")

    def clear_output(self, *args: Any, **kwargs: Any) -> None:
        raise DisplayBroken("publisher")


@contextlib.contextmanager
def raising_publisher(shell: Any) -> Iterator[None]:
    original, shell.display_pub = shell.display_pub, _RaisingPublisher(shell=shell)
    try:
        yield
    finally:
        shell.display_pub = original


@contextlib.contextmanager
def raising_formatter(shell: Any) -> Iterator[None]:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise DisplayBroken("formatter")

    shell.display_formatter.format = broken
    try:
        yield
    finally:
        del shell.display_formatter.format


@contextlib.contextmanager
def raising_displayhook(shell: Any) -> Iterator[None]:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise DisplayBroken("displayhook")

    shell.displayhook.write_format_data = broken
    try:
        yield
    finally:
        del shell.displayhook.write_format_data


@contextlib.contextmanager
def alarm_interrupt(shell: Any, delay: float) -> Iterator[None]:
    """`_arm_interrupt()` in the cell starts a one-shot timer whose signal raises KeyboardInterrupt."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt("soak-alarm")

    previous = signal.signal(signal.SIGALRM, interrupt)
    shell.user_ns["_arm_interrupt"] = lambda: signal.setitimer(signal.ITIMER_REAL, delay)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        shell.user_ns.pop("_arm_interrupt", None)


@dataclass(frozen=True)
class Cell:
    kind: str
    source: str
    raises: Optional[type]  # what the user sees raised; None: the cell succeeds
    tag: Optional[str] = None  # text in that exception's message
    runs: bool = True  # False: a syntax error, nothing of the cell runs
    fault: Callable[[Any], ContextManager] = no_fault
    may_succeed: bool = False  # an asynchronous interrupt may land where Python swallows it
    card: Optional[str] = None  # "error": an error card is shown (saying `card_says`); "none": none is
    card_says: str = ""


def make_cell(kind: str, i: int) -> Cell:
    tag = f"soak-{i}"
    simple: Dict[str, Tuple[Callable[[int], str], Optional[type], Optional[str]]] = {
        "healthy": (healthy, None, None), "warns": (warns, None, None),
        "user_error": (user_error, ValueError, tag), "unprintable_error": (unprintable_error, Exception, None),
        "torch_error": (torch_error, RuntimeError, "does not require grad"),
        "inplace_error": (inplace_error, RuntimeError, "modified by an inplace operation"),
        "device_error": (device_error, RuntimeError, None),
        "interrupt_in_loop": (interrupt_in_loop, KeyboardInterrupt, tag),
        "interrupt_in_tensor_hook": (interrupt_in_tensor_hook, KeyboardInterrupt, tag),
        "interrupt_in_module_hook": (interrupt_in_module_hook, KeyboardInterrupt, tag),
    }
    if kind in simple:
        make, raises, expected = simple[kind]
        card = "none" if raises in (None, KeyboardInterrupt) else "error"
        return Cell(kind, textwrap.dedent(make(i)), raises, expected, card=card)
    if kind == "syntax_error":
        return Cell(kind, textwrap.dedent(syntax_error(i)), SyntaxError, runs=False, card="none")
    if kind == "interrupt_anywhere":
        delay = random.Random(i).uniform(0.001, 0.03)
        return Cell(kind, textwrap.dedent(interrupt_anywhere(i)), KeyboardInterrupt, "soak-alarm",
                    fault=lambda sh: alarm_interrupt(sh, delay), may_succeed=True)
    if kind == "rule_raises":  # the crashing rule is a note on the generic card
        return Cell(kind, textwrap.dedent(user_error(i)), ValueError, tag, fault=raising_rules,
                    card="error", card_says="soak-crashing-error-rule")
    if kind == "renderer_raises":  # the text card is still shown, saying the HTML one failed
        return Cell(kind, textwrap.dedent(user_error(i)), ValueError, tag, fault=raising_renderer,
                    card="error", card_says="text/html card failed")
    faults = {"publisher_raises": raising_publisher, "formatter_raises": raising_formatter}
    if kind in faults:
        return Cell(kind, textwrap.dedent(user_error(i)), ValueError, tag, fault=faults[kind])
    if kind == "displayhook_raises":
        return Cell(kind, textwrap.dedent(value_shown(i)), DisplayBroken, "displayhook",
                    fault=raising_displayhook)
    raise AssertionError(kind)


KINDS = {  # kind: weight in the soak
    "healthy": 30, "warns": 4, "user_error": 8, "unprintable_error": 2, "torch_error": 6, "inplace_error": 5,
    "device_error": 3, "interrupt_in_loop": 5, "interrupt_in_tensor_hook": 5, "interrupt_in_module_hook": 4,
    "interrupt_anywhere": 5, "syntax_error": 3, "rule_raises": 3, "renderer_raises": 3,
    "publisher_raises": 3, "formatter_raises": 3, "displayhook_raises": 2,
}


def schedule(n: int) -> List[Cell]:
    rng = random.Random(20240609)
    kinds = list(KINDS)
    chosen = kinds * 2 + rng.choices(kinds, weights=[KINDS[k] for k in kinds], k=n - 2 * len(kinds))
    rng.shuffle(chosen)
    return [make_cell(kind, i) for i, kind in enumerate(chosen)]


# -- running one cell and checking what it left behind --

@dataclass
class Baseline:
    state: Dict[str, Any]
    attrs: Dict[str, Dict[str, Any]]


def run_and_check(shell: Any, i: int, cell: Cell, baseline: Baseline) -> bool:
    """Run one cell under its fault, check every promise; True when it raised as planned."""
    shown_before = len(shell.display_pub.outputs)
    with cell.fault(shell):
        result = shell.run_cell(cell.source, store_history=True)
    where = f"cell {i} ({cell.kind})"
    # NB: a card's text starts with its mark and title; what the short text leaves out (notes) is in the HTML
    cards = [out["data"].get("text/plain", "") + "\n" + out["data"].get("text/html", "")
             for out in shell.display_pub.outputs[shown_before:]]
    errors = [card for card in cards if card.startswith("✖ ")]
    if cell.card == "none":
        assert not errors, f"{where}: an error card for a cell without an error of its own: {errors[0][:300]}"
    elif cell.card == "error":
        assert len(errors) == 1, f"{where}: {len(errors)} error cards"
        assert cell.card_says in errors[0], f"{where}: the card does not say {cell.card_says!r}"
        if cell.card_says == "text/html card failed":
            assert "text/html" not in shell.display_pub.outputs[shown_before]["data"]
    left = differences(baseline.state, snapshot(shell))
    if set(left) == {"grad_enabled"} and cell.kind == "interrupt_anywhere" and in_torch(result.error_in_exec):
        # NB: the alarm landed in torch's own code between its set_grad_enabled and the finally that puts it
        # back (optimizer.step, no_grad's __exit__): a plain cell is left the same way. Put back, named.
        torch.set_grad_enabled(left["grad_enabled"][0])
        TORCHS_OWN.append(f"{where}: grad mode left {left['grad_enabled'][1]}")
        left = {}
    assert not left, f"{where}: {left}"
    patched = changed_attributes(baseline.attrs, attributes())
    assert not patched, f"{where}: patched {patched}"
    if cell.runs:
        assert shell.user_ns.get(f"marker_{i}") == i, f"{where}: a name assigned before the fault is gone"
    else:
        assert f"marker_{i}" not in shell.user_ns, f"{where}: part of a cell with a syntax error ran"
    # NB: a syntax error fails the cell before it runs, as in a plain cell (error_before_exec)
    exc = result.error_in_exec or result.error_before_exec
    if cell.raises is None or (cell.may_succeed and exc is None):
        assert result.success, f"{where}: {exc!r}"
        return False
    assert isinstance(exc, cell.raises), f"{where}: raised {exc!r}, expected {cell.raises.__name__}"
    assert sys.last_value is exc, f"{where}: sys.last_value is {sys.last_value!r}, not the user's error"
    if cell.tag is not None:
        assert cell.tag in str(exc), f"{where}: {exc!r} is not the user's own exception"
    return True


TORCHS_OWN: List[str] = []  # state an interrupt left inside torch's own code (see run_and_check)


def in_torch(exc: Optional[BaseException]) -> bool:
    """Whether the interrupt was raised in torch's own Python code, not grad_magic's.

    The traceback's innermost frame is the alarm's handler (`alarm_interrupt.interrupt`, this file); the frame
    it interrupted is the one before it."""
    tb = exc.__traceback__ if isinstance(exc, KeyboardInterrupt) else None
    frames = [frame for frame, _ in traceback.walk_tb(tb)]
    while frames and frames[-1].f_code.co_filename == __file__:
        frames.pop()
    if not frames:
        return False
    path = frames[-1].f_code.co_filename
    return os.sep + "torch" + os.sep in path and grad_magic.__path__[0] not in path


def drop_cell_names(shell: Any, before: set, refs: List[Tuple[str, weakref.ref]], i: int) -> None:
    """Take weak references to the tensors and modules the cell made, then `del` every name it made."""
    for name in set(shell.user_ns) - before:
        if name.startswith(("marker_", "_")):
            continue
        value = shell.user_ns.pop(name)
        if isinstance(value, (torch.Tensor, torch.nn.Module, torch.optim.Optimizer)):
            refs.append((f"cell {i}: {name}", weakref.ref(value)))
        del value


def assert_freed(shell: Any, refs: List[Tuple[str, weakref.ref]]) -> None:
    """After IPython lets go of the last error, nothing keeps the cells' tensors alive."""
    shell.run_cell("%%gradcheck\npass\n", store_history=True)  # NB: replaces IPython's last result
    clear_last_error(shell)
    gc.collect()
    alive = [name for name, ref in refs if ref() is not None]
    assert not alive, f"still alive after del: {alive[:10]} ({len(alive)} in all)"
    refs.clear()


def without_bounded_caches() -> None:
    """Empty grad_magic's text caches (cell.py's lru_caches, a few entries each, keyed by a cell's or file's
    text): bounded by design, and what they hold depends on which cell ran last, not on how many ran."""
    from grad_magic import cell

    for cached in (cell.python_of_cell, cell.cell_tree, cell._lines_and_offsets, cell.names_in_order,
                   cell.callee_texts):
        cached.cache_clear()


def grad_magic_memory(snap: tracemalloc.Snapshot) -> int:
    """What grad_magic's own lines allocated and still hold. NB: not the warning registries' entries made
    where the warning recorder warns again through the user's filters (`WarningRecorder._warn_again`): Python
    keeps one per warning shown "once per place", the same entry a plain cell makes from torch's own frame
    (anomaly mode's reports, each one's text unique). Nor the forward-trace lists `TraceFilter._format` hands
    torch, which keeps each in an autograd node's anomaly metadata: nodes still alive at the end (those of
    cells interrupted in a full backward hook) keep theirs. The soak ends with as many such lists alive (144)
    as when `traceback.format_list` made them, before the trace cache (02e5cf2): the same retention, which
    tracemalloc now places in grad_magic's file (not yet known whether torch or IPython holds those nodes)."""
    import inspect

    from grad_magic import stacks, warnwatch

    def line_of(function, text: str) -> int:
        lines, start = inspect.getsourcelines(function)
        return start + next(i for i, line in enumerate(lines) if text in line)

    traces = snap.filter_traces([
        tracemalloc.Filter(True, grad_magic.__path__[0] + "/*"),
        tracemalloc.Filter(False, warnwatch.__file__,
                           lineno=line_of(warnwatch.WarningRecorder._warn_again, "warnings.warn_explicit(")),
        tracemalloc.Filter(False, stacks.__file__, lineno=line_of(stacks.TraceFilter._format, "out, last =")),
        tracemalloc.Filter(False, stacks.__file__, lineno=line_of(stacks.TraceFilter._format, "out.append("))])
    return sum(stat.size for stat in traces.statistics("filename"))


@contextlib.contextmanager
def soak_environment(shell: Any, unraisable: List[str]) -> Iterator[None]:
    """Short tracebacks (IPython's long form costs ~1 s per torch error); the warnings go to a counter.

    An alarm that lands in a `gc.callbacks` function (hypothesis installs one when its tests ran in the same
    process) is "ignored" by Python and handed to `sys.unraisablehook`; pytest's hook keeps the exception,
    and through its traceback every frame of the cell that was running, until the test ends -- the test
    runner's memory, not the tool's. Here they are only named (`unraisable`)."""
    mode = shell.InteractiveTB.mode
    hook = sys.unraisablehook
    sys.unraisablehook = lambda args: unraisable.append(f"{args.exc_type.__name__} in {args.object!r}"[:200])
    shell.run_line_magic("xmode", "Minimal")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = lambda *args, **kwargs: None
            yield
    finally:
        sys.unraisablehook = hook
        shell.run_line_magic("xmode", mode)


def test_a_thousand_cells_with_faults_leave_no_trace(shell, capsys):
    cells = schedule(CELLS)
    refs: List[Tuple[str, weakref.ref]] = []
    raised: Dict[str, int] = {}
    checkpoints: List[Tuple[int, int, Dict[str, int]]] = []
    traced_at: Optional[int] = None
    unraisable: List[str] = []
    with soak_environment(shell, unraisable):
        shell.run_cell("%%gradcheck\nimport torch\n", store_history=True)
        baseline = Baseline(snapshot(shell), attributes())
        try:
            for i, cell in enumerate(cells):
                names = set(shell.user_ns)
                if run_and_check(shell, i, cell, baseline):
                    raised[cell.kind] = raised.get(cell.kind, 0) + 1
                # NB: an interrupt at an arbitrary bytecode may land inside torch's own C++ bookkeeping
                # (a half-recorded op), which has once been seen to keep that cell's module alive: those
                # cells' names are dropped, but their objects are not counted as the tool's to free.
                drop_cell_names(shell, names, [] if cell.kind == "interrupt_anywhere" else refs, i)
                if (i + 1) % CHECKPOINT == 0:
                    # NB: what the test's own capture kept (cards, tracebacks) is not the tool's memory
                    shell.display_pub.outputs.clear()
                    capsys.readouterr()
                    assert_freed(shell, refs)
                    checkpoints.append((i, live_tensors(), live_objects_of("grad_magic")))
                if i + 1 == TRACE_FROM:
                    tracemalloc.start()
                    without_bounded_caches()
                    traced_at = grad_magic_memory(tracemalloc.take_snapshot())
            assert_freed(shell, refs)
            without_bounded_caches()
            end = tracemalloc.take_snapshot()
            grown = grad_magic_memory(end) - traced_at
            top = [str(stat) for stat in end.filter_traces([tracemalloc.Filter(True, grad_magic.__path__[0] + "/*")])
                   .statistics("lineno")[:5]]
        finally:
            tracemalloc.stop()
            # NB: a cell that failed its checks may have left the process changed (grad mode off, a hook on):
            # put back, so that its failure is the only one reported, not every later test that trains
            repair(baseline)

    assert all(raised.get(kind, 0) >= 2 for kind in KINDS if make_cell(kind, 0).raises), raised
    assert raised["interrupt_anywhere"] >= 0.8 * sum(c.kind == "interrupt_anywhere" for c in cells)
    first, last = checkpoints[1], checkpoints[-1]  # NB: the first one still sees lazy first-use setup
    assert last[1] - first[1] <= 8, f"live tensors grew from {first[1]} to {last[1]}"
    grew = {k: (first[2].get(k, 0), n) for k, n in last[2].items() if n > first[2].get(k, 0)}
    assert not grew, f"grad_magic objects grew across the cells: {grew} (unraisable: {unraisable[:5]})"
    assert grown < 64 * 1024, \
        f"memory allocated by grad_magic grew by {grown:,} bytes over {CELLS - TRACE_FROM} cells; held most: {top}"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_fault_alone_leaves_no_trace(shell, kind):
    """Every kind of fault once, with IPython's full traceback formatting, and its tensors freed after."""
    shell.run_cell("%%gradcheck\nimport torch\n", store_history=True)
    refs: List[Tuple[str, weakref.ref]] = []
    names = set(shell.user_ns)
    cell = make_cell(kind, 7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raised = run_and_check(shell, 7, cell, Baseline(snapshot(shell), attributes()))
    assert raised or cell.raises is None or cell.may_succeed
    drop_cell_names(shell, names, refs, 7)
    assert_freed(shell, refs)


# -- Ctrl-C at every line of the machinery --

MACHINERY = ("capture.py", "tracker.py", "cellrun.py", "magics.py", "engine.py", "stacks.py", "warnwatch.py",
             "torchstate.py", "lighttrack.py", "stephooks.py", "stepwatch.py", "live.py", "modewatch.py")
SWEPT_CELLS = {
    "failing": """\
        %%gradcheck
        import torch, warnings
        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            y = model(torch.ones(2, 3)).sigmoid()
            y.mul_(2)
            y.sum().backward()
            opt.step()
        """,
    # NB: fast mode's light tracker (lighttrack.py): its patches, its wrappers on the user's in-place ops
    "fast": """\
        %%gradcheck --fast
        import torch
        model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(inplace=True))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.ones(2, 3)).sum().backward()
        opt.step()
        y = model(torch.ones(2, 3)).sigmoid()
        y[0] = 1
        y.mul_(2)
        y.sum().backward()
        """,
    "healthy": """\
        %%gradcheck
        import torch, warnings
        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            model(torch.ones(2, 3)).sum().backward()
            opt.step()
        warnings.warn("sweep")
        float(model.weight.sum())
        """,
}


class Injected(KeyboardInterrupt):
    """The Ctrl-C the sweep delivers."""


def _machinery_line(frame: Any) -> Optional[Tuple[str, int]]:
    path = frame.f_code.co_filename
    folder, _, name = path.rpartition("/")
    if folder == grad_magic.__path__[0] and name in MACHINERY and not _in_input_transform(frame):
        return name, frame.f_lineno
    return None


def _in_input_transform(frame: Any) -> bool:
    """Inside grad_magic's input transformer (cellrun.awaited_magic_call). NB: IPython runs input transforms
    before the cell, outside run_cell's handling of errors, its own and a plain cell's alike: a Ctrl-C there
    ends run_cell with or without grad_magic, so the sweep leaves those lines out."""
    for _ in range(4):
        if frame is None:
            return False
        if frame.f_code.co_name == "awaited_magic_call":
            return True
        frame = frame.f_back
    return False


def lines_run(shell: Any, source: str) -> List[Tuple[str, int]]:
    """The machinery's lines a cell runs, in the order first run."""
    seen: Dict[Tuple[str, int], None] = {}

    def local(frame, event, arg):
        if event == "line":
            seen.setdefault(_machinery_line(frame), None)
        return local

    previous = sys.gettrace()
    sys.settrace(lambda frame, event, arg: local if _machinery_line(frame) else None)
    try:
        shell.run_cell(source, store_history=True)
    finally:
        sys.settrace(previous)
    return list(seen)


def run_interrupted_at(shell: Any, source: str, target: Tuple[str, int]) -> Optional[BaseException]:
    """Run the cell with a KeyboardInterrupt raised when `target` is first about to run.

    NB: an exception raised by a trace function is raised in the traced frame, at that line, the way
    a Ctrl-C lands between two bytecodes; tracing stops with it."""
    def local(frame, event, arg):
        if event == "line" and _machinery_line(frame) == target:
            raise Injected(f"{target[0]}:{target[1]}")
        return local

    previous = sys.gettrace()
    sys.settrace(lambda frame, event, arg: local if _machinery_line(frame) else None)
    try:
        shell.run_cell(source, store_history=True)
    except BaseException as escaped:  # NB: anything out of run_cell would stop a notebook's kernel loop
        return escaped
    finally:
        sys.settrace(previous)
    return None


def repair(baseline: Baseline) -> None:
    """Put back what an interrupted run left installed, so the sweep goes on (and reports every line)."""
    torch.set_grad_enabled(baseline.state["grad_enabled"])
    torch.set_anomaly_enabled(baseline.state["anomaly"], baseline.state["check_nan"])
    while torch._C._len_torch_function_stack() > len(baseline.state["function_modes"]):
        torch._C._pop_torch_function_stack()
    import torch.optim.optimizer as optimizer_module

    for hooks, kept in ((optimizer_module._global_optimizer_pre_hooks, baseline.state["optimizer_pre_hooks"]),
                        (optimizer_module._global_optimizer_post_hooks, baseline.state["optimizer_post_hooks"])):
        for key in set(hooks) - set(kept):
            del hooks[key]
    warnings.filters = baseline.attrs["warnings"]["filters"]
    warnings.showwarning = baseline.state["showwarning"]
    torch.fx.traceback.format_stack = baseline.attrs["torch.fx.traceback"]["format_stack"]
    for tracker in list(lighttrack._ACTIVE):
        tracker.uninstall()


@pytest.mark.parametrize("which", sorted(SWEPT_CELLS))
def test_ctrl_c_at_any_line_of_the_machinery_leaves_no_hook_installed(shell, which):
    """A Ctrl-C lands where Python checks for signals (a function's start, a call's return, a loop's jump).
    The sweep raises it at the start of every line of the machinery (MACHINERY: the capture, the trackers, the
    step hooks and what they read, the cell runner, the engine) that the cell runs, in turn: wherever it lands,
    every hook comes off, nothing escapes the shell, and the next cell runs normally."""
    source = textwrap.dedent(SWEPT_CELLS[which])
    with soak_environment(shell, []):
        shell.run_cell("%%gradcheck\nimport torch\n", store_history=True)
        baseline = Baseline(snapshot(shell), attributes())
        targets = lines_run(shell, source)
        assert len(targets) > 40, targets  # NB: the sweep reaches the machinery
        leaks = []
        for target in targets:
            escaped = run_interrupted_at(shell, source, target)
            left = differences(baseline.state, snapshot(shell))
            patched = changed_attributes(baseline.attrs, attributes())
            if escaped or left or patched:
                leaks.append(f"{target[0]}:{target[1]}: escaped={escaped!r} left={sorted(left)} "
                             f"patched={patched}")
                repair(baseline)
        after = shell.run_cell("%%gradcheck\nx_after_sweep = 1\n", store_history=True)
    assert not leaks, f"{len(leaks)} of {len(targets)} lines leak when interrupted:\n" + "\n".join(leaks)
    assert after.success and shell.user_ns["x_after_sweep"] == 1
