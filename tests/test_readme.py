"""The README's promises that code can check: its table of kinds is the registry's."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tables():
    spec = importlib.util.spec_from_file_location("readme_tables", ROOT / "scripts" / "readme_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_of_kinds_is_the_registrys():
    tables = _tables()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert tables.with_table(readme) == readme, "run: .venv/bin/python scripts/readme_tables.py"


def test_every_rule_says_what_it_keys_on_and_how_it_fixes():
    from grad_magic.rules.registry import RULES

    undocumented = [r.slug for r in RULES.values() if not r.matches]
    assert not undocumented, f"rules without matches=: {undocumented}"
