"""Rules of the devices family: tensors that meet in one op live on different devices.

Reads the error message (every wording torch 2.1 ... 2.13 uses, and the older ones still quoted online),
the failing op's tensor arguments as the tracker recorded them, and the user's names for them; reads
tensor and module metadata only (device), never data. The fix moves the odd one out to where the rest
live: `device=` on the call that created it, `.to(...)` at the top of the loop that yields it or where
the op uses it, or `.to(device)` on a model the cell's `device` says belongs elsewhere. When which side
is meant is not clear, no fix.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import torch

from ..facts import shape_text, tensor_fact
from ..fixes import cell_tree, enclosing_statement, indent_of, insert_line_before, make_fix, node_span
from ..model import ERROR, Diagnosis, Fix, TensorFact, TextEdit
from ..names import NameIndex
from ..record import OpEvent
from .context import RuleContext, dotted_names
from .registry import rule

KIND = "device-mismatch"
_D = r"[A-Za-z_]+(?::\d+)?"  # a device as torch prints it: cpu, cuda:0, meta, mps:0
# (pattern, whether the second device is that of an argument torch singled out: "second" yes, "arg" when the
# message names the argument, None no: it is just the first device that differed)
_PATTERNS: Tuple[Tuple[re.Pattern, Optional[str]], ...] = (
    # torch >= 2.8, the dispatcher's device check
    (re.compile(rf"Expected all tensors to be on the same device, but got (?P<arg>\w+) is on (?P<second>{_D}), "
                rf"different from other tensors on (?P<first>{_D})(?: \(when checking argument in method "
                r"(?P<method>\w+)\))?"), "second"),
    # torch <= 2.7 (the dispatcher, "arugment" before 1.10, "common device" before 1.9) and every version's
    # TensorIterator and fake tensors (no parenthesis)
    (re.compile(rf"Expected all tensors to be on the same (?:common )?device, but found at least two devices, "
                rf"(?P<first>{_D}) and (?P<second>{_D})!(?: \(when checking ar(?:gu|ug)ment for argument "
                r"(?P<arg>\w+) in method (?P<method>\w+)\))?"), "arg"),
    # decompositions and meta kernels (torch._prims_common.check_same_device)
    (re.compile(rf"Tensor on device (?P<second>{_D}) is not on the expected device (?P<first>{_D})!"), None),
    # RNN, LSTM, GRU (ATen's RNN check)
    (re.compile(rf"Input and (?P<arg>hidden|parameter) tensors are not at the same device, found input tensor "
                rf"at (?P<first>{_D}) and (?:hidden|parameter) tensor at (?P<second>{_D})"), None),
    # CPU kernels that check by hand (addmm, sparse add/mul, sspaddmm)
    (re.compile(r"(?:Expected all tensors to be on the same device\. )?(?<!\w)(?P<method>\w+):? expected '(?P<arg>\w+)' "
                r"to be (?:a )?(?P<first>CPU|CUDA)(?: tensor)?, but got (?:a (?P<second>CPU|CUDA) tensor|tensor on "
                rf"(?:device: )?(?P<second2>{_D})|(?P<second3>CPU|CUDA))"), "second"),
    # torch 1.x
    (re.compile(r"Expected object of device type (?P<first>\w+) but got device type (?P<second>\w+) for argument "
                r"#\d+ '(?P<arg>\w+)' in call to (?P<method>\w+)"), "second"),
    # cudnn/miopen (TensorUtils checkSameGPU): device indices, -1 is the CPU
    (re.compile(r"Expected tensor for argument #\d+ '\w+' to have the same device as tensor for argument #\d+ "
                r"'(?P<arg>\w+)'; but device (?P<first>-?\d+) does not equal (?P<second>-?\d+) \(while checking "
                r"arguments for (?P<method>\w+)\)"), "second"),
    (re.compile(rf"Unhandled FakeTensor Device Propagation for (?P<method>[\w.]+), found two different devices "
                rf"(?P<first>{_D}), (?P<second>{_D})"), None),
    (re.compile(rf"Expected divisor \(b\) to be on the same device \((?P<first>{_D})\) as dividend \(a\), but it "
                rf"is found on (?P<second>{_D})!"), "second"),
    (re.compile(rf"indices should be either on cpu or on the same device as the indexed tensor \((?P<first>{_D})\)"),
     None),
    # torch_scatter / torch_sparse (PyTorch Geometric)
    (re.compile(rf"All input tensors must be on the same device\. Received (?P<first>{_D}) and (?P<second>{_D})"),
     None),
)
_GRAD = re.compile(r"attempting to assign a gradient (?:with device type '(?P<second>\w+)' to a tensor with device "
                   r"type '(?P<first>\w+)'|located on device with index '(?P<second_i>\d+)' to a tensor located "
                   r"on device with index '(?P<first_i>\d+)')")
_DEVICE_VARIABLE = re.compile(r"(?:device|dev|DEVICE|DEV|\w+_(?:device|dev)|(?:device|dev)_\w+)")
_FACTORIES = frozenset({"tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint",
                        "randperm", "arange", "linspace", "logspace", "eye", "normal", "bernoulli_like"})
_PLACING = frozenset({"to", "cuda", "cpu"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@dataclass(frozen=True)
class DeviceError:
    """What torch's message says: the devices it names, the argument it singled out, the kernel."""

    devices: Tuple[str, ...] = ()
    odd: Optional[str] = None  # the device of the argument torch singled out (it may still be the right one)
    arg: Optional[str] = None
    method: Optional[str] = None
    grad: bool = False  # `.grad = g` with g elsewhere: no op to fix


def parse_device_error(message: str) -> Optional[DeviceError]:
    """None when `message` is not a device mismatch; what it says otherwise."""
    for pattern, odd in _PATTERNS:
        m = pattern.search(message)
        if m is not None:
            groups = m.groupdict()
            second = groups.get("second") or groups.get("second2") or groups.get("second3")
            devices = tuple(_device_text(d) for d in (groups["first"], second) if d)
            singled = odd == "second" or odd == "arg" and groups.get("arg")
            return DeviceError(devices, _device_text(second) if singled and second else None, groups.get("arg"),
                               _kernel(groups.get("method")))
    m = _GRAD.search(message)
    if m is not None:
        if m["first"]:
            return DeviceError((m["first"], m["second"]), m["second"], grad=True)
        return DeviceError((f"cuda:{m['first_i']}", f"cuda:{m['second_i']}"), f"cuda:{m['second_i']}", grad=True)
    if message.startswith("Expected all tensors to be on the same device"):
        return DeviceError()
    return None


def _device_text(text: str) -> str:
    """`CUDA` -> cuda, `-1` -> cpu, `0` -> cuda:0 (checkSameGPU's indices), else as printed."""
    if re.fullmatch(r"-?\d+", text):
        return "cpu" if text == "-1" else f"cuda:{text}"
    return text.lower() if text in ("CPU", "CUDA") else text


def _kernel(method: Optional[str]) -> Optional[str]:
    """`wrapper_CUDA_addmm` -> addmm, `wrapper_CUDA__index_select` -> index_select."""
    if not method:
        return None
    # NB: torch >= 1.10 puts the dispatch key first (`wrapper_CUDA_`, `wrapper_Meta_`); 1.8 and 1.9 did not
    m = re.fullmatch(r"wrapper_[A-Z][A-Za-z0-9]*_(?:(?:out|self|Tensor|Scalar|input|default)_)?_?(?P<op>\w+)",
                     method)
    return m["op"] if m else method[len("wrapper_"):] if method.startswith("wrapper_") else method


# -- who met in the op --

@dataclass(frozen=True)
class Party:
    """One tensor argument of the failing op."""

    name: Optional[str]  # the user's name for it, shortest first
    device: str
    obj: Optional[torch.Tensor] = field(compare=False, repr=False)
    module: Optional[str] = None  # `model.fc` when it is a parameter or buffer of a named module
    shape: Tuple[int, ...] = ()
    dtype: str = ""

    def label(self, ctx: RuleContext) -> str:
        if self.name:
            return f"`{self.name}`"
        return ctx.say("devices.unnamed")


def failed_op(ctx: RuleContext) -> Optional[OpEvent]:
    """The recorded torch call that raised on the error's line (the last one when several did)."""
    events = ctx.record.failed_ops
    on_line = [e for e in events if e.lineno == ctx.record.error_lineno]
    return (on_line or events or [None])[-1]


def parties_of(ctx: RuleContext, event: Optional[OpEvent]) -> List[Party]:
    found: Dict[int, Party] = {}
    for t in event.targets if event is not None else ():
        if t.ident not in found:
            obj = t.ref() if t.ref is not None else None
            found[t.ident] = _party(ctx, obj if isinstance(obj, torch.Tensor) else None, t.device, t.shape, t.dtype)
    if found:
        return list(found.values())
    # NB: nothing recorded (tracking off): the tensors and modules named on the line
    for dotted in dotted_names(ctx.record.source_line(ctx.record.error_lineno)):
        obj = ctx.names.lookup(dotted)
        tensors = [obj] if isinstance(obj, torch.Tensor) else list(obj.parameters()) \
            if isinstance(obj, torch.nn.Module) else []
        for t in tensors[:16]:
            if id(t) not in found:
                found[id(t)] = _party(ctx, t, str(t.device), tuple(t.shape), str(t.dtype).replace("torch.", ""))
    return list(found.values())


def _party(ctx: RuleContext, obj: Optional[torch.Tensor], device: str, shape: tuple, dtype: str) -> Party:
    names = sorted(ctx.names.names_for(obj), key=len) if obj is not None else []
    module = next((n.rsplit(".", 1)[0] for n in names if "." in n
                   and isinstance(ctx.names.lookup(n.rsplit(".", 1)[0]), torch.nn.Module)), None)
    return Party(names[0] if names else None, device, obj, module, tuple(shape), dtype)


# -- which device is meant --

@dataclass(frozen=True)
class Target:
    device: Optional[str]  # None: not clear
    reason: str  # "variable", "module", "placed", "unclear"
    variable: Optional[str] = None  # the cell's `device`
    module: Optional[str] = None


def same_device(a: str, b: str) -> bool:
    """`cuda` (the current device) matches `cuda:0`; otherwise type and index must agree."""
    try:
        da, db = torch.device(a), torch.device(b)
    except (RuntimeError, TypeError):
        return a == b
    return da.type == db.type and (da.index is None or db.index is None or da.index == db.index)


def device_variable(ctx: RuleContext, devices: Sequence[str]) -> Optional[Tuple[str, str]]:
    """(name, device) of a variable like `device = torch.device("cuda")` naming one of `devices`."""
    found = []
    for name, value in ctx.names.objects():
        if "." in name or not _DEVICE_VARIABLE.fullmatch(name):
            continue
        text = str(value) if isinstance(value, torch.device) else value if isinstance(value, str) else None
        match = next((d for d in devices if text and same_device(text, d)), None) if text else None
        if match is not None:
            found.append((name not in ("device", "dev"), len(name), name, match))
    return min(found)[2:] if found else None


def target_device(ctx: RuleContext, parties: Sequence[Party], err: DeviceError) -> Target:
    devices = list(dict.fromkeys(p.device for p in parties))
    if len(devices) < 2:
        devices = list(dict.fromkeys(err.devices))
    var = device_variable(ctx, devices)
    if var is not None:
        return Target(var[1], "variable", variable=var[0])
    modules = {p.module: p.device for p in parties if p.module}
    if modules and len(set(modules.values())) == 1:
        return Target(next(iter(modules.values())), "module", module=_common_prefix(list(modules)))
    accelerators = [d for d in devices if not d.startswith("cpu")]
    if len(devices) == 2 and len(accelerators) == 1 and not modules:
        return Target(accelerators[0], "placed")
    return Target(None, "unclear")


def _common_prefix(paths: List[str]) -> str:
    """`model.0`, `model.2` -> `model`: the module that holds them all."""
    parts = [p.split(".") for p in paths]
    common = []
    for level in zip(*parts):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return ".".join(common) or min(paths, key=len)


# -- the rule --

@rule(KIND, matches=(
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (torch < 2.8)",
    "Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors on "
    "cuda:0 (torch >= 2.8)",
    "Tensor on device meta is not on the expected device cpu!",
    "addmm: expected 'mat2' to be a CPU tensor, but got a CUDA tensor",
    "Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu",
), fix="move the odd one out: `.to(device)` when the cell has a device variable, else `.to(<other>.device)`; "
        "`device=` on a tensor created in the cell")
def device_mismatch(ctx: RuleContext) -> Optional[Diagnosis]:
    """Tensors on different devices met in one op (model on the GPU, inputs on the CPU)."""
    if not isinstance(ctx.exception, (RuntimeError, ValueError)):
        return None
    err = parse_device_error(ctx.error_message)
    if err is None:
        return None
    event = failed_op(ctx)
    parties = parties_of(ctx, event)
    target = target_device(ctx, parties, err)
    lineno = event.lineno if event is not None and event.lineno else ctx.record.error_lineno
    op = (event.name if event is not None else None) or err.method
    plan = Planner(ctx, target, lineno).plan(parties) if target.device and not err.grad else None
    return _diagnosis(ctx, err, op, lineno, parties, target, plan)


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

    @cached_property
    def _top_names(self) -> NameIndex:
        """The namespace's names only: what a line at the cell's top level can refer to."""
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
                and isinstance(getattr(n, "ctx", None), ast.Load) and ast.get_source_segment(self.src, n) == name
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
        iterable = ast.get_source_segment(self.src, loop.iter) or "…"
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
        code = _short(ast.get_source_segment(self.src, call) or "")
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
        later = {n.id for n in _walk_scope(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
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
        best: ast.AST = self.tree
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.body[0].lineno <= lineno <= node.end_lineno:
                if best is self.tree or node.lineno > best.lineno:
                    best = node
        return best

    def _bindings(self, scope: ast.AST) -> Iterator[ast.stmt]:
        return (n for n in _walk_scope(scope) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For)))

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
        loops = [s for s in _walk_scope(scope) if isinstance(s, ast.For) and s.body
                 and s.body[0].lineno <= self.lineno <= s.end_lineno and self._binds(s, name)]
        if not loops:
            return None
        loop = max(loops, key=lambda s: s.lineno)
        rebinds = [s for s in self._bindings(scope) if s is not loop and self._binds(s, name)
                   and loop.lineno < s.lineno <= self.lineno]
        return None if rebinds else loop

    def _innermost_loop(self, scope: ast.AST) -> Optional[ast.stmt]:
        loops = [s for s in _walk_scope(scope) if isinstance(s, (ast.For, ast.While))
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
        text = ast.get_source_segment(self.src, func) or ""
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


# -- the card --

def _diagnosis(ctx: RuleContext, err: DeviceError, op: Optional[str], lineno: Optional[int],
               parties: Sequence[Party], target: Target, plan: Optional[Plan]) -> Diagnosis:
    odd, rest = _sides(parties, target, err)
    odd_device = _devices_text(ctx, [p.device for p in odd] or list(err.devices[1:2]))
    device = _devices_text(ctx, [p.device for p in rest] or list(err.devices[:1]))
    sides = dict(odd=_labels(ctx, odd), odd_device=odd_device, rest=_labels(ctx, rest), device=device)
    op_text = f"`{op}`" if op else ctx.say("devices.an_op")
    title = _tidy(ctx, ctx.say("devices.title", op=op_text, **sides))
    fix = _fix(ctx, plan) if plan is not None and plan.edits else None
    why = [ctx.say("devices.why.rule")]
    # NB: a tensor placed on purpose makes the side that is meant unclear -- unless a fix was found anyway
    unclear = target.device is None or err.grad or plan is not None and fix is None and plan.unclear
    if err.grad:
        why = [ctx.say("devices.why.grad")]
    elif unclear and plan is not None:
        why.append(plan.failure)
    elif target.device is None:
        why.append(ctx.say("devices.why.unclear", devices=_devices_text(ctx, [p.device for p in parties]
                                                                          or list(err.devices))))
    else:
        why.append(_why_target(ctx, target, sides))
        if plan is not None:
            why += plan.origins if fix is not None else [plan.failure] if plan.failure else []
    summary = "devices.summary_unclear" if unclear else "devices.summary"
    lines = [lineno] + (plan.lines if fix is not None and plan is not None else [])
    return ctx.diagnosis(
        KIND, ERROR, title=title, summary=_tidy(ctx, ctx.say(summary, **sides)),
        what=_sentences(ctx, [ctx.say("devices.what", op=op_text, lineno=lineno or "?",
                                      listing=_listing(ctx, parties, err)),
                              ctx.say("devices.what_arg", arg=err.arg, odd=err.odd) if err.arg and err.odd else ""]),
        why=_sentences(ctx, why), where=ctx.where(lineno), lines=sorted({n for n in lines if n}),
        names=[p.name for p in parties if p.name], tensors=_facts(parties), fix=fix)


def _sides(parties: Sequence[Party], target: Target, err: DeviceError) -> Tuple[List[Party], List[Party]]:
    if target.device is not None:
        odd = [p for p in parties if not same_device(p.device, target.device)]
        return odd, [p for p in parties if same_device(p.device, target.device)]
    first = parties[0].device if parties else (err.devices[:1] or ("",))[0]
    return [p for p in parties if p.device != first], [p for p in parties if p.device == first]


def _labels(ctx: RuleContext, parties: Sequence[Party]) -> str:
    """`x`, `model`'s parameters, an intermediate result: each tensor (or module) once."""
    labels: List[str] = []
    for p in parties:
        label = ctx.say("devices.parameters", module=f"`{p.module}`") if p.module else p.label(ctx)
        if label not in labels and (p.name or all(q.name is None for q in parties)):
            labels.append(label)
    if not labels:
        return ctx.say("devices.another")
    return ctx.say("devices.and").join(labels[:4]) + ("…" if len(labels) > 4 else "")


def _devices_text(ctx: RuleContext, devices: Sequence[str]) -> str:
    return ctx.say("devices.and").join(dict.fromkeys(devices)) or "?"


def _listing(ctx: RuleContext, parties: Sequence[Party], err: DeviceError) -> str:
    if not parties:
        return ctx.say("devices.what_devices", devices=_devices_text(ctx, err.devices))
    items: List[str] = []
    for p in parties:
        label = ctx.say("devices.parameters", module=f"`{p.module}`") if p.module else p.label(ctx)
        item = ctx.say("devices.on", name=label, device=p.device)
        if item not in items:
            items.append(item)
    return ctx.say("devices.list_sep").join(items[:8]) + ("…" if len(items) > 8 else "")


def _why_target(ctx: RuleContext, target: Target, sides: Dict[str, str]) -> str:
    if target.reason == "variable":
        return ctx.say("devices.why.variable", variable=target.variable, device=target.device)
    if target.reason == "module":
        return ctx.say("devices.why.module", module=f"`{target.module}`", device=target.device)
    return ctx.say("devices.why.placed", **sides)


def _fix(ctx: RuleContext, plan: Plan) -> Optional[Fix]:
    description = ctx.say("devices.step_sep").join(plan.steps)
    return make_fix(ctx.record.source, plan.edits, description[:1].upper() + description[1:])


def _facts(parties: Sequence[Party]) -> List[TensorFact]:
    facts: List[TensorFact] = []
    for p in parties:
        if not p.name or any(f.name == p.name for f in facts):
            continue
        if p.obj is not None:
            facts.append(tensor_fact(p.name, p.obj))
        else:
            facts.append(TensorFact(name=p.name, shape=shape_text(p.shape), dtype=p.dtype, device=p.device))
    return facts[:8]


def _sentences(ctx: RuleContext, parts: Sequence[str]) -> str:
    return _tidy(ctx, ("" if ctx.language == "zh" else " ").join(p for p in parts if p))


def _tidy(ctx: RuleContext, text: str) -> str:
    """Chinese puts no space between two Chinese characters (`model` 的参数 在 -> `model` 的参数在)."""
    return re.sub(r"(?<=[\u4e00-\u9fff]) (?=[\u4e00-\u9fff])", "", text) if ctx.language == "zh" else text
