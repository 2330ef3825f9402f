"""The training family's fixes: small text edits on the cell, from the cause the culprit found.

- graph-kept-alive: `.item()` / `.detach()` after what is accumulated;
- frozen-by-no-grad: the forward taken out of its grad-off block (and `loss.requires_grad = True` lines
  dropped: with the graph back, torch refuses them), or the missing `<loss>.backward()` before the step;
- train-eval-mode: `<model>.train()` / `<model>.eval()` inserted before the training or the evaluation.
May touch: the cell's text and ast only; a description comes from the catalog (ctx.say).
"""
from __future__ import annotations

import ast
from typing import List, Optional, Sequence

from ...cell import indent_of, line_offsets, node_span, segment, split_lines
from ...edits import insert_line_before, make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from ..kit import starts_line
from .culprit_frozen import NothingTrained
from .culprit_graph import KeptGraph
from .culprit_mode import ModeSlip


# -- graph-kept-alive --

def graph_fix(ctx: RuleContext, kept: Sequence[KeptGraph]) -> Optional[Fix]:
    """`.item()` / `.detach()` on every accumulated operand; None unless each one can take it."""
    src = ctx.record.source
    edits = [operand_edit(src, k.acc.operand, k.how) for k in kept]
    if any(e is None for e in edits):
        return None
    parts = [ctx.say("training.graph.fix_part", how=k.how, lineno=k.acc.stmt.lineno) for k in kept]
    return make_fix(src, edits, ctx.say("training.graph.fix", parts=ctx.say("training.joiner").join(parts)))


def operand_edit(src: str, operand: ast.expr, how: str) -> Optional[TextEdit]:
    start, end = node_span(src, operand)
    if isinstance(operand, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)):
        return TextEdit(end, end, how)
    if isinstance(operand, ast.BinOp):
        return TextEdit(start, end, f"({src[start:end]}){how}")
    return None


# -- frozen-by-no-grad --

def frozen_fix(ctx: RuleContext, tree: ast.Module, cause: NothingTrained) -> Optional[Fix]:
    src = ctx.record.source
    if cause.grad_off is not None:
        edits = dedent_with(src, cause.grad_off) + requires_grad_hacks(src, tree)
        return make_fix(src, edits, ctx.say("training.frozen.fix_dedent", lineno=cause.grad_off.lineno))
    if cause.step is not None and cause.missing is not None:
        lineno = cause.step.lineno
        call = f"{cause.missing}.backward()"
        line = split_lines(src)[lineno - 1]
        return make_fix(src, [insert_line_before(src, lineno, f"{indent_of(line)}{call}")],
                        ctx.say("training.frozen.fix_backward", call=call, lineno=lineno))
    return None


def dedent_with(src: str, block: ast.stmt) -> List[TextEdit]:
    """Take the body out of a one-item `with` block: drop the header line, dedent the body one level."""
    if len(block.items) != 1 or not starts_line(src, block):
        return []
    lines, offs = split_lines(src), line_offsets(src)
    first = block.body[0]
    if first.lineno == block.lineno:  # `with torch.no_grad(): out = model(x)`
        start, _ = node_span(src, block)
        body_start, _ = node_span(src, first)
        return [TextEdit(start, body_start, "")] if block.end_lineno == block.lineno else []
    indent = indent_of(lines[block.lineno - 1])
    step = indent_of(lines[first.lineno - 1])[len(indent):]
    if not step:
        return []
    edits = [TextEdit(offs[block.lineno - 1], offs[first.lineno - 1], "")]
    for n in range(first.lineno, block.end_lineno + 1):
        if lines[n - 1].strip():
            if not lines[n - 1].startswith(indent + step):
                return []  # NB: a continuation line or a string indented otherwise: leave it to the user
            at = offs[n - 1] + len(indent)
            edits.append(TextEdit(at, at + len(step), ""))
    return edits


def requires_grad_hacks(src: str, tree: ast.Module) -> List[TextEdit]:
    """Delete `loss.requires_grad = True` lines: with the graph back, torch refuses them on a non-leaf."""
    offs = line_offsets(src)
    edits = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Attribute) \
                and n.targets[0].attr == "requires_grad" and n.lineno == n.end_lineno \
                and starts_line(src, n) and _alone_on_line(src, n):
            edits.append(TextEdit(offs[n.lineno - 1], offs[n.lineno], ""))
    return edits


def _alone_on_line(src: str, node: ast.stmt) -> bool:
    line = split_lines(src)[node.lineno - 1].strip()
    text = segment(src, node) or "\0"
    rest = line[len(text):].strip()
    return line.startswith(text) and (not rest or rest.startswith("#"))


# -- train-eval-mode --

def mode_fix(ctx: RuleContext, slip: ModeSlip) -> Optional[Fix]:
    """`<model>.train()` (or `.eval()`) on its own line before `slip.anchor`."""
    src = ctx.record.source
    call = f"{slip.name}.{'eval' if slip.which == 'eval' else 'train'}()"
    line = split_lines(src)[slip.anchor - 1]
    return make_fix(src, [insert_line_before(src, slip.anchor, f"{indent_of(line)}{call}")],
                    ctx.say(f"training.mode.fix_{slip.which}", call=call, lineno=slip.anchor))
