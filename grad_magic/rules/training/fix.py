"""The training family's fixes: small text edits on the cell, from the cause the culprit found.

- graph-kept-alive: `.item()` / `.detach()` after what is accumulated;
- frozen-by-no-grad: the forward taken out of its grad-off block (and `loss.requires_grad = True` lines
  dropped: with the graph back, torch refuses them), or the missing `<loss>.backward()` before the step;
- train-eval-mode: `<model>.train()` / `<model>.eval()` inserted before the training or the evaluation; before
  the loop's forward pass in the cell of the frame that held the model, when the steps found it in eval() mode.
May touch: the cell's text and ast only; a description comes from the catalog (ctx.say).
"""
from __future__ import annotations

import ast
from typing import List, Optional, Sequence

from ... import catalog
from ...cell import indent_of, line_offsets, node_span, segment, split_lines
from ...edits import insert_line_before, make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from ..kit import appended, callee_name, starts_line, text_of
from .culprit_frozen import NothingTrained
from .culprit_frozen_steps import FrozenElsewhere
from .culprit_graph import GrowingGraph, KeptGraph
from .culprit_mode import ModeSlip
from .culprit_mode_steps import EvalSteps, fix_spot_starts_line

PLAIN_CALLS = frozenset({"item", "tolist", "float", "int"})  # a number, not a tensor of the graph


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


def grown_fix(grown: Sequence[GrowingGraph]) -> Optional[Fix]:
    """The same, in the cell of the helper whose locals grew a graph at each step; a dict of tensors kept
    as `{k: v.detach() for k, v in d.items()}`. None unless each one can take it."""
    view = grown[0].view
    src = view.record.source
    edits = []
    for g in grown:
        operand = g.acc.operand
        start, end = node_span(src, operand)
        if g.how == "dict" and isinstance(operand, ast.Dict):  # `{'loss': loss, ...}`: each value detached
            edits += [e for v in operand.values for e in appended(src, v, ".detach()")]
            continue
        edit = TextEdit(start, end, f"{{k: v.detach() for k, v in {src[start:end]}.items()}}") if g.how == "dict" \
            else operand_edit(src, operand, g.how) if g.how else None
        if edit is None:
            return None
        edits.append(edit)
    parts = [catalog.message("training.graph.fix_part_dict" if g.how == "dict" else "training.graph.fix_part",
                             view.language, how=g.how, operand=text_of(src, g.acc.operand), lineno=g.acc.stmt.lineno)
             for g in grown]
    return make_fix(src, edits, view.say("training.graph.fix", parts=catalog.message(
        "training.joiner", view.language).join(parts)))


# -- frozen-by-no-grad --

def frozen_fix(ctx: RuleContext, tree: ast.Module, cause: NothingTrained) -> Optional[Fix]:
    src = ctx.record.source
    if cause.grad_off is not None:
        edits = dedent_with(src, cause.grad_off) + requires_grad_hacks(src, tree)
        return make_fix(src, edits, ctx.say("training.frozen.fix_dedent", lineno=cause.grad_off.lineno))
    if cause.kind == "cleared" and cause.cleared is not None:
        backward, zero = cause.cleared
        if not (starts_line(src, backward) and _alone_on_line(src, zero)) or zero.end_lineno != zero.lineno:
            return None
        offs, lines = line_offsets(src), split_lines(src)
        moved = f"{indent_of(lines[backward.lineno - 1])}{lines[zero.lineno - 1].strip()}"
        return make_fix(src, [insert_line_before(src, backward.lineno, moved),
                              TextEdit(offs[zero.lineno - 1], offs[zero.lineno], "")],
                        ctx.say("training.frozen.fix_cleared", lineno=zero.lineno, backward=backward.lineno))
    if cause.step is not None and cause.missing is not None:
        lineno = cause.step.lineno
        call = f"{cause.missing}.backward()"
        line = split_lines(src)[lineno - 1]
        return make_fix(src, [insert_line_before(src, lineno, f"{indent_of(line)}{call}")],
                        ctx.say("training.frozen.fix_backward", call=call, lineno=lineno))
    return None


def decorator_fix(view: RuleContext, lost: FrozenElsewhere) -> Optional[Fix]:
    """The grad-off decorator's line deleted (and `x.requires_grad = True` lines of the function, which torch
    refuses once the graph is back)."""
    src, decorator = view.record.source, lost.decorator
    line = split_lines(src)[decorator.lineno - 1]
    if line.strip() != "@" + (segment(src, decorator) or "\0") or decorator.end_lineno != decorator.lineno:
        return None
    offs = line_offsets(src)
    edits = [TextEdit(offs[decorator.lineno - 1], offs[decorator.lineno], "")]
    edits += requires_grad_hacks(src, lost.function)
    return make_fix(src, edits, view.say("training.frozen.fix_decorator", decorator=line.strip(),
                                          lineno=decorator.lineno))


def dedent_fix(view: RuleContext, lost: FrozenElsewhere) -> Optional[Fix]:
    """The helper's work taken out of its grad-off `with` block (in the helper's cell)."""
    src = view.record.source
    edits = dedent_with(src, lost.block)
    if not edits:
        return None
    return make_fix(src, edits + requires_grad_hacks(src, lost.function),
                    view.say("training.frozen.fix_dedent", lineno=lost.block.lineno))


def stack_fix(view: RuleContext, lost: FrozenElsewhere) -> Optional[Fix]:
    """`torch.tensor([...], requires_grad=True)` -> `torch.stack([...])`: the losses kept in the graph. Only for a
    list of tensors (no `.item()`, no number) given alone, `requires_grad=True` its only keyword."""
    src = view.record.source
    edits = []
    for call in lost.rebuilt:
        items = call.args[0]
        elts = [items.elt] if isinstance(items, ast.ListComp) else getattr(items, "elts", None)
        if len(call.args) != 1 or len(call.keywords) != 1 or not elts or any(
                isinstance(e, ast.Constant) or isinstance(e, ast.Call) and callee_name(e) in PLAIN_CALLS
                for e in elts):
            return None
        start, end = node_span(src, call)
        edits.append(TextEdit(start, end, f"{text_of(src, call.func.value)}.stack({text_of(src, items)})"))
    lines = sorted({c.lineno for c in lost.rebuilt})
    return make_fix(src, edits, view.say("training.frozen.fix_stack", lineno=lines[0]))


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


def train_before_forward(steps: EvalSteps) -> Optional[Fix]:
    """`<model>.train()` on its own line before the loop's forward pass, in the cell of the frame that held the
    model at the steps: each pass trains in train() mode, whatever the pass before it called."""
    if not fix_spot_starts_line(steps):
        return None
    view, anchor = steps.view, steps.anchor
    src = view.record.source
    call = f"{steps.path}.train()"
    line = split_lines(src)[anchor.lineno - 1]
    return make_fix(src, [insert_line_before(src, anchor.lineno, f"{indent_of(line)}{call}")],
                    view.say("training.mode.fix_train", call=call, lineno=anchor.lineno))
