"""The backward family's fixes: small text edits of the user's cell, from a culprit and the cell's text.

A reduction appended to the receiver of backward(); `.detach()` of a state carried across iterations, the
graph's statements moved into the loop, `retain_graph=True`; the out-of-place form of an `out=` call;
`torch.inference_mode()` swapped for `torch.no_grad()`, or `x = x.clone()` before the failing line. May touch:
the cell's text and ast (no live objects); each edit is checked to parse (edits.make_fix).
"""
from __future__ import annotations

import ast
from typing import List, Optional

from ...cell import (assignments_to, cell_tree, enclosing_statement, indent_of, line_offsets, node_span,
                     split_lines)
from ...edits import insert_line_before, make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from ..kit import PRIMARIES, appended, one_line
from .culprit import Site, alone_on_lines
from .causes import Detach, DetachAt, Drop, DetachReads, Move, Recompute, Remedy, Retain, State, Sum

# -- backward-non-scalar --


def reduce_fix(ctx: RuleContext, site: Site, reduce: str) -> Optional[Fix]:
    """`.mean()` / `.sum()` appended to what backward() was called on -- where the name is bound, when the cell
    reads it again after backward() (`print(loss.item())` needs the one number too)."""
    src = ctx.record.source
    node = site.receiver
    bound = _binding_read_after(src, site)
    if bound is not None:
        expr = one_line(src, bound.value)
        new = f"{expr}.{reduce}()" if isinstance(bound.value, PRIMARIES) else f"({expr}).{reduce}()"
        return make_fix(src, appended(src, bound.value, f".{reduce}()"), ctx.say(
            "backward.scalar.fix", old=expr, new=new, lineno=bound.lineno))
    start, end = node_span(src, node)
    own = site.method and getattr(site.call.func, "value", None) is node  # NB: not `accelerator.backward(a * b)`
    if not isinstance(node, PRIMARIES) and own and src[start - 1:start] == "(" and \
            src[end:end + 1] == ")":  # NB: `(a * b).backward()`: the user's own parentheses
        edits = [TextEdit(end + 1, end + 1, f".{reduce}()")]
    else:
        edits = appended(src, node, f".{reduce}()")
    expr = one_line(src, node)
    new = f"{expr}.{reduce}()" if isinstance(node, PRIMARIES) else f"({expr}).{reduce}()"
    return make_fix(src, edits, ctx.say("backward.scalar.fix", old=expr, new=new, lineno=site.stmt.lineno))


def _binding_read_after(source: str, site: Site) -> Optional[ast.Assign]:
    """`loss = model(x)[0]` for `loss.backward()` when the cell reads `loss` after that line and binds it in
    one place, in the same block, before it: the statement to reduce instead."""
    node, tree = site.receiver, cell_tree(source)
    if not isinstance(node, ast.Name) or tree is None:
        return None
    after = site.stmt.end_lineno or site.stmt.lineno
    if not any(isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Load) and n.lineno > after
               for n in ast.walk(tree)):
        return None
    binds = [s for s in assignments_to(tree, node.id) if s.lineno < site.stmt.lineno]
    last = binds[-1] if binds else None
    if not isinstance(last, ast.Assign) or len(last.targets) != 1 or not isinstance(last.targets[0], ast.Name) \
            or len(assignments_to(tree, node.id)) != 1 or last.col_offset != site.stmt.col_offset:
        return None
    return last


# -- backward-twice --

def twice_fix(ctx: RuleContext, remedy: Remedy) -> Optional[Fix]:
    if isinstance(remedy, Detach):
        return _detach_fix(ctx, remedy)
    if isinstance(remedy, DetachAt):
        return _detach_at_fix(ctx, remedy)
    if isinstance(remedy, DetachReads):
        return _detach_reads_fix(ctx, remedy)
    if isinstance(remedy, Sum):
        return _sum_fix(ctx, remedy)
    if isinstance(remedy, Move):
        return _move_fix(ctx, remedy)
    if isinstance(remedy, Recompute):
        return _recompute_fix(ctx, remedy)
    if isinstance(remedy, Drop):
        return _drop_fix(ctx, remedy)
    return _retain_fix(ctx, remedy)


def _drop_fix(ctx: RuleContext, remedy: Drop) -> Optional[Fix]:
    """The statement's own lines deleted, when it owns them."""
    stmt = remedy.stmt
    if not alone_on_lines(ctx, stmt):
        return None
    src = ctx.record.source
    offs = line_offsets(src)
    end = stmt.end_lineno or stmt.lineno
    code = one_line(src, stmt)
    return make_fix(src, [TextEdit(offs[stmt.lineno - 1], offs[end], "")],
                    ctx.say("backward.twice.fix_drop", code=code, lineno=stmt.lineno))


def _detach_fix(ctx: RuleContext, remedy: Detach) -> Optional[Fix]:
    """`h, c = h.detach(), c.detach()` as the loop body's first line, when that statement owns its lines."""
    first = remedy.loop.body[0]
    if not alone_on_lines(ctx, first):
        return None
    src = ctx.record.source
    text = f"{', '.join(s.name for s in remedy.states)} = {', '.join(_detached(s) for s in remedy.states)}"
    line = insert_line_before(src, first.lineno, indent_of(ctx.record.source_line(first.lineno)) + text)
    return make_fix(src, [line], ctx.say("backward.twice.fix_detach", code=text, lineno=remedy.loop.lineno))


def _detach_at_fix(ctx: RuleContext, remedy: DetachAt) -> Optional[Fix]:
    """`h = h.detach()` on a line of its own before the statement that carries the state on."""
    src, stmt = ctx.record.source, remedy.stmt
    text = f"{', '.join(s.name for s in remedy.states)} = {', '.join(_detached(s) for s in remedy.states)}"
    line = insert_line_before(src, stmt.lineno, indent_of(ctx.record.source_line(stmt.lineno)) + text)
    return make_fix(src, [line], ctx.say("backward.twice.fix_detach_at", code=text, lineno=stmt.lineno))


def _detach_reads_fix(ctx: RuleContext, remedy: DetachReads) -> Optional[Fix]:
    """`D(fake)` -> `D(fake.detach())` wherever the first loss reads the shared tensor."""
    src = ctx.record.source
    edits = [e for read in remedy.reads for e in appended(src, read, ".detach()")]
    name = remedy.reads[0].id if remedy.reads else ""
    if not edits:
        return None
    key = "backward.twice.fix_detach_reads_each" if remedy.each else "backward.twice.fix_detach_reads"
    return make_fix(src, edits, ctx.say(key, name=name, lineno=remedy.lineno))


def _sum_fix(ctx: RuleContext, remedy: Sum) -> Optional[Fix]:
    """The loop `for loss in losses: loss.backward()` -> `sum(losses).backward()`."""
    src = ctx.record.source
    start, end = node_span(src, remedy.loop)
    code = f"sum({remedy.losses}).backward()"
    return make_fix(src, [TextEdit(start, end, code)],
                    ctx.say("backward.twice.fix_sum", code=code, lineno=remedy.loop.lineno))


def _detached(state: State) -> str:
    name = state.name
    expr = f"tuple(t.detach() for t in {name})" if state.container == "tuple" else \
        f"[t.detach() for t in {name}]" if state.container == "list" else f"{name}.detach()"
    return f"{expr} if {name} is not None else None" if state.starts_none else expr


def _move_fix(ctx: RuleContext, remedy: Move) -> Optional[Fix]:
    """The moved statements' lines cut from before the loop and put, one step deeper, at its body's top."""
    src, loop, moved = ctx.record.source, remedy.loop, remedy.moved
    offs, lines = line_offsets(src), split_lines(src, keepends=True)
    first = loop.body[0]
    step = indent_of(lines[first.lineno - 1])[len(indent_of(lines[loop.lineno - 1])):]
    edits, moved_text = [], []
    for stmt in moved:
        end = stmt.end_lineno or stmt.lineno
        edits.append(TextEdit(offs[stmt.lineno - 1], offs[end], ""))
        moved_text += [step + ln if ln.strip() else ln for ln in lines[stmt.lineno - 1:end]]
    edits.append(TextEdit(offs[first.lineno - 1], offs[first.lineno - 1], "".join(moved_text)))
    span = _line_span([s.lineno for s in moved] + [moved[-1].end_lineno or moved[-1].lineno])
    return make_fix(src, edits, ctx.say("backward.twice.fix_move", lines=span, loop=loop.lineno))


def _line_span(linenos: List[int]) -> str:
    lo, hi = min(linenos), max(linenos)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _recompute_fix(ctx: RuleContext, remedy: Recompute) -> Optional[Fix]:
    src = ctx.record.source
    edits = [TextEdit(*node_span(src, n), remedy.value) for n in remedy.reads]
    return make_fix(src, edits, ctx.say("backward.twice.fix_recompute", name=remedy.reads[0].id,
                                        value=remedy.value, lineno=remedy.reads[0].lineno))


def _retain_fix(ctx: RuleContext, remedy: Retain) -> Optional[Fix]:
    src, call = ctx.record.source, remedy.call
    _, end = node_span(src, call)
    text = ", retain_graph=True" if call.args or call.keywords else "retain_graph=True"
    return make_fix(src, [TextEdit(end - 1, end - 1, text)],
                    ctx.say("backward.twice.fix_retain", first=remedy.first, lineno=remedy.lineno))


# -- out-with-grad --

def out_fix(ctx: RuleContext, site: Site, call: ast.Call, out_node: ast.expr, out: str) -> Optional[Fix]:
    """`torch.add(a, b, out=c)` -> `c = torch.add(a, b)`: only for a call that is the whole statement's value."""
    stmt = site.stmt
    if not (isinstance(stmt, ast.Expr) or isinstance(stmt, ast.Assign)) or stmt.value is not call:
        return None
    if not isinstance(out_node, (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple)):
        return None
    src = ctx.record.source
    args = [*call.args, *call.keywords]
    k = next(i for i, a in enumerate(args) if isinstance(a, ast.keyword) and a.arg == "out")
    _, kw_end = node_span(src, args[k].value)
    if k > 0:
        _, start = node_span(src, args[k - 1].value if isinstance(args[k - 1], ast.keyword) else args[k - 1])
        end = kw_end
    else:
        start = node_span(src, args[k].value)[0] - len("out=")
        end = node_span(src, args[k + 1])[0] if k + 1 < len(args) else kw_end
        if not src[start:start + 4] == "out=":
            return None
    call_start, _ = node_span(src, call)
    edits = [TextEdit(call_start, call_start, f"{out} = "), TextEdit(start, end, "")]
    return make_fix(src, edits, ctx.say("backward.out.fix", out=out, lineno=stmt.lineno))


# -- inference-tensor-backward --

def swap_fix(ctx: RuleContext, call: ast.Call) -> Optional[Fix]:
    """`torch.inference_mode()` -> `torch.no_grad()` where the tensor was made."""
    src = ctx.record.source
    _, end = node_span(src, call.func)
    start = end - len("inference_mode")
    if src[start:end] != "inference_mode":
        return None
    owner = src[slice(*node_span(src, call.func.value))]
    return make_fix(src, [TextEdit(start, end, "no_grad")],
                    ctx.say("backward.inference.fix_swap", old=f"{owner}.inference_mode()",
                            new=f"{owner}.no_grad()", lineno=call.lineno))


def clone_fix(ctx: RuleContext, tree: ast.Module, name: str) -> Optional[Fix]:
    """`x = x.clone()` before the failing statement: a normal tensor with the same values."""
    stmt = enclosing_statement(tree, ctx.record.error_lineno)
    if stmt is None or not alone_on_lines(ctx, stmt):
        return None
    line = ctx.record.source_line(stmt.lineno)
    code = f"{name} = {name}.clone()"
    return make_fix(ctx.record.source, [insert_line_before(ctx.record.source, stmt.lineno, indent_of(line) + code)],
                    ctx.say("backward.inference.fix_clone", code=code, lineno=stmt.lineno))
