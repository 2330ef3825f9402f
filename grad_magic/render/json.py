"""The JSON card: `application/vnd.grad-magic.diagnosis+json`, the data the JupyterLab extension renders.

Versioned by `schema_version`; every field is documented in docs/JSON.md. Plain data only (strings,
numbers, booleans, lists, objects); the frontend escapes what it shows.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict

from .. import catalog
from ..model import Diagnosis
from .common import MAX_ERROR, FixedCell, clip, fixed_cells, notebook_cell

MIME = "application/vnd.grad-magic.diagnosis+json"
SCHEMA_VERSION = 2  # 2: lines name their cell; `elsewhere`; `fix.cells` (a fix may change earlier cells); `live`;
# `trace` (anomaly mode's report, folded into the card) and the labels `details`, `trace` are additions
LABELS = ("what", "why", "where", "tensors", "fix", "fixed_cell", "no_fix", "original_error",
          "versions", "notes", "insert", "replace", "copy", "copied", "inserted", "replaced",
          "copy_failed", "severity.error", "severity.warning", "gradfix_hint", "column.name", "column.shape",
          "column.dtype", "column.device", "column.requires_grad", "column.version",
          # NB: schema 2's buttons; `{place}` is left for the extension to fill (`In [3]`)
          "this_cell", "fixed_copy", "apply", "applied", "already_applied", "changed", "gone", "rerun",
          "rerunning", "rerun_done", "rerun_failed", "rerun_gone", "file_hint",
          "unarmed",  # NB: said instead of the buttons by a card the frontend does not trust
          "live", "interrupt", "stop", "stop_sent", "stop_failed",  # NB: a live card's (issue 20)
          "details", "trace", "fixed_cell_long", "insert_reload", "inserted_reload")  # NB: the collapsed part of the card, anomaly mode's report in it


def _fix(d: Diagnosis) -> Dict[str, Any]:
    cells = [{"target": _target(c), "source": c.source, "original": notebook_cell(c.original),
              "edits": [dataclasses.asdict(e) for e in c.edits],
              "diff": [{"sign": sign, "text": text} for sign, text in c.diff], "rerun": list(c.rerun),
              "reload": c.reload}
             for c in fixed_cells(d)]
    this = next((c for c in cells if c["target"] == "this"), None)
    return {"description": d.fix.description, "cells": cells,
            # NB: schema 1's fields, for the running cell (null when the fix leaves it alone)
            "source": this["source"] if this else None, "edits": this["edits"] if this else [],
            "diff": this["diff"] if this else []}


def _target(c: FixedCell) -> Any:
    if c.this:
        return "this"
    return {"execution_count": c.cell} if c.cell is not None else {"file": c.file}


def render(d: Diagnosis) -> Dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": d.kind, "severity": d.severity, "language": d.language,
        "title": clip(d.title), "summary": clip(d.summary), "what": clip(d.what), "why": clip(d.why),
        "where": clip(d.where),
        "source": d.source,
        "cell": d.cell,
        "lines": [{**dataclasses.asdict(sl), "this": not sl.elsewhere} for sl in d.lines],
        "elsewhere": [dataclasses.asdict(c) for c in d.elsewhere],
        "names": list(d.names),
        "tensors": [dataclasses.asdict(t) for t in d.tensors],
        "error": {"type": d.error_type, "message": clip(d.error_message or "", MAX_ERROR)}
        if d.error_type else None,
        "fix": None if d.fix is None else _fix(d),
        "versions": dict(d.versions),
        "notes": list(d.notes),
        "trace": clip(d.trace, MAX_ERROR),
        # NB: shown while the cell ran (the extension's Stop button keys on it); null for an end-of-cell card
        "live": {"step": d.live.step, "found": d.live.found, "cost": d.live.cost} if d.live else None,
        "labels": {key: catalog.message("card." + key, d.language) for key in LABELS},
    }
