"""The culprit seam of `device-mismatch`, part three: an odd tensor followed out of the frame where the op
failed -- to the caller that passed it (by identity in the caller's variables: `batch["attention_mask"]`),
into the helper that returned it (`state = rnn.init_hidden(...)`), to the class that keeps it as a plain
attribute (`self.pe = ...` in `__init__`), to the cell that built the loss it weighs
(`nn.CrossEntropyLoss(weight=w)`) -- and to the spot there that puts it on the target device.

Evidence is what ran: the traceback's frames and their variables, the live objects reached from them, the
functions' and classes' own code (its cell by compiled name). Each spot is a `Move` of a `Mover` that reads
that cell; the moves of every cell go into one `Plan`. What a model holds: culprit_held.py; what the failing
line itself says: culprit_line.py.
May touch: frames' variables, live objects' dicts and types (metadata only, no user code runs), the user's
cells' text. No wording.
"""
from __future__ import annotations

import ast
import collections
import dataclasses
from typing import Any, Dict, List, Optional, Sequence

import torch

from ...sources import Frame, Site
from ..context import RuleContext, dotted_names
from ..kit import one_line
from ..places import function_place, global_assignment, item_returned
from .culprit import Party, Target, same_device
from .culprit_held import attribute, loss_buffer, loss_weight, module, plain_tensor
from .culprit_line import made, own_device, passed_as, taken_from, unnamed
from .culprit_origins import Move, Mover, Plan
from .culprit_paths import callee, item_of, owner_of, path_to, resolve, root_of, static
from .culprit_returns import returned_by, siblings, unpacked
from .culprit_scopes import binds, placed


class Chain:
    """The user frames of the run (outermost first) and a Mover per frame or place, sharing one Plan."""

    def __init__(self, ctx: RuleContext, op: Optional[str]) -> None:
        self.outer = ctx.record.outer if ctx.record.outer is not None else ctx.record
        self.base = ctx.rebased(self.outer)
        self.frames: List[Frame] = list(self.outer.frames)
        self.target, self.op = Target(None, "unclear"), op
        self.result = Plan()
        self.movers: Dict[Any, Mover] = {}

    # -- frames and places --

    def context(self, i: int) -> RuleContext:
        """Frame i seen as a rule sees it: a view for another cell, the running cell re-based on its line."""
        frame = self.frames[i]
        if frame.site.filename != self.outer.filename:
            return self.base.view(frame)
        record = dataclasses.replace(self.outer, error_lineno=frame.site.lineno, error_locals=frame.local_names)
        return self.base.rebased(record)

    def innermost(self) -> RuleContext:
        return self.context(len(self.frames) - 1) if self.frames else self.base

    def mover(self, i: int) -> Mover:
        if i not in self.movers:
            ctx = self.context(i)
            self.movers[i] = Mover(ctx, self.target, ctx.record.error_lineno, self.result, self, i)
        return self.movers[i]

    def place(self, filename: str, lineno: int, function: str, variables: Optional[dict]) -> Mover:
        """A Mover for code not on the stack (a helper that returned, a class's `__init__`, an earlier cell)."""
        key = (filename, function)
        if key not in self.movers:
            sources = self.outer.sources
            if filename == self.outer.filename:
                record = dataclasses.replace(self.outer, error_lineno=lineno, error_locals=variables)
                ctx = self.base.rebased(record)
            else:
                cell = sources.cell_number(filename) if sources is not None else None
                ctx = self.base.view(Frame(Site(filename, lineno, function, cell), variables))
            self.movers[key] = Mover(ctx, self.target, lineno, self.result, self, None)
        mover = self.movers[key]
        mover.lineno = lineno
        return mover

    def plan(self, parties: Sequence[Party], target: Target) -> Plan:
        self.target = target
        return self.mover(len(self.frames) - 1).plan(parties) if self.frames else self.result

    # -- the cells the moves are in: their text, number, and a context that says their lines --

    def said_in(self, filename: str) -> RuleContext:
        if filename == self.outer.filename:
            return self.base
        return next(m.ctx for m in self.movers.values() if m.ctx.record.filename == filename)

    def texts(self) -> Dict[str, str]:
        return {m.ctx.record.filename: m.ctx.record.source for m in self.movers.values()}

    def cells(self) -> Dict[str, Optional[int]]:
        return {m.ctx.record.filename: m.ctx.record.cell for m in self.movers.values()}

    # -- the hops, asked by a Mover before its own cell-local search (None: not this mover's business) --

    def hop(self, m: Mover, p: Party) -> Optional[bool]:
        path = p.name
        owner_path, attr = owner_of(path)
        if attr is not None:
            owner = resolve(m.ctx, owner_path)
            if isinstance(owner, torch.nn.Module) and plain_tensor(owner, attr):
                return attribute(self, m, p, owner, attr)
            if isinstance(owner, torch.nn.Module) and loss_buffer(owner, attr):
                return loss_weight(self, m, p, owner_path, owner, attr)
        root = root_of(path)
        head, key = item_of(path)
        scope = m.cell.scope(m.lineno)
        if self.is_parameter(m, scope, root) and (path == root or head == root or attr is not None):
            return self.outward(m, p)
        if p.module:  # NB: a layer kept in a plain list: culprit_unregistered.py, before any of this
            return module(self, m, p, scope)
        if path != root and head != root:
            return None
        if path == root and self.discarded(m, scope, p):
            return True
        if isinstance(key, str):
            return self.batch_item(m, p, root, key, scope)
        return self.binding(m, p, root, key, scope)

    def batch_item(self, m: Mover, p: Party, root: str, key: str, scope: ast.AST) -> Optional[bool]:
        """`batch["attention_mask"]`: followed to where the dict was made -- and so is every other tensor of
        the dict on the odd device (`input_ids` would fail next)."""
        if root in m.moved:
            return True
        found = self.binding(m, p, root, key, scope)
        items = resolve(m.ctx, root)
        items = items if isinstance(items, dict) else resolve(m.ctx, f"{root}.data") \
            if isinstance(items, collections.UserDict) else None
        if not found or root in m.moved or not isinstance(items, dict):
            return found
        m.moved.add(p.name)  # NB: its siblings come back to it: it is moved already
        others = [(k, v) for k, v in items.items() if isinstance(k, str) and f'{root}["{k}"]' not in m.moved
                  and isinstance(v, torch.Tensor) and same_device(str(v.device), p.device)]
        return all(m.move(Party(f'{root}["{k}"]', p.device, v)) for k, v in others)

    def binding(self, m: Mover, p: Party, root: str, key: Any, scope: ast.AST) -> Optional[bool]:
        """What bound `root` before the line: a loop over dicts, a dict comprehension, a slice of a kept
        tensor, a call of the user's function (or an object with its own `.to()`), a global of an earlier
        cell made by such a call."""
        loop = m.cell.loop_binding(scope, root, m.lineno)
        if loop is not None and key is not None:
            return self.dict_loop(m, p, root, loop)
        binding = m.cell.last_binding(scope, root, m.lineno)
        if binding is None and not m.cell.bound_before(root, m.lineno):
            return self.global_call(m, p, root, key)
        if binding is None and key is None:
            return unpacked(m, p, root, scope)
        if binding is None or placed(binding.value):
            return None
        if isinstance(binding.value, ast.DictComp) and key is not None:
            return self.comprehension(m, p, root, binding)
        source = taken_from(m, binding.value) if key is None else None
        if source is not None:
            return m.move_taken(root, Party(source, p.device, resolve(m.ctx, source)), binding.lineno)
        if isinstance(binding.value, ast.Call):
            found = self.into(m, p, key, binding)
            return found if found is not None or key is None else self.batch(m, p, root, binding)
        return None

    def discarded(self, m: Mover, scope: ast.AST, p: Party) -> bool:
        """`x.to(device)` as a statement of its own: a tensor's `.to()` returns a moved copy, and the line throws
        it away. Every such statement before the op, on a tensor still on the odd device, keeps its copy."""
        found = [s for s in m.cell.nodes(scope) if isinstance(s, ast.Expr) and s.lineno < m.lineno
                 and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute)
                 and s.value.func.attr in ("to", "cuda") and isinstance(s.value.func.value, ast.Name)]
        mine = [s for s in found if s.value.func.value.id == p.name]
        if not mine or not isinstance(p.obj, torch.Tensor):
            return False
        for stmt in sorted(found, key=lambda s: s.lineno):
            name = stmt.value.func.value.id
            obj = resolve(m.ctx, name)
            if name not in m.moved and isinstance(obj, torch.Tensor) and same_device(str(obj.device), p.device):
                m.done(Move("kept", (name,), stmt.lineno, p.device, "", (stmt,), one_line(m.src, stmt)))
        return True

    def global_call(self, m: Mover, p: Party, root: str, key: Any) -> Optional[bool]:
        """A global made in an earlier cell by the user's function (`hidden = model.init_hidden(8)`): into it."""
        found = global_assignment(self.base, root)
        if found is None or not isinstance(found.node, ast.Assign) or not isinstance(found.node.value, ast.Call):
            return None
        where = self.place(found.ctx.record.filename, found.node.lineno, "<module>", None)
        return self.into(where, p, key, found.node)

    def batch(self, m: Mover, p: Party, root: str, binding: ast.Assign) -> Optional[bool]:
        """`inputs = tokenizer(...)`: an object with its own `.to()` (a BatchEncoding) moves where it is made."""
        obj = resolve(m.ctx, root)
        expr = m.device_expr(binding.lineno)
        if isinstance(obj, (torch.Tensor, torch.nn.Module, dict)) or not callable(static(obj, "to")) \
                or expr is None:
            return None
        return m.done(Move("batch", (root,), binding.lineno, p.device, expr, (binding.value,),
                           one_line(m.src, binding.value)))

    def is_parameter(self, m: Mover, scope: ast.AST, name: str) -> bool:
        """`name` is a parameter of the function the line is in, not bound again before the line."""
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        a = scope.args
        if name not in {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}:
            return False
        return not any(binds(s, name) and s.lineno < m.lineno for s in m.cell.bindings(scope))

    def outward(self, m: Mover, p: Party) -> Optional[bool]:
        """The caller passed it: the same object, named in the caller's frame."""
        if m.index is None or m.index == 0 or p.obj is None:
            return None
        caller = self.mover(m.index - 1)
        line = caller.ctx.record.source_line(caller.lineno)
        first = [root_of(n) for n in dotted_names(line)]
        path = path_to(caller.ctx.record.error_locals, p.obj, first)
        if path is None:
            return passed_as(m, caller, p, self.frames[m.index].site.function)
        at = len(self.result.moves)
        if not caller.move(named(caller.ctx, p, path)):
            return False
        if path != p.name:  # NB: no edit: says how the caller's tensor got its name here
            self.result.moves.insert(at, Move("passed", (p.name,), caller.lineno, p.device, code=path,
                                              file=caller.ctx.record.filename))
        return True

    def into(self, m: Mover, p: Party, key: Any, binding: ast.Assign) -> Optional[bool]:
        """`state = rnn.init_hidden(n)`: the helper's `return` and what made the value it returns."""
        fn, instance = callee(m.ctx, binding.value.func)
        place = function_place(m.ctx, fn) if fn is not None else None
        values = item_returned(place, None if isinstance(key, str) else key) if place is not None else []
        if isinstance(key, str):  # NB: `return {"input_ids": ids, ...}`: the item the key names
            values = [v for d in values if isinstance(d, ast.Dict) for k, v in zip(d.keys, d.values)
                      if isinstance(k, ast.Constant) and k.value == key]
        if len(values) != 1:
            return None
        value, node = values[0], place.node
        args = node.args.posonlyargs + node.args.args
        variables = {args[0].arg: instance} if instance is not None and args else {}
        inner = self.place(place.ctx.record.filename, value.lineno, fn.__qualname__, variables)
        at = len(self.result.moves)
        if isinstance(value, ast.Name):
            moved = inner.move(Party(value.id, p.device, p.obj, None, p.shape, p.dtype))
        elif isinstance(value, ast.Call) and inner.is_factory(value.func) and not placed(value):
            moved = made(inner, value, p.device)
        else:
            return None
        if moved and isinstance(key, int):  # NB: `return (torch.zeros(...), torch.zeros(...))`: the pair
            moved = siblings(inner, place, key, resolve(m.ctx, root_of(p.name)), p.device)
        if moved:  # NB: no edit: says where the value came from
            self.result.moves.insert(at, Move("returned", (root_of(p.name),), binding.lineno, p.device,
                                              code=one_line(m.src, binding.value), file=m.ctx.record.filename))
        return moved

    def comprehension(self, m: Mover, p: Party, root: str, binding: ast.Assign) -> Optional[bool]:
        """`batch = {k: v for k, v in batch.items()}`: each value moves in the comprehension."""
        if not _tensors_only(resolve(m.ctx, root)):
            return None
        expr = m.device_expr(binding.lineno)
        if expr is None:
            return None
        return m.done(Move("comprehension", (root,), binding.lineno, p.device, expr, (binding.value.value,),
                           one_line(m.src, binding.value)))

    def dict_loop(self, m: Mover, p: Party, root: str, loop: ast.For) -> Optional[bool]:
        """`for batch in loader:` yielding dicts: a line at the top of the loop moves each value (or the
        batch, when it has its own `.to()`)."""
        first, obj = loop.body[0], resolve(m.ctx, root)
        expr = m.device_expr(first.lineno)
        if not (isinstance(loop.target, ast.Name) and loop.target.id == root) or first.lineno == loop.lineno \
                or expr is None:
            return None
        how = "dict_loop" if _tensors_only(obj) else "loop" if not isinstance(obj, (dict, list, tuple)) and \
            callable(static(obj, "to")) else None
        if how is None:
            return None
        return m.done(Move(how, (root,), loop.lineno, p.device, expr, (first,), one_line(m.src, loop.iter)))

    # -- what the failing line says, how a function names the device (culprit_line.py) --

    def unnamed(self, m: Mover, odd: Sequence[Party]) -> bool:
        return unnamed(m, odd, self.op)

    def own_device(self, m: Mover, scope: ast.AST, lineno: int) -> Optional[str]:
        return own_device(m, scope, lineno, self.target.device)

    def returned_by(self, m: Mover, call: ast.Call, device: str) -> Optional[bool]:
        return returned_by(self, m, call, device)


def named(ctx: RuleContext, p: Party, path: str) -> Party:
    """The party `p` by its name in another frame: `module` set when the path is a module's tensor."""
    owner_path, attr = owner_of(path)
    owner = resolve(ctx, owner_path) if attr is not None else None
    module = owner_path if isinstance(owner, torch.nn.Module) and not plain_tensor(owner, attr) else None
    return Party(path, p.device, p.obj, module, p.shape, p.dtype)


def _tensors_only(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and all(isinstance(v, torch.Tensor) for v in value.values())
