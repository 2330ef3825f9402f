"""Rules of the numerics family: a backward function that returned NaN (anomaly mode's NaN check).

Reads the error message, and the anomaly warning torch emits just before it ("Error detected in
SqrtBackward0. Traceback of forward call that caused the error: ... File "<cell>", line N") to find the
forward op and its cell line. The fix adds an epsilon or a clamp at that op, only when the line holds
exactly one clear call of it (`torch.sqrt(x)`, `torch.log(p)`, `a / b`); never reads tensor data.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..cell import assignments_to, cell_tree, enclosing_statement, node_span, segment
from ..edits import make_fix
from ..model import ERROR, Diagnosis, Fix, TextEdit
from .context import RuleContext
from .registry import rule

KIND = "nan-in-backward"
# torch/csrc/autograd/engine.cpp, unchanged from 1.x to 2.13:
#   "Function 'SqrtBackward0' returned nan values in its 0th output."
# (torch < 1.10 named the nodes without the trailing 0: 'SqrtBackward')
NAN_OUTPUT = re.compile(r"Function '(?P<fn>[A-Za-z_][A-Za-z0-9_]{0,200})' returned nan values in its "
                        r"(?P<index>\d{1,6})th output")
# torch/csrc/autograd/python_anomaly_mode.cpp (warning, 1.x ... 2.13):
#   "Error detected in SqrtBackward0. Traceback of forward call that caused the error:\n  File ..."
DETECTED = re.compile(r"Error detected in (?P<fn>[A-Za-z_][A-Za-z0-9_]{0,200})\. Traceback of forward call")
FRAME = re.compile(r'File "(?P<file>[^"\n]{1,4096})", line (?P<line>\d{1,9})')
EPS = "1e-8"
_ATOMS = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant)
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)
# backward node -> the forward op, as the catalog names it (key suffix), and the op the fix edits
_OPS = {"Sqrt": "sqrt", "Rsqrt": "sqrt", "Log": "log", "Log2": "log", "Log10": "log", "Div": "div",
        "Pow": "pow", "Exp": "exp", "Norm": "norm", "LinalgVectorNorm": "norm"}


@dataclass(frozen=True)
class NanError:
    function: str  # "SqrtBackward0"
    output: int  # which output of the backward function held NaN
    op: str  # "sqrt", "log", "div", "pow", "exp", "norm" or "" (another op)


def parse_nan_error(message: str) -> Optional[NanError]:
    m = NAN_OUTPUT.search(message)
    if m is None:
        return None
    base = re.sub(r"Backward\d*\Z", "", m["fn"])
    return NanError(m["fn"], int(m["index"]), _OPS.get(base, ""))


def forward_line(ctx: RuleContext, function: str) -> Optional[int]:
    """The cell line of the forward call, from anomaly mode's warning (the innermost frame in the cell)."""
    for w in reversed(ctx.record.warnings):
        m = DETECTED.search(w.message)
        if m is None or m["fn"] != function:
            continue
        lines = [int(f["line"]) for f in FRAME.finditer(w.message) if f["file"] == ctx.record.filename]
        return lines[-1] if lines else None
    return None


@rule(KIND, matches=(
    "Function 'SqrtBackward0' returned nan values in its 0th output. (anomaly mode's NaN check)",
), fix="an epsilon or a clamp at the op on the forward line (`torch.sqrt(x + 1e-8)`, "
       "`torch.log(p.clamp_min(1e-8))`, `a / (b + 1e-8)`), when that op is one clear call")
def nan_in_backward(ctx: RuleContext) -> Optional[Diagnosis]:
    """A backward function returned NaN: the forward op is undefined or infinite at its input."""
    if not isinstance(ctx.exception, RuntimeError):
        return None
    err = parse_nan_error(ctx.error_message)
    if err is None:
        return None
    op_line = forward_line(ctx, err.function)
    fix, exp_line = _fix(ctx, err, op_line) if op_line else (None, None)
    names = _line_names(ctx, op_line)
    why = [ctx.say("numerics.nan.why", function=err.function)]
    why.append(ctx.say(f"numerics.nan.cause.{'exp' if exp_line else err.op or 'other'}"))
    if fix is None:
        why.append(ctx.say("numerics.nan.why_no_line" if not op_line else "numerics.nan.why_no_fix_exp"
                           if exp_line else "numerics.nan.why_no_fix", lineno=exp_line))
    where_line = op_line or ctx.record.error_lineno
    what_key = "numerics.nan.what" if op_line else "numerics.nan.what_no_line"
    return ctx.diagnosis(
        KIND, ERROR, title=ctx.say("numerics.nan.title", function=err.function),
        summary=ctx.say("numerics.nan.summary", function=err.function, output=err.output),
        what=ctx.say(what_key, function=err.function, lineno=op_line or "?",
                     backward=ctx.record.error_lineno or "?"),
        why=("" if ctx.language == "zh" else " ").join(why), where=ctx.where(where_line),
        lines=sorted({n for n in (exp_line, op_line, ctx.record.error_lineno) if n}), names=names,
        tensors=ctx.facts_on_line(op_line) if op_line else (), fix=fix)


def _line_names(ctx: RuleContext, lineno: Optional[int]) -> List[str]:
    return [f.name for f in ctx.facts_on_line(lineno)] if lineno else []


def _fix(ctx: RuleContext, err: NanError, lineno: int) -> Tuple[Optional[Fix], Optional[int]]:
    """The fix, and the line of an exp that feeds a division (then there is none)."""
    src = ctx.record.source
    tree = cell_tree(src)
    stmt = enclosing_statement(tree, lineno) if tree is not None else None
    if stmt is None:
        return None, None
    op = err.op
    if op == "pow":  # `sqrt(sum(d ** 2))` at 0: the infinite sqrt gradient meets the pow's 0
        op = "sqrt"
    if op in ("sqrt", "log"):
        calls = [n for n in ast.walk(stmt) if _is_call_of(n, op) or _is_method_of(n, op)]
        if len(calls) != 1:
            return None, None
        method = _is_method_of(calls[0], op)
        arg = calls[0].func.value if method else calls[0].args[0]
        text = segment(src, arg) or ""
        start, end = node_span(src, arg)
        atom = isinstance(arg, _ATOMS[:4])
        if op == "sqrt":
            new = f"{text} + {EPS}" if _plain_sum_ok(arg) else f"({text}) + {EPS}"
            if method and not (src[start - 1:start] == "(" and src[end:end + 1] == ")"):
                new = f"({new})"
        else:
            new = f"{text}.clamp_min({EPS})" if atom else f"({text}).clamp_min({EPS})"
        key = f"numerics.nan.fix_{op}"
    elif op == "div":
        exp_line = _fed_by_exp(tree, stmt)
        if exp_line is not None:
            return None, exp_line
        divs = [n for n in ast.walk(stmt) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)]
        if len(divs) != 1:
            return None, None
        arg = divs[0].right
        text = segment(src, arg) or ""
        start, end = node_span(src, arg)
        inner = text if _plain_sum_ok(arg) else f"({text})"
        parenthesised = src[start - 1:start] == "(" and src[end:end + 1] == ")"
        new = f"{inner} + {EPS}" if parenthesised else f"({inner} + {EPS})"
        key = "numerics.nan.fix_div"
    else:
        return None, None
    edit = TextEdit(start, end, new)
    return make_fix(src, [edit], ctx.say(key, new=new, lineno=lineno)), None


def _is_call_of(node: ast.AST, op: str) -> bool:
    """`torch.sqrt(x)` / `sqrt(x)`: one positional argument, no keywords (a method call is left alone)."""
    if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
        return False
    if isinstance(node.args[0], ast.Starred):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr == op and isinstance(func.value, ast.Name) and func.value.id in ("torch", "th")
    return isinstance(func, ast.Name) and func.id == op


def _is_method_of(node: ast.AST, op: str) -> bool:
    """`x.sqrt()` / `(a ** 2).sum(-1).log()`: no arguments."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == op \
        and not node.args and not node.keywords and not (
            isinstance(node.func.value, ast.Name) and node.func.value.id in ("torch", "th", "math"))


def _fed_by_exp(tree: ast.Module, stmt: ast.stmt) -> Optional[int]:
    """The line of an exp in the cell that made a name the statement reads (inf / inf, not a division by 0)."""
    names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return next((a.lineno for name in sorted(names) for a in assignments_to(tree, name) if a is not stmt
                 for c in ast.walk(a) if _is_call_of(c, "exp") or _is_method_of(c, "exp")), None)


def _plain_sum_ok(node: ast.AST) -> bool:
    """Whether ` + eps` can follow the expression's text and still add to all of it."""
    if isinstance(node, _ATOMS):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return True
    return isinstance(node, ast.BinOp) and isinstance(node.op, _ARITH)
