"""inference-tensor-backward for "element 0 of tensors does not require grad": backward() or autograd.grad() of a
result computed under torch.inference_mode(), where autograd records nothing -- a Lightning `validate` / `test` /
`predict` runs the user's step so, and `torch.set_grad_enabled(True)` inside it turns nothing back on.

Kept only on evidence: a tensor the failing statement names is an inference tensor (`is_inference()`).
The fix, for a step run by a Lightning Trainer (found on the traceback: the `self` of its frames), adds
`inference_mode=False` where the user made the Trainer -- then Lightning runs the step under torch.no_grad(),
where the step's own `set_grad_enabled(True)` works -- only when the run recorded that the op which made the
tensor ran with grad mode on (else the step would need grad turned on too: said, no fix).

May touch: the failing frame's variables (`is_inference()` of tensors), the traceback's frames (`self` in their
variables, its type), the cells' ast, the run's lineage. Never runs user code.
"""
from __future__ import annotations

import ast
from typing import Any, Optional, Tuple

import torch

from ... import catalog
from ...cell import cell_tree
from ...edits import keyword_added, make_fix
from ...model import ERROR, Diagnosis, Fix
from ..context import RuleContext
from ..places import Place, global_assignment, root, with_lines
from ..traced import inference_named

KIND = "inference-tensor-backward"
_LIGHTNING = ("lightning.", "pytorch_lightning.", "lightning_fabric.")
_RUNS = ("validate", "test", "predict", "fit")


def no_graph_card(rule_ctx: RuleContext) -> Optional[Diagnosis]:
    found = inference_named(rule_ctx)
    if found is None:
        return None
    ctx, name, tensor = found
    lineno = ctx.record.error_lineno
    tensor_said = f"`{name}`"
    why = [ctx.say("backward.inference.why"), ctx.say("backward.inference.why_nograd")]
    trainer, method = _lightning_trainer(ctx)
    place = _made_at(ctx, trainer) if trainer is not None else None
    fix = None
    if trainer is not None:
        why.append(ctx.say("backward.inference.why_lightning", method=method))
        if place is not None and _grad_was_on(ctx, tensor):
            fix = _keyword_fix(place, "inference_mode=False",
                               place.ctx.say("backward.inference.fix_lightning", lineno=place.node.lineno))
        if fix is None:
            why.append(ctx.say("backward.inference.why_lightning_grad"))
    else:
        why.append(ctx.say("backward.inference.why_no_fix"))
    code = " ".join(ctx.record.source_line(lineno).split())
    here = place.ctx if fix is not None else ctx
    d = here.diagnosis(
        KIND, ERROR, title=ctx.say("backward.inference.title_nograd", tensor=tensor_said),
        summary=ctx.say("backward.inference.summary"),
        what=ctx.say("backward.inference.what_nograd", lineno=lineno or "?", tensor=tensor_said, code=code),
        why=catalog.sentences(why, ctx.language), where=here.where(place.node.lineno if fix else lineno),
        lines=[place.node.end_lineno or place.node.lineno] if fix is not None else [lineno], names=[name], fix=fix)
    return d if here is ctx else with_lines(d, ctx, [lineno])


def _lightning_trainer(ctx: RuleContext) -> Tuple[Any, str]:
    """(the Lightning Trainer whose run is on the traceback, the method the user called: `validate`), or (None, "")."""
    tb = ctx.exception.__traceback__ if ctx.exception is not None else None
    while tb is not None:
        frame = tb.tb_frame
        me = frame.f_locals.get("self") if frame.f_code.co_name in _RUNS else None
        cls = type(me)
        if me is not None and cls.__name__ == "Trainer" and cls.__module__.startswith(_LIGHTNING):
            return me, frame.f_code.co_name
        tb = tb.tb_next
    return None, ""


def _made_at(ctx: RuleContext, trainer: Any) -> Optional[Place]:
    """`trainer = Trainer(...)`: the top-level statement that made it, in the running cell (before the failing
    line) or the last earlier cell that did; None when it was made elsewhere (a function, a file)."""
    top = root(ctx)
    for name in top.names.names_for(trainer):
        if not name.isidentifier() or top.namespace.get(name) is not trainer:
            continue
        tree = cell_tree(top.record.source)
        here = [s for s in (tree.body if tree is not None else []) if isinstance(s, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)
                and s.lineno < (top.record.error_lineno or 0)]
        place = Place(top, tree, here[-1]) if here else global_assignment(top, name)
        if place is not None and isinstance(place.node, ast.Assign) and isinstance(place.node.value, ast.Call):
            return place
    return None


def _grad_was_on(ctx: RuleContext, tensor: torch.Tensor) -> bool:
    """Whether the run recorded the op that made `tensor` running with grad mode on (the step asked for it)."""
    lineage = root(ctx).record.lineage
    birth = lineage.birth_of(tensor) if lineage is not None else None
    return birth is not None and birth.grad


def _keyword_fix(place: Place, keyword: str, description: str) -> Optional[Fix]:
    """`keyword` added as the last argument of the call the statement assigns (unless it has that keyword)."""
    call = place.node.value
    if any(k.arg == keyword.split("=")[0] for k in call.keywords) or any(k.arg is None for k in call.keywords):
        return None
    source = place.ctx.record.source
    return make_fix(source, [keyword_added(source, call, keyword)], description)

