"""The HTML card: self-contained (inline CSS), theme-aware, escaped by Jinja2's autoescape only.

User text (messages, names, source) reaches the page only as template variables; code is highlighted
by splitting it into Pygments tokens that the template prints, so no HTML is ever built by hand here.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from .. import catalog
from ..cell import split_lines
from ..model import Diagnosis
from .common import CONTEXT, MAX_ERROR, clip, code_spans, excerpts, fixed_cells, place_label, tensor_rows
from .highlight import highlight_lines

HIGHLIGHT_MAX_LINES = 60  # a fixed cell up to this long is shown open and highlighted

# NB: static script text, no user data in it: the fixed cell travels in the card's
# `data-fixed-source` attribute (escaped by the template). Inline handlers work in trusted output
# without a <script> tag. Insert: classic Notebook (Jupyter.notebook) or Colab, else copy. Colab is
# called as its own outputs call it, `addCell(code, 'code')`, a promise: "inserted" is said once it has
# resolved, and a rejection (or a throw) copies instead, and says that.
# NB: no check in this script could tell a live card from a saved one: a notebook's author writes its saved
# HTML, buttons and scripts included. What keeps a saved card from arming is the frontend's trust: JupyterLab
# and the classic Notebook strip inline handlers and <style> from an untrusted output, and the template's
# `hidden` buttons then stay hidden (docs/FRONTENDS.md, "Only a live card arms a button").
_COPY = ("var s=c.getAttribute('data-fixed-source'),say=function(k){c.querySelector('.gm-status')"
         ".textContent=c.getAttribute('data-say-'+k)},fallback=function(){try{var t=document."
         "createElement('textarea');t.value=s;t.setAttribute('readonly','');t.style.position='fixed';"
         "t.style.opacity='0';document.body.appendChild(t);t.select();var ok=document.execCommand("
         "'copy');document.body.removeChild(t);say(ok?'copied':'copy_failed')}catch(e){say("
         "'copy_failed')}};if(navigator.clipboard&&navigator.clipboard.writeText){navigator.clipboard"
         ".writeText(s).then(function(){say('copied')},fallback)}else{fallback()}")
COPY_JS = "(function(b){var c=b.closest('.gm-fixcell');" + _COPY + "})(this)"
INSERT_JS = (
    "(function(b){var c=b.closest('.gm-fixcell'),s=c.getAttribute('data-fixed-source'),copy=function(){"
    + _COPY + "};try{"
    "var J=window.Jupyter;if(J&&J.notebook&&J.notebook.insert_cell_below){var cs=J.notebook.get_cells()"
    ",i=-1;for(var k=0;k<cs.length;k++){if(cs[k].element&&cs[k].element[0].contains(b)){i=k;break}}"
    "var n=J.notebook.insert_cell_below('code',i<0?undefined:i);n.set_text(s);"
    "J.notebook.select(J.notebook.find_cell_index(n));c.querySelector('.gm-status').textContent="
    "c.getAttribute('data-say-inserted');return}var G=window.google&&google.colab&&google.colab."
    "notebook;if(G&&G.addCell){Promise.resolve(G.addCell(s,'code')).then(function(){c.querySelector("
    "'.gm-status').textContent=c.getAttribute('data-say-inserted')},copy);return}}catch(e){}copy()})(this)")


@lru_cache(maxsize=1)
def _environment() -> Any:
    import jinja2  # NB: imported on first render, not when the extension loads

    env = jinja2.Environment(loader=jinja2.PackageLoader("grad_magic", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["clip"] = clip
    env.filters["code_spans"] = code_spans
    return env


def render(d: Diagnosis) -> str:
    memo: dict = {}  # NB: a fixed cell shares most statements with its excerpt's
    fixes = []
    for cell in fixed_cells(d):
        count = len(split_lines(cell.source))
        # NB: a long fixed cell is listed without colours: the diff shows what changed, and Insert / Copy /
        # %gradfix take the whole cell either way.
        tokens = highlight_lines(cell.source, memo=memo) if count <= HIGHLIGHT_MAX_LINES else None
        fixes.append((place_label(d.language, cell.cell, cell.file, cell.this), cell, tokens, count))
    return _environment().get_template("card.html.j2").render(
        d=d, say=lambda key, **params: catalog.message(key, d.language, **params),
        marked=_excerpts(d, 0, memo), parts=_excerpts(d, CONTEXT, memo), fixes=fixes, tensors=tensor_rows(d),
        in_cells=lambda counts: ", ".join(f"In [{n}]" for n in counts),
        INSERT_JS=INSERT_JS, COPY_JS=COPY_JS, MAX_ERROR=MAX_ERROR)


def _excerpts(d: Diagnosis, context: int, memo: dict) -> list:
    """(label, excerpt, [(line, tokens)]) per cell with culprit lines: `context` lines around each."""
    parts = []
    for part in excerpts(d, context):
        tokens = highlight_lines(part.source, [ln.lineno for ln in part.lines], memo) if part.source else []
        label = place_label(d.language, part.cell, part.file, not part.elsewhere)
        parts.append((label, part, [(ln, tokens[ln.lineno - 1] if ln.lineno <= len(tokens) else [])
                                    for ln in part.lines]))
    return parts
