"""The text card: what a terminal IPython shows (colour only where the terminal supports it)."""
from __future__ import annotations

import os
import sys
from typing import List, Sequence

from .. import catalog
from ..model import Diagnosis
from ..cell import split_lines
from .common import clip, excerpts, fixed_cells, place_label, tensor_rows

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "dim": "\033[2m", "bold": "\033[1m",
           "add": "\033[32m", "del": "\033[31m", "reset": "\033[0m"}


def supports_color(stream: object = None) -> bool:
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def render(d: Diagnosis, color: bool = False) -> str:
    def c(name: str, text: str) -> str:
        return f"{_COLORS[name]}{text}{_COLORS['reset']}" if color else text

    def say(key: str) -> str:
        return catalog.message(key, d.language)

    mark = "✖" if d.is_error else "⚠"
    out: List[str] = [c(d.severity, f"{mark} grad_magic · {say('card.severity.' + d.severity)} · {d.kind}"),
                      c("bold", d.title), f"  {d.summary}", ""]
    if d.live is not None:  # NB: shown while the cell runs: what the step found, its cost, how to stop
        out += [c("bold", f"{say('card.live')}: ") + d.live.found, f"  {d.live.cost}",
                c("bold", f"  {say('card.interrupt')}"), ""]
    out += [f"{say('card.what')}: {clip(d.what)}", f"{say('card.why')}: {clip(d.why)}",
            f"{say('card.where')}: {clip(d.where)}"]
    shown = excerpts(d)
    for part in shown:
        if len(shown) > 1:
            label = place_label(d.language, part.cell, part.file, not part.elsewhere)
            out.append(c("dim", f"  {label[:1].upper()}{label[1:]}" + (f" · {part.function}" if part.function else "")))
        for line in part.lines:
            if line.gap_before:
                out.append("      ...")
            prefix = "  > " if line.culprit else "    "
            out.append(prefix + f"{line.lineno:>3} | {line.text}")
    if d.tensors:
        out += ["", f"{say('card.tensors')}:"]
        header = tuple(say("card.column." + k) for k in
                       ("name", "shape", "dtype", "device", "requires_grad", "version"))
        out += ["  " + row for row in _table([header, *tensor_rows(d)])]
    out.append("")
    if d.fix is not None:
        out.append(f"{say('card.fix')}: {d.fix.description}")
        cells = fixed_cells(d)
        for cell in cells:
            label = place_label(d.language, cell.cell, cell.file, cell.this)
            if len(cells) > 1 or not cell.this:
                out.append(c("dim", f"  {label}:"))
            for sign, text in cell.diff:
                out.append("  " + (c("add" if sign == "+" else "del", sign + " " + text)
                                   if sign in "+-" else c("dim", text)))
        for cell in cells:
            title = say("card.fixed_cell") if cell.this and len(cells) == 1 else catalog.message(
                "card.fixed_copy", d.language, place=place_label(d.language, cell.cell, cell.file, cell.this))
            out += ["", f"{title}:"] + ["  " + ln for ln in split_lines(cell.source)]
        out += ["", c("dim", say("card.gradfix_hint"))]
    elif d.is_error:
        out.append(say("card.no_fix"))
    if d.error_type:
        out.append(c("dim", f"{say('card.original_error')}: {d.error_type}: {_first_line(d)}"))
    out.append(c("dim", f"{say('card.versions')}: " + " · ".join(f"{k} {v}" for k, v in d.versions)))
    out += [c("dim", f"{say('card.notes')}: {n}") for n in d.notes]
    return "\n".join(out)


def _first_line(d: Diagnosis) -> str:
    message = d.error_message or ""
    first = message.splitlines()[0] if message else ""
    return first[:300] + ("…" if len(first) > 300 or "\n" in message.strip() else "")


def _table(rows: Sequence[Sequence[str]]) -> List[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
