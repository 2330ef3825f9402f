"""`%grad_device`'s report as text (a table) and HTML (the `device_report.html.j2` template).

May touch: a `DeviceReport`'s strings and numbers only. Never imports torch; jinja2 only when HTML is asked
for, so loading the extension does not import it.
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, List, Tuple

if TYPE_CHECKING:  # NB: type hints only; at run time a renderer needs no torch-importing module
    from ..devices import DeviceReport, TensorRow

from ..units import human_bytes

DISPLAY_ROWS = 200  # rows shown by the text and HTML renders; `report.rows` keeps them all
COLUMNS = ("path", "role", "shape", "dtype", "device", "grad", "size")


def row_cells(row: TensorRow) -> Tuple[str, ...]:
    """A row as the seven column strings; grad: `no`, `leaf` (requires grad), or the grad_fn's name."""
    grad = row.grad_fn or ("leaf" if row.requires_grad else "no")
    return (_clip(row.path), row.role, str(row.shape), row.dtype, row.device, grad, human_bytes(row.nbytes))


def summary_line(report: DeviceReport) -> str:
    return "; ".join(f"{dev}: {t.count:,} tensor{'s' if t.count != 1 else ''}, {human_bytes(t.bytes)}"
                     for dev, t in report.totals.items())


def render_text(report: DeviceReport) -> str:
    lines = _table(report) if report.rows else [_nothing_found(report)]
    lines += [f"  [{w.kind}] {w.message}" for w in report.warnings]
    lines += [f"  skipped {s.path}: {s.reason}" for s in report.skipped[:20]]
    if len(report.skipped) > 20:
        lines.append(f"  … {len(report.skipped) - 20} more skipped (see report.skipped)")
    return "\n".join(lines)


def _table(report: DeviceReport) -> List[str]:
    cells = [COLUMNS] + [row_cells(row) for row in report.rows[:DISPLAY_ROWS]]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line[:-1], widths)) + "  " + line[-1].rjust(widths[-1])
             for line in cells]
    if len(report.rows) > DISPLAY_ROWS:
        lines.append(f"… {len(report.rows) - DISPLAY_ROWS:,} more rows (all {len(report.rows):,} "
                     f"are in report.rows)")
    return lines + ["", "total: " + summary_line(report)]


def _nothing_found(report: DeviceReport) -> str:
    where = f" on {report.options.device}" if report.options.device else ""
    return f"grad_device: no tensors found{where} in the namespace"


def _clip(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


@lru_cache(maxsize=1)
def _html_environment() -> Any:
    import jinja2  # NB: on first HTML render, not when the extension loads

    return jinja2.Environment(loader=jinja2.PackageLoader("grad_magic", "templates"), autoescape=True,
                              trim_blocks=True, lstrip_blocks=True)


def render_html(report: DeviceReport) -> str:
    largest = max((t.bytes for t in report.totals.values()), default=0) or 1
    bars = [(dev, t, human_bytes(t.bytes), round(100 * t.bytes / largest, 1), dev.split(":")[0])
            for dev, t in report.totals.items()]
    return _html_environment().get_template("device_report.html.j2").render(
        report=report, bars=bars, columns=COLUMNS, rows=[row_cells(r) for r in report.rows[:DISPLAY_ROWS]],
        more_rows=max(0, len(report.rows) - DISPLAY_ROWS), nothing_found=_nothing_found(report))
