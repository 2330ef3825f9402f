"""The text card: what a terminal IPython shows (colour only where the terminal supports it).

First, in at most FIRST_LINES lines at the terminal's width, so that it is still on screen when the prompt
returns: the title, the cause, the marked lines, the fix's diff and the `%gradfix` hint. Then the details
(what / why / where in full, the lines around, the tensors, the fixed cell, the original error), after a rule
line in the full card (`str(Card(d))`, `%gradcheck details`), or named by one line in the short card a
terminal shows after the traceback (`compact`).
"""
from __future__ import annotations

import os
import shutil
import sys
import textwrap
from typing import List, Optional, Sequence

from .. import catalog
from ..model import Diagnosis
from ..cell import split_lines
from .common import clip, excerpts, fixed_cells, place_label, tensor_rows

FIRST_LINES = 20  # the most lines the first block takes (a 40-row terminal keeps it in view)
_COLORS = {"error": "\033[31m", "warning": "\033[33m", "dim": "\033[2m", "bold": "\033[1m",
           "add": "\033[32m", "del": "\033[31m", "reset": "\033[0m"}


def supports_color(stream: object = None) -> bool:
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def terminal_width() -> int:
    return max(40, shutil.get_terminal_size((100, 40)).columns)


def render(d: Diagnosis, color: bool = False, width: Optional[int] = None, compact: bool = False,
           hint: Optional[str] = None) -> str:
    """The card's text. `width`: wrap prose and cut code lines to that many columns (None: no wrapping);
    `compact`: the first block and a line naming where the details are (what a terminal shows); `hint`: the
    line under the fix instead of the `%gradfix` one ("": none), for a card shown outside IPython (script.py)."""
    def c(name: str, text: str) -> str:
        return f"{_COLORS[name]}{text}{_COLORS['reset']}" if color else text

    def say(key: str, **params: object) -> str:
        return catalog.message(key, d.language, **params)

    wrap = _Wrap(width, d.language)
    mark = "✖" if d.is_error else "⚠"
    out: List[str] = [c("bold", line) for line in wrap.prose(f"{mark} {d.title}", "", "  ")]
    out += wrap.prose(d.summary, "  ", "  ")
    if d.live is not None:  # NB: shown while the cell runs: what the step found, its cost, how to stop
        out += wrap.prose(f"{say('card.live')}: {d.live.found} {d.live.cost}", "  ", "  ")
        out += [c("bold", line) for line in wrap.prose(say("card.interrupt"), "  ", "  ")]
    out += _excerpt_lines(d, 0, wrap, c)
    cells = fixed_cells(d)
    if d.fix is not None:
        out += wrap.prose(f"{say('card.fix')}: {d.fix.description}", "", "  ")
        for cell in cells:
            if len(cells) > 1 or not cell.this:
                out.append(c("dim", f"  {place_label(d.language, cell.cell, cell.file, cell.this)}:"))
            for i, (sign, text) in enumerate(cell.diff):
                if sign in "+-":
                    out.append(c("add" if sign == "+" else "del", wrap.code(f"  {sign} {text}")))
                elif i:  # NB: a hunk's header says no more than the fix's sentence: a gap mark between hunks
                    out.append(c("dim", "  ..."))
        tip = say("card.gradfix_hint") if hint is None else hint
        out += [c("dim", line) for line in wrap.prose(tip, "", "")] if tip else []
    elif d.is_error:
        out += wrap.prose(say("card.no_fix"), "", "")
    out = _at_most(out, FIRST_LINES, c("dim", "  …"))
    foot = c("dim", f"grad_magic · {say('card.severity.' + d.severity)} · {d.kind}")
    if compact:
        return "\n".join(out + [c("dim", line) for line in wrap.prose(say("card.details_hint"), "", "")] + [foot])
    out += ["", c("dim", "─" * min(width or 60, 60))]
    out += wrap.prose(f"{say('card.what')}: {clip(d.what)}", "", "  ")
    out += wrap.prose(f"{say('card.why')}: {clip(d.why)}", "", "  ")
    out += wrap.prose(f"{say('card.where')}: {clip(d.where)}", "", "  ")
    out += _excerpt_lines(d, None, wrap, c)
    if d.tensors:
        out += ["", f"{say('card.tensors')}:"]
        header = tuple(say("card.column." + k) for k in
                       ("name", "shape", "dtype", "device", "requires_grad", "version"))
        out += ["  " + row for row in _table([header, *tensor_rows(d)])]
    for cell in cells:
        title = say("card.fixed_cell") if cell.this and len(cells) == 1 else say(
            "card.fixed_copy", place=place_label(d.language, cell.cell, cell.file, cell.this))
        out += ["", f"{title}:"] + ["  " + ln for ln in split_lines(cell.source)]
    out.append("")
    if d.error_type:
        out += [c("dim", line) for line in
                wrap.prose(f"{say('card.original_error')}: {d.error_type}: {_first_line(d)}", "", "  ")]
    out.append(c("dim", f"{say('card.versions')}: " + " · ".join(f"{k} {v}" for k, v in d.versions)))
    out += [c("dim", f"{say('card.notes')}: {n}") for n in d.notes]
    out.append(foot)
    return "\n".join(out)


def _excerpt_lines(d: Diagnosis, context: Optional[int], wrap: "_Wrap", c) -> List[str]:
    """The culprit lines of each cell (`context` lines around each; None: the card's usual context)."""
    out: List[str] = []
    shown = excerpts(d) if context is None else excerpts(d, context)
    for part in shown:
        if len(shown) > 1:
            label = place_label(d.language, part.cell, part.file, not part.elsewhere)
            out.append(c("dim", f"  {label[:1].upper()}{label[1:]}" + (f" · {part.function}" if part.function else "")))
        for line in part.lines:
            if line.gap_before:
                out.append("      ...")
            prefix = "  > " if line.culprit else "    "
            out.append(wrap.code(prefix + f"{line.lineno:>3} | {line.text}"))
    return out


class _Wrap:
    """Prose wrapped at word boundaries, code cut with an ellipsis, to `width` columns (None: as it is).
    NB: a CJK character takes two columns: Chinese text is wrapped at half the width, anywhere."""

    def __init__(self, width: Optional[int], language: str) -> None:
        self.width, self.wide = width, language == "zh"

    def prose(self, text: str, first: str, rest: str) -> List[str]:
        if self.width is None:
            return [first + line for line in text.splitlines() or [""]]
        width = self.width // 2 if self.wide else self.width
        lines: List[str] = []
        for paragraph in text.splitlines() or [""]:
            lines += textwrap.wrap(paragraph, width, initial_indent=first if not lines else rest,
                                   subsequent_indent=rest, break_long_words=self.wide,
                                   break_on_hyphens=False) or [first if not lines else rest]
        return lines

    def code(self, line: str) -> str:
        width = self.width
        if width is None or len(line) <= width:
            return line
        return line[:width - 1] + "…"


def _at_most(lines: List[str], limit: int, more: str) -> List[str]:
    """The first `limit` lines; the last one says that lines were left out (the details have them all)."""
    return lines if len(lines) <= limit else lines[:limit - 1] + [more]


def _first_line(d: Diagnosis) -> str:
    message = d.error_message or ""
    first = message.splitlines()[0] if message else ""
    return first[:300] + ("…" if len(first) > 300 or "\n" in message.strip() else "")


def _table(rows: Sequence[Sequence[str]]) -> List[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
