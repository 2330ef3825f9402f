"""`shape-mismatch`: a Linear layer (or a matrix product) given an input whose last dimension is not its
in_features. Fixes: a flatten added, or the Linear's literal `in_features` set."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch

from ...facts import shape_text, tensor_fact
from ...cell import cell_tree, enclosing_statement, indent_of, node_span
from ...edits import insert_line_before, make_fix
from ...model import ERROR, Diagnosis, Fix, TensorFact, TextEdit
from ...record import OpEvent
from ..context import RuleContext
from ..registry import rule
from .common import (argument, calls_on_line, fact, failed_op, joined, last_assignment, linear_calls, module_name,
                     snapshot_tensor, text_of)


# -- the messages --

# -- the messages --

# Each gives the two operands as (rows x inner) and (w_inner x cols); the comment says which kernel says it.
_MATMUL: Tuple[re.Pattern, ...] = (
    # torch >= 1.9, CPU and CUDA addmm/mm (nn.Linear, @, torch.mm)
    re.compile(r"mat1 and mat2 shapes cannot be multiplied \((?P<a>\d+)x(?P<b>\d+) and (?P<c>\d+)x(?P<d>\d+)\)"),
    # torch >= 2.1 on MPS (Apple GPUs): nn.Linear's own check, rows are the input's second-last dimension
    re.compile(r"linear\(\): input and weight\.T shapes cannot be multiplied \((?P<a>\d+)x(?P<b>\d+) and "
               r"(?P<c>\d+)x(?P<d>\d+)\)"),
    # meta and fake tensors (torch.compile, device="meta"): torch/_meta_registrations.py
    re.compile(r"a and b must have same reduction dim, but got \[(?P<a>\d+), (?P<b>\d+)\] X "
               r"\[(?P<c>\d+), (?P<d>\d+)\]"),
    # torch <= 1.6 (TH)
    re.compile(r"size mismatch, m1: \[(?P<a>\d+) x (?P<b>\d+)\], m2: \[(?P<c>\d+) x (?P<d>\d+)\]"),
)


# -- shape-mismatch: a Linear layer (or a matrix product) given the wrong number of features --

SHAPE = "shape-mismatch"


@dataclass(frozen=True)
class Product:
    """A matrix product that could not be done: (rows x inner) @ (w_inner x cols)."""

    rows: int
    inner: int
    w_inner: int
    cols: int


def parse_matmul_error(message: str) -> Optional[Product]:
    for pattern in _MATMUL:
        m = pattern.search(message)
        if m is not None:
            return Product(int(m["a"]), int(m["b"]), int(m["c"]), int(m["d"]))
    return None


@dataclass(frozen=True)
class Layer:
    """The Linear layer whose weight did not fit, as the user names it."""

    name: str  # `model.fc1`; the weight's name for `F.linear(x, w)`
    module: Optional[torch.nn.Module]
    weight: Optional[torch.Tensor]
    in_features: int
    out_features: int


def find_layer(ctx: RuleContext, op: Optional[OpEvent], p: Product) -> Optional[Layer]:
    """The Linear whose weight is (cols, w_inner): the failing op's own weight, else the one such in the
    namespace."""
    weights: List[torch.Tensor] = []
    if op is not None and op.name == "linear" and len(op.targets) >= 2:
        w = snapshot_tensor(op.targets[1])
        if w is not None and tuple(w.shape) == (p.cols, p.w_inner):
            weights.append(w)
    if not weights:
        for name, obj in ctx.names.objects():
            if isinstance(obj, torch.nn.Linear) and not isinstance(obj, torch.nn.LazyLinear):
                obj = obj.__dict__.get("_parameters", {}).get("weight")
            elif not (name.endswith(".weight") and isinstance(ctx.names.lookup(name[:-7]), torch.nn.Linear)):
                continue
            if isinstance(obj, torch.Tensor) and tuple(obj.shape) == (p.cols, p.w_inner) and \
                    all(obj is not w for w in weights):
                weights.append(obj)
    if len(weights) != 1:
        return None
    w = weights[0]
    modules = [m for m in (ctx.names.lookup(n[:-7]) for n in ctx.names.names_for(w) if n.endswith(".weight"))
               if isinstance(m, torch.nn.Linear)]
    module = modules[0] if modules else None
    name = module_name(ctx, module, w) if module is not None else ctx.names.name_for(w) or ""
    if not name:
        return None
    return Layer(name, module, w, p.w_inner, p.cols)


@rule(SHAPE, matches=(
    "mat1 and mat2 shapes cannot be multiplied (4x256 and 400x120)",
    "linear(): input and weight.T shapes cannot be multiplied (4x256 and 400x120) (MPS)",
    "a and b must have same reduction dim, but got [4, 256] X [400, 120]. (meta, torch.compile)",
    "size mismatch, m1: [4 x 256], m2: [400 x 120] (torch <= 1.6)",
), fix="a flatten before the Linear (input still (batch, C, H, W)), or the Linear's literal in_features "
       "set to the input's real feature count")
def shape_mismatch(ctx: RuleContext) -> Optional[Diagnosis]:
    """A Linear layer (or a matrix product) given an input whose last dimension is not its in_features."""
    if not isinstance(ctx.exception, Exception):
        return None
    p = parse_matmul_error(ctx.error_message)
    if p is None:
        return None
    op = failed_op(ctx, ("linear", "matmul", "mm", "addmm", "__matmul__", "__rmatmul__", "mv"))
    layer = find_layer(ctx, op, p)
    if layer is None:
        return _product_diagnosis(ctx, p, op)
    return LinearMismatch(ctx, p, op, layer).diagnosis()


class LinearMismatch:
    """What the input was, where it came from, and the one edit that fixes it (when there is one)."""

    def __init__(self, ctx: RuleContext, p: Product, op: Optional[OpEvent], layer: Layer) -> None:
        self.ctx, self.p, self.layer = ctx, p, layer
        self.lineno = ctx.record.error_lineno
        self.tree = cell_tree(ctx.record.source)
        self.input_shot = op.targets[0] if op is not None and op.name == "linear" and op.targets else None
        self.shape: Tuple[int, ...] = self.input_shot.shape if self.input_shot is not None else ()
        self.call = self._call_on_line()  # `self.fc1(x)` on the error line
        self.arg = self._input_node()
        self.ctors = [c for c in linear_calls(ctx, self.tree) if c.in_features == layer.in_features
                      and c.out_features in (layer.out_features, None)]
        if len(self.ctors) > 1:  # `self.fc1 = nn.Linear(...)` and `self.fc2 = nn.Linear(...)` with equal sizes
            last = layer.name.rpartition(".")[2]
            self.ctors = [c for c in self.ctors if c.target == last] or self.ctors

    def _call_on_line(self) -> Optional[ast.Call]:
        targets = (self.layer.module, torch.nn.functional.linear)
        for call in calls_on_line(self.ctx, self.tree, self.lineno):
            if any(self.ctx.names.lookup(text_of(self.ctx, call.func)) is t for t in targets if t is not None):
                return call
        return None

    def _input_node(self) -> Optional[ast.AST]:
        call = self.call
        if call is None or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if self.layer.module is None:  # F.linear(input, weight, bias)
            return argument(call, 0, "input")
        return call.args[0] if len(call.args) == 1 and not call.keywords else None

    @property
    def layer_text(self) -> str:
        """`model.fc1`, or `F.linear` with its weight's name."""
        if self.layer.module is not None:
            return f"`{self.layer.name}`"
        return self.ctx.say("shapes.linear.functional", weight=self.layer.name)

    @property
    def features(self) -> int:
        return self.shape[-1] if self.shape else self.p.inner

    @property
    def flat(self) -> Optional[int]:
        if len(self.shape) <= 2:
            return None
        n = 1
        for d in self.shape[1:]:
            n *= d
        return n

    @property
    def input_name(self) -> str:
        if self.arg is not None:
            return text_of(self.ctx, self.arg)
        t = snapshot_tensor(self.input_shot) if self.input_shot is not None else None
        return self.ctx.names.name_for(t) or "" if t is not None else ""

    def diagnosis(self) -> Diagnosis:
        ctx, layer = self.ctx, self.layer
        missing_flatten = self.flat == layer.in_features
        fix, reason = self.fix_flatten() if missing_flatten else self.fix_in_features()
        name = self.input_name
        shown = f"`{name}`" if name else ctx.say("shapes.the_input")
        shape = shape_text(self.shape) if self.shape else f"({self.p.rows}, {self.p.inner})"
        why = [self._why_cause(shown, shape), self._origin(name)]
        if fix is None:
            why.append(ctx.say(reason, layer=self.layer_text, got=self.features, flat=self.flat or 0))
        lines = sorted({n for n in (self.lineno, self._origin_line(name), self._ctor_line()) if n})
        tensors = [fact(name or "input", self.input_shot)] if self.input_shot is not None else []
        if layer.weight is not None:
            tensors.append(tensor_fact(f"{layer.name}.weight" if layer.module is not None else layer.name,
                                       layer.weight))
        return ctx.diagnosis(
            SHAPE, ERROR,
            title=ctx.say("shapes.linear.title", layer=self.layer_text, expected=layer.in_features,
                          got=self.features),
            summary=ctx.say("shapes.linear.summary"),
            what=ctx.say("shapes.linear.what" if layer.module is not None else "shapes.linear.what_functional",
                         input=shown, shape=shape, got=self.features, layer=self.layer_text,
                         expected=layer.in_features, out=layer.out_features, lineno=self.lineno or "?"),
            why=joined(ctx, why), where=ctx.where(self.lineno), lines=lines,
            names=[n for n in (name, layer.name) if n], tensors=tensors, fix=fix)

    def _why_cause(self, shown: str, shape: str) -> str:
        ctx, layer = self.ctx, self.layer
        if self.flat == layer.in_features:
            key = "shapes.linear.why_flatten_4d" if len(self.shape) == 4 else "shapes.linear.why_flatten"
            return ctx.say(key, input=shown, shape=shape, ndim=len(self.shape), got=self.features,
                           flat=self.flat, layer=self.layer_text, expected=layer.in_features)
        if self.flat is not None:
            return ctx.say("shapes.linear.why_both", input=shown, shape=shape, ndim=len(self.shape),
                           got=self.features, flat=self.flat, layer=self.layer_text, expected=layer.in_features)
        return ctx.say("shapes.linear.why_in_features", input=shown, got=self.features, layer=self.layer_text,
                       expected=layer.in_features)

    def _origin_line(self, name: str) -> Optional[int]:
        if self.tree is None or not name.isidentifier() or self.call is None:
            return None
        found = last_assignment(self.tree, name, self.call.lineno)
        return found.lineno if found is not None else None

    def _origin(self, name: str) -> str:
        n = self._origin_line(name)
        if n is None:
            return ""
        return self.ctx.say("shapes.linear.origin", input=name, lineno=n,
                            code=self.ctx.record.source_line(n).strip())

    def _ctor_line(self) -> Optional[int]:
        return self.ctors[0].call.lineno if len(self.ctors) == 1 else None

    # -- the fixes --

    def fix_flatten(self) -> Tuple[Optional[Fix], str]:
        ctx, src = self.ctx, self.ctx.record.source
        if self.arg is not None and self.call is not None:
            stmt = enclosing_statement(self.tree, self.call.lineno) if self.tree is not None else None
            if isinstance(self.arg, ast.Name) and isinstance(stmt, (ast.Assign, ast.Return, ast.Expr)) \
                    and stmt.lineno == self.call.lineno:
                x = self.arg.id
                line = ctx.record.source_line(stmt.lineno)
                edit = insert_line_before(src, stmt.lineno, f"{indent_of(line)}{x} = {x}.flatten(1)")
                text = f"{x} = {x}.flatten(1)"
            else:
                start, end = node_span(src, self.arg)
                simple = isinstance(self.arg, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
                inner = src[start:end]
                text = f"{inner}.flatten(1)" if simple else f"({inner}).flatten(1)"
                edit = TextEdit(start, end, text)
            description = ctx.say("shapes.linear.fix_flatten", code=text, layer=self.layer_text,
                                  lineno=self.call.lineno)
            return make_fix(src, [edit], description), "shapes.linear.no_fix_parse"
        seq = [c for c in self.ctors if c.in_sequential]
        if len(seq) == 1 and len(self.ctors) == 1:
            call = seq[0].call
            prefix = text_of(ctx, call.func)[:-len("Linear")]
            if ctx.names.lookup(prefix + "Flatten") is torch.nn.Flatten:
                start, _ = node_span(src, call)
                line = ctx.record.source_line(call.lineno)
                before = line[:len(line) - len(line.lstrip())]
                if src[start - len(before) - 1:start] in ("\n" + before, "\r" + before):  # on a line of its own
                    edit = insert_line_before(src, call.lineno, f"{before}{prefix}Flatten(),")
                else:
                    edit = TextEdit(start, start, f"{prefix}Flatten(), ")
                description = ctx.say("shapes.linear.fix_flatten_sequential", code=f"{prefix}Flatten()",
                                      lineno=call.lineno)
                return make_fix(src, [edit], description), "shapes.linear.no_fix_parse"
        return None, "shapes.linear.no_fix_flatten_elsewhere"

    def fix_in_features(self) -> Tuple[Optional[Fix], str]:
        if self.flat is not None:
            return None, "shapes.linear.no_fix_both"
        if len(self.ctors) != 1:
            return None, "shapes.linear.no_fix_ctor" if not self.ctors else "shapes.linear.no_fix_several"
        ctor = self.ctors[0]
        src = self.ctx.record.source
        start, end = node_span(src, ctor.in_node)
        description = self.ctx.say("shapes.linear.fix_in_features", layer=self.layer_text, got=self.features,
                                   old=src[start:end], lineno=ctor.in_node.lineno)
        return make_fix(src, [TextEdit(start, end, str(self.features))], description), "shapes.linear.no_fix_parse"


def _product_diagnosis(ctx: RuleContext, p: Product, op: Optional[OpEvent]) -> Diagnosis:
    """`a @ b` (or torch.mm) whose inner sizes differ: named, no fix (which side is wrong is not known)."""
    lineno = ctx.record.error_lineno
    names: List[str] = []
    tensors: List[TensorFact] = []
    for shot in (op.targets[:2] if op is not None else ()):
        t = snapshot_tensor(shot)
        name = ctx.names.name_for(t) if t is not None else None
        if name:
            names.append(name)
            tensors.append(fact(name, shot))
    operands = " @ ".join(f"`{n}`" for n in names) if len(names) == 2 else ctx.say("shapes.product.operands")
    return ctx.diagnosis(
        SHAPE, ERROR, title=ctx.say("shapes.product.title", a=p.rows, b=p.inner, c=p.w_inner, d=p.cols),
        summary=ctx.say("shapes.product.summary"),
        what=ctx.say("shapes.product.what", operands=operands, lineno=lineno or "?", a=p.rows, b=p.inner,
                     c=p.w_inner, d=p.cols),
        why=ctx.say("shapes.product.why", b=p.inner, c=p.w_inner), where=ctx.where(lineno), lines=[lineno],
        names=names, tensors=tensors)
