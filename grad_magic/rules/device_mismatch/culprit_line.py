"""The culprit seam of `device-mismatch`, what one line says: where a result with no name came from (a
factory without `device=`, an attribute sliced on the line, an operand of the failed op), the tensor a value
is taken from (`pe = self.pe[:, :n]`), and how a function names the target device itself (its input's
device, its module's first parameter's).

May touch: the cell's ast, a frame's own variables and tensor metadata (device) only. No wording.
"""
from __future__ import annotations

import ast
import types
from typing import Any, List, Optional, Sequence

import torch

from ...cell import enclosing_statement
from ..context import RuleContext
from ..kit import dotted, one_line
from .culprit import Party, same_device
from .culprit_origins import Move, Mover
from .culprit_paths import callee, parameter_path, resolve, root_of, static
from .culprit_scopes import binds, placed

_OPS = {ast.Add: ("add", "__add__", "__radd__"), ast.Sub: ("sub", "__sub__", "__rsub__", "rsub"),
        ast.Mult: ("mul", "__mul__", "__rmul__"), ast.Div: ("div", "true_divide", "__truediv__", "__rtruediv__"),
        ast.MatMult: ("matmul", "__matmul__", "__rmatmul__"), ast.BitAnd: ("__and__", "bitwise_and", "__rand__"),
        ast.BitOr: ("__or__", "bitwise_or", "__ror__"), ast.Pow: ("pow", "__pow__", "__rpow__")}
_KEEP = frozenset({"float", "double", "half", "long", "int", "bool", "unsqueeze", "squeeze", "expand", "view",
                   "reshape", "repeat", "transpose", "permute", "t", "contiguous", "clone", "detach",
                   "expand_as", "view_as", "flatten", "logical_not", "tril", "triu"})  # NB: methods whose result stays on the tensor's device


def unnamed(m: Mover, odd: Sequence[Party], op: Optional[str]) -> bool:
    """The source of each odd result that has no name, on the failing line: a tensor the line slices or
    reshapes (`self.pe[:, :n]`, moved where it is kept), a factory without `device=`
    (`torch.randn(mu.shape)`), else the one operand of the failed op that is no named tensor
    (`mask & make_mask(n)`). False when the line does not say which it is."""
    stmt = enclosing_statement(m.tree, m.lineno) if m.tree is not None and m.lineno else None
    results = [p for p in odd if not p.name]
    if stmt is None or len({p.device for p in results}) != 1:
        return False
    device = results[0].device
    bases = [(path, obj) for path, obj in _taken_on_line(m, stmt) if same_device(str(obj.device), device)]
    factories = [c for c in ast.walk(stmt) if isinstance(c, ast.Call) and m.is_factory(c.func)
                 and not any(k.arg in ("device", None) for k in c.keywords)
                 and same_device(str(torch.get_default_device()), device)]
    if bases or factories:
        return all(m.move(Party(path, device, obj)) for path, obj in bases) and \
            all(made(m, c, device) for c in factories)
    operands = _operands(m, stmt, op)
    if len(operands) == 1 and len(results) == 1:
        expr = m.device_expr(m.lineno)
        return expr is not None and m.done(Move("operand", (), m.lineno, device, expr, (operands[0],),
                                                one_line(m.src, operands[0])))
    if not operands and m.chain is not None:  # NB: `x + self.embed_positions(tokens)`: what the user's code returned
        followed = [r for ops in _op_operands(stmt, op) for c in ops if isinstance(c, ast.Call)
                    for r in [m.chain.returned_by(m, c, device)] if r is not None]
        if followed:
            return all(followed)
    # NB: the op failed inside a library the line calls (`self.attn(q, k, v, attn_mask=mask)`,
    # `model(**batch)`): the tensors the line hands it on the odd device are where the results came from
    handed = _handed(m, stmt, device)
    return bool(handed) and not operands and all(m.move(Party(path, device, obj)) for path, obj in handed)


def _lengths(path: str, t: torch.Tensor) -> bool:
    """Sequence lengths (`lengths`, `seq_len`): pack_padded_sequence wants them on the CPU, never moved."""
    return "len" in path.rsplit(".", 1)[-1].lower() and t.dim() == 1 and not t.is_floating_point()


def _handed(m: Mover, stmt: ast.stmt, device: str) -> List[Any]:
    """(path, tensor) of each tensor on `device` a call on the line is given: an argument, an item of a
    tuple argument, a tensor value of a `**dict` (`batch["input_ids"]`)."""
    found = {}
    for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
        for arg in [*call.args, *(k.value for k in call.keywords if k.arg is not None)]:
            for item in arg.elts if isinstance(arg, (ast.Tuple, ast.List)) else [arg]:
                path = dotted(item)
                obj = resolve(m.ctx, path) if path else None
                if isinstance(obj, torch.Tensor) and same_device(str(obj.device), device) and not _lengths(path, obj):
                    found.setdefault(path, obj)
        for spread in (k.value for k in call.keywords if k.arg is None):
            path = dotted(spread)
            items = resolve(m.ctx, path) if path else None
            items = getattr(items, "__dict__", {}).get("data") if not isinstance(items, dict) else items
            for key, obj in (items.items() if isinstance(items, dict) else ()):
                if isinstance(key, str) and isinstance(obj, torch.Tensor) and same_device(str(obj.device), device):
                    found.setdefault(f'{path}["{key}"]', obj)
    return list(found.items())


def made(m: Mover, call: ast.Call, device: str) -> bool:
    """`device=` on a factory call that has no name."""
    expr = m.device_expr(call.lineno)
    return expr is not None and m.done(Move("made", (), call.lineno, device, expr, (call,), one_line(m.src, call)))


def taken_from(m: Mover, value: ast.AST) -> Optional[str]:
    """`self.pe[:, :n]`, `self.mask.float()` -> `self.pe`, `self.mask`: the dotted tensor a value is cut or
    reshaped from, when it is the value's only tensor and nothing places it."""
    base = _base(value)
    if base is None or placed(value) or "." not in base:
        return None
    others = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)
              and isinstance(resolve(m.ctx, n.id), torch.Tensor)}
    return base if not others and isinstance(resolve(m.ctx, base), torch.Tensor) else None


def _base(value: ast.AST) -> Optional[str]:
    node = value
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _KEEP:
            node = node.func.value
        else:
            break
    return dotted(node) if node is not value else None


def _taken_on_line(m: Mover, stmt: ast.stmt) -> List[Any]:
    """(path, tensor) of each tensor the line slices or reshapes (`x + self.pe[:, :n]`, `mask.unsqueeze(-1)`)."""
    found = {}
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Subscript, ast.Call)):
            base = _base(node)
            obj = resolve(m.ctx, base) if base else None
            if isinstance(obj, torch.Tensor) and base not in found:
                found[base] = obj
    return list(found.items())


def _operands(m: Mover, stmt: ast.stmt, op: Optional[str]) -> List[ast.AST]:
    """The operands of the failed op on the line (`a & b`, `x.masked_fill(mask, 0)`, `torch.cat([a, b])`)
    that are no named tensor, where another one is."""
    found: List[ast.AST] = []
    for operands in _op_operands(stmt, op):
        values = [resolve(m.ctx, dotted(o)) if dotted(o) else None for o in operands]
        named = [o for o, v in zip(operands, values) if isinstance(v, torch.Tensor)]
        # NB: a name that is no tensor (`torch` of `torch.cat`, a module, a number) is no operand to move
        found += [o for o, v in zip(operands, values) if named and v is None and dotted(o) is None
                  and not placed(o) and _computed(o)]
    return found


def _op_operands(stmt: ast.stmt, op: Optional[str]) -> List[List[ast.AST]]:
    """The operands of each use of the failed op on the line: both sides of `a & b`, the receiver and the
    arguments of `x.masked_fill(mask, 0)`, the items of `torch.cat([a, b])`."""
    found = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.BinOp) and op in _OPS.get(type(node.op), ()):
            found.append([node.left, node.right])
        elif isinstance(node, ast.Call) and op and (dotted(node.func) or "").rsplit(".", 1)[-1] == op or \
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == op:
            found.append(([node.func.value] if isinstance(node.func, ast.Attribute) else []) + [
                e for a in [*node.args, *(k.value for k in node.keywords)]
                for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])])
    return found


def _computed(node: ast.AST) -> bool:
    """An expression that can give a tensor: it calls or names something (not `0.0`, `-1e9`, `"sum"`)."""
    return any(isinstance(n, (ast.Call, ast.Name, ast.Attribute, ast.Subscript)) for n in ast.walk(node))


def own_device(m: Mover, scope: ast.AST, lineno: int, device: str) -> Optional[str]:
    """In a function, `<a tensor there>.device`: the parameters the line names, the variables it names, the
    other parameters (its input), then -- in a method -- its module's first parameter
    (`self.fc.weight.device`). Read from the frame's own variables only: a global `device` may be stale, or
    absent where the function runs."""
    variables = m.ctx.record.error_locals or {}
    a = scope.args
    params = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    stmt = enclosing_statement(m.tree, lineno)
    on_line = list(dict.fromkeys(n.id for n in ast.walk(stmt) if isinstance(n, ast.Name))) if stmt else []
    earlier = [s for s in m.cell.bindings(scope) if s.lineno < lineno]
    bound = {n for n in on_line if any(binds(s, n) for s in earlier)}
    order = [n for n in on_line if n in params and n not in bound] + \
            [n for n in on_line if n in bound and n not in params] + \
            [n for n in params if n not in on_line and not any(binds(s, n) for s in earlier)]
    for name in order:
        value = variables.get(name)
        if isinstance(value, torch.Tensor) and same_device(str(value.device), device):
            return f"{name}.device"
    this = variables.get("self") if params[:1] == ["self"] else None
    if isinstance(this, torch.nn.Module):
        path = parameter_path(this, "self", lambda t: same_device(str(t.device), device))
        return f"{path}.device" if path is not None else None
    return None


def passed_as(m: Mover, caller: Mover, p: Party, function: str) -> Optional[bool]:
    """The caller passed it as an expression (`scale(torch.ones(3) + 1, w)`): the argument that became
    the parameter, made on the target device there (`device=` on its factories, else `.to()`)."""
    scope, root = m.cell.scope(m.lineno), root_of(p.name)
    stmt = enclosing_statement(caller.tree, caller.lineno) if caller.tree is not None else None
    if root != p.name or stmt is None or not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    found = [a for call in ast.walk(stmt) if isinstance(call, ast.Call)
             for a in [_argument(call, scope, root, _runs(caller.ctx, call, function))] if a is not None]
    if len(found) != 1 or placed(found[0]):
        return None
    factories = [c for c in ast.walk(found[0]) if isinstance(c, ast.Call) and caller.is_factory(c.func)
                 and not any(k.arg in ("device", None) for k in c.keywords)]
    if factories:
        return all(made(caller, c, p.device) for c in factories)
    expr = caller.device_expr(caller.lineno)
    return expr is not None and caller.done(Move("operand", (), caller.lineno, p.device, expr, (found[0],),
                                                 one_line(caller.src, found[0])))


def _runs(ctx: RuleContext, call: ast.Call, function: str) -> Optional[bool]:
    """Whether `call` runs the function named `function` (`scale`, `Net.forward`): True for a method or a
    module's forward (its first parameter is the instance), False for a plain function, None otherwise."""
    obj = resolve(ctx, dotted(call.func) or "")
    if isinstance(obj, types.FunctionType):
        return False if obj.__qualname__ == function else None
    if isinstance(obj, torch.nn.Module):
        forward = static(obj, "forward")
        return True if getattr(forward, "__qualname__", None) == function else None
    fn, instance = callee(ctx, call.func)
    return True if instance is not None and getattr(fn, "__qualname__", None) == function else None


def _argument(call: ast.Call, scope: ast.AST, name: str, method: Optional[bool]) -> Optional[ast.AST]:
    """The argument of `call` that became parameter `name` of `scope` (None when it cannot be told)."""
    if method is None:
        return None
    keyword = next((k.value for k in call.keywords if k.arg == name), None)
    if keyword is not None:
        return keyword
    params = [a.arg for a in (*scope.args.posonlyargs, *scope.args.args)][1 if method else 0:]
    if name not in params or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    index = params.index(name)
    return call.args[index] if index < len(call.args) else None
