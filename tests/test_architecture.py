"""The house's layout, checked: the one-way flow between rooms, module sizes, private names kept private,
and the example rule family of docs/ARCHITECTURE.md working when copied as it stands."""
from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "grad_magic"
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, top_level: bool = False):
    """(module imported, names imported) for every import in the file (only the module-level ones with
    `top_level`), relative ones resolved."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in (tree.body if top_level else ast.walk(tree)):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            target = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            yield target, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_no_module_is_over_the_house_limit(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


@pytest.mark.parametrize("room", ["grad_magic.rules", "grad_magic.inventory", "grad_magic.model",
                                  "grad_magic.catalog", "grad_magic.cell", "grad_magic.edits", "grad_magic.units",
                                  "grad_magic.facts", "grad_magic.names", "grad_magic.record"])
def test_the_data_side_never_imports_a_renderer(room):
    paths = [p for p in MODULES if module_name(p) == room or module_name(p).startswith(room + ".")]
    assert paths, room
    for path in paths:
        for target, names in imports_of(path):
            full = {target} | {f"{target}.{n}" for n in names}
            assert not any(t == "grad_magic.render" or t.startswith("grad_magic.render.") for t in full), \
                f"{path.relative_to(ROOT)} imports {target}"


def test_renderers_never_import_torch():
    for path in (PACKAGE / "render").rglob("*.py"):
        for target, _ in imports_of(path):
            assert target.split(".")[0] != "torch", f"{path.relative_to(ROOT)} imports torch"


def test_parsed_messages_never_import_torch():
    for path in (PACKAGE / "rules").rglob("message.py"):
        for target, _ in imports_of(path):
            assert target.split(".")[0] != "torch", f"{path.relative_to(ROOT)} imports torch"


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_private_names_stay_in_their_module(path):
    for target, names in imports_of(path):
        if target.startswith("grad_magic"):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            assert not private, f"imports {private} from {target}"


def test_a_package_init_reexports_nothing():
    """A family's __init__ imports its rule modules (registration); it hands out no names of theirs."""
    for path in PACKAGE.rglob("__init__.py"):
        if path.parent == PACKAGE:
            continue  # NB: grad_magic/__init__.py is the public API: it hands out names by design
        for target, names in imports_of(path, top_level=True):
            if target.startswith(module_name(path) + "."):
                pytest.fail(f"{path.relative_to(ROOT)} re-exports {names} from {target}")


# -- the example family of docs/ARCHITECTURE.md, copied as it stands --

FILE_BLOCK = re.compile(r"```python\n# (?P<path>grad_magic/[\w/]+\.py)\n(?P<code>.*?)```", re.S)


def test_the_example_family_works_when_copied(tmp_path, monkeypatch):
    from grad_magic import catalog
    from grad_magic.engine import diagnose
    from grad_magic.record import RunRecord
    from grad_magic.rules.registry import RULES
    from grad_magic.cell import python_of_cell

    blocks = {m["path"]: m["code"] for m in FILE_BLOCK.finditer((ROOT / "docs" / "ARCHITECTURE.md").read_text())}
    assert {p.rsplit("/", 1)[1] for p in blocks} >= {"message.py", "culprit.py", "fix.py", "card.py",
                                                      "__init__.py"}, sorted(blocks)
    # NB: copied into a scratch package named as the doc says, importable from tmp_path
    for path, code in blocks.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(code, encoding="utf-8")
    (tmp_path / "grad_magic" / "__init__.py").write_text("")
    family = next(p for p in blocks if p.endswith("/card.py")).split("/")[-2]
    catalog_module = next(p for p in blocks if p.startswith("grad_magic/catalog/"))
    spec_dir = tmp_path / "grad_magic"
    # the doc's files join the real packages for this test only
    monkeypatch.setattr(sys.modules["grad_magic.rules"], "__path__",
                        list(sys.modules["grad_magic.rules"].__path__) + [str(spec_dir / "rules")])
    monkeypatch.setattr(catalog, "__path__", list(catalog.__path__) + [str(spec_dir / "catalog")])
    before = dict(RULES)
    messages = importlib.import_module("grad_magic.catalog." + Path(catalog_module).stem).MESSAGES
    monkeypatch.setattr(catalog, "MESSAGES", {**catalog.MESSAGES, **messages})
    try:
        importlib.import_module(f"grad_magic.rules.{family}")
        added = [slug for slug in RULES if slug not in before]
        assert len(added) == 1, added
        # NB: import order is rule order; the doc's family reads a message shape-mismatch also claims (at_op.py),
        # so it goes first, as its import would in rules/__init__.py
        order = {slug: RULES[slug] for slug in added + list(before)}
        RULES.clear()
        RULES.update(order)
        source = "%%gradcheck\nimport torch\nx = torch.randn(3, 4).t()\nflat = x.view(12)  # the columns, one row\n"
        exc = None
        namespace = {"torch": __import__("torch")}
        try:
            exec(compile(python_of_cell(source), "<cell>", "exec"), namespace)
        except RuntimeError as e:
            exc = e
        assert exc is not None, "torch no longer raises here"
        record = RunRecord(filename="<cell>", source=source, exception=exc, error_lineno=4)
        for language in ("en", "zh"):
            d = diagnose(record, namespace, language)[0]
            assert d.kind == added[0] and d.fix is not None, (d.kind, d.notes)
        fixed = {"torch": namespace["torch"]}
        exec(compile(python_of_cell(d.fix.source), "<fixed>", "exec"), fixed)
        assert d.fix.source.splitlines()[3] == "flat = x.reshape(12)  # the columns, one row"
        assert fixed["flat"].shape == (12,)
    finally:
        for slug in [s for s in RULES if s not in before]:
            del RULES[slug]
        for name in [m for m in sys.modules if m.startswith(f"grad_magic.rules.{family}")
                     or m == "grad_magic.catalog." + Path(catalog_module).stem]:
            del sys.modules[name]
