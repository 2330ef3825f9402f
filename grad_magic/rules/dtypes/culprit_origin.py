"""The dtypes family's culprit, further back: the statement of the cell that made the odd tensor, how it made
it (from numpy, torch.tensor, an explicit cast, ...) and the spot where a fix could set the dtype instead.

May touch: the cell's ast, the traceback of the run (which top-level statement called a function of the
cell), the NameIndex (is the name a tensor, is an argument a numpy array). Never runs user code; the edit
itself is fix.py's.
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from typing import List, Optional, Sequence

import torch

from ...cell import assignments_to
from ..context import RuleContext
from ..kit import ATOMS, callee_name, lookup
from .message import torch_dtype

CASTS = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32"}


@dataclass(frozen=True)
class Origin:
    """Where the cell made a tensor, how, and the spot a fix there edits."""

    name: str
    stmt: ast.stmt
    how: str  # "numpy", "numpy_tensor", "tensor", "cast", "append", "loop", "other" (dtypes.made.*)
    spot: Optional[ast.AST] = None  # the node the fix edits; None: no fix where it was made
    # what the fix does at the spot: "cast_method" (`.double()` -> `.float()`), "dtype" (a dtype written out,
    # replaced), "suffix" (`.float()` after it), "dtype_keyword" (`, dtype=torch.float32` added to the call)
    edit: str = ""


def find_origin(ctx: RuleContext, tree: ast.Module, names: Sequence[str], lineno: int,
                want: str) -> Optional[Origin]:
    """The statement of this cell that last made one of `names` before it ran `lineno`; one with a fix first.

    NB: inside a function of the cell, its own assignments count before `lineno`, the cell's top-level ones
    before the top-level statement that called it (the outermost traceback entry in the cell).
    """
    scope = scope_of(tree, lineno)
    top = top_line(ctx) or lineno
    found: List[Origin] = []
    for name in dict.fromkeys(n for n in names if "." not in n):
        made = assignments_to(tree, name) + [s for s in ast.walk(tree) if isinstance(s, ast.Expr)
                                             and cast_of(s, name)]
        made = [s for s in made if scope_of(tree, s.lineno) is scope and s.lineno < lineno
                or scope_of(tree, s.lineno) is None and s.lineno < top]
        made.sort(key=lambda s: s.lineno)
        origin = _last_made(ctx, name, made, want)
        if origin is not None:
            found.append(origin)
    return next((o for o in found if o.spot is not None), found[0] if found else None)


def _last_made(ctx: RuleContext, name: str, made: List[ast.stmt], want: str) -> Optional[Origin]:
    """The last of `made` (statements binding `name`, in order) that made the tensor's dtype."""
    for stmt in reversed(made):
        origin = Origin(name, stmt, "loop" if isinstance(stmt, ast.For) else "other")
        if isinstance(stmt, ast.Expr) or isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name):
            origin = made_by(ctx, name, stmt, want)
        if origin.spot is None and isinstance(stmt, ast.Expr):
            continue  # NB: `model.to(device)` keeps the dtype: look further back
        if origin.spot is None and isinstance(stmt, ast.Assign) and _reads(stmt.value, name) and stmt is not made[0]:
            continue  # NB: `x = x.view(-1, 4)` keeps the dtype of the `x` made before
        # NB: a single name bound: `images, labels = next(it)` unpacks a batch, and a suffix would cast the batch
        if origin.spot is None and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name) and isinstance(ctx.names.lookup(name), torch.Tensor) \
                and isinstance(stmt.value, ATOMS):  # `torch.randint(0, 2, (6,))` -> `....float()`
            origin = Origin(name, stmt, "append", stmt.value, "suffix")
        return origin
    return None


def made_by(ctx: RuleContext, name: str, stmt: ast.stmt, want: str, value: Optional[ast.AST] = None,
            born_by: str = "") -> Origin:
    """How `stmt.value` (or `value`, a part of the statement) makes the tensor, and the spot that would give it
    dtype `want` there. `born_by`: the op the run saw make it (`tensor`), when that call sits inside the value
    (`torch.cat((x, torch.tensor([row])))`: the one `torch.tensor(...)` call is where the dtype is set)."""
    value = stmt.value if value is None else value
    if born_by in ("tensor", "as_tensor", "from_numpy"):
        inner = [c for c in ast.walk(value) if isinstance(c, ast.Call) and callee_name(c) == born_by]
        if len(inner) == 1 and inner[0] is not value:
            value = inner[0]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in CASTS \
            and not value.args and CASTS[value.func.attr] != want:  # `.double()`: say the wanted type instead
        return Origin(name, stmt, "cast", value, "cast_method")
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("to", "type") \
            and len(value.args) == 1 and dtype_literal(value.args[0]) not in (None, want):
        return Origin(name, stmt, "cast", value.args[0], "dtype")
    for node in ast.walk(value):
        if not isinstance(node, ast.Call):
            continue
        dtype_kw = next((k for k in node.keywords if k.arg == "dtype"), None)
        if dtype_kw is not None and dtype_literal(dtype_kw.value) not in (None, want):
            return Origin(name, stmt, "cast", dtype_kw.value, "numpy_dtype" if _numpy_spelling(
                ctx, dtype_kw.value) else "dtype")
        if callee_name(node) == "from_numpy" and (node is value or _reshaped(value, node)):
            return Origin(name, stmt, "numpy", node, "suffix")
        if callee_name(node) in ("tensor", "as_tensor") and dtype_kw is None and node.args and node is value \
                and not any(k.arg is None for k in node.keywords):
            how = "numpy_tensor" if _is_array(lookup(ctx, node.args[0])) else "tensor"
            return Origin(name, stmt, how, node, "dtype_keyword")
    return Origin(name, stmt, "other")


# NB: methods that keep a tensor's dtype: `torch.from_numpy(a).unsqueeze(0)` is made float where from_numpy is
KEEP_DTYPE = frozenset({"unsqueeze", "squeeze", "view", "reshape", "permute", "transpose", "contiguous", "flatten",
                        "clone", "to", "cpu", "cuda", "detach", "requires_grad_", "pin_memory"})


def _reshaped(value: ast.AST, node: ast.AST) -> bool:
    """`value` is `node` followed by methods that keep its dtype (`.to(device)` only without a dtype)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in KEEP_DTYPE \
            and not any(dtype_literal(a) for a in value.args) and not any(k.arg == "dtype" for k in value.keywords):
        value = value.func.value
        if value is node:
            return True
    return False


def dtype_literal(node: ast.AST) -> Optional[str]:
    """`torch.float64`, `torch.double`, `"float64"`, `np.float64` -> `float64`; None if not written out."""
    if isinstance(node, ast.Attribute):
        return torch_dtype(node.attr)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return torch_dtype(node.value)
    return None


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def scope_of(tree: ast.Module, lineno: int) -> Optional[ast.AST]:
    """The innermost function of the cell that holds `lineno` (None: the cell's top level)."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and \
                node.lineno <= lineno <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


def top_line(ctx: RuleContext) -> Optional[int]:
    """The cell line of the outermost traceback entry in the cell: the top-level statement that ran."""
    tb = ctx.exception.__traceback__ if ctx.exception is not None else None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == ctx.record.filename:
            return tb.tb_lineno
        tb = tb.tb_next
    return None


def cast_of(stmt: ast.Expr, name: str) -> bool:
    """`x.double()`, `x.to(...)` as a statement of its own."""
    v = stmt.value
    return isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and isinstance(v.func.value, ast.Name) \
        and v.func.value.id == name and (v.func.attr in CASTS or v.func.attr in ("to", "type"))


def _numpy_spelling(ctx: RuleContext, node: ast.AST) -> bool:
    """`np.float64` (numpy's module as the cell names it) or a dtype as a string: not torch's way."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    np = sys.modules.get("numpy")
    return isinstance(node, ast.Attribute) and np is not None and lookup(ctx, node.value) is np


def _is_array(obj: object) -> bool:
    """A numpy array. NB: numpy is not a dependency: when the session never imported it, nothing is an array."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(obj, np.ndarray)
