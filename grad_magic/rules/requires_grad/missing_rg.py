"""The `missing-requires-grad` rule: RuntimeError "element N of tensors does not require grad and does not
have a grad_fn" (before torch 0.4: "... of variables ..."), explained by the cause the trace found.

May touch: the RuleContext (record, names, catalog), the trace (causes.py) and the fixes (fixes.py); of live
objects, torch metadata only. Never runs user code.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

import torch

from ...cell import cell_tree, enclosing_statement
from ...model import ERROR, Diagnosis, Fix, TensorFact
from ..context import RuleContext
from ..registry import rule
from .causes import CUT, FROZEN, LEAF, NO_GRAD, OUTSIDE, BackwardSite, Cause, Flow, Scope, Tracer, \
    _cut_kind, _short_cut, backward_site
from .fixes import _leaf_fix, cut_fix, no_grad_fix
from .shared import _callee_name, _contains_line, _false_arg, _is_false, code_text, dotted_text, fact_for, \
    grad_evidence, join, quote

KIND = "missing-requires-grad"
NO_GRAD_FN = re.compile(r"element (?P<index>\d+) of (?:tensors|variables) does not require grad and does "
                        r"not have a grad_fn")


def match_no_grad_fn(message: str) -> Optional[int]:
    """The element index when `message` is the "does not require grad" error, else None."""
    m = NO_GRAD_FN.search(message)
    return int(m["index"]) if m else None


@rule(KIND, matches=(
    "element 0 of tensors does not require grad and does not have a grad_fn",
), fix="per cause: `requires_grad=True` on the creating call; the forward moved out of `torch.no_grad()`; "
       "the `.detach()` / `.data` cut dropped")
def missing_requires_grad(ctx: RuleContext) -> Optional[Diagnosis]:
    """backward() was called on a tensor that has no graph: nothing on its way requires grad."""
    if not isinstance(ctx.exception, RuntimeError):
        return None
    index = match_no_grad_fn(ctx.error_message)
    if index is None:
        return None
    tree = cell_tree(ctx.record.source)
    site = backward_site(ctx, tree, index) if tree is not None else None
    if site is None or site.target is None:
        return _unknown(ctx, None, None, unseen=tree is not None)
    tracer = Tracer(ctx, tree, site.scope, site.stmt.lineno)
    flow = tracer.expr(site.target, site.scope, site.stmt.lineno)
    loss = Loss.of(ctx, site)
    return explain(ctx, tracer, site, loss, flow)


@dataclass(frozen=True)
class Loss:
    """What backward() was called on: its text in the cell, its name and live tensor when it has them."""

    text: str
    name: str
    tensor: Optional[torch.Tensor]
    lineno: int
    call: str  # `loss.backward()`, `torch.autograd.grad(...)`

    @staticmethod
    def of(ctx: RuleContext, site: BackwardSite) -> "Loss":
        text = code_text(ctx.record.source, site.target)
        dotted = dotted_text(site.target) if site.target is not None else None
        obj = site.scope.live(dotted) if dotted else None
        func = site.call.func
        call = f"{text}.backward()" if isinstance(func, ast.Attribute) and func.value is site.target else \
            f"{code_text(ctx.record.source, func)}(...)"
        return Loss(text, dotted or "", obj if isinstance(obj, torch.Tensor) else None, site.stmt.lineno, call)

    def facts(self) -> List[TensorFact]:
        fact = fact_for(self.name, self.tensor) if self.tensor is not None and self.name else None
        return [fact] if fact is not None else []


def explain(ctx: RuleContext, tracer: Tracer, site: BackwardSite, loss: Loss, flow: Flow) -> Diagnosis:
    causes = [] if flow.grad else list(flow.causes)
    if loss.tensor is not None and loss.tensor.is_inference() and not any(c.kind == NO_GRAD for c in causes):
        return _unknown(ctx, loss, "missing_rg.why_inference")
    for kind, explain_kind in ((NO_GRAD, _no_grad), (CUT, _cut), (FROZEN, _frozen)):
        found = [c for c in causes if c.kind == kind]
        if found:
            return explain_kind(ctx, tracer, site, loss, found)
    leaves = [c for c in causes if c.kind in (LEAF, OUTSIDE)]
    if leaves:
        return _leaves(ctx, tracer, site, loss, leaves)
    why = None if torch.is_grad_enabled() else "missing_rg.why_grad_mode_off"
    return _unknown(ctx, loss, why)


def _diagnosis(ctx: RuleContext, loss: Optional[Loss], *, title: str, summary: str, why: str,
               lines: Sequence[Optional[int]], names: Sequence[str], tensors: Sequence[TensorFact],
               fix: Optional[Fix]) -> Diagnosis:
    line = ctx.record.error_lineno
    what = ctx.say("missing_rg.what", loss=loss.text, lineno=loss.lineno, call=loss.call) if loss is not None else \
        ctx.say("missing_rg.what_unseen", lineno=line)
    shown = sorted({n for n in lines if n}) or [line]
    facts = (loss.facts() if loss is not None else []) + [t for t in tensors if t is not None]
    return ctx.diagnosis(KIND, ERROR, title=title, summary=summary, what=what, why=why, where=ctx.where(line),
                         lines=shown, names=list(dict.fromkeys(n for n in names if n)),
                         tensors=list({f.name: f for f in facts}.values()), fix=fix)


def _unknown(ctx: RuleContext, loss: Optional[Loss], why_key: Optional[str], unseen: bool = True) -> Diagnosis:
    """What is known when the cause was not found; `unseen`: backward() ran in code outside the cell."""
    line = ctx.record.error_lineno
    why = [ctx.say("missing_rg.why_graph")]
    if loss is None and unseen:
        why.append(ctx.say("missing_rg.why_unseen", lineno=line, code=_line_code(ctx, line)))
    why.append(ctx.say(why_key) if why_key else ctx.say("missing_rg.why_unknown"))
    tensors = _facts_on_line(ctx, line)
    title, summary = (ctx.say("missing_rg.title_unknown", loss=loss.text),
                      ctx.say("missing_rg.summary_unknown", loss=loss.text)) if loss is not None else \
        (ctx.say("missing_rg.title_unseen"),
         ctx.say("missing_rg.summary_unseen" if unseen else "missing_rg.summary_unread", lineno=line))
    return _diagnosis(ctx, loss, title=title, summary=summary, why=" ".join(why), lines=[line],
                      names=[t.name for t in tensors], tensors=tensors, fix=None)


def _facts_on_line(ctx: RuleContext, lineno: Optional[int]) -> Sequence[TensorFact]:
    try:
        return ctx.facts_on_line(lineno)
    except RuntimeError:  # NB: facts of an inference tensor (its version) or a no_grad view torch will not give
        return ()


def _line_code(ctx: RuleContext, lineno: Optional[int]) -> str:
    return " ".join(ctx.record.source_line(lineno).split("#")[0].split())


def _leaves(ctx: RuleContext, tracer: Tracer, site: BackwardSite, loss: Loss, leaves: List[Cause]
            ) -> Diagnosis:
    src = ctx.record.source
    named = list(dict.fromkeys(leaves))
    evidence = grad_evidence(tracer.tree)
    chosen = [c for c in named if c.name in evidence] or named
    shown = {c: quote(c.name) if c.name else f"`{code_text(src, c.node)}`" for c in chosen}
    names = join(ctx, list(shown.values()))
    why = [ctx.say("missing_rg.why_graph")]
    for c in chosen:
        why.append(ctx.say("missing_rg.why_leaf", name=shown[c], lineno=c.lineno,
                           code=code_text(src, c.stmt or c.node)) if c.kind == LEAF else
                   ctx.say("missing_rg.why_outside", name=shown[c]))
    used = [c for c in chosen if c.name in evidence]
    fix = _leaf_fix(ctx, tracer, chosen)
    if used:
        why.append(ctx.say("missing_rg.why_evidence", names=join(ctx, [quote(c.name) for c in used])))
    elif len(chosen) > 1:
        why.append(ctx.say("missing_rg.why_no_evidence" if fix is not None else "missing_rg.why_no_evidence_no_fix"))
    if fix is None and any(c.kind == OUTSIDE for c in chosen):
        why.append(ctx.say("missing_rg.why_outside_fix"))
    return _diagnosis(
        ctx, loss, title=ctx.say("missing_rg.title_leaf", loss=loss.text, names=names),
        summary=ctx.say("missing_rg.summary_leaf", loss=loss.text, names=names), why=" ".join(why),
        lines=[c.lineno for c in chosen] + [site.stmt.lineno], names=[c.name for c in chosen],
        tensors=[_fact(site.scope, c) for c in chosen], fix=fix)


def _fact(scope: Scope, cause: Cause) -> Optional[TensorFact]:
    obj = cause.obj if cause.obj is not None else scope.live(cause.name) if cause.name else None
    return fact_for(cause.name, obj) if obj is not None else None


def _no_grad(ctx: RuleContext, tracer: Tracer, site: BackwardSite, loss: Loss, found: List[Cause]
             ) -> Diagnosis:
    first = min(found, key=lambda c: c.lineno or 0)
    block = first.node
    header = code_text(ctx.record.source, block).splitlines()[0].rstrip(":") if not isinstance(
        block, ast.expr) else "@" + code_text(ctx.record.source, block)
    names = [c.name for c in found if c.name]
    name = quote(names[0]) if names else loss.text
    why = [ctx.say("missing_rg.why_graph"),
           ctx.say("missing_rg.why_no_grad", name=name, lineno=first.lineno, header=header,
                   block_line=block.lineno)]
    fix = no_grad_fix(ctx, tracer, site, block) if isinstance(block, (ast.With, ast.expr)) else None
    if fix is None:
        why.append(ctx.say("missing_rg.why_no_grad_no_fix", header=header))
    elif isinstance(block, ast.With) and _modules_called(ctx, block, tracer) > 1:
        why.append(ctx.say("missing_rg.why_no_grad_part", header=header))
    return _diagnosis(
        ctx, loss, title=ctx.say("missing_rg.title_no_grad", name=name, header=header),
        summary=ctx.say("missing_rg.summary_no_grad", name=name, lineno=first.lineno, header=header,
                        loss=loss.text),
        why=" ".join(why), lines=[block.lineno, first.lineno, site.stmt.lineno], names=names,
        tensors=[], fix=fix)


def _modules_called(ctx: RuleContext, block: ast.With, tracer: Tracer) -> int:
    """How many layers the moved lines call (`self.fc(x)`, `model(x)`): two or more may be a frozen part + a head."""
    called = set()
    for stmt in (s for s in tracer.path if _contains_line(block, s.lineno)):
        for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
            dotted = dotted_text(call.func) or ""
            if dotted.startswith("self.") or isinstance(ctx.names.lookup(dotted), torch.nn.Module):
                called.add(dotted)
    return len(called)


def _cut(ctx: RuleContext, tracer: Tracer, site: BackwardSite, loss: Loss, found: List[Cause]) -> Diagnosis:
    c = found[0]
    src = ctx.record.source
    how = _cut_kind(c.node)
    cut = _short_cut(c.node)
    # NB: after `.item()` / `.numpy()` the name holds a number or an array: say what lost its grad instead
    name = quote(c.name) if c.name and how in ("detach", "data", "copy") else f"`{loss.text}`"
    code = code_text(src, enclosing_statement(tracer.tree, c.lineno) if c.lineno else None) or cut
    why = [ctx.say("missing_rg.why_graph"),
           ctx.say(f"missing_rg.why_cut_{how}", name=name, lineno=c.lineno, cut=cut, code=code)]
    fix, key = cut_fix(ctx, tracer, c)
    why.append(ctx.say(key, name=name, lineno=c.lineno, cut=cut))
    return _diagnosis(
        ctx, loss, title=ctx.say("missing_rg.title_cut", cut=_short_cut(c.node), lineno=c.lineno, loss=loss.text),
        summary=ctx.say("missing_rg.summary_cut", cut=_short_cut(c.node), lineno=c.lineno, loss=loss.text),
        why=" ".join(why), lines=[c.lineno, site.stmt.lineno], names=[c.name], tensors=[], fix=fix)


def _frozen(ctx: RuleContext, tracer: Tracer, site: BackwardSite, loss: Loss, found: List[Cause]) -> Diagnosis:
    c = found[0]
    freeze = freeze_statement(tracer.tree, c.name)
    why = [ctx.say("missing_rg.why_graph"),
           ctx.say("missing_rg.why_frozen", name=quote(c.name), lineno=c.lineno,
                   count=sum(1 for _ in c.obj.parameters()) if c.obj is not None else 0)]
    why.append(ctx.say("missing_rg.why_frozen_here", lineno=freeze.lineno, code=code_text(ctx.record.source, freeze))
               if freeze is not None else ctx.say("missing_rg.why_frozen_before", name=quote(c.name)))
    head = _last_child(c.name, c.obj)
    why.append(ctx.say("missing_rg.why_frozen_no_fix" if head != c.name else "missing_rg.why_frozen_no_fix_all",
                       name=c.name, head=head))
    facts = [fact_for(c.name, c.obj)] if c.obj is not None else []
    return _diagnosis(
        ctx, loss, title=ctx.say("missing_rg.title_frozen", name=quote(c.name)),
        summary=ctx.say("missing_rg.summary_frozen", name=quote(c.name), loss=loss.text), why=" ".join(why),
        lines=[freeze.lineno if freeze is not None else None, c.lineno, site.stmt.lineno], names=[c.name],
        tensors=facts, fix=None)


def _last_child(name: str, module: Any) -> str:
    """`model.fc` / `model[2]`: how to spell the module's last child, the usual head to train."""
    children = list(module.named_children()) if isinstance(module, torch.nn.Module) else []
    if not children:
        return name
    child = children[-1][0]
    return f"{name}[{child}]" if child.isdigit() else f"{name}.{child}"


def freeze_statement(tree: ast.Module, module: str) -> Optional[ast.stmt]:
    """The first statement that turns requires_grad off (`p.requires_grad = False`, `.requires_grad_(False)`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_false(node.value) and any(
                isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in node.targets):
            found.append(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                _callee_name(node.value) == "requires_grad_" and _false_arg(node.value):
            found.append(node)
    head = module.split(".")[0]
    mine = [n for n in found if head in {x.id for x in ast.walk(n) if isinstance(x, ast.Name)}]
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For) and head in {
        x.id for x in ast.walk(n.iter) if isinstance(x, ast.Name)} and any(_contains_line(n, f.lineno) for f in found)]
    best = sorted(mine + [f for f in found for lp in loops if _contains_line(lp, f.lineno)], key=lambda n: n.lineno)
    return best[0] if best else (found[0] if found else None)
