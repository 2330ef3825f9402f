"""The `integer-requires-grad` rule: RuntimeError "Only Tensors of floating point and complex dtype can
require gradients" (torch 1.6+; "only Tensors of floating point dtype ..." from `requires_grad_()`, and from
everything before 1.6). Fix: give the creating call a floating-point dtype.

May touch: the RuleContext (record, names, catalog) and the cell's source text (minimal edits); of live
objects, torch metadata only. Never runs user code.
"""
from __future__ import annotations

import ast
import re
from typing import Any, List, Optional, Set, Tuple

import torch

from ...facts import dtype_name
from ...cell import cell_tree, enclosing_statement, node_span
from ...edits import make_fix
from ...model import ERROR, Diagnosis, Fix, TextEdit
from ..context import RuleContext
from ..registry import rule
from .shared import _FACTORIES, _TAKES_REQUIRES_GRAD, _binds, _callee_name, code_text, dotted_text, fact_for, \
    quote, scope_statements, torch_aliases

INT_KIND = "integer-requires-grad"
NOT_FLOAT = re.compile(r"[Oo]nly Tensors of floating point (?:and complex )?dtype can require gradients")


def match_not_float(message: str) -> bool:
    return NOT_FLOAT.search(message) is not None


@rule(INT_KIND, matches=(
    "Only Tensors of floating point and complex dtype can require gradients",
    "only Tensors of floating point dtype can require gradients (older torch)",
), fix="a floating point tensor (`dtype=torch.float32`, `1.0` literals, `.float()`)")
def integer_requires_grad(ctx: RuleContext) -> Optional[Diagnosis]:
    """requires_grad was asked of an integer (or bool) tensor: only floating point can have gradients."""
    if not isinstance(ctx.exception, RuntimeError) or not match_not_float(ctx.error_message):
        return None
    lineno = ctx.record.error_lineno
    tree = cell_tree(ctx.record.source)
    stmt = enclosing_statement(tree, lineno) if tree is not None and lineno else None
    aliases = (torch_aliases(tree) if tree is not None else set()) | {"torch"}
    found = _int_creation(ctx, tree, stmt, aliases) if stmt is not None else None
    call, name, obj = found if found is not None else (None, "", None)
    dtype = dtype_name(obj.dtype) if isinstance(obj, torch.Tensor) else _literal_dtype(call)
    subject = quote(name) if name else (f"`{code_text(ctx.record.source, call)}`" if call is not None else
                                        ctx.say("int_rg.the_tensor"))
    dtype = dtype or ctx.say("int_rg.an_integer")
    why = [ctx.say("int_rg.why", name=subject, dtype=dtype)]
    if call is not None and _callee_name(call) in ("tensor", "arange") and \
            not any(k.arg == "dtype" for k in call.keywords):
        why.append(ctx.say("int_rg.why_literal", call=_callee_name(call)))
    fix = _float_fix(ctx, call, subject) if call is not None else None
    why.append(ctx.say("int_rg.why_fix" if fix is not None else "int_rg.why_no_fix",
                       default=dtype_name(torch.get_default_dtype())))
    facts = [f for f in [fact_for(name, obj)] if f is not None] if name and obj is not None else []
    return ctx.diagnosis(
        INT_KIND, ERROR, title=ctx.say("int_rg.title", name=subject, dtype=dtype),
        summary=ctx.say("int_rg.summary", name=subject, dtype=dtype),
        what=ctx.say("int_rg.what", lineno=lineno, name=subject, dtype=dtype), why=" ".join(why),
        where=ctx.where(lineno),
        lines=sorted({n for n in (getattr(call, "lineno", None), lineno) if n}), names=[name] if name else [],
        tensors=facts, fix=fix)


def _int_creation(ctx: RuleContext, tree: ast.Module, stmt: ast.stmt, aliases: Set[str]
                  ) -> Optional[Tuple[ast.Call, str, Any]]:
    """(the call that made the integer tensor, its name, the live tensor) for the failing statement."""
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
    name = (dotted_text(target) or "") if target is not None else ""
    for call in calls:  # `torch.tensor([1, 2], requires_grad=True)`
        if _is_torch_factory(call, aliases) and any(k.arg == "requires_grad" for k in call.keywords):
            return call, name, None
    subject: Optional[ast.AST] = None
    for call in calls:  # `x.requires_grad_()`, `nn.Parameter(x)`
        if _callee_name(call) == "requires_grad_" and isinstance(call.func, ast.Attribute):
            subject = call.func.value
        elif _callee_name(call) == "Parameter" and call.args:
            subject = call.args[0]
    if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                                            for t in stmt.targets):  # `x.requires_grad = True`
        subject = next(t.value for t in stmt.targets if isinstance(t, ast.Attribute))
    if isinstance(subject, ast.Call) and _is_torch_factory(subject, aliases):
        return subject, name, None
    if isinstance(subject, ast.Name):
        obj = ctx.names.lookup(subject.id)
        made = [s for s in scope_statements(tree) if isinstance(s, ast.Assign) and _binds(s, subject.id)
                and s.lineno < stmt.lineno]
        value = made[-1].value if made else None
        if isinstance(value, ast.Call) and _is_torch_factory(value, aliases):
            return value, subject.id, obj
        return None if obj is None else (None, subject.id, obj)  # type: ignore[return-value]
    return None


def _is_torch_factory(call: ast.Call, aliases: Set[str]) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in _FACTORIES and isinstance(func.value, ast.Name) \
        and func.value.id in aliases


def _literal_dtype(call: Optional[ast.Call]) -> Optional[str]:
    """The dtype a creating call gives, read from its text (`dtype=`, or the kind of its literal)."""
    if call is None:
        return None
    for k in call.keywords:
        if k.arg == "dtype":
            spelled = getattr(torch, (dotted_text(k.value) or "").split(".")[-1] or "_", None)
            return dtype_name(spelled) if isinstance(spelled, torch.dtype) else None
    values = [n.value for a in call.args[:1] for n in ast.walk(a) if isinstance(n, ast.Constant)]
    if _callee_name(call) == "tensor" and values and all(isinstance(v, bool) for v in values):
        return "bool"
    return "int64" if _callee_name(call) in ("arange", "randint", "randperm", "tensor") else None


def _float_fix(ctx: RuleContext, call: ast.Call, subject: str) -> Optional[Fix]:
    """Give the creating call a floating-point dtype: add `dtype=torch.float32`, or replace an integer one."""
    src = ctx.record.source
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in _TAKES_REQUIRES_GRAD:
        return None
    module = call.func.value.id  # type: ignore[attr-defined]
    dtype = f"{module}.{dtype_name(torch.get_default_dtype())}"
    edits: List[TextEdit] = []
    for k in call.keywords:
        if k.arg == "dtype":
            edits = [TextEdit(*node_span(src, k.value), dtype)]
        elif k.arg is None:
            return None
    if not edits:
        args = call.args + [k.value for k in call.keywords]
        if not args:
            return None
        anchor = next((k for k in call.keywords if k.arg == "requires_grad"), None)
        if anchor is not None:
            start, _ = node_span(src, anchor.value)
            at = start - len("requires_grad=")
            if src[at:start] != "requires_grad=":
                return None
            edits = [TextEdit(at, at, f"dtype={dtype}, ")]
        else:
            _, end = node_span(src, args[-1])
            edits = [TextEdit(end, end, f", dtype={dtype}")]
    return make_fix(src, edits, ctx.say("int_rg.fix", lineno=call.lineno, dtype=dtype, name=subject))
