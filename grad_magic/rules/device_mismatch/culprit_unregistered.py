"""Layers kept in a plain Python list (or tuple, or dict) on a module: `.to(device)`, `.parameters()` and
`state_dict()` never see them, so the model moves and they stay behind.

Read from what the run holds: the failing op's operand on the odd device is a parameter (or buffer) that the
model whose forward ran (the outermost `self` of the traceback that is a module) does not register, and a module
of that model holds it in a list / tuple / dict attribute (its instance `__dict__`, read raw: no property runs).
Reading the class's `__init__` only turns that finding into an edit: the attribute's assignment wrapped in
`nn.ModuleList(...)` / `nn.ModuleDict(...)`.
"""
from __future__ import annotations

import ast
import types
from dataclasses import dataclass
from typing import Any, List, Optional

import torch

from ...cell import cell_tree, node_span
from ...edits import make_fix
from ...model import Fix, TextEdit
from ..context import RuleContext
from ..places import root, view_on
from ..tb import entries_of

MAX_MODULES = 2000  # a model's submodules searched for the container


@dataclass(frozen=True)
class Unregistered:
    """The attribute holding layers the model does not register: where it is assigned, and the edit."""

    at: RuleContext  # the view on the class's cell or file
    lineno: int  # the assignment in `__init__`
    owner: str  # the class whose instance holds it: `MlpMixer`
    attribute: str  # `mlp_blocks`
    container: str  # "list", "tuple" or "dict"
    fix: Optional[Fix]


def unregistered(ctx: RuleContext, tensors: List[torch.Tensor]) -> Optional[Unregistered]:
    models = _models_running(ctx)
    for model in models[:1]:
        # NB: torch's own methods, never a subclass's override: no user code runs
        known = {id(t) for t in torch.nn.Module.parameters(model)} | {id(t) for t in torch.nn.Module.buffers(model)}
        strays = [t for t in tensors if id(t) not in known]
        for module in list(torch.nn.Module.modules(model))[:MAX_MODULES]:
            for attribute, value in list(vars(module).items()):
                if _holds(value, strays):
                    return _assigned(ctx, type(module), attribute, type(value).__name__)
    return None


def _models_running(ctx: RuleContext) -> List[torch.nn.Module]:
    """The modules whose methods were running when torch raised (the traceback's `self`s), outermost first."""
    found: List[torch.nn.Module] = []
    for entry in entries_of(ctx.exception):
        me = entry.tb_frame.f_locals.get("self")
        if isinstance(me, torch.nn.Module) and all(me is not m for m in found):
            found.append(me)
    return found


def _holds(value: Any, strays: List[torch.Tensor]) -> bool:
    """Whether a plain list / tuple / dict holds a module that owns one of `strays`."""
    if type(value) not in (list, tuple, dict) or not strays:
        return False
    items = value.values() if isinstance(value, dict) else value
    owned = {id(t) for m in items if isinstance(m, torch.nn.Module)
             for t in (*torch.nn.Module.parameters(m), *torch.nn.Module.buffers(m))}
    return any(id(t) in owned for t in strays)


def _assigned(ctx: RuleContext, cls: type, attribute: str, container: str) -> Optional[Unregistered]:
    init = cls.__dict__.get("__init__")
    code = getattr(init, "__code__", None)
    if not isinstance(init, types.FunctionType) or code is None:
        return None
    at = view_on(root(ctx), code.co_filename, code.co_firstlineno)
    tree = cell_tree(at.record.source) if at is not None else None
    function = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "__init__"
                     and n.lineno <= code.co_firstlineno + 1 and n.end_lineno and n.end_lineno >= code.co_firstlineno),
                    None) if tree is not None else None
    for node in ast.walk(function) if function is not None else ():
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        if any(isinstance(t, ast.Attribute) and t.attr == attribute and isinstance(t.value, ast.Name)
               and t.value.id == "self" for t in targets) and node.value is not None:
            fix = _wrapped(at, node.value, init.__globals__, container)
            return Unregistered(at, node.lineno, cls.__name__, attribute, container, fix)
    return None


def _wrapped(at: RuleContext, value: ast.expr, globals_: dict, container: str) -> Optional[Fix]:
    """`[]` -> `nn.ModuleList()`, `[...]` -> `nn.ModuleList([...])`, `{...}` -> `nn.ModuleDict({...})`."""
    nn = _nn_spelling(globals_)
    if nn is None or not isinstance(value, (ast.List, ast.ListComp, ast.Tuple, ast.Dict, ast.DictComp)):
        return None
    kind = "ModuleDict" if isinstance(value, (ast.Dict, ast.DictComp)) else "ModuleList"
    source = at.record.source
    start, end = node_span(source, value)
    text = source[start:end]
    empty = isinstance(value, (ast.List, ast.Tuple)) and not value.elts or isinstance(value, ast.Dict) and not value.keys
    new = f"{nn}.{kind}()" if empty else f"{nn}.{kind}({text})"
    return make_fix(source, [TextEdit(start, end, new)], at.say("devices.fix.registered", attribute=attribute_of(value),
                                                               kind=f"{nn}.{kind}", lineno=value.lineno))


def attribute_of(value: ast.expr) -> str:
    return "list" if isinstance(value, (ast.List, ast.ListComp)) else "tuple" if isinstance(value, ast.Tuple) \
        else "dict"


def _nn_spelling(globals_: dict) -> Optional[str]:
    """How the class's module names torch.nn: `nn`, else `torch.nn` (the dict is read, nothing runs)."""
    for name, value in list(globals_.items()):
        if value is torch.nn and name.isidentifier():
            return name
    for name, value in list(globals_.items()):
        if value is torch and name.isidentifier():
            return f"{name}.nn"
    return None
