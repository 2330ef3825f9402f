"""shape-mismatch raised at an op of the user's own code: sizes that do not broadcast, a view or reshape the size
does not fit, `view()` of non-contiguous memory, an RNN / LayerNorm / BatchNorm given another feature count than
it was built for, a pooling window longer than its input, a convolution given a 5-D batch.

Read from what the run holds, never from how the code looks: the op is the innermost user line of the traceback
(the instruction that raised, by its position), its operands' shapes are those the frame holds there (else those
the tracker recorded of the failing call), and a layer's sizes come from where the run built it (built.py: the
`nn.GRU(...)` line of the user's `__init__`). The only edit proposed is one that computes the same values:
`.view(` made `.reshape(` for non-contiguous memory.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch

from ... import built, catalog
from ...cell import cell_tree, node_span
from ...edits import make_fix
from ...facts import shape_text
from ...model import ERROR, Diagnosis, Fix, TextEdit
from ..context import RuleContext
from ..places import root, user_entries, view_on, with_lines
from ..plain import fill, plain_words, worker_error
from ..tb import UNKNOWN, local_value_in, node_at
from ..traced import Born, born, marked

# the plain entries (rules/plain.py) that are a shape error at the op that raised
AT_OP = frozenset({"broadcast", "expand", "cat", "view_stride", "rnn_input", "rnn_state", "rnn_hidden", "layer_norm",
                   "batch_norm",
                   "too_small", "pooled_size", "conv_dims", "bmm", "dot"})
MAX_OPERANDS = 4


@dataclass(frozen=True)
class OpShape:
    name: str  # the plain entry
    params: Dict[str, str] = field(hash=False)


def parse_op_shape(message: str) -> Optional[OpShape]:
    if worker_error(message):
        return None  # NB: a worker's frames are text: no operand to read
    words = plain_words(message)
    return OpShape(*words) if words is not None and words[0] in AT_OP else None


def view_size_at_op(size: Any) -> OpShape:
    """A view / reshape whose sizes do not make the tensor's (not the fixed-batch kind view_size.py fixes)."""
    return OpShape("view_size", {"dims": ", ".join(map(str, size.dims)), "size": str(size.size)})


def op_card(ctx: RuleContext, err: OpShape, kind: str) -> Optional[Diagnosis]:
    top = root(ctx)
    users = user_entries(ctx)
    if not users:
        return None
    entry = users[-1]
    at = view_on(ctx, entry.tb_frame.f_code.co_filename, entry.tb_lineno)
    if at is None or at.record.filename != ctx.record.filename:
        return None  # NB: answered from the view of the frame that raised
    source = at.record.source
    node = node_at(cell_tree(source), entry, (ast.Call, ast.BinOp, ast.Subscript, ast.AugAssign))
    lineno = node.lineno if node is not None else entry.tb_lineno
    shapes = _operand_shapes(top, source, entry, node)
    # NB: a hidden state of another batch size: where it got that size, not the layer, is what to read
    state = _state_born(ctx, entry, node, err.params["got"]) if err.name == "rnn_hidden" else None
    layer = _layer_built(top, entry, node) if err.name != "rnn_hidden" else None
    parts = [at.say("opshape.operands", lineno=lineno, shapes=catalog.listing(shapes, at.language))] if shapes else []
    if layer is not None:
        parts.append(layer[0].say("opshape.layer", layer=layer[2], lineno=layer[1]))
    if state is not None:
        batch = err.params["got"].split(",")[1].strip()
        parts.append(state.at.say("opshape.state_made", lineno=state.lineno, batch=batch,
                                  code=state.at.record.source_line(state.lineno).strip()))
    fix = _reshape_fix(at, source, node) if err.name == "view_stride" else None
    if fix is not None:
        parts.append(at.say("opshape.reshape", lineno=lineno))
    title_key = "plain.view_size.title" if err.name == "view_size" else f"plain.{err.name}.title"
    d = at.diagnosis(
        kind, ERROR, title=at.say(title_key, **err.params), summary=at.say(f"plain.{err.name}.means", **fill(err.params)),
        what=at.say("generic.what", error_type=ctx.error_type or "Error", error_message=ctx.error_message),
        why=catalog.sentences(parts, at.language), where=at.where(lineno), lines=[lineno], fix=fix)
    if state is not None:
        return marked(d, state, ctx)
    return with_lines(d, layer[0], [layer[1]]) if layer is not None else d


def _state_born(ctx: RuleContext, entry: Any, node: Optional[ast.AST], got: str) -> Optional[Born]:
    """Where the run gave the hidden state the line passes (a tensor, or an LSTM's (h, c)) its batch size."""
    dims = tuple(int(d) for d in got.split(",") if d.strip().lstrip("-").isdigit())
    if not isinstance(node, ast.Call) or len(dims) != 3:
        return None
    for arg in node.args:
        value = local_value_in(entry.tb_frame, arg)
        for t in value if isinstance(value, tuple) else (value,):
            if isinstance(t, torch.Tensor) and tuple(t.shape) == dims:
                return born(ctx, t, lambda m: len(m.shape) == 3 and m.shape[1] == dims[1])
    return None


def _operands(node: Optional[ast.AST]) -> List[ast.expr]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.AugAssign):
        return [node.target, node.value]
    if isinstance(node, ast.Call):
        receiver = [node.func.value] if isinstance(node.func, ast.Attribute) else []
        return receiver + [a for a in node.args if not isinstance(a, ast.Starred)]
    return []


def _operand_shapes(top: RuleContext, source: str, entry: Any, node: Optional[ast.AST]) -> List[str]:
    """`x` (8, 2, 16) for each tensor operand the frame holds; else the shapes the tracker saw the op given."""
    found = []
    for operand in _operands(node)[:MAX_OPERANDS]:
        value = local_value_in(entry.tb_frame, operand)
        if value is not UNKNOWN and isinstance(value, torch.Tensor):
            text = source[slice(*node_span(source, operand))]
            found.append(f"`{text}` {shape_text(tuple(value.shape))}")
    if found:
        return found
    failed = top.record.failed_ops[-1] if top.record.failed_ops else None
    return [shape_text(t.shape) for t in failed.targets][:MAX_OPERANDS] if failed is not None else []


def _layer_built(top: RuleContext, entry: Any, node: Optional[ast.AST]) -> Optional[Tuple[RuleContext, int, str]]:
    """The layer the line called (`self.gru_Rh(...)`), where the run built it, and how torch describes it."""
    if not isinstance(node, ast.Call):
        return None
    module = local_value_in(entry.tb_frame, node.func)
    if not isinstance(module, torch.nn.Module) or not type(module).__module__.startswith("torch."):
        return None  # NB: only torch's own layers: their repr runs no user code
    param = next(iter(module._parameters.values()), None)
    for filename, lineno in built.frames_of(param)[:1] if param is not None else ():
        view = view_on(top, filename, lineno)
        if view is not None:
            return view, lineno, f"`{module!r}`"
    return None


def _reshape_fix(at: RuleContext, source: str, node: Optional[ast.AST]) -> Optional[Fix]:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.func.attr != "view":
        return None
    start, end = node_span(source, node.func)
    name_start = end - len("view")
    if source[name_start:end] != "view":
        return None
    return make_fix(source, [TextEdit(name_start, end, "reshape")], at.say("opshape.reshape_fix", lineno=node.lineno))
