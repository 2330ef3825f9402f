"""Rules of the dtypes family: loss targets of the wrong type, and tensors of two float types meeting in one op.

Reads the error message (torch 1.x ... 2.13 wordings), the cell's syntax (the loss call on the failing line,
the statement that made the odd tensor) and the dtypes of the tensors and modules the failing line names
(metadata only). Fixes are one spot in the cell: the dtype set where the tensor is made (`.float()` after
`torch.from_numpy`, `dtype=torch.float32` in `torch.tensor`, `.double()` -> `.float()`, `.float()` ->
`.long()`), else a conversion at the use. `target-dtype` is tried first: the same message can be either.
"""
from __future__ import annotations

import ast
import re
import types
from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np
import torch

from ..facts import dtype_name, fact_for
from ..cell import assignments_to, cell_tree, enclosing_statement, node_span, segment
from ..edits import make_fix
from ..model import ERROR, Diagnosis, Fix, TensorFact, TextEdit
from .context import RuleContext
from .registry import rule

TARGET_KIND = "target-dtype"
MISMATCH_KIND = "dtype-mismatch"

# -- the messages (every one reproduced with torch 2.13 unless a version is named) --
# torch >= 2.12 (nll_loss / cross_entropy, class-index targets): "... but got Float" (also Double, Int)
_TARGET_LONG = re.compile(r"expected target dtype to be Long or Byte, but got (?P<found>[A-Za-z0-9]+)")
# torch 1.x: "Expected object of scalar type Long but got scalar type Float for argument #2 'target' ..."
_OLD_ARG = re.compile(r"Expected object of scalar type (?P<expected>[A-Za-z0-9]+) but got scalar type "
                      r"(?P<found>[A-Za-z0-9]+) for argument #\d+ '(?P<arg>[A-Za-z0-9_]+)'")
# torch 1.7 ... 2.11 nll_loss targets, and in 2.13 still bmm, einsum, conv without bias ...
_EXPECTED_FOUND = re.compile(r"expected scalar type (?P<expected>[A-Za-z0-9]+) but found (?P<found>[A-Za-z0-9]+)")
# TensorIterator's same-dtype check: binary_cross_entropy (2.13), mse_loss backward (torch 1.x)
_FOUND_EXPECTED = re.compile(r"Found dtype (?P<found>[A-Za-z0-9]+) but expected (?P<expected>[A-Za-z0-9]+)")
# binary_cross_entropy_with_logits with integer targets (2.13)
_CAST = re.compile(r"result type (?P<result>[A-Za-z0-9]+) can't be cast to the desired output type "
                   r"(?P<found>[A-Za-z0-9]+)")
# CUDA nll_loss with float targets (torch 1.10 ... 2.11), from torch's Loss.cu dispatch name
_CUDA_TARGET = re.compile(r"\"nll_loss[a-z0-9_]*\" not implemented for '(?P<found>[A-Za-z0-9]+)'")
# integer logits: 2.13 NotImplementedError, RuntimeError before 2.0; "host_softmax" is CUDA / torch 1.x
_INT_LOGITS = re.compile(r"\"(?:log_softmax|softmax|host_softmax|nll_loss)[a-z0-9_]*\" not implemented for "
                         r"'(?P<found>Long|Int|Short|Char|Byte|Bool)'")
_MISMATCH: Tuple[re.Pattern, ...] = (
    re.compile(r"mat1 and mat2 must have the same dtype(?:, but got (?P<a>[A-Za-z0-9]+) and "
               r"(?P<b>[A-Za-z0-9]+))?"),  # nn.Linear, addmm: torch >= 1.13 ("but got" since 2.1)
    re.compile(r"expected m1 and m2 to have the same dtype, but got: (?P<a>[A-Za-z0-9:]+) != "
               r"(?P<b>[A-Za-z0-9:]+)"),  # @, torch.mm, matmul
    re.compile(r"expected both vectors to have same dtype, but found (?P<a>[A-Za-z0-9]+) and "
               r"(?P<b>[A-Za-z0-9]+)"),  # dot, 1-D @
    # conv: "(double) and bias type (float)" (2.x), "(torch.DoubleTensor) and weight type (torch.FloatTensor)"
    re.compile(r"Input type \((?P<a>[A-Za-z0-9_.:]+)\) and (?:weight|bias) type \((?P<b>[A-Za-z0-9_.:]+)\) "
               r"should be the same"),
    re.compile(r"RNN input dtype \((?P<a>[a-z0-9.]+)\) does not match weight dtype \((?P<b>[a-z0-9.]+)\)"),
    re.compile(r"mixed dtype \(CPU\): all inputs must share same datatype"),  # BatchNorm, LayerNorm
    re.compile(r"addmv input tensors must have the same dtype"),  # torch.mv
    _EXPECTED_FOUND, _FOUND_EXPECTED,
)
_SCALAR = {"double": "float64", "float": "float32", "half": "float16", "bfloat16": "bfloat16",
           "long": "int64", "int": "int32", "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool",
           "float64": "float64", "float32": "float32", "float16": "float16", "int64": "int64", "int32": "int32"}
_INTEGRAL = {"int64", "int32", "int16", "int8", "uint8", "bool"}
_CLASS_LOSSES = {"cross_entropy", "nll_loss", "CrossEntropyLoss", "NLLLoss"}
_BINARY_LOSSES = {"binary_cross_entropy", "binary_cross_entropy_with_logits", "BCELoss", "BCEWithLogitsLoss"}
_WRITTEN = {"float32": "torch.float32", "int64": "torch.long", "float64": "torch.float64"}
_METHOD = {"float32": "float", "int64": "long", "float64": "double"}
_SAID_NUMPY = ("cast", "numpy", "numpy_tensor")  # origins whose sentence already says where float64 came from
_CASTS = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32"}


def torch_dtype(text: Optional[str]) -> Optional[str]:
    """`Double`, `double`, `c10::Half`, `torch.DoubleTensor`, `torch.float64` -> `float64` (None if unknown)."""
    if not text:
        return None
    t = text.lower().replace("c10::", "").replace("torch.", "").replace("cuda.", "")
    t = t[:-len("tensor")] if t.endswith("tensor") else t
    return _SCALAR.get(t)


# -- the loss call on the failing line --

@dataclass(frozen=True)
class LossCall:
    call: ast.Call
    loss: str  # "cross_entropy", "BCEWithLogitsLoss", ...
    written: str  # how the cell calls it: `criterion`, `F.cross_entropy`
    input: Optional[ast.AST]
    target: Optional[ast.AST]

    @property
    def wants(self) -> str:
        return "int64" if self.loss in _CLASS_LOSSES else "float32"


def _segment(ctx: RuleContext, node: Optional[ast.AST]) -> str:
    return (segment(ctx.record.source, node) or "") if node is not None else ""


def find_loss_call(ctx: RuleContext, stmt: ast.stmt) -> Optional[LossCall]:
    found = []
    for node in ast.walk(stmt):
        if not isinstance(node, ast.Call):
            continue
        name = _loss_name(ctx, node.func)
        if name in _CLASS_LOSSES or name in _BINARY_LOSSES:
            kw = {k.arg: k.value for k in node.keywords}
            first = node.args[0] if node.args else kw.get("input")
            second = node.args[1] if len(node.args) > 1 else kw.get("target")
            found.append(LossCall(node, name, _segment(ctx, node.func), first, second))
    return found[0] if len(found) == 1 else None


def _loss_name(ctx: RuleContext, func: ast.AST) -> Optional[str]:
    """`criterion` -> "CrossEntropyLoss", `F.nll_loss` -> "nll_loss", `nn.BCELoss()` (called at once) ->
    "BCELoss"; None for a constructor `nn.BCELoss` itself."""
    if isinstance(func, ast.Call):
        inner = ctx.names.lookup(_segment(ctx, func.func))
        return inner.__name__ if isinstance(inner, type) else None
    written = _segment(ctx, func)
    obj = ctx.names.lookup(written) if written else None
    if isinstance(obj, type):
        return None
    if isinstance(obj, torch.nn.Module):
        return type(obj).__name__
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        return obj.__name__
    return written.rpartition(".")[2]  # NB: called through something the names do not hold: as written


def _loss_text(ctx: RuleContext, loss: LossCall) -> str:
    base = loss.written[:-2] if loss.written.endswith("()") else loss.written
    return f"`{loss.written}`" if base.rpartition(".")[2] == loss.loss else \
        ctx.say("dtypes.operand", name=loss.written, dtype=loss.loss)


def _dtype_of(ctx: RuleContext, node: Optional[ast.AST]) -> Optional[str]:
    """The dtype of a plain (dotted) name the failing frame holds, else None: nothing is evaluated."""
    text = _segment(ctx, node)
    if not text or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", text):
        return None
    obj = ctx.names.lookup(text)
    return dtype_name(obj.dtype) if isinstance(obj, torch.Tensor) else None


# -- where a tensor was made, and the edit that gives it the right dtype there --

@dataclass(frozen=True)
class Origin:
    name: str
    stmt: ast.stmt
    how: str  # "numpy", "numpy_tensor", "tensor", "cast", "append", "loop", "other"
    edit: Optional[TextEdit]


def _is(ctx: RuleContext, func: ast.AST, *names: str) -> bool:
    return _segment(ctx, func).rpartition(".")[2] in names


def _dtype_literal(node: ast.AST) -> Optional[str]:
    """`torch.float64`, `torch.double`, `"float64"`, `np.float64` -> `float64`; None if not written out."""
    if isinstance(node, ast.Attribute):
        return torch_dtype(node.attr)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return torch_dtype(node.value)
    return None


def _made_by(ctx: RuleContext, value: ast.AST, want: str) -> Tuple[str, Optional[TextEdit]]:
    """How `value` (an assigned expression) makes the tensor, and the edit giving it dtype `want` there."""
    src = ctx.record.source
    method = _METHOD[want]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _CASTS \
            and not value.args and _CASTS[value.func.attr] != want:  # `.double()`: say the wanted type instead
        start, end = node_span(src, value)
        return "cast", TextEdit(end - len(value.func.attr) - 2, end, f"{method}()")
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("to", "type") \
            and len(value.args) == 1 and _dtype_literal(value.args[0]) not in (None, want):
        start, end = node_span(src, value.args[0])
        return "cast", TextEdit(start, end, _WRITTEN[want])
    for node in ast.walk(value):
        if not isinstance(node, ast.Call):
            continue
        dtype_kw = next((k for k in node.keywords if k.arg == "dtype"), None)
        if dtype_kw is not None and _dtype_literal(dtype_kw.value) not in (None, want):
            start, end = node_span(src, dtype_kw.value)
            return "cast", TextEdit(start, end, _WRITTEN[want])
        if _is(ctx, node.func, "from_numpy") and node is value:
            _, end = node_span(src, node)
            return "numpy", TextEdit(end, end, f".{method}()")
        if _is(ctx, node.func, "tensor", "as_tensor") and dtype_kw is None and node.args and node is value \
                and not any(k.arg is None for k in node.keywords):
            _, end = node_span(src, node)
            last = max([*node.args, *node.keywords], key=lambda a: (a.end_lineno, a.end_col_offset))
            _, at = node_span(src, last)
            arg = ctx.names.lookup(_segment(ctx, node.args[0]))
            how = "numpy_tensor" if isinstance(arg, np.ndarray) else "tensor"
            return how, TextEdit(at, at, f", dtype={_WRITTEN[want]}")
    return "other", None


def find_origin(ctx: RuleContext, tree: ast.Module, names: List[str], lineno: int, want: str) -> Optional[Origin]:
    """The statement of this cell that last made one of `names` before it ran `lineno`; one with a fix first.

    NB: inside a function of the cell, its own assignments count before `lineno`, the cell's top-level ones
    before the top-level statement that called it (the outermost traceback entry in the cell).
    """
    scope = _scope(tree, lineno)
    top = _top_line(ctx) or lineno
    found: List[Origin] = []
    for name in dict.fromkeys(n for n in names if "." not in n):
        made = assignments_to(tree, name) + [s for s in ast.walk(tree) if isinstance(s, ast.Expr)
                                             and _cast_of(s, name)]
        made = [s for s in made if _scope(tree, s.lineno) is scope and s.lineno < lineno
                or _scope(tree, s.lineno) is None and s.lineno < top]
        made.sort(key=lambda s: s.lineno)
        for stmt in reversed(made):
            how, edit = "loop" if isinstance(stmt, ast.For) else "other", None
            if isinstance(stmt, ast.Expr) or isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                how, edit = _made_by(ctx, stmt.value, want)
            if edit is None and isinstance(stmt, ast.Expr):
                continue  # NB: `model.to(device)` keeps the dtype: look further back
            if edit is None and isinstance(stmt, ast.Assign) and _reads(stmt.value, name) and stmt is not made[0]:
                continue  # NB: `x = x.view(-1, 4)` keeps the dtype of the `x` made before
            if edit is None and isinstance(stmt, ast.Assign) and isinstance(ctx.names.lookup(name), torch.Tensor):
                edit = _append_cast(ctx, stmt.value, want)
                how = "append" if edit is not None else how
            found.append(Origin(name, stmt, how, edit))
            break
    return next((o for o in found if o.edit is not None), found[0] if found else None)


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _scope(tree: ast.Module, lineno: int) -> Optional[ast.AST]:
    """The innermost function of the cell that holds `lineno` (None: the cell's top level)."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and \
                node.lineno <= lineno <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


def _top_line(ctx: RuleContext) -> Optional[int]:
    tb = ctx.exception.__traceback__ if ctx.exception is not None else None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == ctx.record.filename:
            return tb.tb_lineno
        tb = tb.tb_next
    return None


def _append_cast(ctx: RuleContext, value: ast.AST, want: str) -> Optional[TextEdit]:
    """`torch.randint(0, 2, (6,))` -> `torch.randint(0, 2, (6,)).float()`: a call or name, made `want`."""
    if not isinstance(value, (ast.Call, ast.Name, ast.Attribute, ast.Subscript)):
        return None
    _, end = node_span(ctx.record.source, value)
    return TextEdit(end, end, f".{_METHOD[want]}()")


def _cast_of(stmt: ast.Expr, name: str) -> bool:
    v = stmt.value
    return isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and isinstance(v.func.value, ast.Name) \
        and v.func.value.id == name and (v.func.attr in _CASTS or v.func.attr in ("to", "type"))


def cast_at_use(ctx: RuleContext, node: Optional[ast.AST], want: str) -> Optional[TextEdit]:
    """`y` -> `y.long()` (`(a + b).long()` for an expression) at the use on the failing line."""
    if node is None:
        return None
    method = _METHOD[want]
    start, end = node_span(ctx.record.source, node)
    text = ctx.record.source[start:end]
    atom = isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
    return TextEdit(start, end, f"{text}.{method}()" if atom else f"({text}).{method}()")


def _statement(ctx: RuleContext) -> Tuple[Optional[ast.Module], Optional[ast.stmt]]:
    lineno = ctx.record.error_lineno
    tree = cell_tree(ctx.record.source) if lineno else None
    stmt = enclosing_statement(tree, lineno) if tree is not None else None
    if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.FunctionDef, ast.ClassDef, ast.Try)):
        stmt = None  # NB: the failing line is a block's header: only its own expression counts
    return tree, stmt


def _names_of(ctx: RuleContext, node: Optional[ast.AST]) -> List[str]:
    """The user's names for the object `node` writes out: as written first, then the others (by identity)."""
    text = _segment(ctx, node)
    obj = ctx.names.lookup(text) if text else None
    return [text, *ctx.names.names_for(obj)] if obj is not None else [text] if text else []


def _fix(ctx: RuleContext, origin: Optional[Origin], use: Optional[ast.AST],
         want: str, name: str) -> Optional[Fix]:
    src = ctx.record.source
    method = _METHOD[want]
    if origin is not None and origin.edit is not None:
        line = ctx.line(origin.stmt.lineno)
        return make_fix(src, [origin.edit], ctx.say(f"dtypes.fix.{origin.how}", name=origin.name, lineno=line.lineno,
                                                    dtype=want, written=_WRITTEN[want], method=method))
    edit = cast_at_use(ctx, use, want)
    if edit is None:
        return None
    return make_fix(src, [edit], ctx.say("dtypes.fix.use", name=name or _segment(ctx, use), method=method,
                                         lineno=ctx.record.error_lineno, dtype=want))


def _why_made(ctx: RuleContext, origin: Optional[Origin], name: str, dtype: str) -> str:
    if origin is None:
        return ctx.say("dtypes.made.unknown", name=name, dtype=dtype)
    text = ctx.record.source_line(origin.stmt.lineno).strip()
    made = ctx.say(f"dtypes.made.{origin.how}", name=origin.name, dtype=dtype, lineno=origin.stmt.lineno,
                   code=text)
    if origin.name != name:
        made = ctx.say("dtypes.alias", name=name, alias=origin.name) + ("" if ctx.language == "zh" else " ") + made
    return made


# -- target-dtype --

def _target_message(message: str) -> Tuple[Optional[str], Optional[str], bool]:
    """(wanted dtype, found dtype, whether the message alone says it is the target); (None, None, _) if not."""
    m = _TARGET_LONG.search(message)
    if m:
        return "int64", torch_dtype(m["found"]), True
    m = _OLD_ARG.search(message)
    if m and m["arg"] == "target":
        return torch_dtype(m["expected"]), torch_dtype(m["found"]), True
    m = _CUDA_TARGET.search(message)
    if m and torch_dtype(m["found"]) not in _INTEGRAL:
        return "int64", torch_dtype(m["found"]), True
    m = _EXPECTED_FOUND.search(message)
    if m and torch_dtype(m["expected"]) == "int64" and torch_dtype(m["found"]) not in _INTEGRAL:
        return "int64", torch_dtype(m["found"]), False
    m = _FOUND_EXPECTED.search(message) or _CAST.search(message)
    if m and torch_dtype(m["found"]) in _INTEGRAL:
        return "float32", torch_dtype(m["found"]), False
    return None, None, False


@rule(TARGET_KIND, matches=(
    "expected target dtype to be Long or Byte, but got Float (torch >= 2.12; also Double, Int)",
    "expected scalar type Long but found Float (nll_loss / cross_entropy, torch 1.7 ... 2.11)",
    "Found dtype Long but expected Float (binary_cross_entropy with integer labels)",
    "result type Float can't be cast to the desired output type Long (BCEWithLogits with integer labels)",
), fix="`.long()` / `.float()` where the targets are made, else on the loss call's target")
def target_dtype(ctx: RuleContext) -> Optional[Diagnosis]:
    """A loss given targets of the wrong type: float class labels, or integer labels for a binary loss."""
    if not isinstance(ctx.exception, Exception):
        return None
    want, found, sure = _target_message(ctx.error_message)
    if want is None:
        return None
    tree, stmt = _statement(ctx)
    loss = find_loss_call(ctx, stmt) if stmt is not None else None
    if loss is not None and loss.wants != want:
        return None
    if not sure:  # NB: the same words come from other ops: only a loss whose target has the found type
        target_dtype_now = _dtype_of(ctx, loss.target) if loss is not None else None
        if loss is None or target_dtype_now not in (None, found) or \
                target_dtype_now is None and _dtype_of(ctx, loss.input) == found:
            return None
    lineno = ctx.record.error_lineno
    plain = loss is not None and isinstance(loss.target, (ast.Name, ast.Attribute))
    names = _names_of(ctx, loss.target) if plain else []
    name = names[0] if names else ""
    origin = find_origin(ctx, tree, names, lineno, want) if tree is not None and names else None
    fix = _fix(ctx, origin, loss.target, want, name) if loss is not None else None
    found = found or "?"
    family = "class" if want == "int64" else "binary"
    loss_text = _loss_text(ctx, loss) if loss is not None else ctx.say("dtypes.the_loss")
    target = f"`{_segment(ctx, loss.target)}`" if loss is not None and loss.target is not None \
        else ctx.say("dtypes.the_target")
    why = [ctx.say(f"dtypes.target.why.{family}", loss=loss_text, found=found, want=want)]
    if name:
        why.append(_why_made(ctx, origin, name, found))
    lines = sorted({n for n in (origin.stmt.lineno if origin else None, lineno) if n})
    tensors = _facts(ctx, names[:1])
    return ctx.diagnosis(
        TARGET_KIND, ERROR, title=ctx.say(f"dtypes.target.title.{family}", loss=loss_text, found=found),
        summary=ctx.say(f"dtypes.target.summary.{family}"),
        what=ctx.say("dtypes.target.what", loss=loss_text, target=target, found=found, want=want,
                     lineno=lineno or "?"),
        why=("" if ctx.language == "zh" else " ").join(why), where=ctx.where(lineno), lines=lines,
        names=[name] if name else [], tensors=tensors, fix=fix)


def _facts(ctx: RuleContext, names: List[str]) -> List[TensorFact]:
    facts = []
    for name in names:
        try:
            fact = fact_for(name, ctx.names.lookup(name))
        except Exception:  # NB: a proxy whose attributes raise is no fact
            fact = None
        if fact is not None:
            facts.append(fact)
    return facts


# -- dtype-mismatch --

def _mismatch_message(message: str) -> Optional[Tuple[Optional[str], Optional[str], bool]]:
    """(one dtype, the other, whether it is integer scores fed to a softmax); None if not this kind."""
    m = _INT_LOGITS.search(message)
    if m:
        return torch_dtype(m["found"]), "float32", True
    for pattern in _MISMATCH:
        m = pattern.search(message)
        if m:
            groups = m.groupdict()
            a_text, b_text = groups.get("a") or groups.get("found"), groups.get("b") or groups.get("expected")
            if ("cuda" in (a_text or "").lower()) != ("cuda" in (b_text or "").lower()):
                return None  # NB: "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor)"
            a, b = torch_dtype(a_text), torch_dtype(b_text)
            return (None if a is not None and a == b else (a, b, False))
    return None


def operands(ctx: RuleContext, stmt: ast.stmt) -> List[Tuple[str, ast.AST, object]]:
    """(name, node, object) for each tensor or module the statement reads, outermost dotted name first."""
    found, covered = [], set()
    for node in ast.walk(stmt):
        if id(node) in covered or not isinstance(node, (ast.Name, ast.Attribute)) or \
                not isinstance(getattr(node, "ctx", None), ast.Load):
            continue
        text = _segment(ctx, node)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", text):
            continue
        obj = ctx.names.lookup(text)
        if isinstance(obj, (torch.Tensor, torch.nn.Module)):
            found.append((text, node, obj))
            covered.update(id(n) for n in ast.walk(node))
    return found


def _dtype_text(obj: object) -> str:
    if isinstance(obj, torch.Tensor):
        return dtype_name(obj.dtype)
    return ", ".join(sorted({dtype_name(p.dtype) for p in obj.parameters()}))  # type: ignore[attr-defined]


@rule(MISMATCH_KIND, matches=(
    "mat1 and mat2 must have the same dtype, but got Double and Float (nn.Linear, addmm)",
    "expected m1 and m2 to have the same dtype, but got: double != float (@, mm)",
    "Input type (double) and bias type (float) should be the same (conv; older: torch.DoubleTensor)",
    "expected scalar type Double but found Float (bmm, einsum, conv without bias; older torch: most ops)",
    "Found dtype Double but expected Float (binary_cross_entropy; mse_loss in torch 1.x)",
    "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long' (integer scores into cross_entropy)",
), fix="the dtype set where the odd tensor is made (`.float()` after torch.from_numpy, `dtype=torch.float32` "
       "in torch.tensor, `.double()` -> `.float()`), else `.float()` at the use")
def dtype_mismatch(ctx: RuleContext) -> Optional[Diagnosis]:
    """Tensors of two dtypes in one op: usually a float64 array from numpy meeting float32 weights."""
    if not isinstance(ctx.exception, Exception):
        return None
    said = _mismatch_message(ctx.error_message)
    if said is None:
        return None
    a, b, int_logits = said
    tree, stmt = _statement(ctx)
    backward = stmt is not None and _calls_backward(stmt)
    seen = operands(ctx, stmt) if stmt is not None and not backward else []
    lineno = ctx.record.error_lineno
    want = "float32"
    if int_logits:
        odd = {d for d in (_dtype_text(o) for _, _, o in seen) if d in _INTEGRAL}
    else:
        told = {d for d in (a, b) if d}
        present = {_dtype_text(o) for _, _, o in seen}
        pool = told if len(told) == 2 else present if len(present) == 2 else set()
        odd = pool - {want} if want in pool else set()
    culprit = next(((n, node, o) for n, node, o in seen if _dtype_text(o) in odd), None)
    fix, origin, name = None, None, ""
    if culprit is not None:
        name, node, obj = culprit
        names = [name, *ctx.names.names_for(obj)]
        origin = find_origin(ctx, tree, names, lineno, want) if tree is not None else None
        use = node if isinstance(obj, torch.Tensor) else None
        if origin is not None and origin.edit is not None or use is not None:
            fix = _fix(ctx, origin, use, want, name)
    return _mismatch_diagnosis(ctx, stmt, a, b, int_logits, seen, culprit, origin, fix, backward)


def _calls_backward(stmt: ast.stmt) -> bool:
    """`loss.backward()`, `torch.autograd.grad(...)`: the failing op ran in the backward pass, not on this line."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("backward", "grad")
               for n in ast.walk(stmt))


def _mismatch_diagnosis(ctx: RuleContext, stmt: Optional[ast.stmt], a: Optional[str], b: Optional[str],
                        int_logits: bool, seen: list, culprit: Optional[tuple], origin: Optional[Origin],
                        fix: Optional[Fix], backward: bool = False) -> Diagnosis:
    lineno = ctx.record.error_lineno
    code = " ".join(ctx.record.source_line(lineno).split())
    facts = _facts(ctx, [n for n, _, _ in seen])
    if culprit is None:
        pair = " / ".join(d for d in (a, b) if d) or ctx.say("dtypes.two_types")
        title = ctx.say("dtypes.mismatch.title_unnamed", pair=pair)
        what = ctx.say("dtypes.mismatch.what_unnamed", pair=pair, lineno=lineno or "?", code=code)
        why = [ctx.say("dtypes.mismatch.why"),
               ctx.say("dtypes.mismatch.in_backward" if backward else "dtypes.mismatch.no_culprit")]
        names: List[str] = []
    else:
        name, _, obj = culprit
        odd = _dtype_text(obj)
        near = _near(stmt, seen, culprit[1])
        sep, operand = ctx.say("dtypes.sep"), lambda f: ctx.say("dtypes.operand", name=f.name, dtype=f.dtype)
        others = sep.join(operand(f) for f in facts if f.name in near and f.dtype != odd) \
            or sep.join(operand(f) for f in facts if f.name != name and f.dtype != odd) \
            or ctx.say("dtypes.the_weights")
        key = "int" if int_logits else "float"
        title = ctx.say(f"dtypes.mismatch.title.{key}", name=name, dtype=odd)
        what = ctx.say(f"dtypes.mismatch.what.{key}", name=name, dtype=odd, others=others,
                       lineno=lineno or "?", code=code)
        why = [ctx.say(f"dtypes.mismatch.why.{key}"), _why_made(ctx, origin, name, odd)]
        names = [name]
        facts = [f for f in facts if f.name == name] + [f for f in facts if f.name != name]
    if culprit is None and "float64" in (a, b) or culprit is not None and isinstance(culprit[2], torch.Tensor) \
            and _dtype_text(culprit[2]) == "float64" and (origin is None or origin.how not in _SAID_NUMPY):
        why.append(ctx.say("dtypes.mismatch.numpy_note"))
    lines = sorted({n for n in (origin.stmt.lineno if origin else None, lineno) if n})
    return ctx.diagnosis(
        MISMATCH_KIND, ERROR, title=title, summary=ctx.say("dtypes.mismatch.summary"), what=what,
        why=("" if ctx.language == "zh" else " ").join(why), where=ctx.where(lineno), lines=lines,
        names=names, tensors=facts[:4], fix=fix)


def _near(stmt: Optional[ast.stmt], seen: list, node: ast.AST) -> List[str]:
    """The names read in the smallest call or operator that takes `node`: the operands it met."""
    if stmt is None:
        return []
    parent = {id(child): p for p in ast.walk(stmt) for child in ast.iter_child_nodes(p)}
    at = parent.get(id(node))
    while at is not None:
        if isinstance(at, (ast.Call, ast.BinOp)):
            inside = {id(x) for x in ast.walk(at)}
            names = [n for n, other, _ in seen if other is not node and id(other) in inside]
            if names:
                return names
        at = parent.get(id(at))
    return []
