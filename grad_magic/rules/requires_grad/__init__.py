"""Rules of the requires_grad family: backward() on a result that never required grad, and
requires_grad asked of a tensor that cannot have it.

Kinds:
- `missing-requires-grad` (missing_rg.py): RuntimeError "element N of tensors does not require
  grad and does not have a grad_fn" (before torch 0.4: "... of variables ..."). The cause is traced back
  from the tensor backward() was called on, through the cell's assignments (ast), checked against the live
  objects (metadata only) -- causes.py: a leaf created without `requires_grad=True` (fix: add it where the
  leaf is made); a forward computed under `torch.no_grad()` / `torch.inference_mode()` (fix: move those
  lines out of the block); the chain cut by `.detach()` / `.data` / `.item()` / `.numpy()` /
  `torch.tensor(t)` (fix: drop a `.detach()` or `.data` when nothing after it needs the cut;
  `.requires_grad_()` after a manual update's `.detach()`); every parameter of the model frozen
  (explained, no fix). The edits per cause are in fixes.py. When no cause is found, the card says what is
  known and proposes no fix.
- `integer-requires-grad` (int_rg.py): RuntimeError "Only Tensors of floating point and
  complex dtype can require gradients" (torch 1.6+; "only Tensors of floating point dtype ..." from
  `requires_grad_()`, and from everything before 1.6). Fix: give the creating call a floating-point dtype.

The ast helpers in shared.py (torch's name in the cell, grad-disabling blocks) are shared with rules/leaf.py.
Never runs user code: live objects are read through the NameIndex and torch metadata only.

Order: `missing-requires-grad` is registered before `integer-requires-grad`, as when this was one module.
"""
from __future__ import annotations

# NB: the rule modules in registration order; every name the one-module version had is importable from here
# (rules/leaf.py and the tests import some of them).
from .missing_rg import (  # noqa: F401
    KIND, NO_GRAD_FN, Loss, explain, freeze_statement, match_no_grad_fn, missing_requires_grad, _cut,
    _diagnosis, _fact, _facts_on_line, _frozen, _last_child, _leaves, _line_code, _modules_called,
    _no_grad, _unknown)
from .int_rg import (  # noqa: F401
    INT_KIND, NOT_FLOAT, integer_requires_grad, match_not_float, _float_fix, _int_creation,
    _is_torch_factory, _literal_dtype)
from .causes import (  # noqa: F401
    CUT, FROZEN, GRAD, LEAF, NOTHING, NO_GRAD, OUTSIDE, BackwardSite, Cause, Flow, Scope, Tracer,
    backward_site, error_scope, _attribute_resolver, _bind, _bound_in, _combine, _cut_kind,
    _is_passthrough, _loops_around, _named, _parameters, _short_cut)
from .fixes import (  # noqa: F401
    MAX_LEAVES, cut_fix, leaf_edits, no_grad_fix, _copy_fix, _cut_below, _leaf_fix, _reads, _root)
from .shared import (  # noqa: F401
    _COPIES, _CUT_METHODS, _FACTORIES, _GRAD_OFF, _TAKES_REQUIRES_GRAD, code_text, dotted_text, fact_for,
    grad_evidence, grad_fn_name, grad_off_around, grad_off_call, is_leaf, join, quote, scope_statements,
    torch_aliases, torch_name, _binds, _callee_name, _contains_line, _false_arg, _is_false)
