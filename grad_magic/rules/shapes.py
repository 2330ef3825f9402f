"""Rules of the shapes family: a Linear layer fed the wrong number of features, a loss whose input and target
disagree on the batch size, and class labels beyond the classifier's outputs.

Reads the error message (the wordings of torch 1.x ... 2.13 and of the CPU, CUDA, MPS and meta kernels), the
failing op's tensor arguments as the tracker recorded them (shapes only, never data), the user's modules
(a Linear's in/out features are its weight's shape) and the cell's syntax. Fixes are single spots in the
cell: a flatten added, a literal `in_features`/`out_features`, a target flattened or shifted by one, or a
`view(-1, N)` that keeps the batch (with the Linear that takes N). When the numbers do not pin the cause
down, no fix.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import torch

from ..facts import shape_text, tensor_fact
from ..fixes import cell_tree, enclosing_statement, indent_of, insert_line_before, make_fix, node_span, segment
from ..model import ERROR, Diagnosis, Fix, TensorFact, TextEdit
from ..record import OpEvent, TensorSnapshot
from .context import RuleContext
from .registry import rule

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
# every version since torch 1.0 (Python, then C++ TORCH_CHECK_VALUE): a ValueError
_BATCH = re.compile(r"Expected input batch_size \((?P<input>\d+)\) to match target batch_size \((?P<target>\d+)\)")
# ATen's CPU nll_loss / nll_loss2d since the port from THNN (torch 1.8); an IndexError in 2.x (2.13 checked)
_TARGET = re.compile(r"Target (?P<n>-?\d+) is out of bounds")
# the CUDA kernels' CUDA_KERNEL_ASSERT (Loss.cu, NLLLoss2d.cu): the kernel prints it to stderr, the exception
# only says "device-side assert triggered" -- matched when a wrapper or a paste carries it; torch <= 1.5's THNN
# raised it on the CPU as "Assertion `cur_target >= 0 && cur_target < n_classes' failed."
_ASSERT = re.compile(r"(?:t|cur_target) >= 0 && (?:t|cur_target) < n_classes")
_DEVICE_ASSERT = "device-side assert triggered"  # RuntimeError, torch.AcceleratorError since 2.8
_LOSSES = frozenset({"cross_entropy", "nll_loss", "nll_loss2d", "nll_loss_nd"})
_LOSS_MODULES = (torch.nn.CrossEntropyLoss, torch.nn.NLLLoss)
_CLASS_COUNT_NAMES = ("num_classes", "n_classes", "NUM_CLASSES", "N_CLASSES", "nclasses", "classes_count")


# -- small helpers on the cell's syntax --

def fold(node: Optional[ast.AST]) -> Optional[int]:
    """`400`, `16 * 5 * 5`, `-1`: an int written out in the cell, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = fold(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        left, right = fold(node.left), fold(node.right)
        if left is None or right is None or isinstance(node.op, ast.FloorDiv) and right == 0:
            return None
        ops = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.FloorDiv: int.__floordiv__}
        return ops[type(node.op)](left, right)
    return None


def text_of(ctx: RuleContext, node: ast.AST) -> str:
    return " ".join((segment(ctx.record.source, node) or "").split())


def argument(call: ast.Call, index: int, keyword: str) -> Optional[ast.AST]:
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


@dataclass(frozen=True)
class LinearCall:
    """`nn.Linear(400, 120)` written in the cell."""

    call: ast.Call
    in_node: Optional[ast.AST]
    out_node: Optional[ast.AST]
    target: str  # `fc1` for `self.fc1 = nn.Linear(...)`, "" when not assigned to a name
    in_sequential: bool  # an argument of `nn.Sequential(...)`

    @property
    def in_features(self) -> Optional[int]:
        return fold(self.in_node)

    @property
    def out_features(self) -> Optional[int]:
        return fold(self.out_node)


def linear_calls(ctx: RuleContext, tree: Optional[ast.Module]) -> List[LinearCall]:
    """Every `nn.Linear(...)` call of the cell whose callee is torch's Linear."""
    if tree is None:
        return []
    found: List[LinearCall] = []
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and ctx.names.lookup(text_of(ctx, node.func)) is torch.nn.Linear):
            continue
        parent = parents.get(id(node))
        target = ""
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
            t = parent.targets[0]
            target = t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else ""
        seq = isinstance(parent, ast.Call) and ctx.names.lookup(text_of(ctx, parent.func)) is torch.nn.Sequential
        found.append(LinearCall(node, argument(node, 0, "in_features"), argument(node, 1, "out_features"),
                                target, seq))
    return found


def module_name(ctx: RuleContext, module: Any, weight: Optional[torch.Tensor]) -> str:
    """The user's name for a module: `model.fc1` (the namespace's name before `self.fc1`)."""
    names = [n[:-len(".weight")] for n in ctx.names.names_for(weight)] if weight is not None else []
    names += ctx.names.names_for(module)
    outside = [n for n in names if not n.startswith("self.")]
    return min(outside or names, key=len) if names else ""


def snapshot_tensor(shot: TensorSnapshot) -> Optional[torch.Tensor]:
    return shot.ref() if shot.ref is not None else None


def failed_op(ctx: RuleContext, names: Sequence[str]) -> Optional[OpEvent]:
    """The last recorded op named one of `names` that raised (on the error's line when one did)."""
    events = [e for e in ctx.record.failed_ops if e.name in names]
    on_line = [e for e in events if e.lineno == ctx.record.error_lineno]
    return (on_line or events or [None])[-1]


def fact(name: str, shot: TensorSnapshot) -> TensorFact:
    return TensorFact(name=name, shape=shape_text(shot.shape), dtype=shot.dtype, device=shot.device,
                      requires_grad=shot.requires_grad, is_leaf=shot.is_leaf, version=shot.version)


def calls_on_line(ctx: RuleContext, tree: Optional[ast.Module], lineno: Optional[int]) -> List[ast.Call]:
    stmt = enclosing_statement(tree, lineno) if tree is not None and lineno else None
    if stmt is None:
        return []
    return sorted((n for n in ast.walk(stmt) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))


def last_assignment(tree: ast.Module, name: str, before: int) -> Optional[ast.stmt]:
    """The last plain `name = ...` before line `before`, in the same function as that line."""
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= before <= (node.end_lineno or node.lineno):
            scope = node if scope is tree or node.lineno >= getattr(scope, "lineno", 0) else scope
    best: Optional[ast.stmt] = None
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and node.lineno < before and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            if best is None or node.lineno > best.lineno:
                best = node
    return best


def joined(ctx: RuleContext, parts: Sequence[str]) -> str:
    """Sentences one after the other, each starting with a capital (`the input is ...`)."""
    if ctx.language == "zh":
        return "".join(p for p in parts if p)
    return " ".join(p[:1].upper() + p[1:] for p in parts if p)



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


# -- the loss call: shared by batch-size-mismatch and target-out-of-range --

@dataclass(frozen=True)
class LossCall:
    """The classification loss that raised: its input and target, named and measured."""

    call: Optional[ast.Call]  # on the error line, when the cell spells it out
    input_name: str
    target_name: str
    input_shot: Optional[TensorSnapshot]
    target_shot: Optional[TensorSnapshot]
    input_node: Optional[ast.AST] = None
    target_node: Optional[ast.AST] = None


def find_loss(ctx: RuleContext, tree: Optional[ast.Module]) -> LossCall:
    op = failed_op(ctx, tuple(_LOSSES))
    shots = op.targets if op is not None else ()
    call = None
    for c in calls_on_line(ctx, tree, ctx.record.error_lineno):
        if isinstance(c.func, ast.Call):  # `nn.CrossEntropyLoss()(out, y)`
            is_loss = ctx.names.lookup(text_of(ctx, c.func.func)) in _LOSS_MODULES
        else:
            callee = ctx.names.lookup(text_of(ctx, c.func))
            is_loss = callee in (torch.nn.functional.cross_entropy, torch.nn.functional.nll_loss) or \
                isinstance(callee, _LOSS_MODULES)
        if is_loss:
            call = c
    nodes = (argument(call, 0, "input"), argument(call, 1, "target")) if call is not None else (None, None)
    names = []
    for i, node in enumerate(nodes):
        t = snapshot_tensor(shots[i]) if len(shots) > i else None
        names.append(text_of(ctx, node) if node is not None else ctx.names.name_for(t) or "" if t is not None else "")
    return LossCall(call, names[0], names[1], shots[0] if shots else None, shots[1] if len(shots) > 1 else None,
                    nodes[0], nodes[1])


def _named(ctx: RuleContext, name: str, fallback: str) -> str:
    return f"`{name}`" if name else ctx.say(fallback)


def _origins(ctx: RuleContext, tree: Optional[ast.Module], loss: LossCall) -> Tuple[List[str], List[int]]:
    """Where the loss's input and target were last assigned: sentences and line numbers."""
    said: List[str] = []
    lines: List[int] = []
    if tree is None or loss.call is None:
        return said, lines
    for node in (loss.input_node, loss.target_node):
        # `net(xb)`: the first variable in it that the cell sets, `xb`
        for name in [n for n in ast.walk(node) if isinstance(n, ast.Name)] if node is not None else ():
            found = last_assignment(tree, name.id, loss.call.lineno)
            if found is not None:
                lines.append(found.lineno)
                said.append(ctx.say("shapes.origin", name=name.id, lineno=found.lineno,
                                    code=ctx.record.source_line(found.lineno).strip()))
                break
    return said, lines


def _facts(loss: LossCall) -> List[TensorFact]:
    return [fact(name or label, shot) for name, label, shot in (
        (loss.input_name, "input", loss.input_shot), (loss.target_name, "target", loss.target_shot)) if shot]


# -- batch-size-mismatch --

BATCH = "batch-size-mismatch"


@rule(BATCH, matches=("Expected input batch_size (16) to match target batch_size (4).",),
      fix="the target flattened like the input (`y.reshape(-1)`), or a `view(-1, N)` that folded features "
          "into the batch replaced by `view(x.size(0), -1)`")
def batch_size_mismatch(ctx: RuleContext) -> Optional[Diagnosis]:
    """A classification loss whose input and target have different batch sizes."""
    if not isinstance(ctx.exception, Exception):
        return None
    m = _BATCH.search(ctx.error_message)
    if m is None:
        return None
    n_in, n_target = int(m["input"]), int(m["target"])
    tree = cell_tree(ctx.record.source)
    loss = find_loss(ctx, tree)
    lineno = ctx.record.error_lineno
    shown_in = _named(ctx, loss.input_name, "shapes.the_input")
    shown_target = _named(ctx, loss.target_name, "shapes.the_target")
    in_shape = loss.input_shot.shape if loss.input_shot is not None else ()
    target_shape = loss.target_shot.shape if loss.target_shot is not None else ()
    what = ctx.say("shapes.batch.what", input=shown_in, target=shown_target, n_in=n_in, n_target=n_target,
                   in_shape=shape_text(in_shape) if in_shape else "?", lineno=lineno or "?",
                   target_shape=shape_text(target_shape) if target_shape else "?")
    cause, fix, extra = _batch_cause(ctx, tree, loss, n_in, n_target, shown_in, shown_target)
    origins, origin_lines = _origins(ctx, tree, loss)
    why = [ctx.say("shapes.batch.why"), cause, *origins]
    if fix is None:
        why.append(ctx.say("shapes.batch.no_fix"))
    return ctx.diagnosis(
        BATCH, ERROR, title=ctx.say("shapes.batch.title", input=shown_in, target=shown_target, n_in=n_in,
                                    n_target=n_target),
        summary=ctx.say("shapes.batch.summary"), what=what, why=joined(ctx, why), where=ctx.where(lineno),
        lines=sorted({lineno, *origin_lines, *extra} - {None}),
        names=[n for n in (loss.input_name, loss.target_name) if n], tensors=_facts(loss), fix=fix)


def _batch_cause(ctx: RuleContext, tree: Optional[ast.Module], loss: LossCall, n_in: int, n_target: int,
                 shown_in: str, shown_target: str) -> Tuple[str, Optional[Fix], List[int]]:
    """(the sentence saying why, the fix or None, lines to show)."""
    src = ctx.record.source
    in_shape = loss.input_shot.shape if loss.input_shot is not None else ()
    t_shape = loss.target_shot.shape if loss.target_shot is not None else ()
    numel = 1
    for d in t_shape:
        numel *= d
    if len(t_shape) >= 2 and numel == n_in:  # logits.view(-1, vocab) against targets of shape (B, T)
        said = ctx.say("shapes.batch.target_not_flat", target=shown_target, shape=shape_text(t_shape),
                       n_in=n_in, input=shown_in)
        if loss.target_node is None:
            return said, None, []
        start, end = node_span(src, loss.target_node)
        text = _postfix(src[start:end], loss.target_node, ".reshape(-1)")
        description = ctx.say("shapes.batch.fix_target", code=text, lineno=loss.target_node.lineno)
        return said, make_fix(src, [TextEdit(start, end, text)], description), []
    if len(in_shape) == 3 and len(t_shape) == 1 and in_shape[0] * in_shape[1] == n_target:
        said = ctx.say("shapes.batch.input_not_flat", input=shown_in, shape=shape_text(in_shape),
                       n_target=n_target)
        node = loss.input_node
        if not isinstance(node, ast.Name):
            return said, None, []
        start, end = node_span(src, node)
        text = f"{node.id}.reshape(-1, {node.id}.size(-1))"
        description = ctx.say("shapes.batch.fix_input", code=text, lineno=node.lineno)
        return said, make_fix(src, [TextEdit(start, end, text)], description), []
    return _view_cause(ctx, tree, n_in, n_target) or (
        ctx.say("shapes.batch.unknown", input=shown_in, target=shown_target), None, [])


def _postfix(text: str, node: ast.AST, suffix: str) -> str:
    simple = isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
    return f"{text}{suffix}" if simple else f"({text}){suffix}"


def _view_cause(ctx: RuleContext, tree: Optional[ast.Module], n_in: int,
                n_target: int) -> Optional[Tuple[str, Optional[Fix], List[int]]]:
    """A single `x.view(-1, N)` in the cell whose N makes the numbers come out: it folded features into the
    batch. The fix keeps the batch (`x.view(x.size(0), -1)`) and, when one Linear takes N, gives it the real
    per-sample count."""
    if tree is None:
        return None
    views = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in ("view", "reshape") and len(n.args) == 2 and not n.keywords
             and fold(n.args[0]) == -1 and fold(n.args[1])]
    if len(views) != 1:
        return None
    view = views[0]
    n = fold(view.args[1]) or 0
    if n_target <= 0 or (n_in * n) % n_target:
        return None
    per_sample = n_in * n // n_target
    if per_sample == n:
        return None
    src = ctx.record.source
    code = text_of(ctx, view)
    said = ctx.say("shapes.batch.view", code=code, lineno=view.lineno, n=n, n_in=n_in, n_target=n_target,
                   per_sample=per_sample)
    receiver = view.func.value
    start, end = node_span(src, view.args[0])
    _, end = node_span(src, view.args[1])
    if isinstance(receiver, (ast.Name, ast.Attribute)) and text_of(ctx, receiver):
        edits = [TextEdit(start, end, f"{text_of(ctx, receiver)}.size(0), -1")]
    else:
        return said, None, [view.lineno]
    ctors = [c for c in linear_calls(ctx, tree) if c.in_features == n]
    if len(ctors) > 1:
        return said, None, [view.lineno]
    lines = [view.lineno]
    description = ctx.say("shapes.batch.fix_view", lineno=view.lineno, receiver=text_of(ctx, receiver))
    if ctors:
        s, e = node_span(src, ctors[0].in_node)
        edits.append(TextEdit(s, e, str(per_sample)))
        lines.append(ctors[0].call.lineno)
        description += ctx.say("shapes.batch.fix_view_linear", lineno=ctors[0].call.lineno, old=src[s:e],
                               per_sample=per_sample)
    return said, make_fix(src, edits, description), lines


# -- target-out-of-range --

TARGET = "target-out-of-range"


@dataclass(frozen=True)
class Labels:
    """What the cell says about the labels' range, without reading them: `torch.randint(lo, hi, ...)`
    assigned to the target, or a class-count variable."""

    low: Optional[int]
    count: Optional[int]  # labels are below this
    source: str  # the code or the variable that says so
    lineno: Optional[int] = None


def parse_target_error(message: str) -> Optional[Tuple[Optional[int], bool]]:
    """(the out-of-range label when the message says it, whether it is CUDA's device-side assert)."""
    m = _TARGET.search(message)
    if m is not None:
        return int(m["n"]), False
    if _ASSERT.search(message):
        return None, _DEVICE_ASSERT in message
    if _DEVICE_ASSERT in message:
        return None, True
    return None


@rule(TARGET, matches=(
    "Target 10 is out of bounds. (CPU, IndexError)",
    "CUDA error: device-side assert triggered (CUDA; stderr: Assertion `t >= 0 && t < n_classes` failed.)",
    "Assertion `cur_target >= 0 && cur_target < n_classes' failed. (torch <= 1.5)",
), fix="the classifier's literal out_features set to the number of classes the labels imply, when the cell "
       "says it (torch.randint(0, K, ...), num_classes = K)")
def target_out_of_range(ctx: RuleContext) -> Optional[Diagnosis]:
    """A class label at or beyond the classifier's number of outputs (or negative) given to the loss."""
    if not isinstance(ctx.exception, Exception):
        return None
    parsed = parse_target_error(ctx.error_message)
    if parsed is None:
        return None
    label, on_device = parsed
    tree = cell_tree(ctx.record.source)
    loss = find_loss(ctx, tree)
    if on_device and loss.call is None and loss.input_shot is None and not _ASSERT.search(ctx.error_message):
        return None  # a device-side assert from some other kernel (an index, an embedding...)
    return TargetRange(ctx, tree, loss, label, on_device).diagnosis()


class TargetRange:
    def __init__(self, ctx: RuleContext, tree: Optional[ast.Module], loss: LossCall, label: Optional[int],
                 on_device: bool) -> None:
        self.ctx, self.tree, self.loss, self.label, self.on_device = ctx, tree, loss, label, on_device
        self.lineno = ctx.record.error_lineno
        self.classes = self._classes()
        self.ctors = [c for c in linear_calls(ctx, tree) if self.classes and c.out_features == self.classes]
        self.layer = self._layer_name()
        self.labels = self._labels()

    def _classes(self) -> Optional[int]:
        shot = self.loss.input_shot
        if shot is None:
            t = self.ctx.names.lookup(self.loss.input_name) if self.loss.input_name.isidentifier() else None
            shape = tuple(t.shape) if isinstance(t, torch.Tensor) else ()
        else:
            shape = shot.shape
        return shape[1] if len(shape) >= 2 else shape[0] if shape else None

    def _layer_name(self) -> str:
        """The namespace's Linear with that many outputs (the classifier), when there is one."""
        found = {}
        for name, obj in self.ctx.names.objects():
            if name.endswith(".weight") and isinstance(obj, torch.Tensor) and obj.dim() == 2 and \
                    obj.shape[0] == self.classes:
                module = self.ctx.names.lookup(name[:-7])
                if isinstance(module, torch.nn.Linear):
                    found[id(module)] = module_name(self.ctx, module, obj)
            elif isinstance(obj, torch.nn.Linear) and obj.out_features == self.classes:
                found.setdefault(id(obj), name)
        return next(iter(found.values())) if len(found) == 1 else ""

    def _labels(self) -> Optional[Labels]:
        target = self.loss.target_node
        if self.tree is not None and isinstance(target, ast.Name):
            found = last_assignment(self.tree, target.id, self.loss.call.lineno if self.loss.call else 10**9)
            call = found.value if found is not None else None
            if isinstance(call, ast.Call) and self.ctx.names.lookup(text_of(self.ctx, call.func)) is torch.randint:
                # torch.randint(high, size) or torch.randint(low, high, size)
                args = dict(zip(("low", "high") if len(call.args) >= 3 else ("high",), call.args))
                args.update((k.arg, k.value) for k in call.keywords if k.arg in ("low", "high"))
                low = self._int(args["low"]) if "low" in args else 0
                high = self._int(args.get("high"))
                if low is not None and high is not None:
                    return Labels(low, high, text_of(self.ctx, call), found.lineno)
        for name in _CLASS_COUNT_NAMES:
            value = self.ctx.names.lookup(name)
            if type(value) is int and value > 0:
                return Labels(None, value, name)
        return None

    def _int(self, node: Optional[ast.AST]) -> Optional[int]:
        """`10`, `2 * 5`, or a name bound to an int (`num_classes`)."""
        value = fold(node)
        if value is None and isinstance(node, ast.Name):
            found = self.ctx.names.lookup(node.id)
            value = found if type(found) is int else None
        return value

    def diagnosis(self) -> Diagnosis:
        ctx, loss = self.ctx, self.loss
        shown_target = _named(ctx, loss.target_name, "shapes.the_target")
        shown_in = _named(ctx, loss.input_name, "shapes.the_input")
        classes = self.classes if self.classes is not None else "?"
        layer = f"`{self.layer}`" if self.layer else ctx.say("shapes.target.the_classifier")
        fix, reason = self.fix()
        why = [ctx.say("shapes.target.why", classes=classes, last=self.classes - 1 if self.classes else "?")]
        if self.on_device:
            why.append(ctx.say("shapes.target.why_device"))
        why.append(self._cause(layer))
        if fix is None and reason:
            why.append(ctx.say(reason, layer=layer, label=self.label, classes=classes,
                               target=loss.target_name if loss.target_name.isidentifier() else "y"))
        lines = sorted({n for n in (self.lineno, self.labels.lineno if self.labels else None,
                                    self.ctors[0].call.lineno if len(self.ctors) == 1 else None) if n})
        title = "shapes.target.title_device" if self.label is None else "shapes.target.title"
        what = "shapes.target.what_device" if self.label is None else "shapes.target.what"
        return ctx.diagnosis(
            TARGET, ERROR, title=ctx.say(title, label=self.label, classes=classes, target=shown_target),
            summary=ctx.say("shapes.target.summary"),
            what=ctx.say(what, label=self.label, classes=classes, target=shown_target, input=shown_in,
                         origin=ctx.say("shapes.target.from_layer", layer=layer) if self.layer else "",
                         lineno=self.lineno or "?"),
            why=joined(ctx, why), where=ctx.where(self.lineno), lines=lines,
            names=[n for n in (loss.input_name, loss.target_name, self.layer) if n], tensors=_facts(loss), fix=fix)

    def _cause(self, layer: str) -> str:
        ctx, labels = self.ctx, self.labels
        if labels is not None and labels.count is not None:
            if labels.lineno is not None:
                return ctx.say("shapes.target.labels_from_code", code=labels.source, lineno=labels.lineno,
                               low=labels.low, high=labels.count - 1, layer=layer, classes=self.classes)
            return ctx.say("shapes.target.labels_from_name", name=labels.source, count=labels.count, layer=layer,
                           classes=self.classes)
        if self.label is not None and self.label < 0:
            return ctx.say("shapes.target.negative", label=self.label)
        if self.label is not None and self.label == self.classes:
            return ctx.say("shapes.target.one_based", label=self.label, classes=self.classes, layer=layer)
        return ""

    def fix(self) -> Tuple[Optional[Fix], str]:
        labels, label, classes = self.labels, self.label, self.classes
        if labels is None or labels.count is None or classes is None:
            return None, "shapes.target.no_fix_range" if label is None or label >= 0 else ""
        if labels.low == 1 and labels.count == classes + 1:
            return self._shift(), "shapes.target.no_fix_parse"
        if labels.low not in (0, None) or labels.count <= classes or label is not None and label >= labels.count:
            return None, "shapes.target.no_fix_range"
        if len(self.ctors) != 1 or self.ctors[0].out_node is None:
            return None, "shapes.target.no_fix_ctor"
        src = self.ctx.record.source
        node = self.ctors[0].out_node
        start, end = node_span(src, node)
        description = self.ctx.say("shapes.target.fix_out_features",
                                   layer=f"`{self.layer}`" if self.layer else "nn.Linear",
                                   count=labels.count, old=src[start:end], lineno=node.lineno)
        return make_fix(src, [TextEdit(start, end, str(labels.count))], description), "shapes.target.no_fix_parse"

    def _shift(self) -> Optional[Fix]:
        """Labels 1..C for C outputs: `y - 1` where the loss takes them."""
        node = self.loss.target_node
        if node is None:
            return None
        src = self.ctx.record.source
        start, end = node_span(src, node)
        text = f"{src[start:end]} - 1" if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) \
            else f"({src[start:end]}) - 1"
        description = self.ctx.say("shapes.target.fix_shift", code=text, lineno=node.lineno)
        return make_fix(src, [TextEdit(start, end, text)], description)
