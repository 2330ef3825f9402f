"""The shapes family's fixes, one spot in the cell each: a flatten added before a Linear, a Linear's literal
`in_features` / `out_features` set, a loss's target flattened or shifted by one, or a `view(-1, N)` that
keeps the batch (with the Linear that takes N).

Functions of the cause (culprit*.py) and the cell text; only a fix's description is worded (catalog
`shapes.*.fix_*`). A function that may find no fix also returns the catalog key that says why.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from ...cell import cell_tree, enclosing_statement, indent_of, node_span
from ...edits import insert_line_before, make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from ..kit import parenthesised, quote
from .culprit import LossArgs, fold
from .culprit_batch import BatchCause
from .culprit_linear import LinearInput
from .culprit_target import Classes

FixOrReason = Tuple[Optional[Fix], str]  # the fix, and the catalog key saying why there is none


# -- shape-mismatch --

def flatten_fix(ctx: RuleContext, given: LinearInput, layer_text: str) -> FixOrReason:
    """`x = x.flatten(1)` before the Linear's call (or `(...).flatten(1)` on its argument), else an
    `nn.Flatten()` before the Linear in its nn.Sequential."""
    src, call, arg = ctx.record.source, given.call, given.arg
    if arg is not None and call is not None:
        tree = cell_tree(src)
        stmt = enclosing_statement(tree, call.lineno) if tree is not None else None
        if isinstance(arg, ast.Name) and isinstance(stmt, (ast.Assign, ast.Return, ast.Expr)) \
                and stmt.lineno == call.lineno:
            text = f"{arg.id} = {arg.id}.flatten(1)"
            edit = insert_line_before(src, stmt.lineno, indent_of(ctx.record.source_line(stmt.lineno)) + text)
        else:
            start, end = node_span(src, arg)
            text = f"{parenthesised(src[start:end], arg)}.flatten(1)"
            edit = TextEdit(start, end, text)
        description = ctx.say("shapes.linear.fix_flatten", code=text, layer=layer_text, lineno=call.lineno)
        return make_fix(src, [edit], description), "shapes.linear.no_fix_parse"
    if given.flatten_prefix is not None:
        return _sequential_flatten(ctx, given), "shapes.linear.no_fix_parse"
    return None, "shapes.linear.no_fix_flatten_elsewhere"


def _sequential_flatten(ctx: RuleContext, given: LinearInput) -> Optional[Fix]:
    src, call, prefix = ctx.record.source, given.ctors[0].call, given.flatten_prefix
    start, _ = node_span(src, call)
    before = indent_of(ctx.record.source_line(call.lineno))
    if src[start - len(before) - 1:start] in ("\n" + before, "\r" + before):  # on a line of its own
        edit = insert_line_before(src, call.lineno, f"{before}{prefix}Flatten(),")
    else:
        edit = TextEdit(start, start, f"{prefix}Flatten(), ")
    return make_fix(src, [edit], ctx.say("shapes.linear.fix_flatten_sequential", code=f"{prefix}Flatten()",
                                         lineno=call.lineno))


def in_features_fix(ctx: RuleContext, given: LinearInput, layer_text: str) -> FixOrReason:
    """The one `nn.Linear(...)` call's in_features set to the input's feature count: the number, or, for an
    expression that gave a divisor of it (`hidden_units` = 10 for 490 features), that expression times the
    rest (`hidden_units * 49`). In the cell of that call (`given.ctor_at` when another)."""
    if given.flat is not None:
        return None, "shapes.linear.no_fix_both"
    if len(given.ctors) != 1 or given.ctors[0].in_node is None:
        return None, "shapes.linear.no_fix_ctor" if not given.ctors else "shapes.linear.no_fix_several"
    at = given.ctor_at or ctx
    src, node = at.record.source, given.ctors[0].in_node
    start, end = node_span(src, node)
    expected, got = given.layer.in_features, given.features
    new = str(got)
    if fold(node) is None and expected > 1 and got % expected == 0:
        new = f"{parenthesised(src[start:end], node)} * {got // expected}"
    description = at.say("shapes.linear.fix_in_features" if new == str(got) else "shapes.linear.fix_in_features_expr",
                         layer=layer_text, got=got, new=new, old=src[start:end], lineno=node.lineno)
    return make_fix(src, [TextEdit(start, end, new)], description), "shapes.linear.no_fix_parse"


# -- batch-size-mismatch --

def batch_fix(ctx: RuleContext, loss: LossArgs, cause: BatchCause) -> Optional[Fix]:
    src = ctx.record.source
    if cause.how == "target_not_flat" and loss.target_node is not None:
        node = loss.target_node
        start, end = node_span(src, node)
        text = f"{parenthesised(src[start:end], node)}.reshape(-1)"
        return make_fix(src, [TextEdit(start, end, text)], ctx.say("shapes.batch.fix_target", code=text,
                                                                   lineno=node.lineno))
    if cause.how == "input_not_flat" and isinstance(loss.input_node, ast.Name):
        node = loss.input_node
        start, end = node_span(src, node)
        text = f"{node.id}.reshape(-1, {node.id}.size(-1))"
        return make_fix(src, [TextEdit(start, end, text)], ctx.say("shapes.batch.fix_input", code=text,
                                                                   lineno=node.lineno))
    if cause.how == "view" and cause.receiver and len(cause.ctors) == 1:  # NB: the Linear after it takes N too
        return _view_fix(cause.at or ctx, cause)
    return None


def _view_fix(ctx: RuleContext, cause: BatchCause) -> Optional[Fix]:
    """`x.view(-1, N)` -> `x.view(x.size(0), -1)`, and the one Linear taking N given the real per-sample
    count."""
    src, view = ctx.record.source, cause.view
    start, _ = node_span(src, view.args[0])
    _, end = node_span(src, view.args[1])
    edits: List[TextEdit] = [TextEdit(start, end, f"{cause.receiver}.size(0), -1")]
    description = ctx.say("shapes.batch.fix_view", lineno=view.lineno, receiver=cause.receiver)
    if cause.ctors:
        s, e = node_span(src, cause.ctors[0].in_node)
        edits.append(TextEdit(s, e, str(cause.per_sample)))
        description += ctx.say("shapes.batch.fix_view_linear", lineno=cause.ctors[0].call.lineno, old=src[s:e],
                               per_sample=cause.per_sample)
    return make_fix(src, edits, description)


# -- target-out-of-range --

def target_fix(ctx: RuleContext, loss: LossArgs, classes: Classes, label: Optional[int]) -> FixOrReason:
    """Labels 1..C shifted by one, or the classifier's literal out_features set to the labels' count."""
    labels, count = classes.labels, classes.count
    if labels is None or labels.count is None or count is None:
        return None, "shapes.target.no_fix_range" if label is None or label >= 0 else ""
    if labels.low == 1 and labels.count == count + 1:
        return _shift(ctx, loss), "shapes.target.no_fix_parse"
    if labels.low not in (0, None) or labels.count <= count or label is not None and label >= labels.count:
        return None, "shapes.target.no_fix_range"
    if len(classes.ctors) != 1 or classes.ctors[0].out_node is None:
        return None, "shapes.target.no_fix_ctor"
    at = classes.ctor_at or ctx
    src, node = at.record.source, classes.ctors[0].out_node
    start, end = node_span(src, node)
    description = at.say("shapes.target.fix_out_features",
                          layer=quote(classes.layer) or "nn.Linear",
                          count=f"`{labels.expr}`" if labels.expr else labels.count, old=src[start:end],
                          lineno=node.lineno)
    return make_fix(src, [TextEdit(start, end, labels.expr or str(labels.count))], description), \
        "shapes.target.no_fix_parse"


def _shift(ctx: RuleContext, loss: LossArgs) -> Optional[Fix]:
    """Labels 1..C for C outputs: `y - 1` where the loss takes them."""
    node = loss.target_node
    if node is None:
        return None
    src = ctx.record.source
    start, end = node_span(src, node)
    text = f"{parenthesised(src[start:end], node)} - 1"
    return make_fix(src, [TextEdit(start, end, text)], ctx.say("shapes.target.fix_shift", code=text,
                                                               lineno=node.lineno))
