"""Rules of the distributed family: torch.distributed's errors, as one rank of a job sees them, and a
DistributedSampler whose `set_epoch()` is never called (silent: read from samplerwatch.py's record).

A small family in one module, in the four seams' order: the messages (torch's text -> `UnusedParams`,
`NoProcessGroup`), the culprits (the DistributedDataParallel model the failing line runs, read from the
frame's variables and the namespace: its parameters' names; the `DDP(...)` call that wrapped it), the fix
(`find_unused_parameters=True` added to that call: certain to make the error go, where removing the unused
layer would be a guess about the user's model) and the cards (catalog keys `distributed.*`). Which rank the
card comes from is said by the script runner (ranks.py), not here.
"""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from .. import catalog
from ..cell import cell_tree, node_span
from ..edits import make_fix
from ..model import ERROR, WARNING, Diagnosis, Fix, TextEdit
from .context import RuleContext
from .kit import calls_in, callee_name, calls_on_line, lookup
from .places import view_on
from .registry import rule

UNUSED = "ddp-unused-parameters"
NO_GROUP = "no-process-group"
MOST = 8  # parameter names a card lists

# -- the messages --

# torch/csrc/distributed/c10d/reducer.cpp (Reducer::ensure_prior_reduction_finished), torch 1.x ... 2.13:
#   "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates
#    that your module has parameters that were not used in producing loss. ... Parameter indices which did not
#    receive grad for rank 0: 4 5\n In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG ..."
# with TORCH_DISTRIBUTED_DEBUG=INFO or DETAIL the names instead: "Parameters which did not receive grad for
# rank 0: aux.bias, aux.weight"
PRIOR = re.compile(r"Expected to have finished reduction in the prior iteration before starting a new one")
INDICES = re.compile(r"Parameter indices which did not receive grad for rank (?P<rank>\d{1,7}): (?P<ids>[\d ]{1,4000})")
NAMES = re.compile(r"Parameters which did not receive grad for rank (?P<rank>\d{1,7}): (?P<names>[^\n]{1,4000})")
# torch/distributed/distributed_c10d.py (_get_default_group): ValueError in torch >= 2.2, RuntimeError before:
#   "Default process group has not been initialized, please make sure to call init_process_group."
NOT_INITIALIZED = re.compile(r"Default process group has not been initialized")


@dataclass(frozen=True)
class UnusedParams:
    rank: Optional[int]
    indices: Tuple[int, ...]  # into the DDP model's parameters that require grad, in registration order
    names: Tuple[str, ...]  # as torch names them (TORCH_DISTRIBUTED_DEBUG set), else ()


def parse_unused(message: str) -> Optional[UnusedParams]:
    if not PRIOR.search(message):
        return None
    ids, named = INDICES.search(message), NAMES.search(message)
    rank = ids or named
    return UnusedParams(int(rank["rank"]) if rank else None,
                        tuple(int(i) for i in ids["ids"].split()) if ids else (),
                        tuple(n.strip() for n in named["names"].split(",") if n.strip()) if named else ())


@dataclass(frozen=True)
class NoProcessGroup:
    pass


def parse_no_group(message: str) -> Optional[NoProcessGroup]:
    return NoProcessGroup() if NOT_INITIALIZED.search(message) else None


# -- the culprits --

def _ddp_class() -> Any:
    try:
        from torch.nn.parallel import DistributedDataParallel
    except ImportError:  # pragma: no cover - torch built without distributed
        return None
    return DistributedDataParallel


def ddp_model(ctx: RuleContext) -> Optional[Tuple[str, Any]]:
    """(name, model) of the DistributedDataParallel model the failing line names, else the only one the frame's
    variables and the namespace hold."""
    ddp = _ddp_class()
    if ddp is None:
        return None
    tree = cell_tree(ctx.record.source)
    for call in calls_on_line(tree, ctx.record.error_lineno) if tree is not None else ():
        value = lookup(ctx, call.func)
        if isinstance(value, ddp):
            return ast.unparse(call.func), value
    found = {}
    for space in (ctx.record.error_locals or {}, ctx.namespace):
        for name, value in list(space.items()):
            if isinstance(value, ddp) and id(value) not in found:
                found[id(value)] = (name, value)
    return next(iter(found.values())) if len(found) == 1 else None


def unused_names(model: Any, err: UnusedParams) -> List[str]:
    """The parameters' names: torch's own (debug mode), else the indices read against the model's parameters
    as the reducer lists them (those that require grad, registration order, the ignored ones left out)."""
    if err.names:
        return list(err.names)
    ignored = set(getattr(model, "parameters_to_ignore", ()) or ())
    names = [n for n, p in model.module.named_parameters() if p.requires_grad and n not in ignored]
    if not err.indices or any(i >= len(names) for i in err.indices):
        return []
    return [names[i] for i in err.indices]


def ddp_calls(ctx: RuleContext) -> List[ast.Call]:
    """The `DistributedDataParallel(...)` calls of the view's code (under any name it is imported as)."""
    ddp = _ddp_class()
    tree = cell_tree(ctx.record.source)
    if tree is None or ddp is None:
        return []
    return [c for c in calls_in(tree)
            if callee_name(c) == "DistributedDataParallel" or lookup(ctx, c.func) is ddp]


# -- the fix --

def find_unused_fix(source: str, call: ast.Call, description: str) -> Optional[Fix]:
    """`DDP(model)` -> `DDP(model, find_unused_parameters=True)`: after its last argument, nothing else."""
    if any(k.arg is None or k.arg == "find_unused_parameters" for k in call.keywords) or not (call.args or call.keywords):
        return None
    last = max([*call.args, *(k.value for k in call.keywords)], key=lambda n: (n.end_lineno, n.end_col_offset))
    _, end = node_span(source, last)
    return make_fix(source, [TextEdit(end, end, ", find_unused_parameters=True")], description)


# -- the cards --

@rule(UNUSED, raises=RuntimeError, parse=parse_unused,
      matches=("Expected to have finished reduction in the prior iteration before starting a new one …",),
      fix="`find_unused_parameters=True` on the `DistributedDataParallel(...)` call")
def ddp_unused_parameters(ctx: RuleContext, err: UnusedParams) -> Optional[Diagnosis]:
    """DistributedDataParallel found parameters that the loss did not use (no gradient reached them)."""
    held = ddp_model(ctx)
    names = unused_names(held[1], err) if held is not None else list(err.names)
    model = held[0] if held is not None else "?"
    listed = catalog.listing([f"`{n}`" for n in names], ctx.language, most=MOST) if names else \
        ctx.say("distributed.indices", indices=" ".join(map(str, err.indices)) or "?")
    calls = ddp_calls(ctx)
    wrapped = calls[0] if len(calls) == 1 else None
    fix = find_unused_fix(ctx.record.source, wrapped, ctx.say("distributed.unused_fix", lineno=wrapped.lineno)) \
        if wrapped is not None else None
    lineno = ctx.record.error_lineno
    why = [ctx.say("distributed.unused_why"),
           ctx.say("distributed.unused_why_fix" if fix else "distributed.unused_why_no_fix")]
    return ctx.diagnosis(
        UNUSED, ERROR, title=ctx.say("distributed.unused_title"),
        summary=ctx.say("distributed.unused_summary", model=model, params=listed),
        what=ctx.say("distributed.unused_what", model=model, params=listed, lineno=lineno or "?",
                     rank=err.rank if err.rank is not None else "?"),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno),
        lines=[n for n in (wrapped.lineno if wrapped is not None else None, lineno) if n],
        names=[model] if held is not None else [], fix=fix)


@rule(NO_GROUP, raises=(ValueError, RuntimeError), parse=parse_no_group,
      matches=("Default process group has not been initialized, please make sure to call init_process_group.",))
def no_process_group(ctx: RuleContext, err: NoProcessGroup) -> Optional[Diagnosis]:
    """A torch.distributed call (a collective, DDP, a DistributedSampler) before `init_process_group()`."""
    lineno = ctx.record.error_lineno
    launched = all(k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"))
    line = ctx.record.source_line(lineno).strip() if lineno else ""
    why = [ctx.say("distributed.no_group_why"),
           ctx.say("distributed.no_group_launched" if launched else "distributed.no_group_not_launched")]
    return ctx.diagnosis(
        NO_GROUP, ERROR, title=ctx.say("distributed.no_group_title"),
        summary=ctx.say("distributed.no_group_summary"),
        what=ctx.say("distributed.no_group_what", lineno=lineno or "?", code=line or "?"),
        why=catalog.sentences(why, ctx.language), where=ctx.where(lineno), lines=[lineno])


# -- sampler-epoch-not-set: the silent one --

SAMPLER = "sampler-epoch-not-set"


def same_order(record: Any) -> List[Any]:
    """The shuffling DistributedSamplers the run went through twice or more from one loop, always at one epoch."""
    return [u for u in record.samplers
            if u.shuffle and u.iterations >= 2 and u.same_site and len(set(u.epochs)) == 1]


def epoch_loop(tree: Optional[ast.Module], lineno: int) -> Optional[Tuple[ast.For, ast.stmt]]:
    """(the epoch loop, the statement on `lineno` inside it that goes over the data: a `for` loop, or a statement
    whose comprehension does), both in one function."""
    if tree is None:
        return None
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    on_line = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno == lineno]
    inner = next((n for n in on_line if isinstance(n, ast.For)), on_line[-1] if on_line else None)
    at: Any = inner
    while at is not None:
        at = parents.get(id(at))
        if isinstance(at, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return None
        if isinstance(at, ast.For):
            return at, inner
    return None


def set_epoch_fix(source: str, loops: Tuple[ast.For, ast.stmt], name: str, description: str) -> Optional[Fix]:
    """`{name}.set_epoch({epoch})` on its own line right before the loop over the data, at its indentation."""
    outer, inner = loops
    if not isinstance(outer.target, ast.Name) or outer.target.id == "_" or not name or ".set_epoch(" in source:
        return None
    start, _ = node_span(source, inner)
    line_start = source.rfind("\n", 0, start) + 1
    indent = source[line_start:start]
    if indent.strip():
        return None  # NB: the loop shares its line with other code
    return make_fix(source, [TextEdit(line_start, line_start, f"{indent}{name}.set_epoch({outer.target.id})\n")],
                    description)


@rule(SAMPLER, severity=WARNING,
      matches=("silent: a shuffling DistributedSampler iterated in two or more epochs at one epoch number "
               "(`set_epoch()` never called)",),
      fix="`sampler.set_epoch(epoch)` in the epoch loop, before the loop over the data")
def sampler_epoch_not_set(ctx: RuleContext) -> Optional[Diagnosis]:
    """A DistributedSampler whose epoch never changed: every epoch saw the same order."""
    found = same_order(ctx.record)
    if not found or ctx.elsewhere:
        return None
    use = found[0]
    lineno = use.frames[0][1] if use.frames else None
    view = (view_on(ctx, use.frames[0][0], lineno) if lineno else None) or ctx
    sampler = use.ref() if use.ref is not None else None
    name = use.name or (view.names.name_for(sampler) if sampler is not None else None) or ""
    loops = epoch_loop(cell_tree(view.record.source), lineno) if lineno else None
    shown = name or "DistributedSampler"
    fix = set_epoch_fix(view.record.source, loops, name, view.say(
        "distributed.sampler_fix", name=name, epoch=getattr(loops[0].target, "id", "epoch"),
        lineno=loops[1].lineno)) if loops is not None else None
    why = [view.say("distributed.sampler_why"),
           view.say("distributed.sampler_why_fix" if fix else "distributed.sampler_why_no_fix", name=shown)]
    return view.diagnosis(
        SAMPLER, WARNING, title=view.say("distributed.sampler_title", name=shown),
        summary=view.say("distributed.sampler_summary", name=shown, epoch=use.epochs[0], count=use.iterations),
        what=view.say("distributed.sampler_what", name=shown, epoch=use.epochs[0], count=use.iterations,
                      lineno=lineno or "?"),
        why=catalog.sentences(why, view.language), where=view.where(lineno),
        lines=[n for n in ((loops[0].lineno, loops[1].lineno) if loops else (lineno,)) if n],
        names=[name] if name else [], fix=fix)
