"""Rules of the training family (issue 7): silent training-loop bugs, seen after the cell ran.

- graph-kept-alive: a loss with a grad_fn summed or appended across iterations keeps every graph alive.
- frozen-by-no-grad: an optimizer stepped, but none of its parameters ever had a gradient.
- train-eval-mode: training with the model in eval() mode, or evaluating it in train() mode.

Reads the cell's syntax, the optimizer steps the capture recorded and metadata of the namespace
(grad_fn, requires_grad, shapes, a module's `training` flag): never tensor data, never user code.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
import re
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import torch

from ..cell import cell_tree, indent_of, line_offsets, node_span, split_lines, segment
from ..edits import insert_line_before, make_fix
from ..model import WARNING, Diagnosis, Fix, TextEdit
from .context import RuleContext
from .registry import rule


# ---------------------------------------------------------------- graph-kept-alive

@rule("graph-kept-alive", severity=WARNING, matches=(
    "silent: a tensor with a grad_fn accumulated across loop iterations (`total += loss`, "
    "`losses.append(loss)`) and never backpropagated",
), fix="`.item()` (a scalar) or `.detach()` on what is accumulated")
def graph_kept_alive(ctx: RuleContext) -> Optional[Diagnosis]:
    """A loss with a grad_fn accumulated across loop iterations keeps every iteration's graph alive."""
    src = ctx.record.source
    if "+" not in src and "append" not in src:
        return None
    tree = cell_tree(src)
    if tree is None:
        return None
    found = [a for a in accumulations(tree) if _keeps_graph(ctx, tree, a)]
    if not found:
        return None
    first = found[0]
    backwarded = backward_receivers(tree)
    edits, parts = [], []
    for acc in found:
        how = _how(ctx, tree, acc)
        edit = _operand_edit(src, acc.operand, how)
        if edit is not None:
            edits.append(edit)
            parts.append(ctx.say("training.graph.fix_part", how=how, lineno=acc.stmt.lineno))
    fix = None
    if len(edits) == len(found):
        fix = make_fix(src, edits, ctx.say("training.graph.fix",
                                           parts=ctx.say("training.joiner").join(parts)))
    value = ctx.namespace.get(first.name)
    kind = "list" if isinstance(value, list) else "sum"
    names = list(dict.fromkeys(a.name for a in found))
    why = [ctx.say("training.graph.why")]
    if not (names_in(first.operand) & backwarded):
        why.append(ctx.say(f"training.graph.why_no_backward_{kind}", name=first.name))
    if fix is None:
        why.append(ctx.say("training.graph.why_no_fix"))
    sep = "" if ctx.language == "zh" else " "
    return ctx.diagnosis(
        "graph-kept-alive", WARNING,
        title=ctx.say("training.graph.title", name=first.name),
        summary=ctx.say(f"training.graph.summary_{kind}", name=first.name, lineno=first.stmt.lineno,
                        count=len(value) if isinstance(value, list) else 0,
                        operand=segment(src, first.operand) or "?"),
        what=ctx.say(f"training.graph.what_{kind}", name=first.name, loop=first.loop.lineno,
                     grad_fn=_grad_fn_name(value)),
        why=sep.join(why), where=ctx.where(first.stmt.lineno),
        lines=sorted({a.stmt.lineno for a in found}), names=names, fix=fix)


def _keeps_graph(ctx: RuleContext, tree: ast.Module, acc: "Accumulation") -> bool:
    value = ctx.namespace.get(acc.name)
    if isinstance(value, list):
        items = [value[0], value[-1]] if value else []
        if not items or not all(_has_grad_fn(t) for t in items):
            return False
    elif not _has_grad_fn(value):
        return False
    # NB: summed on purpose to backpropagate through the sum (an RNN over time steps) is no bug
    return acc.name not in backward_receivers(tree)


def _has_grad_fn(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.grad_fn is not None


def _grad_fn_name(value: Any) -> str:
    t = value[-1] if isinstance(value, list) and value else value
    return type(t.grad_fn).__name__ if _has_grad_fn(t) else "?"


def _how(ctx: RuleContext, tree: ast.Module, acc: "Accumulation") -> str:
    """`.item()` for one number, unless the cell later uses the accumulator as a tensor; else `.detach()`."""
    value = ctx.namespace.get(acc.name)
    t = value[-1] if isinstance(value, list) else value
    if t.numel() != 1 or used_as_tensor(tree, acc.name):
        return ".detach()"
    return ".item()"


def _operand_edit(src: str, operand: ast.expr, how: str) -> Optional[TextEdit]:
    start, end = node_span(src, operand)
    if isinstance(operand, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)):
        return TextEdit(end, end, how)
    if isinstance(operand, ast.BinOp):
        return TextEdit(start, end, f"({src[start:end]}){how}")
    return None


# ---------------------------------------------------------------- frozen-by-no-grad

_NEEDS_GRAD_ERROR = re.compile(r"does not require grad and does not have a grad_fn")


@rule("frozen-by-no-grad", severity=WARNING, matches=(
    "silent: every optimizer.step() of the cell found no parameter with a .grad",
), fix="the forward moved out of `with torch.no_grad():`, or the missing `loss.backward()` added")
def frozen_by_no_grad(ctx: RuleContext) -> Optional[Diagnosis]:
    """An optimizer stepped, but none of its parameters ever got a gradient: nothing was trained."""
    steps = ctx.record.steps
    if not steps or any(s.params_with_grad for s in steps):
        return None
    if ctx.exception is not None and _NEEDS_GRAD_ERROR.search(ctx.error_message[:10_000]):
        return None  # NB: the error card (missing-requires-grad) already tells this story
    src = ctx.record.source
    tree = cell_tree(src)
    step = steps[0]
    opt = step.optimizer() if step.optimizer is not None else None
    label = (ctx.names.name_for(opt) if opt is not None else None) or step.optimizer_class
    if tree is not None and _model_re_created(ctx, tree, opt):
        return None  # NB: optimizer-not-on-model tells this story
    if tree is None:
        cause, fix, lines = "other", None, [step.lineno]
    else:
        cause, fix, lines = _frozen_cause(ctx, tree, step.lineno)
    lines = sorted({n for n in lines if n})
    why = [ctx.say(f"training.frozen.why_{cause}", optimizer=label, **_cause_params(ctx, tree))]
    if cause == "no_grad" and tree is not None:
        if not calls_backward(tree):
            why.append(ctx.say("training.frozen.why_no_backward", optimizer=label))
        elif "requires_grad" in src:
            why.append(ctx.say("training.frozen.why_hack", **_cause_params(ctx, tree)))
    if fix is None:
        why.append(ctx.say("training.frozen.why_no_fix"))
    return ctx.diagnosis(
        "frozen-by-no-grad", WARNING, title=ctx.say("training.frozen.title", optimizer=label),
        summary=ctx.say("training.frozen.summary", optimizer=label, lineno=step.lineno, total=len(steps)),
        what=ctx.say("training.frozen.what", optimizer=label, cls=step.optimizer_class, total=len(steps)),
        why=("" if ctx.language == "zh" else " ").join(why), where=ctx.where(step.lineno), lines=lines,
        names=[label], fix=fix)


def _model_re_created(ctx: RuleContext, tree: ast.Module, opt: Any) -> bool:
    """The optimizer holds parameters no name holds, shaped like those of a model the cell uses."""
    params = [p for g in (getattr(opt, "param_groups", None) or ()) for p in g.get("params", ())]
    if not params or any(ctx.names.name_for(p) is not None for p in params):
        return False
    shapes = sorted(tuple(p.shape) for p in params)
    for _, module in cell_modules(tree, ctx.namespace):
        own = [p for _, m in _submodules("", module, set())
               for p in (m.__dict__.get("_parameters") or {}).values() if p is not None]
        if own and sorted(tuple(p.shape) for p in own) == shapes:
            return True
    return False


def _cause_params(ctx: RuleContext, tree: Optional[ast.Module]) -> Dict[str, object]:
    blocks = no_grad_blocks(tree) if tree is not None else []
    loss = backward_receiver_names(tree) if tree is not None else []
    return {"block": blocks[0].lineno if blocks else 0, "loss": loss[0] if loss else "loss"}


def _frozen_cause(ctx: RuleContext, tree: ast.Module, step_line: Optional[int]
                  ) -> Tuple[str, Optional[Fix], List[Optional[int]]]:
    """(cause, fix, lines): "no_grad", "no_backward", "detached" or "other"."""
    src = ctx.record.source
    blocks = no_grad_blocks(tree)
    has_backward = calls_backward(tree)
    if blocks:
        fix = None
        if len(blocks) == 1 and has_backward:
            edits = dedent_with(src, blocks[0]) + requires_grad_hacks(src, tree)
            fix = make_fix(src, edits, ctx.say("training.frozen.fix_dedent", lineno=blocks[0].lineno))
        return "no_grad", fix, [blocks[0].lineno, step_line]
    if not has_backward:
        stmt = step_statement(tree, step_line)
        loss = loss_before(tree, stmt, ctx.namespace) if stmt is not None else None
        fix = None
        if loss is not None:
            line = src.splitlines()[stmt.lineno - 1]
            fix = make_fix(src, [insert_line_before(src, stmt.lineno, f"{indent_of(line)}{loss}.backward()")],
                           ctx.say("training.frozen.fix_backward", call=f"{loss}.backward()",
                                   lineno=stmt.lineno))
        return "no_backward", fix, [step_line]
    detached = [n for n in backward_receiver_names(tree) if _is_cut_off(ctx.namespace.get(n))]
    if detached:
        return "detached", None, [step_line] + backward_lines(tree)
    return "other", None, [step_line]


def _is_cut_off(value: Any) -> bool:
    """A loss that requires grad but has no grad_fn: rebuilt as a leaf, so backward() stops at it."""
    return isinstance(value, torch.Tensor) and value.requires_grad and value.grad_fn is None


# ---------------------------------------------------------------- train-eval-mode

@rule("train-eval-mode", severity=WARNING, matches=(
    "silent: optimizer.step() on a model left in eval() mode that has Dropout/BatchNorm layers",
    "silent: an evaluation under torch.no_grad() with the model still in train() mode",
), fix="`<model>.train()` before the training loop, or `<model>.eval()` before the evaluation")
def train_eval_mode(ctx: RuleContext) -> Optional[Diagnosis]:
    """A model with Dropout/BatchNorm trained in eval() mode, or evaluated in train() mode."""
    src = ctx.record.source
    if ".eval" not in src and "no_grad" not in src and "inference_mode" not in src \
            and not ctx.record.steps:
        return None
    tree = cell_tree(src)
    if tree is None:
        return None
    if ctx.record.steps:
        return _trained_in_eval(ctx, tree)
    return _evaluated_in_train(ctx, tree)


def _trained_in_eval(ctx: RuleContext, tree: ast.Module) -> Optional[Diagnosis]:
    stepped = _stepped_params(ctx)
    step_lines = sorted({s.lineno for s in ctx.record.steps if s.lineno})
    if not step_lines:
        return None
    for name, module in cell_modules(tree, ctx.namespace):
        if module.__dict__.get("training", True) or not (parameter_ids(module) & stepped):
            continue
        layers = mode_layers(name, module, training=False, stepped=stepped)
        if not layers:
            continue
        spot = train_spot(ctx.record.source, tree, name, step_lines[0])
        if spot is None:
            continue  # NB: e.g. `model.eval()` after the loop: the loop may well have trained in train()
        anchor, inside, eval_line = spot
        src = ctx.record.source
        line = split_lines(src)[anchor - 1]
        key = "training.mode.fix_train_loop" if inside else "training.mode.fix_train"
        fix = make_fix(src, [insert_line_before(src, anchor, f"{indent_of(line)}{name}.train()")],
                       ctx.say(key, call=f"{name}.train()", lineno=anchor))
        return _mode_card(ctx, "train_loop" if inside else "train", name, layers, step_lines[0],
                          eval_line, fix, [eval_line, step_lines[0]])
    return None


def _evaluated_in_train(ctx: RuleContext, tree: ast.Module) -> Optional[Diagnosis]:
    if not looks_like_evaluation(tree):
        return None
    src = ctx.record.source
    for block in no_grad_blocks(tree):
        for name in called_names(block):
            module = ctx.namespace.get(name)
            if not isinstance(module, torch.nn.Module) or not module.__dict__.get("training", False):
                continue
            if mode_calls(tree, name):
                continue  # NB: `.train()`/`.eval()` in the cell: the mode is chosen on purpose (MC dropout)
            layers = mode_layers(name, module, training=True, stepped=None)
            if not layers or not starts_line(src, block):
                continue
            line = split_lines(src)[block.lineno - 1]
            fix = make_fix(src, [insert_line_before(src, block.lineno, f"{indent_of(line)}{name}.eval()")],
                           ctx.say("training.mode.fix_eval", call=f"{name}.eval()", lineno=block.lineno))
            return _mode_card(ctx, "eval", name, layers, block.lineno, None, fix, [block.lineno])
    return None


def _mode_card(ctx: RuleContext, which: str, name: str, layers: Sequence[str], lineno: int,
               eval_line: Optional[int], fix: Optional[Fix], lines: Sequence[Optional[int]]) -> Diagnosis:
    shown = ", ".join(layers[:4]) + (", …" if len(layers) > 4 else "")
    kind = "eval" if which == "eval" else "train"
    why = [ctx.say(f"training.mode.why_{kind}", name=name, layers=shown)]
    if which == "train":
        why.append(ctx.say("training.mode.why_eval_call", name=name, lineno=eval_line) if eval_line
                   else ctx.say("training.mode.why_came_in_eval", name=name))
    return ctx.diagnosis(
        "train-eval-mode", WARNING, title=ctx.say(f"training.mode.title_{kind}", name=name),
        summary=ctx.say(f"training.mode.summary_{kind}", name=name, lineno=lineno),
        what=ctx.say(f"training.mode.what_{which}", name=name, layers=shown, lineno=eval_line or 0),
        why=("" if ctx.language == "zh" else " ").join(why), where=ctx.where(lineno),
        lines=sorted({n for n in lines if n}), names=[name], fix=fix)


def _stepped_params(ctx: RuleContext) -> Set[int]:
    ids: Set[int] = set()
    for step in ctx.record.steps:
        opt = step.optimizer() if step.optimizer is not None else None
        for group in getattr(opt, "param_groups", None) or ():
            ids.update(id(p) for p in group.get("params", ()))
    return ids


# ---------------------------------------------------------------- the cell's syntax

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_ALREADY_PLAIN = frozenset({"item", "detach", "tolist", "numpy", "cpu"})


@dataclass(frozen=True)
class Accumulation:
    """`name += operand`, `name = name + operand` or `name.append(operand)` inside `loop`."""

    name: str
    stmt: ast.stmt
    operand: ast.expr
    loop: ast.stmt


def walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk, not entering nested functions, lambdas or classes."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop(0)
        yield n
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def accumulations(tree: ast.Module) -> List[Accumulation]:
    innermost: Dict[int, Tuple[ast.stmt, ast.stmt]] = {}
    for loop in ast.walk(tree):
        if isinstance(loop, _LOOPS):
            for stmt in (n for body in (loop.body,) for s in body for n in [s, *walk_scope(s)]):
                if isinstance(stmt, ast.stmt):
                    innermost[id(stmt)] = (stmt, loop)  # NB: BFS: inner loops come later and win
    found = []
    for stmt, loop in sorted(innermost.values(), key=lambda p: (p[0].lineno, p[0].col_offset)):
        acc = _accumulation(stmt, loop)
        if acc is not None and not _already_plain(acc.operand):
            found.append(acc)
    return found


def _accumulation(stmt: ast.stmt, loop: ast.stmt) -> Optional[Accumulation]:
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and isinstance(stmt.op, ast.Add):
        value = stmt.value
        if isinstance(value, ast.List):
            value = value.elts[0] if len(value.elts) == 1 else None
        return Accumulation(stmt.target.id, stmt, value, loop) if _operand_ok(value) else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Add):
        name = stmt.targets[0].id
        left, right = stmt.value.left, stmt.value.right
        other = right if _is_name(left, name) else left if _is_name(right, name) else None
        return Accumulation(name, stmt, other, loop) if _operand_ok(other) else None
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if isinstance(call.func, ast.Attribute) and call.func.attr == "append" and \
                isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords \
                and _operand_ok(call.args[0]):
            return Accumulation(call.func.value.id, stmt, call.args[0], loop)
    return None


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _operand_ok(node: Optional[ast.expr]) -> bool:
    return node is not None and any(isinstance(n, (ast.Name, ast.Call)) for n in ast.walk(node))


def _already_plain(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        node.func.attr in _ALREADY_PLAIN


def names_in(node: ast.AST) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _backward_calls(tree: ast.Module) -> Iterator[Tuple[ast.Call, Optional[ast.expr]]]:
    """(call, what it differentiates): `x.backward()`, `torch.autograd.backward(x)`, `autograd.grad(x, ...)`."""
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        func = n.func
        attr = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if attr == "backward" and isinstance(func, ast.Attribute) and not n.args and \
                not _is_name(func.value, "autograd"):
            yield n, func.value
        elif attr in ("backward", "grad") and n.args and "autograd" in ast.dump(func):
            yield n, n.args[0]


def backward_receivers(tree: ast.Module) -> Set[str]:
    return {name for _, target in _backward_calls(tree) if target is not None for name in names_in(target)}


def backward_receiver_names(tree: ast.Module) -> List[str]:
    return list(dict.fromkeys(t.id for _, t in _backward_calls(tree) if isinstance(t, ast.Name)))


def backward_lines(tree: ast.Module) -> List[int]:
    return sorted({c.lineno for c, _ in _backward_calls(tree)})


def calls_backward(tree: ast.Module) -> bool:
    return next(_backward_calls(tree), None) is not None


def used_as_tensor(tree: ast.Module, name: str) -> bool:
    """Whether the cell uses `name` in a way a float or a list of floats would not survive."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and _is_name(n.value, name) and n.attr not in ("append", "extend"):
            return True
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Subscript) and _is_name(n.value.value, name):
            return True
        if isinstance(n, ast.Call) and "torch" in names_in(n.func) and \
                any(name in names_in(a) for a in n.args):
            return True
    return False


_NO_GRAD = frozenset({"no_grad", "inference_mode"})


def no_grad_blocks(tree: Optional[ast.Module]) -> List[ast.stmt]:
    """`with torch.no_grad():` / `with torch.inference_mode():` statements, in order."""
    if tree is None:
        return []
    found = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.With, ast.AsyncWith)) and any(
                isinstance(i.context_expr, ast.Call) and _call_attr(i.context_expr) in _NO_GRAD
                for i in n.items):
            found.append(n)
    return sorted(found, key=lambda n: n.lineno)


def _call_attr(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def starts_line(src: str, node: ast.stmt) -> bool:
    return node.col_offset == len(indent_of(split_lines(src)[node.lineno - 1]).encode("utf-8"))


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
    rest = split_lines(src)[node.lineno - 1].strip()[len(segment(src, node) or "\0"):]
    return split_lines(src)[node.lineno - 1].strip().startswith(segment(src, node) or "\0") \
        and (not rest.strip() or rest.strip().startswith("#"))


def step_statement(tree: ast.Module, lineno: Optional[int]) -> Optional[ast.stmt]:
    if lineno is None:
        return None
    for n in ast.walk(tree):
        if isinstance(n, ast.Expr) and n.lineno == lineno and isinstance(n.value, ast.Call) and \
                _call_attr(n.value) == "step":
            return n
    return None


def _body_of(tree: ast.Module, stmt: ast.stmt) -> Optional[List[ast.stmt]]:
    for n in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(n, field, None)
            if isinstance(body, list) and any(s is stmt for s in body):
                return body
    return None


def loss_before(tree: ast.Module, stmt: ast.stmt, namespace: Any) -> Optional[str]:
    """The scalar with a grad_fn assigned last before `stmt` in its block: the loss to backpropagate."""
    body = _body_of(tree, stmt)
    if body is None:
        return None
    for s in reversed(body[:body.index(stmt)]):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            value = namespace.get(s.targets[0].id)
            if isinstance(value, torch.Tensor) and value.grad_fn is not None and value.numel() == 1:
                return s.targets[0].id
    return None


def cell_modules(tree: ast.Module, namespace: Any) -> List[Tuple[str, torch.nn.Module]]:
    """Modules of the namespace named in the cell, in order of first use."""
    seen: Set[int] = set()
    found = []
    for n in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Name)), key=lambda n: (n.lineno, n.col_offset)):
        value = namespace.get(n.id)
        if isinstance(value, torch.nn.Module) and id(value) not in seen:
            seen.add(id(value))
            found.append((n.id, value))
    return found


def _submodules(prefix: str, module: Any, seen: Set[int]) -> Iterator[Tuple[str, Any]]:
    if id(module) in seen or len(seen) > 10_000:
        return
    seen.add(id(module))
    yield prefix, module
    for key, sub in list((module.__dict__.get("_modules") or {}).items()):
        if sub is not None:
            yield from _submodules(f"{prefix}.{key}", sub, seen)


def parameter_ids(module: torch.nn.Module) -> Set[int]:
    return {id(p) for _, m in _submodules("", module, set())
            for p in (m.__dict__.get("_parameters") or {}).values() if p is not None}


def mode_layers(name: str, module: torch.nn.Module, training: bool,
                stepped: Optional[Set[int]]) -> List[str]:
    """`name.sub` (Class) of each Dropout (p > 0) / BatchNorm layer in mode `training`.

    When training (`stepped` given), a BatchNorm counts only when its weight is trained: a frozen
    BatchNorm kept in eval() on purpose (fine-tuning a backbone) is no bug.
    """
    found = []
    for dotted, m in _submodules(name, module, set()):
        if m.__dict__.get("training") is not training:
            continue
        if isinstance(m, torch.nn.modules.dropout._DropoutNd):
            if not m.__dict__.get("p"):
                continue
        elif isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            weight = (m.__dict__.get("_parameters") or {}).get("weight")
            if stepped is not None and (weight is None or id(weight) not in stepped
                                        or not weight.requires_grad):
                continue
        else:
            continue
        found.append(f"`{dotted}` ({type(m).__name__})")
    return found


def mode_calls(tree: ast.Module, name: str) -> List[Tuple[int, str, ast.Call]]:
    """(lineno, "train" | "eval", call) for `name.train()`, `name.train(False)`, `name.eval()`."""
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _is_name(n.func.value, name) \
                and n.func.attr in ("train", "eval"):
            mode = n.func.attr
            arg = n.args[0] if n.args else n.keywords[0].value if n.keywords else None
            if mode == "train" and isinstance(arg, ast.Constant) and arg.value is False:
                mode = "eval"
            found.append((n.lineno, mode, n))
    return sorted(found, key=lambda t: t[0])


def _path(tree: ast.Module, target: ast.stmt) -> List[ast.AST]:
    """The statements around `target`, outermost first (target excluded)."""
    path: List[ast.AST] = []
    node: ast.AST = tree
    while True:
        child = next((c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)
                      and c.lineno <= target.lineno <= (c.end_lineno or c.lineno) and c is not target
                      and any(d is target for d in ast.walk(c))), None)
        if child is None:
            return path
        path.append(child)
        node = child


def train_spot(src: str, tree: ast.Module, name: str, step_line: int
               ) -> Optional[Tuple[int, bool, Optional[int]]]:
    """(line to put `name.train()` before, whether that is the top of the loop, the eval() line), or None
    when the cell does not make it evident that the steps ran in eval() mode."""
    stmt = step_statement(tree, step_line)
    if stmt is None:
        return None
    path = _path(tree, stmt)
    if any(isinstance(p, _SCOPES) for p in path):
        return None  # NB: a step inside a function: where and when it runs is not in this cell's shape
    if _handed_away(tree, name):
        return None
    loop = next((p for p in path if isinstance(p, _LOOPS)), None)
    calls = mode_calls(tree, name)
    if loop is None:
        if any(mode == "train" or line > step_line for line, mode, _ in calls):
            return None
        body = _body_of(tree, stmt) or []
        first = next((s for s in body[:body.index(stmt)] if _calls(s, name)), None) if stmt in body else None
        if first is None or not starts_line(src, first):
            return None
        return first.lineno, False, (calls[-1][0] if calls else None)
    inside = [c for c in calls if loop.lineno <= c[0] <= loop.end_lineno]
    if inside:
        if any(mode == "train" for _, mode, _ in inside):
            return None
        top = loop.body[0]
        return (top.lineno, True, inside[0][0]) if starts_line(src, top) else None
    if any(mode == "train" for _, mode, _ in calls) or any(c[0] > loop.end_lineno for c in calls):
        return None
    if not starts_line(src, loop):
        return None
    before = [c[0] for c in calls if c[0] < loop.lineno]
    return loop.lineno, False, (before[-1] if before else None)


def _handed_away(tree: ast.Module, name: str) -> bool:
    """`evaluate(model)`: a function that may switch the mode gets the model (or the cell defines one
    that switches modes)."""
    for n in ast.walk(tree):
        if isinstance(n, _SCOPES) and any(isinstance(c, ast.Call) and _call_attr(c) in ("train", "eval")
                                          for c in ast.walk(n)):
            return True
        if isinstance(n, ast.Call) and not _is_name(n.func, name) and \
                any(_is_name(a, name) for a in [*n.args, *(k.value for k in n.keywords)]) and \
                _call_attr(n) not in ("print", "len", "isinstance", "type", "id", "repr", "str"):
            return True
    return False


def _calls(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and _is_name(n.func, name) for n in ast.walk(node))


def called_names(block: ast.stmt) -> List[str]:
    return list(dict.fromkeys(n.func.id for n in ast.walk(block)
                              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)))


_EVALUATION = re.compile(r"acc|correct|eval|valid|(?<![a-z])val|test|metric|argmax|predict|score|"
                         r"precision|recall|f1", re.IGNORECASE)
_ON_PURPOSE = re.compile(r"mc_|monte|carlo|uncertain|bayes", re.IGNORECASE)


def looks_like_evaluation(tree: ast.Module) -> bool:
    """Whether the cell's own words say it evaluates (accuracy, validation, test...)."""
    words = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            words.add(n.id)
        elif isinstance(n, ast.Attribute):
            words.add(n.attr)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            words.add(n.name)
        elif isinstance(n, ast.arg):
            words.add(n.arg)
    text = " ".join(sorted(words))[:100_000]
    return bool(_EVALUATION.search(text)) and not _ON_PURPOSE.search(text)
