"""The culprit seam of `device-mismatch`, part two: where each odd tensor came from, and the spot in the cell
that would put it on the target device -- the factory call that made it (`device=`), the top of the loop
that yields it, where the op uses it, or where a model is made. When no spot is safe, or which side is meant
is not clear (the odd tensor was placed on its device on purpose), the reason instead.

Returns structure (`Move`s, a `NoMove`): the edits are fix.py's, the words card.py's. The cell's scopes and
bindings (ast only): culprit_scopes.py.
May touch: the cell's ast and source text, the NameIndex, and tensor and module metadata (device) only,
never data.
"""
from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, List, Optional, Sequence, Set, Tuple

import torch

from ...cell import cell_tree, enclosing_statement, segment
from ...names import NameIndex
from ..context import RuleContext
from ..kit import one_line, starts_line
from .culprit import Party, Target, same_device
from .culprit_scopes import Scopes, binds, loop_targets, placed, single_target

_FACTORIES = frozenset({"tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint",
                        "randperm", "arange", "linspace", "logspace", "eye", "normal", "bernoulli_like"})


@dataclass(frozen=True)
class Move:
    """One odd tensor (or model) and the spot that moves it. `how`:
    "factory": `device=` on the call that made it (`nodes`: the call; `code`: its text);
    "loop": a line at the top of the loop that yields `names` (`nodes`: the body's first statement;
    `code`: the iterable's text); "use": `.to()` at each use on the op's line (`nodes`: the uses), "earlier"
    the same for a tensor made before the cell; "module": `.to()` where the model is made (`nodes`: the value
    assigned); "taken": no edit of its own -- it is taken from `code` (`xb = X[i:j]`), whose move moves it."""

    how: str
    names: Tuple[str, ...]
    lineno: int  # the line the move is about: the loop's header, the factory's or model's line, the op's line
    odd_device: str
    expr: str = ""  # the target device as the spot can write it: `device`, `model.weight.device`
    nodes: Tuple[ast.AST, ...] = field(default=(), compare=False, repr=False)
    code: str = ""
    file: str = ""  # the cell (compiled name) or file whose text the move edits: set by its Mover


@dataclass(frozen=True)
class NoMove:
    """Why an odd tensor cannot be moved: `reason` is "no_named", "no_spot", "explicit" or "module_odd"."""

    reason: str
    names: Tuple[str, ...] = ()  # the tensors (or the module) it is about
    odd_device: str = ""
    lineno: Optional[int] = None


@dataclass
class Plan:
    """The moves that put the odd tensors on the target device, in the order the card tells them."""

    moves: List[Move] = field(default_factory=list)
    failure: Optional[NoMove] = None  # why there is no fix
    unclear: bool = False  # the odd tensor was placed on its device on purpose: which side is meant?


def find_moves(ctx: RuleContext, target: Target, lineno: Optional[int], parties: Sequence[Party]) -> Plan:
    return Mover(ctx, target, lineno).plan(parties)


class Mover:
    """Finds, for each odd tensor, the smallest spot that puts it on the target device -- in one cell (or
    file), seen from one frame; `chain` (culprit_chain.py) follows a tensor into other frames and cells."""

    def __init__(self, ctx: RuleContext, target: Target, lineno: Optional[int], plan: Optional[Plan] = None,
                 chain: Any = None, index: Optional[int] = None) -> None:
        self.ctx, self.target, self.lineno = ctx, target, lineno
        self.src = ctx.record.source
        self.tree = cell_tree(self.src)
        self.cell = Scopes(self.tree)
        self.result = plan if plan is not None else Plan()
        self.moved: Set[str] = set()
        self.parties: List[Party] = []
        self.chain, self.index = chain, index  # NB: the frame this Mover reads, in the chain's frames

    @cached_property
    def top_names(self) -> NameIndex:
        """The namespace's names only: what a line at the cell's top level can refer to."""
        error_locals = self.ctx.record.error_locals
        if error_locals is None or error_locals is self.ctx.namespace:
            return self.ctx.names  # NB: the same index: no second walk of a large namespace
        return NameIndex(self.ctx.namespace)

    def plan(self, parties: Sequence[Party]) -> Plan:
        plan = self.result
        self.parties = [p for p in parties if p.obj is not None and same_device(p.device, self.target.device)]
        odd = [p for p in parties if not same_device(p.device, self.target.device)]
        named = [p for p in odd if p.name]
        unnamed = len(named) < len(odd) and self.chain is not None and self.chain.unnamed(self, odd)
        if not named and not unnamed:
            plan.failure = NoMove("no_named")
            return plan
        if self.tree is None or self.lineno is None:
            plan.failure = NoMove("no_spot", (named[0].name,))
            return plan
        for p in named:
            if not self.move(p):
                plan.moves = []
                return plan
        devices = {p.device for p in named}
        if len(devices) == 1:
            device = devices.pop()
            self.companions(device)
            self.same_line(device)
        return plan

    # -- one odd tensor --

    def move(self, p: Party) -> bool:
        name = p.name
        if name in self.moved:
            return True
        hopped = self.chain.hop(self, p) if self.chain is not None and self.tree is not None else None
        if hopped:
            self.moved.add(name)
        if hopped is not None:
            return hopped
        if p.module:
            return self.move_module(p)
        scope = self.cell.scope(self.lineno)
        loop = self.cell.loop_binding(scope, name, self.lineno)
        if loop is not None:
            return self.move_loop(loop, p.device)
        binding = self.cell.last_binding(scope, name, self.lineno)
        if binding is not None and placed(binding.value):
            self.result.unclear = True
            return self.fail(NoMove("explicit", (name,), p.device, binding.lineno))
        if binding is not None:
            source = self.source_name(binding.value)
            obj = self.lookup(source) if source is not None and source != name else None
            if isinstance(obj, torch.Tensor) and same_device(str(obj.device), p.device):
                return self.move_taken(name, Party(source, p.device, obj), binding.lineno)
            call = self.factory(binding.value)
            if call is not None and self.add_device(call, name, binding.lineno, p.device):
                return True
        return self.move_at_use(name, p.device)

    def move_taken(self, name: str, source: Party, lineno: int) -> bool:
        """`xb = X[i:i + 16]`: X is made in the cell; moving X moves every slice of it."""
        at = len(self.result.moves)
        if source.name in self.moved or self.move(source):
            self.moved.add(name)
            self.result.moves.insert(at, Move("taken", (name,), lineno, source.device, code=source.name,
                                                       file=self.ctx.record.filename))
            return True
        return False

    def move_at_use(self, name: str, device: str) -> bool:
        stmt = enclosing_statement(self.tree, self.lineno)
        expr = self.device_expr(self.lineno)
        uses = [n for n in ast.walk(stmt) if isinstance(n, (ast.Name, ast.Attribute))
                and isinstance(getattr(n, "ctx", None), ast.Load) and segment(self.src, n) == name
                ] if stmt is not None else []
        if not uses or expr is None:
            return self.fail(NoMove("no_spot", (name,)))
        scope = self.cell.scope(self.lineno)
        made_here = any(binds(s, name) for s in self.cell.bindings(scope)) or "." in name
        how = "use" if made_here or scope is not self.tree else "earlier"
        return self.done(Move(how, (name,), self.lineno, device, expr, tuple(uses)))

    def move_module(self, p: Party) -> bool:
        root = p.module.split(".")[0]
        if root in self.moved:
            return True
        if self.target.reason != "variable":
            return self.fail(NoMove("module_odd", (p.module,), p.device))
        binding = self.cell.last_binding(self.cell.scope(self.lineno), root, self.lineno)
        if binding is None or placed(binding.value):
            return self.fail(NoMove("module_odd", (p.module,), p.device))
        expr = self.device_expr(binding.lineno)
        if expr is None:
            return self.fail(NoMove("no_spot", (root,)))
        return self.done(Move("module", (root,), binding.lineno, p.device, expr, (binding.value,)))

    def move_loop(self, loop: ast.For, device: str) -> bool:
        first = loop.body[0]
        expr = self.device_expr(first.lineno)
        if first.lineno == loop.lineno or not starts_line(self.src, first) or expr is None:
            return self.fail(NoMove("no_spot", tuple(loop_targets(loop))))
        names = tuple(n for n in loop_targets(loop) if self.on(n, device))
        iterable = one_line(self.src, loop.iter) or "…"
        return self.done(Move("loop", names, loop.lineno, device, expr, (first,), iterable))

    def add_device(self, call: ast.Call, name: str, lineno: int, device: str) -> bool:
        expr = self.device_expr(lineno)
        if expr is None or any(k.arg is None for k in call.keywords):
            return False
        return self.done(Move("factory", (name,), lineno, device, expr, (call,), one_line(self.src, call)))

    def companions(self, device: str) -> None:
        """Tensors made the same way (a factory without `device=`) that the rest of the cell still uses."""
        scope = self.cell.scope(self.lineno)
        loop = self.cell.innermost_loop(scope, self.lineno)
        later = {n.id for n in self.cell.nodes(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                 and (n.lineno >= self.lineno or loop is not None and loop.lineno <= n.lineno <= loop.end_lineno)}
        for stmt in sorted(self.cell.bindings(scope), key=lambda s: s.lineno):
            name = single_target(stmt)
            if name is None or name in self.moved or name not in later or stmt.lineno >= self.lineno:
                continue
            call = self.factory(stmt.value)
            if call is not None and self.on(name, device) and self.cell.last_binding(scope, name, self.lineno) is stmt:
                self.add_device(call, name, stmt.lineno, device)

    def same_line(self, device: str) -> None:
        """Other tensors on the op's statement that are on the odd device too (`loss_fn(model(x), y)`)."""
        stmt = enclosing_statement(self.tree, self.lineno)
        names = dict.fromkeys(n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)
                              and isinstance(n.ctx, ast.Load)) if stmt is not None else {}
        for name in names:
            if name not in self.moved and self.on(name, device):
                self.move(Party(name, device, self.lookup(name)))

    def fail(self, why: NoMove) -> bool:
        self.result.failure = why
        return False

    def done(self, move: Move) -> bool:
        self.moved.update(move.names)
        self.result.moves.append(dataclasses.replace(move, file=self.ctx.record.filename))
        return True

    # -- live objects, by the user's names (metadata only) --

    def lookup(self, name: str) -> Any:
        """A name's value where the op ran (its function's locals first, then the namespace)."""
        return self.ctx.names.lookup(name)

    def on(self, name: str, device: str) -> bool:
        obj = self.lookup(name)
        return isinstance(obj, torch.Tensor) and same_device(str(obj.device), device)

    def device_expr(self, lineno: int) -> Optional[str]:
        """How to say the target device at `lineno`: the cell's `device`, else `<a tensor there>.device`; in a
        function, its own input's device first (a global `device` may be stale, or absent where it runs)."""
        t = self.target
        scope = self.cell.scope(lineno)
        at_top = scope is self.tree
        if not at_top and self.chain is not None:
            own = self.chain.own_device(self, scope, lineno)
            if own is not None:
                return own
        if t.variable and self.bound(t.variable, lineno):
            return t.variable
        for name in self.candidates(at_top):
            if self.bound(name.split(".")[0], lineno):
                return f"{name}.device"
        return None

    def bound(self, root: str, lineno: int) -> bool:
        """`root` names something at `lineno`: a parameter, an earlier assignment, or an earlier cell's name."""
        found = self.cell.bound_before(root, lineno)
        return found if found is not None else root in self.ctx.namespace

    def candidates(self, at_top: bool) -> List[str]:
        """Tensors on the target device, as named at the cell's top level or where the op ran: the op's own
        first, in argument order (`model.weight` before `model.bias`), then plain names before parameters."""
        names = self.top_names if at_top else self.ctx.names
        found = [n for n, obj in names.objects()
                 if isinstance(obj, torch.Tensor) and same_device(str(obj.device), self.target.device)]
        order = {n: i for i, n in enumerate(n for p in self.parties for n in self.ctx.names.names_for(p.obj))}
        return sorted(found, key=lambda n: (n not in order, order.get(n, 0), "." in n, len(n)))

    def factory(self, value: ast.AST) -> Optional[ast.Call]:
        """The one torch factory call (`torch.randn(...)`) that is the only tensor source of `value`."""
        calls = [n for n in ast.walk(value) if isinstance(n, ast.Call) and self.is_factory(n.func)]
        if len(calls) != 1:
            return None
        inside = {id(n) for n in ast.walk(calls[0])}  # NB: `torch.zeros(1, x.size(0), 8)`: x gives a size
        others = [n for n in ast.walk(value) if isinstance(n, ast.Name) and id(n) not in inside
                  and isinstance(self.lookup(n.id), (torch.Tensor, torch.nn.Module))]
        return None if others else calls[0]

    def is_factory(self, func: ast.AST) -> bool:
        text = segment(self.src, func) or ""
        short = text.rsplit(".", 1)[-1]
        return short in _FACTORIES and self.ctx.names.lookup(text) is getattr(torch, short, None) is not None

    def source_name(self, value: ast.AST) -> Optional[str]:
        """`X[i:i + 4]`, `X.float()` -> `X`: the one tensor a value is taken from, when it is that simple."""
        root = value
        while isinstance(root, (ast.Subscript, ast.Call, ast.Attribute)) and root is not None:
            root = root.func if isinstance(root, ast.Call) else root.value
        tensors = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)
                   and isinstance(self.lookup(n.id), torch.Tensor)}
        if root is value or not isinstance(root, ast.Name) or tensors != {root.id} or placed(value):
            return None
        return root.id
