"""`batch-size-mismatch`: a loss whose input and target disagree on the batch size. Fixes: the target flattened,
or a `view(-1, N)` that keeps the batch (with the Linear that takes N)."""
from __future__ import annotations

import ast
import re
from typing import List, Optional, Tuple

from ...facts import shape_text
from ...cell import cell_tree, node_span
from ...edits import make_fix
from ...model import ERROR, Diagnosis, Fix, TextEdit
from ..context import RuleContext
from ..registry import rule
from .common import fold, joined, linear_calls, text_of
from .loss import LossCall, find_loss, loss_facts, named, where_assigned


# every version since torch 1.0 (Python, then C++ TORCH_CHECK_VALUE): a ValueError
_BATCH = re.compile(r"Expected input batch_size \((?P<input>\d+)\) to match target batch_size \((?P<target>\d+)\)")


# -- batch-size-mismatch --

BATCH = "batch-size-mismatch"


@rule(BATCH, matches=("Expected input batch_size (16) to match target batch_size (4).",),
      fix="the target flattened like the input (`y.reshape(-1)`), or a `view(-1, N)` that folded features "
          "into the batch replaced by `view(x.size(0), -1)`")
def batch_size_mismatch(ctx: RuleContext) -> Optional[Diagnosis]:
    """A classification loss whose input and target have different batch sizes."""
    if not isinstance(ctx.exception, Exception):
        return None
    m = _BATCH.search(ctx.error_message)
    if m is None:
        return None
    n_in, n_target = int(m["input"]), int(m["target"])
    tree = cell_tree(ctx.record.source)
    loss = find_loss(ctx, tree)
    lineno = ctx.record.error_lineno
    shown_in = named(ctx, loss.input_name, "shapes.the_input")
    shown_target = named(ctx, loss.target_name, "shapes.the_target")
    in_shape = loss.input_shot.shape if loss.input_shot is not None else ()
    target_shape = loss.target_shot.shape if loss.target_shot is not None else ()
    what = ctx.say("shapes.batch.what", input=shown_in, target=shown_target, n_in=n_in, n_target=n_target,
                   in_shape=shape_text(in_shape) if in_shape else "?", lineno=lineno or "?",
                   target_shape=shape_text(target_shape) if target_shape else "?")
    cause, fix, extra = _batch_cause(ctx, tree, loss, n_in, n_target, shown_in, shown_target)
    origins, origin_lines = where_assigned(ctx, tree, loss)
    why = [ctx.say("shapes.batch.why"), cause, *origins]
    if fix is None:
        why.append(ctx.say("shapes.batch.no_fix"))
    return ctx.diagnosis(
        BATCH, ERROR, title=ctx.say("shapes.batch.title", input=shown_in, target=shown_target, n_in=n_in,
                                    n_target=n_target),
        summary=ctx.say("shapes.batch.summary"), what=what, why=joined(ctx, why), where=ctx.where(lineno),
        lines=sorted({lineno, *origin_lines, *extra} - {None}),
        names=[n for n in (loss.input_name, loss.target_name) if n], tensors=loss_facts(loss), fix=fix)


def _batch_cause(ctx: RuleContext, tree: Optional[ast.Module], loss: LossCall, n_in: int, n_target: int,
                 shown_in: str, shown_target: str) -> Tuple[str, Optional[Fix], List[int]]:
    """(the sentence saying why, the fix or None, lines to show)."""
    src = ctx.record.source
    in_shape = loss.input_shot.shape if loss.input_shot is not None else ()
    t_shape = loss.target_shot.shape if loss.target_shot is not None else ()
    numel = 1
    for d in t_shape:
        numel *= d
    if len(t_shape) >= 2 and numel == n_in:  # logits.view(-1, vocab) against targets of shape (B, T)
        said = ctx.say("shapes.batch.target_not_flat", target=shown_target, shape=shape_text(t_shape),
                       n_in=n_in, input=shown_in)
        if loss.target_node is None:
            return said, None, []
        start, end = node_span(src, loss.target_node)
        text = _postfix(src[start:end], loss.target_node, ".reshape(-1)")
        description = ctx.say("shapes.batch.fix_target", code=text, lineno=loss.target_node.lineno)
        return said, make_fix(src, [TextEdit(start, end, text)], description), []
    if len(in_shape) == 3 and len(t_shape) == 1 and in_shape[0] * in_shape[1] == n_target:
        said = ctx.say("shapes.batch.input_not_flat", input=shown_in, shape=shape_text(in_shape),
                       n_target=n_target)
        node = loss.input_node
        if not isinstance(node, ast.Name):
            return said, None, []
        start, end = node_span(src, node)
        text = f"{node.id}.reshape(-1, {node.id}.size(-1))"
        description = ctx.say("shapes.batch.fix_input", code=text, lineno=node.lineno)
        return said, make_fix(src, [TextEdit(start, end, text)], description), []
    return _view_cause(ctx, tree, n_in, n_target) or (
        ctx.say("shapes.batch.unknown", input=shown_in, target=shown_target), None, [])


def _postfix(text: str, node: ast.AST, suffix: str) -> str:
    simple = isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
    return f"{text}{suffix}" if simple else f"({text}){suffix}"


def _view_cause(ctx: RuleContext, tree: Optional[ast.Module], n_in: int,
                n_target: int) -> Optional[Tuple[str, Optional[Fix], List[int]]]:
    """A single `x.view(-1, N)` in the cell whose N makes the numbers come out: it folded features into the
    batch. The fix keeps the batch (`x.view(x.size(0), -1)`) and, when one Linear takes N, gives it the real
    per-sample count."""
    if tree is None:
        return None
    views = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in ("view", "reshape") and len(n.args) == 2 and not n.keywords
             and fold(n.args[0]) == -1 and fold(n.args[1])]
    if len(views) != 1:
        return None
    view = views[0]
    n = fold(view.args[1]) or 0
    if n_target <= 0 or (n_in * n) % n_target:
        return None
    per_sample = n_in * n // n_target
    if per_sample == n:
        return None
    src = ctx.record.source
    code = text_of(ctx, view)
    said = ctx.say("shapes.batch.view", code=code, lineno=view.lineno, n=n, n_in=n_in, n_target=n_target,
                   per_sample=per_sample)
    receiver = view.func.value
    start, end = node_span(src, view.args[0])
    _, end = node_span(src, view.args[1])
    if isinstance(receiver, (ast.Name, ast.Attribute)) and text_of(ctx, receiver):
        edits = [TextEdit(start, end, f"{text_of(ctx, receiver)}.size(0), -1")]
    else:
        return said, None, [view.lineno]
    ctors = [c for c in linear_calls(ctx, tree) if c.in_features == n]
    if len(ctors) > 1:
        return said, None, [view.lineno]
    lines = [view.lineno]
    description = ctx.say("shapes.batch.fix_view", lineno=view.lineno, receiver=text_of(ctx, receiver))
    if ctors:
        s, e = node_span(src, ctors[0].in_node)
        edits.append(TextEdit(s, e, str(per_sample)))
        lines.append(ctors[0].call.lineno)
        description += ctx.say("shapes.batch.fix_view_linear", lineno=ctors[0].call.lineno, old=src[s:e],
                               per_sample=per_sample)
    return said, make_fix(src, edits, description), lines
