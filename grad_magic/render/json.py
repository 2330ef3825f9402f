"""The JSON card: `application/vnd.grad-magic.diagnosis+json`, the data the JupyterLab extension renders.

Versioned by `schema_version`; every field is documented in the README. Plain data only (strings,
numbers, booleans, lists, objects); the frontend escapes what it shows.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict

from .. import catalog
from ..model import Diagnosis
from .common import MAX_ERROR, clip, diff_lines, notebook_cell

MIME = "application/vnd.grad-magic.diagnosis+json"
SCHEMA_VERSION = 1
LABELS = ("what", "why", "where", "tensors", "fix", "fixed_cell", "no_fix", "original_error",
          "versions", "notes", "insert", "replace", "copy", "copied", "inserted", "replaced",
          "copy_failed", "severity.error", "severity.warning", "gradfix_hint", "column.name", "column.shape",
          "column.dtype", "column.device", "column.requires_grad", "column.version")


def render(d: Diagnosis) -> Dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": d.kind, "severity": d.severity, "language": d.language,
        "title": clip(d.title), "summary": clip(d.summary), "what": clip(d.what), "why": clip(d.why),
        "where": clip(d.where),
        "source": d.source,
        "lines": [dataclasses.asdict(sl) for sl in d.lines],
        "names": list(d.names),
        "tensors": [dataclasses.asdict(t) for t in d.tensors],
        "error": {"type": d.error_type, "message": clip(d.error_message or "", MAX_ERROR)}
        if d.error_type else None,
        "fix": None if d.fix is None else {
            "description": d.fix.description, "source": notebook_cell(d.fix.source),
            "edits": [dataclasses.asdict(e) for e in d.fix.edits],
            "diff": [{"sign": sign, "text": text} for sign, text in diff_lines(d)]},
        "versions": dict(d.versions),
        "notes": list(d.notes),
        "labels": {key: catalog.message("card." + key, d.language) for key in LABELS},
    }
