"""`%grad_device`'s report as text (a table) and HTML (the `device_report.html.j2` template).

May touch: a `DeviceReport`'s strings and numbers only, and the catalog for its labels (in the report's
language). Never imports torch; jinja2 only when HTML is asked for, so loading the extension does not import it.
"""
from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, List, Tuple

from .. import catalog
from ..units import human_bytes

if TYPE_CHECKING:  # NB: type hints only; at run time a renderer needs no torch-importing module
    from ..inventory.report import DeviceReport, TensorRow

DISPLAY_ROWS = 200  # rows shown by the text and HTML renders; `report.rows` keeps them all
COLUMNS = ("path", "role", "shape", "dtype", "device", "grad", "size")


def columns(language: str) -> Tuple[str, ...]:
    """The column headers in `language`."""
    return tuple(catalog.message(f"inventory.column.{c}", language) for c in COLUMNS)


def row_cells(row: TensorRow, language: str) -> Tuple[str, ...]:
    """A row as the seven column strings; grad: `no`, `leaf` (requires grad), or the grad_fn's name."""
    grad = row.grad_fn or catalog.message("inventory.grad.leaf" if row.requires_grad else "inventory.grad.no",
                                          language)
    return (_clip(row.path), role_text(row.role, language), str(row.shape), row.dtype, row.device, grad,
            human_bytes(row.nbytes))


def role_text(role: str, language: str) -> str:
    """`optimizer state` -> its words in `language` (a role the catalog does not know: as it is)."""
    key = "inventory.role." + role.replace(" ", "_")
    return catalog.message(key, language) if key in catalog.MESSAGES else role


def tensors_text(count: int, language: str, shown: str = "") -> str:
    """`1 tensor`, `12 tensors` (`shown`: the count as written, default plain digits)."""
    key = "inventory.tensors.one" if count == 1 else "inventory.tensors.many"
    return catalog.message(key, language, count=shown or str(count))


def summary_line(report: DeviceReport) -> str:
    """`cpu: 11 tensors, 152 B; meta: 1 tensor, 48 B`: the tensors and bytes per device."""
    say = report.language
    return catalog.message("inventory.total.sep", say).join(
        catalog.message("inventory.total.device", say, device=dev, tensors=tensors_text(t.count, say, f"{t.count:,}"),
                        size=human_bytes(t.bytes))
        for dev, t in report.totals.items())


def render_text(report: DeviceReport) -> str:
    say = report.language
    lines = _table(report) if report.rows else [nothing_found(report)]
    lines += [f"  [{w.kind}] {w.message}" for w in report.warnings]
    lines += ["  " + catalog.message("inventory.skipped", say, path=s.path, reason=s.reason)
              for s in report.skipped[:20]]
    if len(report.skipped) > 20:
        lines.append("  " + catalog.message("inventory.skipped_more", say, count=len(report.skipped) - 20))
    return "\n".join(lines)


def _table(report: DeviceReport) -> List[str]:
    say = report.language
    cells = [columns(say)] + [row_cells(row, say) for row in report.rows[:DISPLAY_ROWS]]
    widths = [max(_width(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(_pad(c, w) for c, w in zip(line[:-1], widths)) + "  " + _pad(line[-1], widths[-1], right=True)
             for line in cells]
    if len(report.rows) > DISPLAY_ROWS:
        lines.append(catalog.message("inventory.more_rows", say, more=f"{len(report.rows) - DISPLAY_ROWS:,}",
                                     total=f"{len(report.rows):,}"))
    return lines + ["", catalog.message("inventory.total", say, totals=summary_line(report))]


def nothing_found(report: DeviceReport) -> str:
    if report.options.device:
        return catalog.message("inventory.nothing_on", report.language, device=report.options.device)
    return catalog.message("inventory.nothing", report.language)


def _width(text: str) -> int:
    """The columns `text` takes in a terminal: a wide (CJK) character takes two."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, width: int, right: bool = False) -> str:
    fill = " " * (width - _width(text))
    return fill + text if right else text + fill


def _clip(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


@lru_cache(maxsize=1)
def _html_environment() -> Any:
    import jinja2  # NB: on first HTML render, not when the extension loads

    return jinja2.Environment(loader=jinja2.PackageLoader("grad_magic", "templates"), autoescape=True,
                              trim_blocks=True, lstrip_blocks=True)


def render_html(report: DeviceReport) -> str:
    say = report.language
    largest = max((t.bytes for t in report.totals.values()), default=0) or 1
    bars = [(dev, f"{human_bytes(t.bytes)} · {tensors_text(t.count, say)}", round(100 * t.bytes / largest, 1),
             dev.split(":")[0]) for dev, t in report.totals.items()]
    return _html_environment().get_template("device_report.html.j2").render(
        report=report, bars=bars, columns=columns(say), rows=[row_cells(r, say) for r in report.rows[:DISPLAY_ROWS]],
        labels=_html_labels(report))


def _html_labels(report: DeviceReport) -> Dict[str, str]:
    say = report.language
    more_rows = max(0, len(report.rows) - DISPLAY_ROWS)
    skipped = len(report.skipped)
    return {
        "tensors": tensors_text(len(report.rows), say),
        "nothing_found": nothing_found(report),
        "more_rows": catalog.message("inventory.more_rows_html", say, more=more_rows) if more_rows else "",
        "skipped": catalog.message("inventory.not_looked_into.one" if skipped == 1 else
                                   "inventory.not_looked_into.many", say, count=skipped),
        "see_skipped": catalog.message("inventory.see_skipped_html", say),
        "reason_sep": catalog.message("inventory.reason_sep", say),
    }
