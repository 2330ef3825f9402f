"""The fix for an optimizer step between a forward pass and its backward (GAN / two-optimizer loops): the
loss of the failing backward computed again after the step, from a fresh forward pass through the model that
stepped -- the order of PyTorch's own DCGAN loop (D steps, then G's loss on D(fake) once more).

    fake = G(z)                                fake = G(z)
    p_fake = D(fake)                           p_fake = D(fake)
    d_loss = ... p_fake ...                    d_loss = ... p_fake ...
    g_loss = ... p_fake ...         ->         opt_D.zero_grad(); d_loss.backward(); opt_D.step()
    opt_D.zero_grad(); ...                     p_fake = D(fake)
    opt_D.step()                               g_loss = ... p_fake ...
    g_loss.backward()                          g_loss.backward()

The statements re-run are those the loss reads (through names assigned once in the same block) that call the
stepped model or read what it returned; the loss's own statement moves after them (kept in its place too when
a line before the step reads it). Only when the step and the backward are statements of one block, the loss
is a plain name assigned in that block, and everything to re-run is a `name = ...` (or `a, b = ...`)
statement there;
else None (the card says it in words). Re-checked on the fixed text: the loss is now assigned after the step.

Pure: the cell's text and ast, the stepped modules' names -> edits checked by `make_fix`; no lookups here.
"""
from __future__ import annotations

import ast
from typing import Callable, List, Optional, Sequence, Set, Tuple

from ...cell import cell_tree, enclosing_statement, split_lines
from ...edits import apply_edits, make_fix
from ...model import Fix, TextEdit
from ..kit import dotted, starts_line

Block = List[ast.stmt]


def recompute_after_step(source: str, step_line: int, backward_line: int,
                         is_stepped: Callable[[str], bool], description: Callable[[str, int], str]) -> Optional[Fix]:
    """Edits of `source` that compute the failing backward's loss again after the step on `step_line`.

    `is_stepped(name)`: whether the dotted name is the model the step updated (or holds it);
    `description(loss, lineno)`: the fix's description."""
    tree = cell_tree(source)
    found = _step_and_backward(tree, step_line, backward_line) if tree is not None else None
    if found is None:
        return None
    block, i_step, i_back, loss = found
    i_loss = _last_assignment(block, loss, i_back)
    rerun = _to_rerun(block, i_step, i_loss, is_stepped) if i_loss is not None else None
    if rerun is None or i_loss is None:
        return None
    moved = [block[i] for i in rerun] + ([block[i_loss]] if i_loss < i_step else [])
    if not moved or not all(starts_line(source, s) and _ends_line(source, s) for s in (*moved, block[i_step])):
        return None  # NB: nothing went through the stepped model; or `a = 1; b = 2`: whole lines are copied
    lines = split_lines(source, keepends=True)
    copied = "".join("".join(lines[s.lineno - 1:s.end_lineno]) for s in moved)
    copied += "" if copied.endswith("\n") else "\n"
    after = _line_end(lines, block[i_step].end_lineno or block[i_step].lineno)
    edits = [TextEdit(after, after, copied if source[after - 1:after] == "\n" else "\n" + copied)]
    removed = 0
    if i_loss < i_step and not _read_between(block, loss, i_loss, i_step):
        first, last = block[i_loss].lineno, block[i_loss].end_lineno or block[i_loss].lineno
        edits.insert(0, TextEdit(_line_end(lines, first - 1), _line_end(lines, last), ""))
        removed = last - first + 1
    added = copied.count("\n")
    fixed = apply_edits(source, edits)
    if not _loss_after_step(fixed, block[i_step].lineno - removed, backward_line + added - removed, loss):
        return None
    return make_fix(source, edits, description(loss, block[i_step].lineno))


def _step_and_backward(tree: ast.Module, step_line: int, backward_line: int
                       ) -> Optional[Tuple[Block, int, int, str]]:
    """The block holding both statements (step first), their indexes, and the loss name (`loss.backward()`)."""
    step, back = enclosing_statement(tree, step_line), enclosing_statement(tree, backward_line)
    for block in _blocks(tree):
        if step in block and back in block and block.index(step) < block.index(back):
            call = back.value if isinstance(back, ast.Expr) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "backward" \
                    and isinstance(call.func.value, ast.Name):
                return block, block.index(step), block.index(back), call.func.value.id
    return None


def _blocks(tree: ast.AST) -> List[Block]:
    return [getattr(n, f) for n in ast.walk(tree) for f in ("body", "orelse", "finalbody")
            if isinstance(getattr(n, f, None), list) and getattr(n, f) and isinstance(getattr(n, f)[0], ast.stmt)]


def _last_assignment(block: Block, name: str, before: int) -> Optional[int]:
    found = [i for i, s in enumerate(block[:before]) if name in _bound(s)]
    return found[-1] if found and _plain_assign(block[found[-1]]) == name else None


def _plain_assign(stmt: ast.stmt) -> Optional[str]:
    """`name = value` -> name."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _assigned_names(stmt: ast.stmt) -> Set[str]:
    """`a = ...` -> {a}; `a, b = ...` -> {a, b}; anything else (a loop, an attribute, a subscript) -> {}."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return set()
    target = stmt.targets[0]
    elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
    return {e.id for e in elts} if all(isinstance(e, ast.Name) for e in elts) else set()


def _bound(stmt: ast.stmt) -> Set[str]:
    """Names a statement (or any statement nested in it) binds."""
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def _read(node: ast.AST) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _calls_stepped(node: ast.AST, is_stepped: Callable[[str], bool]) -> bool:
    """A call of the stepped model (`D(x)`, `self.D(x)`), or a call that is handed it (`loss_of(D, x)`)."""
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        names = [dotted(call.func), *(dotted(a) for a in call.args)]
        if any(n and is_stepped(n) for n in names):
            return True
    return False


def _to_rerun(block: Block, i_step: int, i_loss: int, is_stepped: Callable[[str], bool]) -> Optional[List[int]]:
    """Indexes (in order) of the statements before the step that the loss reads (directly or through each
    other) and that went through the stepped model, the loss's own statement left out. None when the loss
    does not go through the model at all, or when a statement on the way cannot be re-run on its own (a
    loop, a name bound twice, a line between the step and the loss that reads what went through)."""
    tainted: dict = {}  # name -> index of the assignment that made it through the stepped model
    for i, stmt in enumerate(block[:i_loss]):
        through = _calls_stepped(stmt, is_stepped) or bool(_read(stmt) & set(tainted))
        if i > i_step:
            if _read(stmt) & set(tainted):
                return None  # NB: computed after the step from what the old model returned
            continue
        names = _assigned_names(stmt)
        for bound in _bound(stmt):
            tainted.pop(bound, None)
        for name in names if through else ():
            tainted[name] = i
    loss = block[i_loss]
    wanted, needed = set(), _read(loss.value)  # type: ignore[attr-defined]
    for name in sorted(tainted, key=lambda n: tainted[n], reverse=True):
        if name in needed:
            wanted.add(tainted[name])
            needed = needed | _read(block[tainted[name]].value)  # type: ignore[attr-defined]
    if not wanted and not _calls_stepped(loss.value, is_stepped):  # type: ignore[attr-defined]
        return None
    replayed = sorted(wanted) + ([i_loss] if i_loss < i_step else [])
    if not all(_replays_alike(block, i, i_step) for i in replayed):
        return None
    return sorted(wanted)


def _replays_alike(block: Block, index: int, i_step: int) -> bool:
    """Whether statement `index`, run again right after the step, reads the same names it read: none of them
    bound again between it and the step, and not its own target (`h = D.head(h)`)."""
    stmt = block[index]
    reads = _read(stmt.value)  # type: ignore[attr-defined]
    return not _assigned_names(stmt) & reads and not any(_bound(s) & reads for s in block[index + 1:i_step + 1])


def _read_between(block: Block, name: str, start: int, end: int) -> bool:
    return any(name in _read(s) for s in block[start + 1:end + 1])


def _ends_line(source: str, stmt: ast.stmt) -> bool:
    lines = split_lines(source)
    rest = lines[(stmt.end_lineno or stmt.lineno) - 1][stmt.end_col_offset or 0:] if stmt.end_lineno else ""
    return not rest.strip() or rest.strip().startswith("#")


def _line_end(lines: Sequence[str], lineno: int) -> int:
    """The offset just after line `lineno` (1-based; 0 for line 0)."""
    return sum(len(line) for line in lines[:lineno])


def _loss_after_step(fixed: str, step_line: int, backward_line: int, loss: str) -> bool:
    """The rule's own test on the fixed text: the loss the backward reads is assigned after the step."""
    tree = cell_tree(fixed)
    found = _step_and_backward(tree, step_line, backward_line) if tree is not None else None
    if found is None:
        return False
    block, i_step, i_back, name = found
    i_loss = _last_assignment(block, loss, i_back)
    return name == loss and i_loss is not None and i_loss > i_step
