"""The fix of missing-requires-grad when every parameter of the model is frozen by a helper of the user's: keep
the head (the model's last child) trainable, freeze the rest as the helper meant to --

- `freeze(model, ["backbone", "head"])`: the names listed cover the last child: its name is dropped from the
  list (in the cell that calls the helper);
- `for p in net.parameters(): p.requires_grad = False` (or `net.requires_grad_(False)`) in the helper, on a model
  of exactly two children (a backbone and a head): the first child is frozen instead (`net.backbone...`).

Pure: the helper's def, the call, the model's children names -> minimal edits checked by `make_fix`. Anything
else: no fix (the card says in words what to unfreeze).
"""
from __future__ import annotations

import ast
from typing import List, Optional, Sequence

from ...cell import node_span
from ...edits import make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from ..kit import callee_name, is_false, spans


def listed_fix(ctx: RuleContext, call: ast.Call, children: Sequence[str]) -> Optional[Fix]:
    """`freeze(model, ["backbone", "head"])` -> `freeze(model, ["backbone"])` when the list names the last child."""
    src = ctx.record.source
    lists = [a for a in call.args if isinstance(a, (ast.List, ast.Tuple)) and len(a.elts) >= 2 and all(
        isinstance(e, ast.Constant) and e.value in children for e in a.elts)]
    if len(lists) != 1 or len(children) < 2:
        return None
    elts = lists[0].elts
    last = [i for i, e in enumerate(elts) if e.value == children[-1]]  # type: ignore[attr-defined]
    if len(last) != 1:
        return None
    i = last[0]
    start = node_span(src, elts[i - 1])[1] if i == len(elts) - 1 else node_span(src, elts[i])[0]
    end = node_span(src, elts[i])[1] if i == len(elts) - 1 else node_span(src, elts[i + 1])[0]
    return make_fix(src, [TextEdit(start, end, "")], ctx.say("missing_rg.fix_frozen_listed", head=children[-1],
                                                             lineno=call.lineno))


def helper_fix(ctx: RuleContext, fn: ast.AST, param: str, children: Sequence[str]) -> Optional[Fix]:
    """In the helper `fn`: `param.parameters()` of its freeze loop, or `param.requires_grad_(False)` -> the first
    of the model's two children (the head, its last, stays trainable)."""
    if len(children) != 2 or not children[0].isidentifier():
        return None
    src = ctx.record.source
    targets: List[ast.AST] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.For) and _freezes_each(node) and isinstance(node.iter, ast.Call) and \
                callee_name(node.iter) in ("parameters", "named_parameters"):
            targets.append(node.iter.func.value)  # type: ignore[attr-defined]
        elif isinstance(node, ast.Call) and callee_name(node) == "requires_grad_" and node.args and \
                is_false(node.args[0]):
            targets.append(node.func.value)  # type: ignore[attr-defined]
    if len(targets) != 1 or not (isinstance(targets[0], ast.Name) and targets[0].id == param):
        return None
    _, end = node_span(src, targets[0])
    return make_fix(src, [TextEdit(end, end, f".{children[0]}")], ctx.say(
        "missing_rg.fix_frozen_helper", name=f"{param}.{children[0]}", head=f"{param}.{children[1]}",
        lineno=targets[0].lineno))


def _freezes_each(loop: ast.For) -> bool:
    """`for p in ...: p.requires_grad = False` (the loop variable's flag turned off in its body)."""
    var = loop.target.elts[-1] if isinstance(loop.target, ast.Tuple) and loop.target.elts else loop.target
    return isinstance(var, ast.Name) and any(
        isinstance(s, ast.Assign) and is_false(s.value) and any(
            isinstance(t, ast.Attribute) and t.attr == "requires_grad" and isinstance(t.value, ast.Name)
            and t.value.id == var.id for t in s.targets) for s in ast.walk(loop) if spans(loop, s.lineno))
