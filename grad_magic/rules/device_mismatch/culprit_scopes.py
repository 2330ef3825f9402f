"""The culprit seam of `device-mismatch`, its ast part: the cell's scopes (the cell, each function) and what
binds a name in them -- the plain assignment or the `for` that made the value the op saw.

May touch: the cell's ast only (no live object, no source text). Each scope is walked once per rule run.
"""
from __future__ import annotations

import ast
from functools import cached_property
from typing import Dict, Iterator, List, Optional

_PLACING = frozenset({"to", "cuda", "cpu"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


class Scopes:
    """The scopes of one cell and their bindings, asked about many times while one card is made."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.walked: Dict[int, List[ast.AST]] = {}  # id(scope) -> its nodes
        self.by_line: Dict[int, ast.AST] = {}  # lineno -> its scope

    def scope(self, lineno: int) -> ast.AST:
        """The innermost function (or the cell) whose body holds `lineno`."""
        if lineno not in self.by_line:
            best: ast.AST = self.tree
            for node in self.functions:
                if node.body[0].lineno <= lineno <= node.end_lineno:
                    if best is self.tree or node.lineno > best.lineno:
                        best = node
            self.by_line[lineno] = best
        return self.by_line[lineno]

    @cached_property
    def functions(self) -> List[ast.AST]:
        return [n for n in ast.walk(self.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

    def nodes(self, scope: ast.AST) -> List[ast.AST]:
        """The nodes of one scope (nested functions and classes not entered), walked once."""
        if id(scope) not in self.walked:
            self.walked[id(scope)] = list(_walk_scope(scope))
        return self.walked[id(scope)]

    def bindings(self, scope: ast.AST) -> Iterator[ast.stmt]:
        return (n for n in self.nodes(scope) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For)))

    def last_binding(self, scope: ast.AST, name: str, lineno: int) -> Optional[ast.Assign]:
        """The plain `name = ...` that made the value seen at `lineno` (None if anything else bound it); an
        assignment on `lineno` itself binds only after its value is computed."""
        found = [s for s in self.bindings(scope) if binds(s, name) and s.lineno <= lineno
                 and (isinstance(s, ast.For) or s.end_lineno < lineno or s.lineno > lineno)]
        last = max(found, key=lambda s: s.lineno) if found else None
        return last if isinstance(last, ast.Assign) and single_target(last) == name else None

    def loop_binding(self, scope: ast.AST, name: str, lineno: int) -> Optional[ast.For]:
        """The `for` around `lineno` whose target binds `name` (and nothing rebinds it in between)."""
        loops = [s for s in self.nodes(scope) if isinstance(s, ast.For) and s.body
                 and s.body[0].lineno <= lineno <= s.end_lineno and binds(s, name)]
        if not loops:
            return None
        loop = max(loops, key=lambda s: s.lineno)
        rebinds = [s for s in self.bindings(scope) if s is not loop and binds(s, name)
                   and loop.lineno < s.lineno <= lineno]
        return None if rebinds else loop

    def innermost_loop(self, scope: ast.AST, lineno: int) -> Optional[ast.stmt]:
        loops = [s for s in self.nodes(scope) if isinstance(s, (ast.For, ast.While))
                 and s.lineno <= lineno <= s.end_lineno]
        return max(loops, key=lambda s: s.lineno) if loops else None

    def bound_before(self, root: str, lineno: int) -> Optional[bool]:
        """Whether the scope of `lineno` binds `root` before it (a parameter, an earlier assignment); None when
        nothing in the scope binds it (then only an earlier cell can have)."""
        scope = self.scope(lineno)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = scope.args
            if root in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}:
                return True
        bindings = [s for s in self.bindings(scope) if binds(s, root)]
        return any(s.lineno < lineno for s in bindings) if bindings else None


def binds(stmt: ast.stmt, name: str) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))


def single_target(stmt: ast.stmt) -> Optional[str]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def loop_targets(loop: ast.For) -> List[str]:
    return [n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)]


def placed(value: ast.AST) -> bool:
    """The expression puts its result on a device explicitly (`device=`, `.to(...)`, `.cuda()`)."""
    return any(isinstance(n, ast.Call) and (any(k.arg == "device" for k in n.keywords) or
                                            isinstance(n.func, ast.Attribute) and n.func.attr in _PLACING)
               for n in ast.walk(value))


def _walk_scope(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one scope: nested functions and classes are not entered."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))
