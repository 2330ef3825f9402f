"""The rules' toolkit: the helpers every rule family shares, written once.

- the cell's syntax: dotted names, a node's text, when an expression needs parentheses, a call's callee and
  arguments, the statements of a scope, grad-disabling blocks, how the cell spells `torch`, whether a
  statement starts its line;
- what ran: the tracked torch call that raised; the optimizers that stepped, and their parameters (read
  from their dicts);
- live objects: tensor facts where torch may refuse them (metadata only, never data); the names that read
  as the cell's device variable;
- the one `LossCall`: a loss called in the cell, with its input and target;
- a model's submodules and parameters, read from its registries; how the user holds an object (`opt`,
  `trainer.optim`: `holder_name`);
- edits every family makes: `.method()` appended to an expression (`appended`, parenthesised when needed).

Wording is not here: sentences and lists are joined by the catalog (`catalog.sentences`, `catalog.listing`).
May touch: the cell's ast and source text, the run record, the NameIndex; of live objects, torch metadata only.
Never runs user code.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import torch

from ..cell import cell_tree, enclosing_statement, indent_of, node_span, segment, split_lines
from ..facts import fact_for as _fact_for
from ..model import TensorFact, TextEdit
from ..names import attribute_without_code
from ..record import OpEvent, StepEvent, distinct_steps
from .context import RuleContext

# -- the cell's syntax --

# NB: atoms bind tighter than any operator: `x.item()` may follow them, `-x` or `a + b` need parentheses
ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set)


def dotted(node: Optional[ast.AST]) -> Optional[str]:
    """`model.fc.weight` for a chain of attributes on a name, else None."""
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def text_of(source: str, node: Optional[ast.AST]) -> str:
    """A node's text in the cell, "" for none."""
    return (segment(source, node) or "") if node is not None else ""


def one_line(source: str, node: Optional[ast.AST]) -> str:
    """A node's text on one line, its runs of white space folded to one space."""
    return " ".join(text_of(source, node).split())


def code_text(source: str, node: Optional[ast.AST]) -> str:
    """A node's source as one line (a compound statement's first line only), without its comment."""
    if node is None or not hasattr(node, "lineno"):
        return ""
    start, end = node_span(source, node)
    text = source[start:end]
    if isinstance(node, ast.stmt) and not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
        text = text.splitlines()[0]
    return " ".join(text.split())


def parenthesised(text: str, node: ast.AST) -> str:
    """`text` as it must be written before `.item()` or another attribute: in parentheses unless an atom."""
    return text if isinstance(node, ATOMS) else f"({text})"


def callee_name(call: ast.Call) -> str:
    """`relu` for `torch.relu(...)`, `F.relu(...)` and `relu(...)`; "" for a computed callee."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def argument(call: ast.Call, index: int, keyword: str) -> Optional[ast.AST]:
    """The argument passed at position `index` or as `keyword=`, else None (positions after a `*args` are unknown)."""
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def calls_in(stmt: Optional[ast.AST]) -> List[ast.Call]:
    """The calls inside a node, in source order."""
    if stmt is None:
        return []
    return sorted((n for n in ast.walk(stmt) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))


def calls_on_line(tree: Optional[ast.Module], lineno: Optional[int]) -> List[ast.Call]:
    """The calls of the statement that spans `lineno`, in source order."""
    return calls_in(enclosing_statement(tree, lineno) if tree is not None and lineno else None)


def scope_statements(node: ast.AST) -> List[ast.stmt]:
    """Statements of a module / function body, nested blocks included, nested defs and classes not."""
    found: List[ast.stmt] = []

    def walk(body: Sequence[ast.stmt]) -> None:
        for stmt in body:
            found.append(stmt)
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for name in ("body", "orelse", "finalbody"):
                walk(getattr(stmt, name, ()) or ())
            for handler in getattr(stmt, "handlers", ()) or ():
                walk(handler.body)

    walk(getattr(node, "body", []))
    return found


def is_false(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


# -- grad-disabling blocks: the one list every rule uses --

GRAD_OFF = frozenset({"no_grad", "inference_mode", "set_grad_enabled"})


def grad_off_call(node: ast.AST) -> bool:
    """`torch.no_grad()`, `inference_mode()`, `set_grad_enabled(False)`: a call that turns autograd off."""
    if not isinstance(node, ast.Call):
        return False
    name = callee_name(node)
    if name not in GRAD_OFF:
        return False
    args = [*node.args, *(k.value for k in node.keywords)]
    if name == "set_grad_enabled":
        return bool(args) and is_false(args[0])
    return not args or not is_false(args[0])


def grad_off_blocks(scope: ast.AST, lineno: int) -> List[ast.AST]:
    """The `with` blocks in `scope` whose body spans `lineno` and that turn autograd off, outermost first."""
    found = [node for node in scope_statements(scope)
             if isinstance(node, (ast.With, ast.AsyncWith)) and node.body[0].lineno <= lineno <= (
                 node.end_lineno or node.lineno) and any(grad_off_call(i.context_expr) for i in node.items)]
    return sorted(found, key=lambda n: n.lineno)


def grad_off_around(stmt: ast.stmt, scope: ast.AST) -> Optional[ast.AST]:
    """The innermost `with torch.no_grad():` (or inference_mode, set_grad_enabled(False)) in `scope` around
    `stmt`, or a no_grad decorator of the function `scope` is; None when autograd is on there."""
    blocks = grad_off_blocks(scope, stmt.lineno)
    if blocks:
        return blocks[-1]
    for deco in getattr(scope, "decorator_list", ()):
        if grad_off_call(deco) or (dotted(deco) or "").split(".")[-1] in ("no_grad", "inference_mode"):
            return deco
    return None


def torch_aliases(tree: ast.AST) -> Set[str]:
    """Names the cell binds to the torch module (`import torch as T` -> {'T'})."""
    found: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.asname or a.name for a in node.names if a.name == "torch"}
    return found


def torch_name(ctx: RuleContext, tree: Optional[ast.AST]) -> Optional[str]:
    """How the cell spells `torch`: its own `import torch as T`, else a name bound to torch in the namespace."""
    aliases = sorted(torch_aliases(tree)) if tree is not None else []
    if aliases:
        return "torch" if "torch" in aliases else aliases[0]
    if ctx.names.lookup("torch") is torch:
        return "torch"
    return next((name for name, obj in ctx.names.objects() if obj is torch), None)


# -- what ran --

def failed_op(ctx: RuleContext, names: Sequence[str] = (), lineno: Optional[int] = None) -> Optional[OpEvent]:
    """The last recorded torch call that raised -- among those named `names` when given -- on `lineno`
    (default: the error's line) when one did there, else the last one anywhere."""
    events = [e for e in ctx.record.failed_ops if not names or e.name in names]
    line = ctx.record.error_lineno if lineno is None else lineno
    on_line = [e for e in events if e.lineno == line]
    return (on_line or events or [None])[-1]


def lookup(ctx: RuleContext, node: Optional[ast.AST]) -> Any:
    """The live object a Name/Attribute chain of the cell names (NameIndex: no user code runs), else None."""
    name = dotted(node)
    return ctx.names.lookup(name) if name else None


# -- live objects: metadata only --

def is_leaf(t: torch.Tensor) -> Optional[bool]:
    """`t.is_leaf`, or None where torch refuses to say (a view made under no_grad, then changed in place)."""
    try:
        return t.is_leaf
    except RuntimeError:
        return None


def grad_fn_name(t: torch.Tensor) -> Optional[str]:
    """The name of `t.grad_fn` ("" for none), or None where torch refuses to say."""
    try:
        return type(t.grad_fn).__name__ if t.grad_fn is not None else ""
    except RuntimeError:
        return None


def fact_for(name: str, obj: Any) -> Optional[TensorFact]:
    """facts.fact_for, or None for an object whose metadata cannot be read (torch refuses, or a tensor
    subclass or proxy whose attributes raise)."""
    try:
        return _fact_for(name, obj)
    except Exception:
        return None


# -- the loss call --

@dataclass(frozen=True)
class LossCall:
    """A loss called in the cell: `criterion(out, y)`, `F.cross_entropy(out, y)`, `nn.NLLLoss()(out, y)`."""

    call: ast.Call
    loss: Any  # the loss: a torch.nn.functional function, or the loss module (or class) called
    written: str  # how the cell calls it: `criterion`, `F.cross_entropy`
    input: Optional[ast.AST]
    target: Optional[ast.AST]


def loss_calls(ctx: RuleContext, calls: Sequence[ast.Call], is_loss: Callable[[Any], bool]) -> List[LossCall]:
    """The calls among `calls` whose callee `is_loss` (given the live function, module or module class)."""
    found: List[LossCall] = []
    for call in calls:
        callee = call.func.func if isinstance(call.func, ast.Call) else call.func  # `nn.CrossEntropyLoss()(...)`
        loss = lookup(ctx, callee)
        if loss is None or not is_loss(loss):
            continue
        found.append(LossCall(call, loss, one_line(ctx.record.source, call.func), argument(call, 0, "input"),
                              argument(call, 1, "target")))
    return found


# -- a statement's place on its line --

def starts_line(source: str, node: ast.stmt) -> bool:
    """Whether `node` is the first thing on its line (only indentation before it): a line can go before it."""
    line = split_lines(source)[node.lineno - 1]
    return node.col_offset == len(indent_of(line).encode("utf-8"))  # NB: col_offset counts UTF-8 bytes


# -- optimizers: read from their dicts, no user code runs --

def optimizer_params(opt: Any) -> List[torch.Tensor]:
    """The tensors in an optimizer's param_groups, read from its __dict__; [] for None or anything else."""
    groups = attribute_without_code(opt, "param_groups")
    if not isinstance(groups, list):
        return []
    return [p for g in groups if isinstance(g, dict) for p in g.get("params", ()) if isinstance(p, torch.Tensor)]


def stepped_optimizers(ctx: RuleContext) -> List[Tuple[Any, StepEvent]]:
    """Each optimizer that stepped in this run and is still alive, with its first step, in stepping order."""
    seen: Dict[int, Tuple[Any, StepEvent]] = {}
    for step in distinct_steps(ctx.record.steps):
        opt = step.optimizer() if step.optimizer is not None else None
        if opt is not None and id(opt) not in seen:
            seen[id(opt)] = (opt, step)
    return list(seen.values())


# -- appending to an expression --

# NB: a name, attribute, call or subscript binds tighter than `.method()`; anything else needs parentheses first
PRIMARIES = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)


def appended(source: str, node: ast.AST, text: str) -> List[TextEdit]:
    """The edits that append `text` (`.detach()`, `.sum()`) to the expression `node`: right after it when it
    is a name, attribute, call or subscript, else after it put in parentheses."""
    start, end = node_span(source, node)
    if isinstance(node, PRIMARIES):
        return [TextEdit(end, end, text)]
    return [TextEdit(start, start, "("), TextEdit(end, end, ")" + text)]


# -- where a line is: the lines a node spans, the function around a line, a line's code --

def spans(node: ast.AST, lineno: Optional[int]) -> bool:
    """Whether `lineno` is one of `node`'s lines (its first to its last)."""
    return lineno is not None and node.lineno <= lineno <= (node.end_lineno or node.lineno)


def function_around(tree: ast.AST, lineno: int) -> ast.AST:
    """The innermost function (def or async def) whose lines include `lineno`, else `tree` itself."""
    best: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and spans(node, lineno) \
                and node.lineno >= getattr(best, "lineno", 0):
            best = node
    return best


def line_code(line: str) -> str:
    """A cell line as code: stripped, without its comment (a `#` inside a string is code)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return line.strip()
    comment = next((t for t in tokens if t.type == tokenize.COMMENT), None)
    return (line.strip()[:comment.start[1]] if comment else line.strip()).rstrip()


def quote(name: Optional[str]) -> str:
    """`name` in backticks, as a card shows code; "" for no name."""
    return f"`{name}`" if name else ""


# -- the cell's device variable --

# NB: `device`, `dev`, `DEVICE`, `cuda_device`, `dev_0`: what a notebook calls the device its tensors belong on
DEVICE_VARIABLE = re.compile(r"(?:device|dev|DEVICE|DEV|\w+_(?:device|dev)|(?:device|dev)_\w+)")


def device_variables(ctx: RuleContext) -> List[Tuple[str, Any]]:
    """(name, value) of each plain name that reads as a device variable, whatever its value: `device` and
    `dev` first, then shorter names first (ties in the namespace's order)."""
    found = [(name, value) for name, value in ctx.names.objects()
             if "." not in name and DEVICE_VARIABLE.fullmatch(name)]
    return sorted(found, key=lambda item: (item[0] not in ("device", "dev"), len(item[0])))


def names_an_argument(ctx: Any, node: ast.AST, lineno: Optional[int]) -> bool:
    """In a view from another cell (rules/elsewhere.py): whether `node` reads a parameter of the function the
    line is in, or a loop variable there (`for x in xs`) -- its value comes from the caller, whose line is
    where a fix belongs."""
    if not getattr(ctx, "elsewhere", False) or lineno is None:
        return False
    function = function_around(cell_tree(ctx.record.source), lineno)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    a = function.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}
    params |= {n.id for loop in ast.walk(function) if isinstance(loop, (ast.For, ast.comprehension))
               for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    return any(isinstance(n, ast.Name) and n.id in params for n in ast.walk(node))


# -- a model's submodules and parameters, read from its registries (no `parameters()` of a subclass runs) --

MAX_SUBMODULES = 10_000


def submodules(prefix: str, module: Any, seen: Set[int]) -> Iterator[Tuple[str, Any]]:
    """(`prefix.sub`, submodule) for the module and every module under it, read from `_modules` dicts."""
    if id(module) in seen or len(seen) > MAX_SUBMODULES:
        return
    seen.add(id(module))
    yield prefix, module
    for key, sub in list((module.__dict__.get("_modules") or {}).items()):
        if sub is not None:
            yield from submodules(f"{prefix}.{key}", sub, seen)


def module_parameters(module: torch.nn.Module) -> List[Any]:
    """The parameters of the module and its submodules, read from their `_parameters` dicts."""
    return [p for _, m in submodules("", module, set())
            for p in (m.__dict__.get("_parameters") or {}).values() if p is not None]


def holder_name(ctx: RuleContext, obj: Any) -> Optional[str]:
    """How the user holds `obj`: its name (`opt`), else an attribute of a named object (`model.optimizer`,
    `trainer.optim`), read from `__dict__`s; None when nothing the namespace names holds it."""
    name = ctx.names.name_for(obj)
    if name is not None:
        return name
    for owner, value in ctx.names.objects():
        if "." in owner or isinstance(value, (torch.Tensor, type)):
            continue
        attrs = _dict_of(value)
        for attr, inner in list(attrs.items())[:256]:
            if inner is obj and isinstance(attr, str):
                return f"{owner}.{attr}"
    return None


def _dict_of(value: Any) -> Dict[str, Any]:
    try:
        found = object.__getattribute__(value, "__dict__")
    except Exception:
        return {}
    return found if isinstance(found, dict) else {}
