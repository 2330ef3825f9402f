"""Rules of the numerics family: a backward function that returned NaN (anomaly mode's NaN check).

A small family in one module, in the four seams' order: the message (torch's text -> `NanError`), the culprit
(the anomaly warning torch emits just before the error -- "Error detected in SqrtBackward0. Traceback of
forward call that caused the error: ... File "<cell>", line N" -- gives the forward op's line, in this cell
or in a helper of an earlier cell, where the card then points and fixes; an exp that fed a division), the fix (an epsilon or a clamp at that op, only when the line holds exactly one clear
call of it: `torch.sqrt(x)`, `torch.log(p)`, `a / b`) and the card (catalog keys `numerics.*`). Never reads
tensor data.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

import torch

from .. import catalog
from ..cell import assignments_to, cell_tree, enclosing_statement, node_span
from ..edits import make_fix
from ..facts import shape_text, tensor_fact
from ..graphprobe import module_params, nan_gradients
from ..model import ERROR, WARNING, Diagnosis, Fix, TextEdit
from ..names import is_module
from .context import RuleContext
from .kit import ATOMS, function_around, parenthesised, text_of
from .places import view_on, with_lines
from .registry import rule

KIND = "nan-in-backward"

# -- the message --

# torch/csrc/autograd/engine.cpp, unchanged from 1.x to 2.13:
#   "Function 'SqrtBackward0' returned nan values in its 0th output."
# (torch < 1.10 named the nodes without the trailing 0: 'SqrtBackward')
NAN_OUTPUT = re.compile(r"Function '(?P<fn>[A-Za-z_][A-Za-z0-9_]{0,200})' returned nan values in its "
                        r"(?P<index>\d{1,6})th output")
# backward node -> the forward op, as the catalog names it (key suffix), and the op the fix edits
OPS = {"Sqrt": "sqrt", "Rsqrt": "sqrt", "Log": "log", "Log2": "log", "Log10": "log", "Div": "div",
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
    return NanError(m["fn"], int(m["index"]), OPS.get(base, ""))


# -- the culprit: the forward op's line, from anomaly mode's warning --

# torch/csrc/autograd/python_anomaly_mode.cpp (warning, 1.x ... 2.13):
#   "Error detected in SqrtBackward0. Traceback of forward call that caused the error:\n  File ..."
DETECTED = re.compile(r"Error detected in (?P<fn>[A-Za-z_][A-Za-z0-9_]{0,200})\. Traceback of forward call")
FRAME = re.compile(r'File "(?P<file>[^"\n]{1,4096})", line (?P<line>\d{1,9})')


def forward_site(ctx: RuleContext, function: str) -> Optional[Tuple[str, int]]:
    """(file, line) of the forward call, from anomaly mode's warning: the innermost frame of the user's own
    code (this cell, a helper in an earlier cell, the user's file)."""
    sources = ctx.record.sources
    for w in reversed(ctx.record.warnings):
        m = DETECTED.search(w.message)
        if m is None or m["fn"] != function:
            continue
        frames = [(f["file"], int(f["line"])) for f in FRAME.finditer(w.message)]
        mine = [f for f in frames if f[0] == ctx.record.filename or sources is not None and sources.is_user(f[0])]
        return mine[-1] if mine else None
    return None


def forward_statement(ctx: RuleContext, lineno: int) -> Optional[ast.stmt]:
    tree = cell_tree(ctx.record.source)
    return enclosing_statement(tree, lineno) if tree is not None else None


def exp_before_division(ctx: RuleContext, err: NanError, lineno: Optional[int]) -> Optional[int]:
    """For a division: the line of an exp in the cell that made a name the statement reads (inf / inf, not a
    division by 0); None otherwise."""
    stmt = forward_statement(ctx, lineno) if err.op == "div" and lineno else None
    if stmt is None:
        return None
    tree = cell_tree(ctx.record.source)
    names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return next((a.lineno for name in sorted(names) for a in assignments_to(tree, name) if a is not stmt
                 for c in ast.walk(a) if is_call_of(c, "exp") or is_method_of(c, "exp")), None)


def sqrt_fed_by_pow(ctx: RuleContext, err: NanError, lineno: Optional[int]) -> Optional[int]:
    """For a pow whose statement takes no square root: the line of the one later statement of the same
    function that takes the square root of a name the pow's statement made (`sq = d.pow(2).sum(-1)` ...
    `torch.sqrt(sq)`): there sqrt's infinite gradient at 0 met the pow's 0. None otherwise."""
    stmt = forward_statement(ctx, lineno) if err.op == "pow" and lineno else None
    if not isinstance(stmt, ast.Assign) or _roots(stmt):
        return None
    made = {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    tree = cell_tree(ctx.record.source)
    later = [s for s in ast.walk(function_around(tree, stmt.lineno)) if isinstance(s, SIMPLE)
             and s.lineno > (stmt.end_lineno or stmt.lineno)
             and any(isinstance(n, ast.Name) and n.id in made for r in _roots(s) for n in ast.walk(r))]
    return later[0].lineno if len(later) == 1 and len(_roots(later[0])) == 1 else None


SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)


def _roots(stmt: ast.stmt) -> List[ast.Call]:
    return [n for n in ast.walk(stmt) if is_call_of(n, "sqrt") or is_method_of(n, "sqrt")]


def is_call_of(node: ast.AST, op: str) -> bool:
    """`torch.sqrt(x)` / `sqrt(x)`: one positional argument, no keywords (a method call is left alone)."""
    if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
        return False
    if isinstance(node.args[0], ast.Starred):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr == op and isinstance(func.value, ast.Name) and func.value.id in ("torch", "th")
    return isinstance(func, ast.Name) and func.id == op


def is_method_of(node: ast.AST, op: str) -> bool:
    """`x.sqrt()` / `(a ** 2).sum(-1).log()`: no arguments."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == op \
        and not node.args and not node.keywords and not (
            isinstance(node.func.value, ast.Name) and node.func.value.id in ("torch", "th", "math"))


# -- the fix: an epsilon or a clamp at the one op --

EPS = "1e-8"
ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


def epsilon_fix(ctx: RuleContext, err: NanError, lineno: int) -> Optional[Fix]:
    """`torch.sqrt(x + 1e-8)`, `torch.log(p.clamp_min(1e-8))`, `a / (b + 1e-8)` on the forward line."""
    stmt = forward_statement(ctx, lineno)
    op = "sqrt" if err.op == "pow" else err.op  # `sqrt(sum(d ** 2))` at 0: the infinite sqrt gradient meets the pow's 0
    if stmt is None or op not in ("sqrt", "log", "div"):
        return None
    src = ctx.record.source
    edit = _root_or_log_edit(src, stmt, op) if op != "div" else _division_edit(src, stmt)
    return make_fix(src, [edit], ctx.say(f"numerics.nan.fix_{op}", new=edit.text, lineno=lineno)) if edit else None


def _root_or_log_edit(src: str, stmt: ast.stmt, op: str) -> Optional[TextEdit]:
    calls = [n for n in ast.walk(stmt) if is_call_of(n, op) or is_method_of(n, op)]
    if len(calls) != 1:
        return None
    method = is_method_of(calls[0], op)
    arg = calls[0].func.value if method else calls[0].args[0]
    text = text_of(src, arg)
    start, end = node_span(src, arg)
    if op == "log":
        return TextEdit(start, end, f"{parenthesised(text, arg)}.clamp_min({EPS})")
    new = f"{text} + {EPS}" if _plain_sum_ok(arg) else f"({text}) + {EPS}"
    if method and not (src[start - 1:start] == "(" and src[end:end + 1] == ")"):
        new = f"({new})"
    return TextEdit(start, end, new)


def _division_edit(src: str, stmt: ast.stmt) -> Optional[TextEdit]:
    divs = [n for n in ast.walk(stmt) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)]
    if len(divs) != 1:
        return None
    arg = divs[0].right
    text = text_of(src, arg)
    start, end = node_span(src, arg)
    inner = text if _plain_sum_ok(arg) else f"({text})"
    in_parentheses = src[start - 1:start] == "(" and src[end:end + 1] == ")"
    return TextEdit(start, end, f"{inner} + {EPS}" if in_parentheses else f"({inner} + {EPS})")


def _plain_sum_ok(node: ast.AST) -> bool:
    """Whether ` + eps` can follow the expression's text and still add to all of it."""
    if isinstance(node, ATOMS):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return True
    return isinstance(node, ast.BinOp) and isinstance(node.op, ARITH)


# -- the card --

@rule(KIND, raises=RuntimeError, parse=parse_nan_error, matches=(
    "Function 'SqrtBackward0' returned nan values in its 0th output. (anomaly mode's NaN check)",
), fix="an epsilon or a clamp at the op on the forward line (`torch.sqrt(x + 1e-8)`, "
       "`torch.log(p.clamp_min(1e-8))`, `a / (b + 1e-8)`), when that op is one clear call")
def nan_in_backward(ctx: RuleContext, err: NanError) -> Diagnosis:
    """A backward function returned NaN: the forward op is undefined or infinite at its input."""
    site = forward_site(ctx, err.function)
    # NB: the op may be in a helper of an earlier cell: the card is worded and fixed there (a view on that cell)
    at = ctx if site is None or site[0] == ctx.record.filename else view_on(ctx, *site)
    op_line = site[1] if site is not None and at is not None else None
    at = at or ctx
    op_line = sqrt_fed_by_pow(at, err, op_line) or op_line
    exp_line = exp_before_division(at, err, op_line)
    fix = epsilon_fix(at, err, op_line) if op_line and exp_line is None else None
    why = [at.say("numerics.nan.why", function=err.function),
           at.say(f"numerics.nan.cause.{'exp' if exp_line else err.op or 'other'}")]
    if fix is None:
        why.append(at.say("numerics.nan.why_no_line" if not op_line else "numerics.nan.why_no_fix_exp"
                          if exp_line else "numerics.nan.why_no_fix", lineno=exp_line))
    backward_line = ctx.record.error_lineno
    here = at is ctx
    what = ctx.say("numerics.nan.what" if op_line else "numerics.nan.what_no_line", function=err.function,
                   lineno=op_line or "?", backward=backward_line or "?") if here else catalog.sentences(
        [at.say("numerics.nan.what_op", lineno=op_line), ctx.say("numerics.nan.what_backward",
                                                                 backward=backward_line or "?")], ctx.language)
    d = at.diagnosis(
        KIND, ERROR, title=at.say("numerics.nan.title", function=err.function),
        summary=at.say("numerics.nan.summary", function=err.function, output=err.output), what=what,
        why=catalog.sentences(why, ctx.language), where=at.where(op_line or backward_line),
        lines=sorted({n for n in (exp_line, op_line, backward_line if here else None) if n}),
        names=_line_names(at, op_line), tensors=at.facts_on_line(op_line) if op_line else (), fix=fix)
    return d if here else with_lines(d, ctx, [backward_line])


def _line_names(ctx: RuleContext, lineno: Optional[int]) -> List[str]:
    return [f.name for f in ctx.facts_on_line(lineno)] if lineno else []


# -- NaN gradients left by a run without the NaN check (--fast, %gradcheck on): no error, a warning --

NAN_GRADS = "nan-gradients"
SHOWN_PARAMS = 4
MAX_LOOKED = 10_000  # tensors the named-leaves check looks at


@rule(NAN_GRADS, severity=WARNING, matches=(
    "silent: after a run without anomaly mode's NaN check (--fast, %gradcheck on, --no-nan-check), the .grad of "
    "the parameters the run stepped or touched holds NaN",
), fix="none: the card proposes %%gradcheck (full anomaly mode), which stops backward() at the op")
def nan_gradients_left(ctx: RuleContext) -> Optional[Diagnosis]:
    """Gradients hold NaN at the end of a run whose backward() had no NaN check: say which, propose full mode."""
    probed = getattr(ctx.record, "probed", None)
    if probed is None or ctx.record.focus is not None:
        return None
    found = [(n.ref(), n) for n in probed.nan if n.ref is not None]
    if "backward" in ctx.record.source:  # NB: a backward() this cell called: its leaves' gradients are this run's
        others = (t for t in _named_leaves(ctx) if id(t) not in probed.checked)
        found += [(t, n) for n in nan_gradients(others) for t in [n.ref()] if n.ref is not None]
    params = list({id(t): t for t, _ in found if t is not None}.values())
    if not params:
        return None
    named = [(ctx.names.name_for(p), p) for p in params]
    shown = [f"`{n}`" if n else ctx.say("numerics.nan_grads.unnamed", shape=shape_text(p.shape))
             for n, p in named[:SHOWN_PARAMS]]
    more = ctx.say("numerics.nan_grads.more", count=len(params) - SHOWN_PARAMS) if len(params) > SHOWN_PARAMS else ""
    names = catalog.listing(shown, ctx.language) + more
    step = next((s.lineno for s in reversed(ctx.record.steps) if s.lineno), None)
    return ctx.diagnosis(
        NAN_GRADS, WARNING, title=ctx.say("numerics.nan_grads.title", names=names),
        summary=ctx.say("numerics.nan_grads.summary", count=len(params)),
        what=ctx.say("numerics.nan_grads.what", names=names), why=ctx.say("numerics.nan_grads.why"),
        where=ctx.where(step), lines=[step], names=[n for n, _ in named if n],
        tensors=[tensor_fact(n, p) for n, p in named[:SHOWN_PARAMS] if n])


def _named_leaves(ctx: RuleContext) -> Iterator[torch.Tensor]:
    """The leaf tensors that require grad and the parameters of the modules the run's code names (touched)."""
    looked = 0
    for _, obj in ctx.names.objects():
        looked += 1
        if looked > MAX_LOOKED:
            return
        if type(obj) in (torch.Tensor, torch.nn.Parameter) and obj.is_leaf and obj.requires_grad:
            yield obj
        elif is_module(obj):
            yield from module_params(obj)
