"""Live cards: a silent bug's card shown while its cell still runs, from the optimizer's step hooks.

The capture's step watch (stephooks.py `StepWatch.after`) counts steps; at steps 1, 2, 4, 8, ... (doubling: a
run of a million steps makes 20 checks, and no step does more than compare its count) the capture builds the
record of the run so far and `LiveWatch.at_step` runs the silent rules on it (`engine.diagnose_silent`). A
kind found is shown at once through the watch's `show` (IPython's display: the running cell's output in a
notebook, printed above the running output in a terminal), at most once per kind and run. When the cell
ends, `after_live` leaves the kinds shown live out of its cards and says how long the cell ran after each.

Each kind is looked for from the first step its evidence is enough at (`FIRST_STEP`). A silent kind that no
optimizer step shows cannot be live: a hand-written update (`w -= lr * w.grad`, no optimizer) and a model
evaluated in train() mode (no step at all) are told when the cell ends.

Runs inside the optimizer's post-hook while the step watch holds the op tracker off (its torch calls are not
the user's) and its pause is on: never raises into the user's loop (a KeyboardInterrupt is the user's own and
goes on), never leaves the tracker off (the step watch's `finally` puts it back).
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple

from . import catalog
from .model import Diagnosis, LiveInfo
from .record import RunRecord, StepEvent
from .sources import in_terminal

# kind -> the first step whose check looks for it (the checks run at 1, 2, 4, 8, ...: a kind is looked for from the first check at or after it)
FIRST_STEP: Dict[str, int] = {
    "train-eval-mode": 1,  # the layers' modes at the first step
    "grads-not-zeroed": 2,  # the second step finds the first one's gradients still there
    # NB: the third step is the first whose look can see a running total's graph reach into an earlier step's
    "graph-kept-alive": 3,
    "optimizer-not-on-model": 2,
    # NB: one step without a gradient may be a step before the first backward(); four in a row are a pattern
    "frozen-by-no-grad": 4,
}

# NB: each rule's own precondition, read from the steps' plain fields (no rule runs, no name is looked up): in a
# healthy loop no rule runs at a check. A step shows a kind's evidence (STEP_SHOWS); frozen-by-no-grad's is the
# absence of any step with a gradient. Read once per step record: a check reads only the steps recorded since the
# last one (a loop's steps between two looks repeat the last look's record: skipped by identity), so a check
# costs what the new steps hold, not what the run has held so far.
STEP_SHOWS: Dict[str, Callable[[StepEvent], bool]] = {
    "train-eval-mode": lambda s: any(h.eval_layers for h in s.models),
    "grads-not-zeroed": lambda s: bool(s.stale_params),
    "graph-kept-alive": lambda s: bool(s.growing),
    # NB: a step with no model of the user's frames stepped by it (one held but made again, or none held)
    "optimizer-not-on-model": lambda s: not any(h.stepped for h in s.models),
}


# NB: a check whose only evidence is the cell's text (`running_loss += loss.item()` has a "+": most loops) runs
# graph-kept-alive's rule (~0.2-0.5 ms: the cell's tree, its names) at its first check (step 4) as before, then again
# only while those runs add up to at most this share of the time the cell has run: a small model's 1,000-step
# loop would otherwise pay ~10 of them (docs/PERFORMANCE.md). Steps that saw a graph grow run it at every check.
TEXT_BUDGET = 0.01


def text_may_keep_graph(source: str) -> bool:
    """graph-kept-alive's own test of the running cell's text (`total += loss`, `losses.append(loss)`)."""
    return "+" in source or "append" in source


def may_find(kind: str, record: RunRecord) -> bool:
    """Whether `kind`'s rule may find something in `record` (its precondition, read from all its steps)."""
    if kind == "frozen-by-no-grad":
        return not any(s.params_with_grad for s in record.steps)
    if kind == "graph-kept-alive" and text_may_keep_graph(record.source):
        return True
    return any(STEP_SHOWS[kind](s) for s in record.steps)


class _Evidence:
    """The kinds the steps recorded so far give evidence of, read from each new step record once."""

    __slots__ = ("read", "last", "kinds", "with_grad", "text")

    def __init__(self) -> None:
        self.read = 0  # steps read (an index into the step watch's list)
        self.last: Any = None  # the last record read (a repeat of it is skipped)
        self.kinds: Set[str] = set()
        self.with_grad = False  # some step had a gradient (then frozen-by-no-grad has no evidence)
        self.text: Optional[bool] = None  # the cell's text may keep a graph (read once, from the first record)

    def update(self, steps: List[StepEvent]) -> None:
        last, kinds = self.last, self.kinds
        for s in steps[self.read:]:
            if s is last:
                continue
            last = s
            self.with_grad = self.with_grad or bool(s.params_with_grad)
            for kind, shows in STEP_SHOWS.items():
                if kind not in kinds and shows(s):
                    kinds.add(kind)
        self.read, self.last = len(steps), last

    def may(self, kind: str) -> bool:
        if kind == "frozen-by-no-grad":
            return not self.with_grad
        return kind in self.kinds or kind == "graph-kept-alive" and bool(self.text)


def is_check(count: int) -> bool:
    """Whether step `count` (1-based) is one the live rules run at: 1, 2, 4, 8, ..."""
    return count > 0 and count & (count - 1) == 0


class LiveWatch:
    """The live cards of one run: which kinds were shown, at which step. Made by whoever runs the cell (the
    `%%gradcheck` runner, the always-on watch) and given to its `Capture(live=...)`."""

    def __init__(self, namespace: Mapping[str, Any], show: Optional[Callable[[Diagnosis], None]] = None,
                 language: str = "") -> None:
        self.namespace = namespace  # NB: the user's, read as it is at the step (the cell writes to it as it runs)
        self.language = language
        self.shown: Dict[str, Diagnosis] = {}
        self._unshown: Set[str] = set()  # NB: kinds whose display failed: not tried again, shown at the end
        self._show = show or show_card
        self._busy = False
        self._evidence = _Evidence()
        self._started = time.perf_counter()
        self._text_runs = 0  # NB: checks that ran graph-kept-alive's rule on the cell's text alone, and their seconds
        self._text_cost = 0.0
        self._kept: Optional[_KeptOnClear] = None

    def wants(self, count: int) -> bool:
        """Whether step `count` is checked: cheap, called at every step."""
        return is_check(count) and not self._busy and len(self.shown) < len(FIRST_STEP)

    def at_step(self, count: int, record: Callable[[], RunRecord], steps: Optional[List[StepEvent]] = None) -> None:
        """Run the silent rules on the run so far (`record()`) and show each new kind. `steps`: the step watch's
        list, read since the last check for each kind's precondition (None: read from `record()`). Never raises
        an Exception."""
        kinds = {k for k, first in FIRST_STEP.items()
                 if count >= first and k not in self.shown and k not in self._unshown}
        if not kinds or self._busy:
            return
        self._busy = True  # NB: a step made by something a rule or a display calls is not checked again
        try:
            so_far = None
            evidence = self._evidence
            if steps is None:
                so_far = record()
                steps = so_far.steps
            evidence.update(steps)
            if "graph-kept-alive" in kinds and evidence.text is None and "graph-kept-alive" not in evidence.kinds:
                so_far = so_far or record()  # NB: once a run: the cell's text does not change while it runs
                evidence.text = text_may_keep_graph(so_far.source)
            kinds = {k for k in kinds if evidence.may(k)}
            by_text = "graph-kept-alive" in kinds and "graph-kept-alive" not in evidence.kinds
            if by_text and self._text_runs and self._text_cost > TEXT_BUDGET * (time.perf_counter() - self._started):
                kinds.discard("graph-kept-alive")  # NB: the text alone, checked already: again when it is affordable
            if not kinds:
                return
            so_far = so_far or record()
            from .engine import diagnose_silent  # NB: the rules load with the first check, not with the capture

            started = time.perf_counter()
            found = diagnose_silent(so_far, self.namespace, kinds, self.language)
            if by_text and "graph-kept-alive" in kinds:
                self._text_runs += 1
                self._text_cost += time.perf_counter() - started
            for d in found:
                if d.kind in kinds and d.kind not in self.shown:
                    self._show_one(as_live(d, count))
        except Exception:  # NB: watching never changes what the user's loop does
            pass
        finally:
            self._busy = False

    def _show_one(self, d: Diagnosis) -> None:
        try:
            self._show(d)
        except Exception:
            self._unshown.add(d.kind)  # NB: then the end of the cell shows it, as without a live watch
            return
        self.shown[d.kind] = d
        if self._show is show_card:
            try:
                self._kept = self._kept or _KeptOnClear.install()
                if self._kept is not None:
                    self._kept.cards.append(d)
            except Exception:  # NB: the card is shown; only a later clear_output could hide it
                pass

    def close(self) -> None:
        """The run is over: `clear_output` is IPython's own again (the capture's undo calls this)."""
        kept, self._kept = self._kept, None
        if kept is not None:
            kept.uninstall()


class _KeptOnClear:
    """The running cell's live cards, shown again after each `clear_output()` of the cell's: a loop that
    clears its output to redraw a progress line (`clear_output(wait=True)`) would otherwise wipe them. With
    `wait=True` the frontend clears when the next output comes: the card is that output, and stays above
    what the loop prints next. Put on the kernel's display publisher for the run (an instance attribute,
    taken off when the run ends); not in a terminal, where clearing erases only the current line."""

    def __init__(self, publisher: Any) -> None:
        self.publisher = publisher
        self.cards: List[Diagnosis] = []
        self._bundles: Dict[int, Dict[str, Any]] = {}
        self._wrapper: Optional[Callable[..., Any]] = None

    @classmethod
    def install(cls) -> Optional["_KeptOnClear"]:
        from IPython import get_ipython

        shell = get_ipython()
        publisher = getattr(shell, "display_pub", None)
        if publisher is None or in_terminal(shell) or "clear_output" in vars(publisher):
            return None
        kept = cls(publisher)
        original = publisher.clear_output

        def clear_output(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            kept.show_again()
            return result

        kept._wrapper = clear_output
        publisher.clear_output = clear_output
        return kept

    def show_again(self) -> None:
        from .render import mimebundle

        for d in self.cards:
            try:
                bundle = self._bundles.get(id(d)) or self._bundles.setdefault(id(d), mimebundle(d))
                self.publisher.publish(data=bundle, metadata={})
            except Exception:  # NB: never in place of the user's own clear_output
                pass

    def uninstall(self) -> None:
        if self._wrapper is not None and vars(self.publisher).get("clear_output") is self._wrapper:
            del self.publisher.clear_output



def as_live(d: Diagnosis, step: int) -> Diagnosis:
    """`d` marked as shown at `step`, now: what the step found and what it costs, in the card's language."""
    name = d.names[0] if d.names else "?"
    found = catalog.message(f"live.found.{d.kind}", d.language, step=step, previous=step - 1, name=name)
    cost = catalog.message(f"live.cost.{d.kind}", d.language)
    return dataclasses.replace(d, live=LiveInfo(step, time.monotonic(), found, cost))


def show_card(d: Diagnosis) -> None:
    """IPython's display of the card, from inside the running cell."""
    from IPython.display import display

    from .render import Card

    display(Card(d))


class LiveNote:
    """The end of a cell's line about the cards it showed live: text only (no user text in it)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Dict[str, str]:
        return {"text/plain": self.text}

    def __repr__(self) -> str:
        return self.text


def after_live(diagnoses: List[Diagnosis], live: Optional[LiveWatch],
               now: Optional[float] = None) -> Tuple[List[Diagnosis], List[LiveNote]]:
    """The end of the cell's cards without the kinds shown live, and a note for each of those: how long the
    cell ran after it."""
    if live is None or not live.shown:
        return diagnoses, []
    now = time.monotonic() if now is None else now
    notes = [LiveNote(catalog.message("live.after", d.language, kind=kind, step=d.live.step,
                                      seconds=duration(now - d.live.shown_at)))
             for kind, d in live.shown.items() if d.live is not None]
    return [d for d in diagnoses if d.kind not in live.shown], notes


def duration(seconds: float) -> str:
    """`0.4 s`, `41 s`, `3 min 5 s`, `2 h 10 min`: units every language of the catalog reads."""
    if seconds < 10:
        return f"{max(seconds, 0):.1f} s"
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"
