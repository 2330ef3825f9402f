"""The leaf family's fixes: the in-place update put under `with torch.no_grad():` (or, when a later backward()
still needs the old value, rebound out of place); for a `.grad` read on a non-leaf, the rebinding update made
in place under no_grad, the `requires_grad=True` moved onto the whole value, or `.retain_grad()`.

Pure: the statements the culprit found and the cell's text and ast -> minimal edits, checked to parse by
`make_fix`; the descriptions come from the catalog. No name lookups (`header`, the cell's spelling of
`with torch.no_grad()`, is the culprit's).
"""
from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Set

import torch

from ... import catalog
from ...cell import body_indent, indent_of, node_span, split_lines
from ...edits import insert_line_before, make_fix, wrap_in_block
from ...model import Fix, TextEdit
from ..context import RuleContext
from ..kit import appended, code_text, dotted, parenthesised, quote, spans, starts_line
from .culprit import has_backward, own_lines, reads_grad_of, siblings_of, wrapped_leaf

AUG = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


# -- leaf-modified-in-place --

def wrap_fix(ctx: RuleContext, run: Sequence[ast.stmt], header: str,
             more: Sequence[Sequence[ast.stmt]] = ()) -> Optional[Fix]:
    """The run of updates put under `header:` (`with torch.no_grad()`), and each of the `more` runs of the
    same writes further on (other branches of an init helper)."""
    first, last = run[0].lineno, run[-1].end_lineno or run[-1].lineno
    edits = wrap_in_block(ctx.record.source, first, last, header)
    for other in more:
        edits += wrap_in_block(ctx.record.source, other[0].lineno, other[-1].end_lineno or other[-1].lineno, header)
    key = "leaf.fix_wrap" if first == last else "leaf.fix_wrap_lines"
    description = ctx.say(key, first=first, last=last, header=header)
    if more:
        lines = [str(o[0].lineno) for o in more]
        description = catalog.sentences([description, ctx.say("leaf.fix_wrap_more", lines=catalog.listing(
            lines, ctx.language))], ctx.language)
    return make_fix(ctx.record.source, edits, description)


def rebind_fix(ctx: RuleContext, stmt: ast.stmt, name: str) -> Optional[Fix]:
    """`a += 1` -> `a = a + 1`; `a.add_(1)` -> `a = a.add(1)`: a new tensor, the leaf left as it was."""
    src = ctx.record.source
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and type(stmt.op) in AUG:
        value = parenthesised(code_text(src, stmt.value), stmt.value)
        text = f"{name} = {name} {AUG[type(stmt.op)]} {value}"
        return make_fix(src, [TextEdit(*node_span(src, stmt), text)],
                        ctx.say("leaf.fix_rebind", lineno=stmt.lineno, code=text))
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and dotted(func.value) == name and func.attr.endswith("_") \
                and hasattr(torch.Tensor, func.attr[:-1]) and "." not in name:
            start, _ = node_span(src, stmt)
            _, end = node_span(src, func)
            edits = [TextEdit(start, start, f"{name} = "), TextEdit(end - 1, end, "")]
            text = f"{name} = {name}.{func.attr[:-1]}(...)"
            return make_fix(src, edits, ctx.say("leaf.fix_rebind", lineno=stmt.lineno, code=text))
    return None


# -- non-leaf-grad --

def update_fix(ctx: RuleContext, tree: ast.Module, stmt: ast.Assign, name: str, names: List[str],
               header: Optional[str]) -> Optional[Fix]:
    """`w = w - lr * w.grad` -> `with torch.no_grad(): w -= lr * w.grad` (+ `w.grad.zero_()` in a loop), only
    for a manual update: after a backward(), or reading `w.grad`."""
    if not _is_update_rebind(stmt, name) or not (reads_grad_of(stmt.value, name) or _after_backward(tree, stmt)):
        return None
    siblings, i = siblings_of(tree, stmt)
    first = last = i
    others = set(names) - {name}
    while first > 0 and _sibling_rebind(siblings[first - 1], others):
        first -= 1
    while last + 1 < len(siblings) and _sibling_rebind(siblings[last + 1], others):
        last += 1
    run = siblings[first:last + 1]
    src = ctx.record.source
    if header is None or any(s.lineno != s.end_lineno or not own_lines(src, siblings, k)
                             for k, s in enumerate(siblings) if first <= k <= last):
        return None
    edits = wrap_in_block(src, run[0].lineno, run[-1].lineno, header)
    for s in run:
        target = dotted(s.targets[0]) or ""
        right = code_text(src, s.value.right)
        edits.append(TextEdit(*node_span(src, s), f"{target} {AUG[type(s.value.op)]}= {right}"))
    edits += _grad_clearing(src, tree, run)
    updated = [dotted(s.targets[0]) or "" for s in run]
    return make_fix(src, edits, ctx.say("nonleaf.fix_update", lineno=stmt.lineno, header=header,
                                        names=catalog.listing([quote(n) for n in updated], ctx.language)))


def _grad_clearing(src: str, tree: ast.Module, run: Sequence[ast.Assign]) -> List[TextEdit]:
    """`w.grad.zero_()` after the run, for each name it updates from its `.grad` in a loop that clears none."""
    clear = [dotted(s.targets[0]) for s in run if reads_grad_of(s.value, dotted(s.targets[0]) or "")
             and _in_loop(tree, s) and not _clears_grad(tree, dotted(s.targets[0]) or "")]
    if not clear:
        return []
    line = split_lines(src)[run[-1].lineno - 1]
    inner = indent_of(line) + (body_indent(src, run[-1].lineno)[len(indent_of(line)):] or "    ")
    _, end = node_span(src, run[-1])
    return [TextEdit(end, end, "".join(f"\n{inner}{n}.grad.zero_()" for n in clear))]


def _is_update_rebind(stmt: ast.stmt, name: str) -> bool:
    """`w = w - lr * w.grad`, `w = w + 1`: the same as `w -= ...` but for the new tensor it makes."""
    value = getattr(stmt, "value", None)
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and dotted(stmt.targets[0]) == name \
        and isinstance(value, ast.BinOp) and type(value.op) in AUG and dotted(value.left) == name


def _sibling_rebind(stmt: ast.stmt, names: Set[str]) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and (dotted(stmt.targets[0]) or "") in names \
        and _is_update_rebind(stmt, dotted(stmt.targets[0]) or "") and stmt.lineno == stmt.end_lineno


def _after_backward(tree: ast.AST, stmt: ast.stmt) -> bool:
    """A backward() ran before `stmt`: earlier in the cell, or earlier in a loop around it."""
    return any(has_backward(s) and s.lineno < stmt.lineno and not _contains(s, stmt) for s in
               (n for n in ast.walk(tree) if isinstance(n, ast.stmt)))


def _contains(outer: ast.stmt, inner: ast.stmt) -> bool:
    return outer is not inner and spans(outer, inner.lineno)


def _in_loop(tree: ast.AST, stmt: ast.stmt) -> bool:
    return any(isinstance(n, (ast.For, ast.While)) and _contains(n, stmt) for n in ast.walk(tree))


def _clears_grad(tree: ast.AST, name: str) -> bool:
    """`w.grad.zero_()`, `w.grad = None`, or an optimizer's / module's `zero_grad()` somewhere in the cell."""
    for n in ast.walk(tree):
        method = n.func.attr if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) else ""
        if method == "zero_grad" or method == "zero_" and name + ".grad" in (dotted(n.func.value) or ""):
            return True
        if isinstance(n, ast.Assign) and any(dotted(t) == name + ".grad" for t in n.targets):
            return True
    return False


def made_fix(ctx: RuleContext, stmt: ast.Assign, name: str, more: Sequence[ast.Assign] = ()) -> Optional[Fix]:
    """`w = torch.randn(3, requires_grad=True) * 0.01` -> `w = (torch.randn(3) * 0.01).requires_grad_()`; the
    same for each of `more` (the other tensors made that way beside it)."""
    src = ctx.record.source
    edits: List[TextEdit] = []
    for s in [stmt, *more]:
        found = _made_edits(src, s)
        if found is None:
            return None
        edits += found
    return make_fix(src, edits, ctx.say("nonleaf.fix_made", name=name, lineno=stmt.lineno) if not more else
                    ctx.say("nonleaf.fix_made_all", lines=catalog.listing([str(s.lineno) for s in [stmt, *more]],
                                                                          ctx.language)))


def _made_edits(src: str, stmt: ast.Assign) -> Optional[List[TextEdit]]:
    keyword = wrapped_leaf(stmt.value)
    call = next((n for n in ast.walk(stmt.value) if isinstance(n, ast.Call) and keyword in n.keywords), None)
    if keyword is None or call is None:
        return None
    items = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
    k = items.index(keyword)
    if k == 0:
        return None  # NB: `f(requires_grad=True)` alone: nothing to keep the comma against
    _, prev_end = node_span(src, items[k - 1])
    _, kw_end = node_span(src, keyword)
    return [TextEdit(prev_end, kw_end, "")] + appended(src, stmt.value, ".requires_grad_()")


def retain_fix(ctx: RuleContext, tree: ast.Module, stmt: ast.Assign, name: str, read_line: int) -> Optional[Fix]:
    """`out.retain_grad()` right after `out = ...`, when a backward() between them and the read fills it."""
    src = ctx.record.source
    lines = split_lines(src)
    end = stmt.end_lineno or stmt.lineno
    if not stmt.lineno < read_line or end >= len(lines) or not starts_line(src, stmt):
        return None
    if not any(has_backward(s) and end < s.lineno <= read_line for s in ast.walk(tree) if isinstance(s, ast.stmt)):
        return None
    siblings, i = siblings_of(tree, stmt)
    if i + 1 < len(siblings) and siblings[i + 1].lineno == end:
        return None  # NB: `out = f(x); loss = ...` on one line
    text = f"{indent_of(lines[stmt.lineno - 1])}{name}.retain_grad()"
    return make_fix(src, [insert_line_before(src, end + 1, text)],
                    ctx.say("nonleaf.fix_retain", name=name, lineno=end + 1))
