"""The HTML card: self-contained (inline CSS), theme-aware, escaped by Jinja2's autoescape only.

User text (messages, names, source) reaches the page only as template variables; code is highlighted
by splitting it into Pygments tokens that the template prints, so no HTML is ever built by hand here.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, List, Tuple

from .. import catalog
from ..model import Diagnosis
from .common import diff_lines, excerpt, tensor_rows

Token = Tuple[str, str]  # (css class, text)


@lru_cache(maxsize=1)
def _environment() -> Any:
    import jinja2  # NB: imported on first render, not when the extension loads

    return jinja2.Environment(loader=jinja2.PackageLoader("grad_magic", "templates"),
                              autoescape=True, trim_blocks=True, lstrip_blocks=True)


def highlight_lines(code: str) -> List[List[Token]]:
    """Python source as lines of (Pygments short class, text) tokens."""
    from pygments.lexers import PythonLexer
    from pygments.token import STANDARD_TYPES

    lines: List[List[Token]] = [[]]
    for ttype, value in PythonLexer(stripnl=False, ensurenl=False).get_tokens(code):
        css = STANDARD_TYPES.get(ttype) or STANDARD_TYPES.get(ttype.parent, "")
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                lines.append([])
            if part:
                lines[-1].append((css, part))
    return lines


def render(d: Diagnosis) -> str:
    source_tokens = highlight_lines(d.source) if d.source else []
    fixed_tokens = highlight_lines(d.fix.source) if d.fix else []
    lines = excerpt(d)
    return _environment().get_template("card.html.j2").render(
        d=d, say=lambda key: catalog.message(key, d.language),
        excerpt=[(ln, source_tokens[ln.lineno - 1] if ln.lineno <= len(source_tokens) else [])
                 for ln in lines],
        diff=diff_lines(d), fixed=fixed_tokens, tensors=tensor_rows(d))
