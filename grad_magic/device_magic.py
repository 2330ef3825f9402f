"""`%grad_device`: option parsing and IPython wiring only; the walk and the report live in `inventory`, how
it looks in `render.inventory`; `ShownReport` joins the two.

May touch: the shell's user namespace, read-only (handed to `build_report`). Imports IPython and,
through `inventory`, torch; never jinja2 (the report renders HTML lazily), so loading the extension stays
cheap.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from . import catalog, state
from .inventory.build import build_report
from .inventory.report import SORTS, DeviceOptions, DeviceReport, OptionError
from .render.inventory import render_html, render_text


class ShownReport(DeviceReport):
    """The report the magic returns: the same data (`report.rows`, `report.totals`, ...), shown as a table in
    `str()` and a terminal, as HTML in a notebook -- in the language it was built in."""

    def __str__(self) -> str:
        return render_text(self)

    __repr__ = __str__

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(render_text(self))

    def _repr_html_(self) -> str:
        return render_html(self)


def shown(report: DeviceReport) -> ShownReport:
    return ShownReport(**{f.name: getattr(report, f.name) for f in dataclasses.fields(report)})


@magics_class
class DeviceMagics(Magics):
    @magic_arguments()
    @argument("device", nargs="?", default=None,
              help="show only tensors on this device: cpu, cuda (every cuda:N), cuda:1, meta, mps")
    @argument("--all", action="store_true", dest="include_private",
              help="also names starting with _ and IPython's output history (Out, _, _N)")
    @argument("--depth", type=int, default=DeviceOptions.depth, metavar="N",
              help=f"look N containers deep below each name (default {DeviceOptions.depth})")
    @argument("--sort", choices=SORTS, default=DeviceOptions.sort,
              help="row order: size (largest first; the default), name, or device")
    @argument("--time", type=float, default=DeviceOptions.time_limit, metavar="S", dest="time_limit",
              help=f"stop walking after S seconds and say what was not walked (default {DeviceOptions.time_limit:g})")
    @argument("-h", "--help", action="store_true", help="show this help and walk nothing")
    @line_magic
    def grad_device(self, line: str) -> Optional[ShownReport]:
        """List every tensor in the namespace and the device it lives on, with the bytes per device.

        Looks inside lists, tuples, dicts, namedtuples, dataclasses and plain objects' attributes, and
        into models (parameters, buffers, their .grad) and optimizers (state, named after its
        parameter). Reads metadata only, never tensor data; views of one storage count its bytes once.
        Warns about a model split across devices, optimizer state on another device than its parameter,
        tensors that will collide with the model's device, and GPU memory that only `Out` keeps alive.
        Runs none of the user's code (no property, no `named_parameters()` override, no
        `__torch_function__`); meta tensors take no bytes. Bounded in time (`--time`): a walk that stops
        says where, and the names it did not walk. Speaks the cards' language.

        Returns the report: `report = %grad_device`, then `report.rows`, `report.totals`,
        `report.warnings`, `report.skipped`.
        """
        args = _parse(line)
        if args.help:
            print(_usage(full=True))
            return None
        try:
            options = DeviceOptions(device=args.device, include_private=args.include_private,
                                    depth=args.depth, sort=args.sort, time_limit=args.time_limit)
        except OptionError as e:
            why = catalog.message(e.key, state.language(), **e.params)
            raise UsageError(f"%grad_device: {why}\n{_usage()}") from None
        return shown(build_report(self.shell.user_ns, options))


def _parse(line: str) -> Any:
    try:
        return parse_argstring(DeviceMagics.grad_device, line)
    except UsageError as e:
        raise UsageError(f"{e}\n{_usage()}\n{catalog.message('inventory.usage.help', state.language())}") from None


def _usage(full: bool = False) -> str:
    """argparse's usage text, spelled as the user types the magic."""
    parser = DeviceMagics.grad_device.parser
    text = parser.format_help() if full else parser.format_usage()
    return text.replace("::\n\n  %grad_device", "usage: %grad_device", 1).strip()
