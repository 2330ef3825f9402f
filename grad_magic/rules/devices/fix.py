"""The fix of `device-mismatch`: move the odd one out to where the rest live -- `device=` on the call that
created it, `.to(...)` at the top of the loop that yields it or where the op uses it, or `.to(device)` on a
model the cell's `device` says belongs elsewhere. When which side is meant is not clear, no fix.

May touch: the cell's source text (minimal edits) and ast, the NameIndex, and tensor and module metadata
(device) only, never data.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterator, List, Optional, Sequence

import torch

from ...cell import cell_tree, enclosing_statement, indent_of, node_span, segment
from ...edits import insert_line_before
from ...model import TextEdit
from ...names import NameIndex
from ..context import RuleContext
from .parties import Party, Target, same_device

_FACTORIES = frozenset({"tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint",
                        "randperm", "arange", "linspace", "logspace", "eye", "normal", "bernoulli_like"})
_PLACING = frozenset({"to", "cuda", "cpu"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@dataclass
class Plan:
    """The edits that move the odd tensors, what they say, and what the card says about each tensor."""

    edits: List[TextEdit] = field(default_factory=list)
    steps: List[str] = field(default_factory=list)  # one fix description per move
    origins: List[str] = field(default_factory=list)  # why-sentences: where each odd tensor came from
    lines: List[int] = field(default_factory=list)
    failure: Optional[str] = None  # why there is no fix
    unclear: bool = False  # the odd tensor was placed on its device on purpose: which side is meant?


class Planner:
    """Finds, for each odd tensor, the smallest edit that puts it on the target device."""

    def __init__(self, ctx: RuleContext, target: Target, lineno: Optional[int]) -> None:
        self.ctx, self.target, self.lineno = ctx, target, lineno
        self.src = ctx.record.source
        self.tree = cell_tree(self.src)
        self.plan_ = Plan()
        self.moved: set = set()
        self.parties: List[Party] = []
        self._scope_nodes: dict = {}  # id(scope) -> its nodes (a planner asks about one scope many times)
        self._scopes: dict = {}  # lineno -> its scope

    @cached_property
    def _top_names(self) -> NameIndex:
        """The namespace's names only: what a line at the cell's top level can refer to."""
        error_locals = self.ctx.record.error_locals
        if error_locals is None or error_locals is self.ctx.namespace:
            return self.ctx.names  # NB: the same index: no second walk of a large namespace
        return NameIndex(self.ctx.namespace)

    def plan(self, parties: Sequence[Party]) -> Plan:
        plan = self.plan_
        self.parties = [p for p in parties if p.obj is not None and same_device(p.device, self.target.device)]
        odd = [p for p in parties if not same_device(p.device, self.target.device)]
        named = [p for p in odd if p.name]
        if not named:
            plan.failure = self.ctx.say("devices.why.no_named")
            return plan
        if self.tree is None or self.lineno is None:
            plan.failure = self.ctx.say("devices.why.no_spot", name=named[0].label(self.ctx))
            return plan
        for p in named:
            if not self._move(p):
                plan.edits = []
                return plan
        devices = {p.device for p in named}
        if len(devices) == 1:
            device = devices.pop()
            self._companions(device)
            self._same_line(device)
        return plan

    # -- one odd tensor --

    def _move(self, p: Party) -> bool:
        if p.module:
            return self._move_module(p)
        name = p.name
        if name in self.moved:
            return True
        scope = self.scope(self.lineno)
        loop = self._loop_binding(scope, name)
        if loop is not None:
            return self._move_loop(loop, p.device)
        binding = self._last_binding(scope, name, self.lineno)
        if binding is not None and self._placed(binding.value):
            self.plan_.unclear = True
            return self._fail("devices.why.explicit", name=f"`{name}`", odd_device=p.device,
                              lineno=binding.lineno)
        if binding is not None:
            source = self._source_name(binding.value)
            obj = self.lookup(source) if source is not None and source != name else None
            if isinstance(obj, torch.Tensor) and same_device(str(obj.device), p.device):
                # NB: `xb = X[i:i + 16]`: X is made in the cell; moving X moves every slice of it
                at = len(self.plan_.origins)
                if source in self.moved or self._move(Party(source, p.device, obj)):
                    self.moved.add(name)
                    self.plan_.origins.insert(at, self.ctx.say("devices.why.taken", name=f"`{name}`",
                                                               source=f"`{source}`", lineno=binding.lineno))
                    return True
                return False
            call = self._factory(binding.value)
            if call is not None and self._add_device(call, name, binding.lineno, p.device):
                return True
        return self._move_at_use(name, p.device)

    def _move_at_use(self, name: str, device: str) -> bool:
        stmt = enclosing_statement(self.tree, self.lineno)
        expr = self.device_expr(self.lineno)
        uses = [n for n in ast.walk(stmt) if isinstance(n, (ast.Name, ast.Attribute))
                and isinstance(getattr(n, "ctx", None), ast.Load) and segment(self.src, n) == name
                ] if stmt is not None else []
        if not uses or expr is None:
            return self._fail("devices.why.no_spot", name=f"`{name}`")
        for node in uses:
            _, end = node_span(self.src, node)
            self.plan_.edits.append(TextEdit(end, end, f".to({expr})"))
        self._done(name, "devices.fix.use", self.lineno, expr=expr, device=self.target.device)
        scope = self.scope(self.lineno)
        made_here = any(self._binds(s, name) for s in self._bindings(scope)) or "." in name
        key = "devices.why.use" if made_here or scope is not self.tree else "devices.why.earlier"
        self.plan_.origins.append(self.ctx.say(key, name=f"`{name}`", odd_device=device, lineno=self.lineno))
        return True

    def _move_module(self, p: Party) -> bool:
        root = p.module.split(".")[0]
        if root in self.moved:
            return True
        if self.target.reason != "variable":
            return self._fail("devices.why.module_odd", module=f"`{p.module}`", odd_device=p.device)
        scope = self.scope(self.lineno)
        binding = self._last_binding(scope, root, self.lineno)
        if binding is None or self._placed(binding.value):
            return self._fail("devices.why.module_odd", module=f"`{p.module}`", odd_device=p.device)
        expr = self.device_expr(binding.lineno)
        if expr is None:
            return self._fail("devices.why.no_spot", name=f"`{root}`")
        self._append_to(binding.value, expr)
        self._done(root, "devices.fix.module", binding.lineno, expr=expr, device=self.target.device)
        self.plan_.origins.append(self.ctx.say("devices.why.module_made", name=f"`{root}`", lineno=binding.lineno,
                                               odd_device=p.device))
        return True

    def _move_loop(self, loop: ast.For, device: str) -> bool:
        first = loop.body[0]
        line = self.src.splitlines()[first.lineno - 1]
        expr = self.device_expr(first.lineno)
        if first.lineno == loop.lineno or first.col_offset != len(indent_of(line)) or expr is None:
            return self._fail("devices.why.no_spot", name=self._names_text(self._targets(loop)))
        names = [n for n in self._targets(loop) if self._on(n, device)]
        text = f"{indent_of(line)}{', '.join(names)} = {', '.join(f'{n}.to({expr})' for n in names)}"
        self.plan_.edits.append(insert_line_before(self.src, first.lineno, text))
        iterable = segment(self.src, loop.iter) or "…"
        self.plan_.origins.append(self.ctx.say("devices.why.loop", names=self._names_text(names),
                                               iterable=_short(iterable), lineno=loop.lineno, odd_device=device))
        self._done(names, "devices.fix.loop", loop.lineno, expr=expr, device=self.target.device)
        return True

    def _add_device(self, call: ast.Call, name: str, lineno: int, device: str) -> bool:
        expr = self.device_expr(lineno)
        if expr is None or any(k.arg is None for k in call.keywords):
            return False
        args = [*call.args, *call.keywords]
        if args:
            _, at = node_span(self.src, max(args, key=lambda a: (a.end_lineno, a.end_col_offset)))
            text = f", device={expr}"
        else:
            _, end = node_span(self.src, call)
            at, text = end - 1, f"device={expr}"
        self.plan_.edits.append(TextEdit(at, at, text))
        code = _short(segment(self.src, call) or "")
        self.plan_.origins.append(self.ctx.say("devices.why.created", name=f"`{name}`", lineno=lineno, code=code,
                                               odd_device=device))
        self._done(name, "devices.fix.factory", lineno, expr=expr, device=self.target.device)
        return True

    def _append_to(self, value: ast.expr, expr: str) -> None:
        start, end = node_span(self.src, value)
        if not isinstance(value, (ast.Call, ast.Name, ast.Attribute, ast.Subscript)):
            self.plan_.edits.append(TextEdit(start, start, "("))
            self.plan_.edits.append(TextEdit(end, end, f").to({expr})"))
        else:
            self.plan_.edits.append(TextEdit(end, end, f".to({expr})"))

    def _companions(self, device: str) -> None:
        """Tensors made the same way (a factory without `device=`) that the rest of the cell still uses."""
        scope = self.scope(self.lineno)
        loop = self._innermost_loop(scope)
        later = {n.id for n in self._nodes(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                 and (n.lineno >= self.lineno or loop is not None and loop.lineno <= n.lineno <= loop.end_lineno)}
        for stmt in sorted(self._bindings(scope), key=lambda s: s.lineno):
            name = _single_target(stmt)
            if name is None or name in self.moved or name not in later or stmt.lineno >= self.lineno:
                continue
            call = self._factory(stmt.value)
            if call is not None and self._on(name, device) and self._last_binding(scope, name, self.lineno) is stmt:
                self._add_device(call, name, stmt.lineno, device)

    def _same_line(self, device: str) -> None:
        """Other tensors on the op's statement that are on the odd device too (`loss_fn(model(x), y)`)."""
        stmt = enclosing_statement(self.tree, self.lineno)
        names = dict.fromkeys(n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)
                              and isinstance(n.ctx, ast.Load)) if stmt is not None else {}
        for name in names:
            if name not in self.moved and self._on(name, device):
                self._move(Party(name, device, self.lookup(name)))

    # -- helpers --

    def _fail(self, key: str, **params: Any) -> bool:
        self.plan_.failure = self.ctx.say(key, **params)
        return False

    def _done(self, names: Any, key: str, lineno: int, **params: Any) -> None:
        names = [names] if isinstance(names, str) else names
        self.moved.update(names)
        self.plan_.lines.append(lineno)
        self.plan_.steps.append(self.ctx.say(key, name=self._names_text(names), names=self._names_text(names),
                                             lineno=lineno, **params))

    def _names_text(self, names: Sequence[str]) -> str:
        return self.ctx.say("devices.and").join(f"`{n}`" for n in names)

    def lookup(self, name: str) -> Any:
        """A name's value where the op ran (its function's locals first, then the namespace)."""
        return self.ctx.names.lookup(name)

    def _on(self, name: str, device: str) -> bool:
        obj = self.lookup(name)
        return isinstance(obj, torch.Tensor) and same_device(str(obj.device), device)

    def scope(self, lineno: int) -> ast.AST:
        """The innermost function (or the cell) whose body holds `lineno`."""
        if lineno not in self._scopes:
            best: ast.AST = self.tree
            for node in self._functions:
                if node.body[0].lineno <= lineno <= node.end_lineno:
                    if best is self.tree or node.lineno > best.lineno:
                        best = node
            self._scopes[lineno] = best
        return self._scopes[lineno]

    @cached_property
    def _functions(self) -> List[ast.AST]:
        return [n for n in ast.walk(self.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

    def _nodes(self, scope: ast.AST) -> List[ast.AST]:
        """The nodes of one scope (nested functions and classes not entered), walked once."""
        if id(scope) not in self._scope_nodes:
            self._scope_nodes[id(scope)] = list(_walk_scope(scope))
        return self._scope_nodes[id(scope)]

    def _bindings(self, scope: ast.AST) -> Iterator[ast.stmt]:
        return (n for n in self._nodes(scope) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For)))

    def _binds(self, stmt: ast.stmt, name: str) -> bool:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))

    def _last_binding(self, scope: ast.AST, name: str, lineno: int) -> Optional[ast.Assign]:
        """The plain `name = ...` that made the value seen at `lineno` (None if anything else bound it)."""
        found = [s for s in self._bindings(scope) if self._binds(s, name) and s.lineno <= lineno]
        last = max(found, key=lambda s: s.lineno) if found else None
        return last if isinstance(last, ast.Assign) and _single_target(last) == name else None

    def _loop_binding(self, scope: ast.AST, name: str) -> Optional[ast.For]:
        """The `for` around the op's line whose target binds `name` (and nothing rebinds it in between)."""
        loops = [s for s in self._nodes(scope) if isinstance(s, ast.For) and s.body
                 and s.body[0].lineno <= self.lineno <= s.end_lineno and self._binds(s, name)]
        if not loops:
            return None
        loop = max(loops, key=lambda s: s.lineno)
        rebinds = [s for s in self._bindings(scope) if s is not loop and self._binds(s, name)
                   and loop.lineno < s.lineno <= self.lineno]
        return None if rebinds else loop

    def _innermost_loop(self, scope: ast.AST) -> Optional[ast.stmt]:
        loops = [s for s in self._nodes(scope) if isinstance(s, (ast.For, ast.While))
                 and s.lineno <= self.lineno <= s.end_lineno]
        return max(loops, key=lambda s: s.lineno) if loops else None

    def _targets(self, loop: ast.For) -> List[str]:
        return [n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)]

    def bound(self, root: str, lineno: int) -> bool:
        """`root` names something at `lineno`: a parameter, an earlier assignment, or an earlier cell's name."""
        scope = self.scope(lineno)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = scope.args
            if root in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}:
                return True
        bindings = [s for s in self._bindings(scope) if self._binds(s, root)]
        if bindings:
            return any(s.lineno < lineno for s in bindings)
        return root in self.ctx.namespace

    def device_expr(self, lineno: int) -> Optional[str]:
        """How to say the target device at `lineno`: the cell's `device`, else `<a tensor there>.device`."""
        t = self.target
        if t.variable and self.bound(t.variable, lineno):
            return t.variable
        at_top = self.scope(lineno) is self.tree
        for name in self._candidates(at_top):
            if self.bound(name.split(".")[0], lineno):
                return f"{name}.device"
        return None

    def _candidates(self, at_top: bool) -> List[str]:
        """Tensors on the target device, as named at the cell's top level or where the op ran: the op's own
        first, in argument order (`model.weight` before `model.bias`), then plain names before parameters."""
        names = self._top_names if at_top else self.ctx.names
        found = [n for n, obj in names.objects()
                 if isinstance(obj, torch.Tensor) and same_device(str(obj.device), self.target.device)]
        order = {n: i for i, n in enumerate(n for p in self.parties for n in self.ctx.names.names_for(p.obj))}
        return sorted(found, key=lambda n: (n not in order, order.get(n, 0), "." in n, len(n)))

    def _placed(self, value: ast.AST) -> bool:
        """The expression puts its result on a device explicitly (`device=`, `.to(...)`, `.cuda()`)."""
        return any(isinstance(n, ast.Call) and (any(k.arg == "device" for k in n.keywords) or
                                                isinstance(n.func, ast.Attribute) and n.func.attr in _PLACING)
                   for n in ast.walk(value))

    def _factory(self, value: ast.AST) -> Optional[ast.Call]:
        """The one torch factory call (`torch.randn(...)`) that is the only tensor source of `value`."""
        calls = [n for n in ast.walk(value) if isinstance(n, ast.Call) and self._is_factory(n.func)]
        if len(calls) != 1:
            return None
        inside = {id(n) for n in ast.walk(calls[0])}  # NB: `torch.zeros(1, x.size(0), 8)`: x gives a size
        others = [n for n in ast.walk(value) if isinstance(n, ast.Name) and id(n) not in inside
                  and isinstance(self.lookup(n.id), (torch.Tensor, torch.nn.Module))]
        return None if others else calls[0]

    def _is_factory(self, func: ast.AST) -> bool:
        text = segment(self.src, func) or ""
        short = text.rsplit(".", 1)[-1]
        return short in _FACTORIES and self.ctx.names.lookup(text) is getattr(torch, short, None) is not None

    def _source_name(self, value: ast.AST) -> Optional[str]:
        """`X[i:i + 4]`, `X.float()` -> `X`: the one tensor a value is taken from, when it is that simple."""
        root = value
        while isinstance(root, (ast.Subscript, ast.Call, ast.Attribute)) and root is not None:
            root = root.func if isinstance(root, ast.Call) else root.value
        tensors = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)
                   and isinstance(self.lookup(n.id), torch.Tensor)}
        if root is value or not isinstance(root, ast.Name) or tensors != {root.id} or self._placed(value):
            return None
        return root.id


def _walk_scope(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one scope: nested functions and classes are not entered."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))


def _single_target(stmt: ast.stmt) -> Optional[str]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _short(code: str, limit: int = 60) -> str:
    code = " ".join(code.split())
    return code if len(code) <= limit else code[:limit - 1] + "…"
