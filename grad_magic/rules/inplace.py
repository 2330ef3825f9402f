"""Rules of the inplace family: a tensor autograd saved for backward was changed in place afterwards.

Reads the run record (the in-place ops the tracker saw, optimizer steps, anomaly mode's warning) and
live tensors' metadata (version, shape, `_base`); never reads tensor data. The fix is a small text edit
at the in-place op's line: the out-of-place form, `inplace=False`, or a `.clone()` before the write.
"""
from __future__ import annotations

import ast
import io
import math
import re
import tokenize
import types
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Tuple

import torch

from ..facts import dtype_name, shape_text, tensor_fact
from ..cell import assignments_to, cell_tree, enclosing_statement, indent_of, node_span, segment
from ..edits import apply_edits, insert_line_before, make_fix
from ..model import ERROR, Diagnosis, Fix, TensorFact, TextEdit
from ..names import attribute_without_code
from ..record import OpEvent, StepEvent, TensorSnapshot
from .context import RuleContext, dotted_names
from .registry import rule

KIND = "saved-tensor-modified-in-place"
HEAD = re.compile(r"one of the variables needed for gradient computation has been modified by an "
                  r"inplace operation")
# `[torch.FloatTensor [2]]` / `[torch.cuda.FloatTensor [2, 3]]` / `[CPUBFloat16Type [2]]`; the
# `which is output` clause is absent for a leaf; torch 2.13 names the op (`Sigmoid`), older torch the
# node (`SigmoidBackward0`; before 1.10 `SigmoidBackward`).
DETAIL = re.compile(r"\[(?P<type>[^\s\[\]]+) \[(?P<shape>[\d, ]*)\]\]"
                    r"(?:, which is output (?P<output>\d+) of (?P<grad_fn>[^\s,]+),)?"
                    r" is at version (?P<version>\d+); expected version (?P<expected>\d+) instead")
# "Error detected in X. Traceback of forward call that caused the error: File ..." -- or, when the forward
# ran without anomaly mode (an earlier plain cell): "Error detected in X. No forward pass information ..."
ANOMALY = re.compile(r"Error detected in (?P<node>\w+)\. (?P<info>Traceback of forward call|No forward pass)")
FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_SCALARS = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16",
            "ComplexFloat": "complex64", "ComplexDouble": "complex128", "ComplexHalf": "complex32"}
_NO_GRAD = frozenset({"no_grad", "inference_mode", "set_grad_enabled"})


@dataclass(frozen=True)
class SavedTensorError:
    """What torch's message says about the saved tensor."""

    type_text: str = ""
    shape: Optional[Tuple[int, ...]] = None
    dtype: Optional[str] = None
    device: Optional[str] = None  # "cpu", "cuda", ...: the device type only
    output: Optional[int] = None
    grad_fn: Optional[str] = None
    version: Optional[int] = None
    expected: Optional[int] = None


def parse_saved_tensor_error(message: str) -> Optional[SavedTensorError]:
    """None when `message` is not the saved-tensor error; the details it gives otherwise."""
    if not HEAD.search(message):
        return None
    m = DETAIL.search(message)
    if m is None:  # NB: very old torch said only the first sentence
        return SavedTensorError()
    dims = m["shape"].replace(" ", "")
    dtype, device = _type_facts(m["type"])
    return SavedTensorError(
        type_text=m["type"], shape=tuple(int(n) for n in dims.split(",")) if dims else (),
        dtype=dtype, device=device, output=int(m["output"]) if m["output"] else None,
        grad_fn=m["grad_fn"], version=int(m["version"]), expected=int(m["expected"]))


def _type_facts(type_text: str) -> Tuple[Optional[str], Optional[str]]:
    """`torch.cuda.HalfTensor` -> ('float16', 'cuda'); `CPUBFloat16Type` -> ('bfloat16', 'cpu')."""
    m = re.fullmatch(r"torch\.(?:(?P<dev>\w+)\.)?(?P<scalar>\w+?)Tensor", type_text)
    if m:
        return _SCALARS.get(m["scalar"]), (m["dev"] or "cpu").lower()
    m = re.fullmatch(r"(?P<dev>CPU|CUDA|MPS|XPU|HIP|Meta)(?P<scalar>\w+?)Type", type_text)
    if m:
        return _SCALARS.get(m["scalar"]), m["dev"].lower()
    return None, None


def forward_site(ctx: RuleContext) -> Tuple[Optional[str], Optional[int], bool]:
    """(backward node, cell line, forward seen) from anomaly mode's "Error detected in X" warning."""
    for w in reversed(ctx.record.warnings):
        m = ANOMALY.search(w.message)
        if m is None:
            continue
        lines = [int(f["line"]) for f in FRAME.finditer(w.message) if f["file"] == ctx.record.filename]
        return m["node"], (lines[-1] if lines else None), m["info"] != "No forward pass"
    return None, None, False


# -- which in-place op changed the saved tensor --

def _live(ref: Any) -> Optional[torch.Tensor]:
    obj = ref() if ref is not None else None
    return obj if isinstance(obj, torch.Tensor) else None


def _saved_candidates(ctx: RuleContext, err: SavedTensorError) -> List[torch.Tensor]:
    """Named tensors that fit the message: its shape, and its version now."""
    wanted = (err.shape, err.version)
    return ctx.memo(("saved-candidates", wanted), lambda: [
        obj for _, obj in ctx.names.objects() if _shape_and_version(obj) == wanted])


def _shape_and_version(obj: Any) -> Optional[Tuple[Tuple[int, ...], int]]:
    if not isinstance(obj, torch.Tensor):
        return None
    try:
        return tuple(obj.shape), obj._version
    except (RuntimeError, NotImplementedError):  # NB: a nested or sparse-compressed tensor has no sizes
        return None


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """a and b are one tensor, or views of one another / of one base (metadata only)."""
    return a is b or a._base is b or b._base is a or (a._base is not None and a._base is b._base)


def _fits(err: SavedTensorError, t: TensorSnapshot) -> bool:
    if err.expected is not None and not err.expected < t.version <= err.version:
        return False  # NB: a write after the save leaves the version in (expected, version]
    if err.dtype and t.dtype != err.dtype:
        return False
    if err.grad_fn and not t.requires_grad:
        return False  # NB: a tensor with a grad_fn requires grad (a .grad zeroed in place never fits)
    return not err.device or t.device.split(":")[0] == err.device


def culprit(ctx: RuleContext, err: SavedTensorError, forward_line: Optional[int]
            ) -> Optional[Tuple[OpEvent, TensorSnapshot]]:
    """The recorded in-place op that changed the saved tensor; None when not seen or ambiguous.

    A write fits by the message's version, dtype and device; it is the saved tensor by its shape (2), by
    identity with a named tensor of that shape and version (2), by a name on the forward line (1); the
    first write after the save (version expected + 1) wins a tie (1).
    """
    saved = _saved_candidates(ctx, err)
    named = set(dotted_names(ctx.record.source_line(forward_line)))
    best: List[Tuple[int, OpEvent, TensorSnapshot]] = []
    for event in ctx.record.inplace_ops:
        for t in event.targets if event.lineno is not None else ():
            if not _fits(err, t):
                continue
            obj = _live(t.ref)
            score = 2 if err.shape is not None and t.shape == err.shape else 0
            if obj is not None and any(_same_storage(obj, s) for s in saved):
                score += 2
            if obj is not None and set(ctx.names.names_for(obj)) & named:
                score += 1
            if score:
                best.append((score + (err.expected is not None and t.version == err.expected + 1), event, t))
    if not best:
        return None
    top = max(s for s, _, _ in best)
    winners = [(e, t) for s, e, t in best if s == top]
    if len({e.lineno for e, _ in winners}) > 1:
        return None  # NB: two lines fit equally well: naming one would be a guess
    return winners[-1]


def stepped_parameter(ctx: RuleContext, err: SavedTensorError
                      ) -> Optional[Tuple[StepEvent, torch.Tensor]]:
    """An optimizer step that updated a parameter fitting the message (GAN: D stepped before G's backward)."""
    if err.shape is None or err.version is None:
        return None
    numel = math.prod(err.shape)
    fits = []
    for step in ctx.record.steps:
        opt = step.optimizer() if step.optimizer is not None and step.lineno is not None else None
        for group in attribute_without_code(opt, "param_groups") or ():
            for p in group.get("params", ()) if isinstance(group, dict) else ():
                if isinstance(p, torch.Tensor) and p._version == err.version and p.numel() == numel \
                        and (not err.dtype or dtype_name(p.dtype) == err.dtype):
                    fits.append((tuple(p.shape) == err.shape, step, p))
    if not fits:
        return None
    exact = [f for f in fits if f[0]] or fits
    return exact[-1][1], exact[-1][2]


# -- the rule --

@rule(KIND, matches=(
    "one of the variables needed for gradient computation has been modified by an inplace operation: "
    "[torch.FloatTensor [2]], which is output 0 of Sigmoid (torch < 2.13: SigmoidBackward0), is at version 1; "
    "expected version 0 instead",
), fix="the out-of-place form (`x = x + y`, `inplace=False`, `x = x.clone()` before a slice write); for an "
       "optimizer step between a forward and its backward, every backward before the step")
def saved_tensor_modified_in_place(ctx: RuleContext) -> Optional[Diagnosis]:
    """A tensor saved for backward was changed in place before backward used it."""
    if not isinstance(ctx.exception, RuntimeError):
        return None
    err = parse_saved_tensor_error(ctx.error_message)
    if err is None:
        return None
    saved = Saved(err, *forward_site(ctx))
    found = culprit(ctx, err, saved.line)
    if found is not None:
        return _from_inplace_op(ctx, saved, *found)
    stepped = stepped_parameter(ctx, err)
    if stepped is not None:
        return _from_step(ctx, saved, *stepped)
    return _unseen(ctx, saved)


@dataclass(frozen=True)
class Saved:
    """The saved tensor as torch's message and anomaly mode's warning describe it."""

    err: SavedTensorError
    node: Optional[str]  # the backward node that needed it (anomaly mode only)
    line: Optional[int]  # the forward line that saved it (anomaly mode only)
    forward_seen: bool = True  # False: the forward ran without anomaly mode

    def why(self, ctx: RuleContext, name: str) -> str:
        if self.line is not None:
            return ctx.say("inplace.saved.why_saved", lineno=self.line, name=name, node=self.node,
                           code=code_of(ctx, self.line))
        if self.node is not None:
            key = "elsewhere" if self.forward_seen else "unwatched"
            return ctx.say(f"inplace.saved.why_saved_{key}", name=name, node=self.node)
        err = self.err
        producer = ctx.say("inplace.saved.producer", output=err.output, grad_fn=err.grad_fn) \
            if err.grad_fn else ""
        fast = "inplace.saved.why_saved_unknown" if _anomaly_was_on(ctx) else "inplace.saved.why_saved_fast"
        return ctx.say(fast, name=name, producer=producer)

    def what(self, ctx: RuleContext, name: str) -> str:
        err = self.err
        if err.version is None:
            return ctx.say("inplace.saved.what_bare", name=name)
        shape = shape_text(err.shape) if err.shape is not None else "?"
        tensor = ctx.say("inplace.saved.tensor", dtype=err.dtype or err.type_text, shape=shape)
        return ctx.say("inplace.saved.what", name=name, version=err.version, expected=err.expected,
                       tensor=tensor)

    def where(self, ctx: RuleContext, lineno: Optional[int], key: str) -> str:
        where = ctx.where(lineno)
        if self.line is not None and self.line != lineno:
            where += ctx.say(key, lineno=self.line)
        return where


def _anomaly_was_on(ctx: RuleContext) -> bool:
    """Without --fast anomaly mode was on; its warning may still be missing (filtered by the user)."""
    return any("Anomaly Detection has been enabled" in w.message for w in ctx.record.warnings) or \
        "backtrace further above" in ctx.error_message


def _from_inplace_op(ctx: RuleContext, saved: Saved, event: OpEvent, target: TensorSnapshot) -> Diagnosis:
    written = _live(target.ref)
    base = _base_of(ctx, saved.err, written)
    spot = InPlaceSpot.find(ctx, event)
    view = _quote(ctx.names.name_for(written) if written is not None else None) or \
        _quote(spot.target if spot else None) or ctx.say("inplace.saved.the_tensor")
    name = _quote(ctx.names.name_for(base)) if base is not None else view
    op = code_of(ctx, event.lineno) or f"{event.name}()"
    changed = dict(op=op, lineno=event.lineno, name=name, version=target.version, backward=_backward(ctx))
    why = [saved.why(ctx, name), ctx.say("inplace.saved.why_changed_view", view=view, **changed)
           if base is not None else ctx.say("inplace.saved.why_changed", **changed)]
    if spot is not None and spot.form == "keyword" and spot.node.value.lineno != event.lineno:
        why.append(ctx.say("inplace.saved.why_keyword", op=event.name, lineno=spot.node.value.lineno))
    is_update = target.is_leaf and target.requires_grad
    fix = None
    if is_update:
        why.append(ctx.say("inplace.saved.why_update", name=name, lineno=event.lineno))
    else:
        fix = spot.fix(ctx, target) if spot is not None else None
        if fix is None:
            why.append(ctx.say("inplace.saved.why_no_fix", lineno=event.lineno, name=name))
    facts = [tensor_fact(_plain_name(name), base)] if base is not None else []
    facts.append(tensor_fact(_plain_name(view), written) if written is not None
                 else _snapshot_fact(_plain_name(view), target, saved.err))
    title = "inplace.saved.title_update" if is_update else "inplace.saved.title"
    return ctx.diagnosis(
        KIND, ERROR, title=_capital(ctx.say(title, name=name)),
        summary=ctx.say("inplace.saved.summary", name=name, op=op, lineno=event.lineno),
        what=saved.what(ctx, name), why=sentences(ctx, why),
        where=saved.where(ctx, event.lineno, "inplace.saved.where_saved"),
        lines=_lines(saved.line, event.lineno, ctx.record.error_lineno),
        names=[_plain_name(n) for n in dict.fromkeys((name, view))], tensors=facts, fix=fix)


def _base_of(ctx: RuleContext, err: SavedTensorError, written: Optional[torch.Tensor]
             ) -> Optional[torch.Tensor]:
    """The saved tensor when the op wrote through a view of it (`row = x[0]; row.add_(1)`), else None."""
    if written is None or err.shape is None:
        return None
    for t in _saved_candidates(ctx, err):
        if t is not written and _same_storage(t, written):
            return t
    return None


def _from_step(ctx: RuleContext, saved: Saved, step: StepEvent, param: torch.Tensor) -> Diagnosis:
    opt = step.optimizer() if step.optimizer is not None else None
    optimizer = (ctx.names.name_for(opt) if opt is not None else None) or step.optimizer_class
    name = _quote(ctx.names.name_for(param)) or ctx.say("inplace.saved.a_parameter", optimizer=optimizer)
    why = [saved.why(ctx, name),
           ctx.say("inplace.saved.why_step", optimizer=optimizer, lineno=step.lineno, name=name,
                   backward=_backward(ctx)),
           ctx.say("inplace.saved.why_step_fix", optimizer=optimizer)]
    return ctx.diagnosis(
        KIND, ERROR, title=ctx.say("inplace.saved.title_step", name=name, optimizer=optimizer),
        summary=ctx.say("inplace.saved.summary_step", name=name, optimizer=optimizer, lineno=step.lineno),
        what=saved.what(ctx, name), why=sentences(ctx, why),
        where=saved.where(ctx, step.lineno, "inplace.saved.where_saved_step"),
        lines=_lines(saved.line, step.lineno, ctx.record.error_lineno),
        names=[optimizer, _plain_name(name)], tensors=[tensor_fact(_plain_name(name), param)], fix=None)


def _unseen(ctx: RuleContext, saved: Saved) -> Diagnosis:
    found = _saved_candidates(ctx, saved.err) if saved.err.shape is not None else []
    names = sorted({n for t in found for n in [ctx.names.name_for(t)] if n})
    name = _quote(names[0]) if len(names) == 1 else ctx.say("inplace.saved.the_tensor")
    why = [saved.why(ctx, name), ctx.say("inplace.saved.why_unseen", name=name)]
    return ctx.diagnosis(
        KIND, ERROR, title=_capital(ctx.say("inplace.saved.title", name=name)),
        summary=ctx.say("inplace.saved.summary_unseen", name=name),
        what=saved.what(ctx, name), why=sentences(ctx, why), where=ctx.where(ctx.record.error_lineno),
        lines=_lines(saved.line, ctx.record.error_lineno), names=names[:1],
        tensors=[tensor_fact(names[0], found[0])] if len(names) == 1 and len(found) == 1 else [])


def code_of(ctx: RuleContext, lineno: Optional[int]) -> str:
    """A cell line as code: stripped, without its comment."""
    return _without_comment(ctx.record.source_line(lineno))


def _without_comment(line: str) -> str:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return line.strip()
    comment = next((t for t in tokens if t.type == tokenize.COMMENT), None)
    return (line.strip()[:comment.start[1]] if comment else line.strip()).rstrip()


def sentences(ctx: RuleContext, parts: List[str]) -> str:
    """Sentences joined as the language writes them (Chinese puts no space after 。)."""
    return ("" if ctx.language == "zh" else " ").join(parts)


def _quote(name: Optional[str]) -> Optional[str]:
    return f"`{name}`" if name else None


def _plain_name(name: str) -> str:
    return name.strip("`")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _backward(ctx: RuleContext) -> str:
    lineno = ctx.record.error_lineno
    return ctx.say("inplace.saved.backward_at", lineno=lineno) if lineno else \
        ctx.say("inplace.saved.backward")


def _lines(*linenos: Optional[int]) -> List[int]:
    return sorted({n for n in linenos if n is not None})


def _snapshot_fact(name: str, t: TensorSnapshot, err: SavedTensorError) -> TensorFact:
    return TensorFact(name=name, shape=shape_text(t.shape), dtype=t.dtype, device=t.device,
                      requires_grad=t.requires_grad, is_leaf=t.is_leaf, version=err.version)


# -- the fix: the in-place op's own syntax at its line --

_AUG = {ast.Add: ("add_", "+"), ast.Sub: ("sub_", "-"), ast.Mult: ("mul_", "*"), ast.Div: ("div_", "/"),
        ast.FloorDiv: ("floor_divide_", "//"), ast.Mod: ("remainder_", "%"), ast.Pow: ("pow_", "**"),
        ast.BitAnd: ("__iand__", "&"), ast.BitOr: ("__ior__", "|"), ast.BitXor: ("__ixor__", "^"),
        ast.LShift: ("__ilshift__", "<<"), ast.RShift: ("__irshift__", ">>")}
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Tuple)


@dataclass(frozen=True)
class InPlaceSpot:
    """Where the in-place op is written: `form` is augassign, method, function, setitem, keyword or out."""

    form: str
    tree: ast.Module
    stmt: ast.stmt
    node: ast.AST  # the AugAssign, the Call, the Subscript or the keyword
    target: Optional[str]  # the written tensor's expression (`x`, `self.h`), when it is a plain name
    twin: Optional[str] = None  # the out-of-place function (`add` for `add_`), when torch has one

    @staticmethod
    def find(ctx: RuleContext, event: OpEvent) -> Optional["InPlaceSpot"]:
        tree = cell_tree(ctx.record.source) if event.lineno else None
        stmt = enclosing_statement(tree, event.lineno) if tree is not None else None
        if stmt is None:
            return None
        src = ctx.record.source
        if event.how == "inplace=True":
            return _keyword_spot(src, tree, stmt, event.name)
        if event.how == "setitem":  # `x[0] = 0`, `x[0] += 1`
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
            sub = next((t for t in targets if isinstance(t, ast.Subscript)), None)
            return InPlaceSpot("setitem", tree, stmt, sub, _plain(src, sub.value)) if sub else None
        if event.how == "out=":
            call = next((c for c in _calls(stmt) if any(k.arg == "out" for k in c.keywords)), None)
            out = next((k for k in call.keywords if k.arg == "out"), None) if call else None
            return InPlaceSpot("out", tree, stmt, call, _plain(src, out.value)) if out else None
        if isinstance(stmt, ast.AugAssign) and _AUG.get(type(stmt.op), ("",))[0] == event.name:
            target = stmt.target.value if isinstance(stmt.target, ast.Subscript) else stmt.target
            return InPlaceSpot("augassign", tree, stmt, stmt, _plain(src, target))
        return _call_spot(ctx, tree, stmt, event.name)

    def fix(self, ctx: RuleContext, target: TensorSnapshot) -> Optional[Fix]:
        src = ctx.record.source
        if self.form == "keyword":
            start, end = node_span(src, self.node.value)
            return make_fix(src, [TextEdit(start, end, "False")],
                            ctx.say("inplace.saved.fix_keyword", lineno=self.node.value.lineno))
        obj = _live(target.ref)
        if self.target is None or obj is not None and obj._is_view():
            return None  # NB: writing through a view means to change its base: rebinding would not
        guard = _no_grad_block(self.tree, self.stmt)
        if guard is not None:  # a rebind under no_grad would drop the graph: copy before the block
            return self._clone_before(ctx, guard)
        if self.form == "augassign" and isinstance(self.node.target, (ast.Name, ast.Attribute)):
            value = segment(src, self.node.value) or ""
            if not isinstance(self.node.value, _ATOMS):
                value = f"({value})"
            text = f"{self.target} = {self.target} {_AUG[type(self.node.op)][1]} {value}"
            return self._rebind(ctx, [TextEdit(*node_span(src, self.stmt), text)])
        if self.form in ("method", "function") and self.twin and self._is_whole_statement():
            start, _ = node_span(src, self.stmt)
            _, end = node_span(src, self.node.func)
            edits = [TextEdit(start, start, f"{self.target} = "), TextEdit(end - 1, end, "")]
            return self._rebind(ctx, edits)
        if self.form == "out" and self._is_whole_statement():
            return self._without_out(ctx)
        return self._clone_before(ctx, self.stmt)

    def _is_whole_statement(self) -> bool:
        return isinstance(self.stmt, ast.Expr) and self.stmt.value is self.node

    def _rebind(self, ctx: RuleContext, edits: List[TextEdit]) -> Optional[Fix]:
        src = ctx.record.source
        fixed = apply_edits(src, edits).splitlines()
        code = _without_comment(fixed[self.stmt.lineno - 1]) if self.stmt.lineno <= len(fixed) else ""
        return make_fix(src, edits, ctx.say("inplace.saved.fix_rebind", lineno=self.stmt.lineno, code=code))

    def _without_out(self, ctx: RuleContext) -> Optional[Fix]:
        src = ctx.record.source
        call = self.node
        args = [*call.args, *call.keywords]
        i = next(i for i, a in enumerate(args) if isinstance(a, ast.keyword) and a.arg == "out")
        if i == 0:
            return None
        _, cut_from = node_span(src, args[i - 1])
        _, cut_to = node_span(src, args[i])
        start, _ = node_span(src, self.stmt)
        edits = [TextEdit(start, start, f"{self.target} = "), TextEdit(cut_from, cut_to, "")]
        return make_fix(src, edits, ctx.say("inplace.saved.fix_out", lineno=self.stmt.lineno,
                                            name=_quote(self.target)))

    def _clone_before(self, ctx: RuleContext, anchor: ast.stmt) -> Optional[Fix]:
        src = ctx.record.source
        line = src.splitlines()[anchor.lineno - 1]
        if anchor.col_offset != len(indent_of(line)):
            return None  # NB: `a = 1; x[0] = 0`: a line inserted before would not sit just before the write
        if any(anchor.lineno <= a.lineno < self.stmt.lineno for a in assignments_to(self.tree, self.target)):
            return None  # NB: the name is bound again between the copy and the write
        text = f"{indent_of(line)}{self.target} = {self.target}.clone()"
        return make_fix(src, [insert_line_before(src, anchor.lineno, text)],
                        ctx.say("inplace.saved.fix_clone", lineno=anchor.lineno, name=_quote(self.target)))


def _plain(src: str, node: Optional[ast.AST]) -> Optional[str]:
    """The text of `x` or `self.h` (a name or a chain of attributes on one), else None."""
    inner = node
    while isinstance(inner, ast.Attribute):
        inner = inner.value
    return segment(src, node) if isinstance(inner, ast.Name) else None


def _calls(stmt: ast.AST) -> Iterator[ast.Call]:
    return (n for n in ast.walk(stmt) if isinstance(n, ast.Call))


def _call_spot(ctx: RuleContext, tree: ast.Module, stmt: ast.stmt, name: str) -> Optional[InPlaceSpot]:
    """`x.add_(1)` (method) or `torch.relu_(x)` (function) on the statement."""
    calls = [c for c in _calls(stmt) if isinstance(c.func, ast.Attribute) and c.func.attr == name]
    if len(calls) != 1:
        return None
    call, src = calls[0], ctx.record.source
    owner = ctx.names.lookup(segment(src, call.func.value) or "")
    if isinstance(owner, types.ModuleType) and owner.__name__.startswith("torch"):
        twin = name[:-1] if callable(getattr(owner, name[:-1], None)) else None
        target = _plain(src, call.args[0]) if call.args else None
        return InPlaceSpot("function", tree, stmt, call, target, twin)
    twin = name[:-1] if name.endswith("_") and hasattr(torch.Tensor, name[:-1]) else None
    return InPlaceSpot("method", tree, stmt, call, _plain(src, call.func.value), twin)


def _keyword_spot(src: str, tree: ast.Module, stmt: ast.stmt, op: str) -> Optional[InPlaceSpot]:
    """`inplace=True` on the line, else the one `ReLU(inplace=True)` in the cell that made this op."""
    def flagged(where: ast.AST) -> List[Tuple[ast.Call, ast.keyword]]:
        return [(c, k) for c in _calls(where) for k in c.keywords if k.arg == "inplace"
                and isinstance(k.value, ast.Constant) and k.value.value is True]

    def made_op(found: List[Tuple[ast.Call, ast.keyword]]) -> List[Tuple[ast.Call, ast.keyword]]:
        return [(c, k) for c, k in found if _callee(c).replace("_", "") == op.replace("_", "")]

    here = made_op(flagged(stmt))
    if len(here) != 1:
        here = made_op(flagged(tree))
    if len(here) != 1:
        return None
    args = {_plain(src, c.args[0]) for c in _calls(stmt) if c.args} - {None}
    return InPlaceSpot("keyword", tree, stmt, here[0][1], args.pop() if len(args) == 1 else None)


def _callee(call: ast.Call) -> str:
    func = call.func
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")).lower()


def _no_grad_block(tree: ast.Module, stmt: ast.stmt) -> Optional[ast.stmt]:
    """The outermost `with torch.no_grad():` (inference_mode, set_grad_enabled) around `stmt`."""
    found = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and node.lineno <= stmt.lineno <= node.end_lineno \
                and any(isinstance(i.context_expr, ast.Call) and _callee(i.context_expr) in _NO_GRAD
                        for i in node.items):
            if found is None or node.lineno < found.lineno:
                found = node
    return found
