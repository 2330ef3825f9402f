"""Run the variants of the real-notebook corpus (tests/variants.py: each case renamed, merged, split and moved
into a helper) and print, as markdown, a table of the figures per transform, the misses, and the share of valid
variants that get the same kind, the culprit named and a clean fix.

    .venv/bin/python scripts/variants_report.py [--transforms renamed,split] [notebook-or-name ...]

The `original` row runs each case as it is, in the same in-process shell, as the baseline the variants are held
against. A variant that is not a valid case (it does not fail as the case says, or its reference fix is not
clean) is a bug of the transform: listed apart, never counted against grad_magic; exit status 1 when there is
one. Two worker processes, each with its own IPython shell.
"""
from __future__ import annotations

import multiprocessing
import sys
import time
from pathlib import Path
from typing import List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from corpus import NOTEBOOKS, cases  # noqa: E402
from variants import BASELINE, TRANSFORMS, VariantOutcome, score_task, start_worker  # noqa: E402

WORKERS = 2  # the machine has two cores


def run_all(paths: Sequence[Path], transforms: Sequence[str]) -> List[VariantOutcome]:
    """Every (case, transform) scored, in the order of the cases and transforms; a line on stderr for each."""
    order = [BASELINE, *transforms]
    tasks = [(str(p), t) for p in paths for t in order]
    done = []
    with multiprocessing.get_context("spawn").Pool(WORKERS, initializer=start_worker) as pool:
        for o in pool.imap_unordered(score_task, tasks, chunksize=1):
            done.append(o)
            print(f"[{len(done)}/{len(tasks)}] {o.variant} {o.case}", file=sys.stderr, flush=True)
    return sorted(done, key=lambda o: (o.case, order.index(o.variant)))


def percent(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "0/0"


def table(outcomes: List[VariantOutcome], names: Sequence[str]) -> str:
    rows = ["| transform | variants | valid | kind right | culprit named | fix proposed | fix clean | all three |",
            "|---|---|---|---|---|---|---|---|"]
    for name in names:
        done = [o for o in outcomes if o.variant == name and not o.skipped]
        valid = [o for o in done if o.valid]
        counts = [sum(getattr(o, f) for o in valid) for f in ("kind_right", "culprit_named", "fix_proposed",
                                                               "fix_clean", "right")]
        rows.append(f"| {name} | {len(done)} | {len(valid)} | " + " | ".join(percent(c, len(valid))
                                                                             for c in counts) + " |")
    return "\n".join(rows)


def miss_line(o: VariantOutcome, baseline: Optional[VariantOutcome]) -> str:
    card = f"card `{o.card_kind}`" if o.card_kind else "no card"
    named = ", ".join(f"In [{c}] line {ln}" for c, ln in o.named) or "none"
    fix = "clean" if o.fix_clean else ("FAILS" if o.fix_proposed else "none")
    also = " (missed on the original too)" if baseline is not None and baseline.valid and not baseline.right \
        else ""
    return (f"- {o.variant} `{o.case}`: {card}, culprit In [{o.want[0]}] line {o.want[1]} "
            f"{'named' if o.culprit_named else 'not named'} (lines named: {named}), fix {fix}{also}")


def report(outcomes: List[VariantOutcome], transforms: Sequence[str], seconds: float) -> str:
    baselines = {o.case: o for o in outcomes if o.variant == BASELINE}
    variants = [o for o in outcomes if o.variant != BASELINE]
    valid = [o for o in variants if o.valid]
    out = [table(outcomes, [BASELINE, *transforms]), "",
           f"Same kind, culprit named and fix clean, over the valid variants: "
           f"{percent(sum(o.right for o in valid), len(valid))} "
           f"({len(baselines)} cases; {sum(bool(o.skipped) for o in variants)} variants skipped, "
           f"{sum(bool(o.problems) for o in variants)} invalid). Measured in {seconds / 60:.1f} min "
           f"with {WORKERS} workers.", "", "Misses:"]
    out += [miss_line(o, baselines.get(o.case)) for o in outcomes if o.valid and not o.right] or ["- none"]
    out += ["", "Skipped:"] + ([f"- {o.variant} `{o.case}`: {o.skipped}" for o in outcomes if o.skipped]
                               or ["- none"])
    out += ["", "Not valid cases (bugs of the transform, not counted):"]
    out += [f"- {o.variant} `{o.case}`: " + "; ".join(o.problems) for o in outcomes if o.problems] or ["- none"]
    return "\n".join(out)


def _paths(names: Sequence[str]) -> List[Path]:
    """Notebooks named by path or by name (the file's stem); every case when none is named."""
    found = []
    for name in names:
        path = Path(name) if name.endswith(".ipynb") else NOTEBOOKS / f"{name}.ipynb"
        if not path.exists():
            raise SystemExit(f"no such notebook: {name}")
        found.append(path.resolve())
    return found or cases()


def main(argv: List[str]) -> int:
    chosen = argv[argv.index("--transforms") + 1] if "--transforms" in argv else ",".join(TRANSFORMS)
    transforms = [t for t in chosen.split(",") if t]
    unknown = set(transforms) - set(TRANSFORMS)
    if unknown:
        raise SystemExit(f"unknown transform(s) {sorted(unknown)}; known: {', '.join(TRANSFORMS)}")
    named = [a for a in argv if not a.startswith("--") and a != chosen]
    started = time.monotonic()
    outcomes = run_all(_paths(named), transforms)
    print(report(outcomes, transforms, time.monotonic() - started))
    return 1 if any(o.problems for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
