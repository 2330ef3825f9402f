"""The demo notebooks are English: the gallery shows no case whose text holds Chinese (issue 19)."""
from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def test_the_english_gallery_carries_no_chinese_code():
    nb = json.loads((ROOT / "demo_notebooks" / "02_failure_gallery.ipynb").read_text(encoding="utf-8"))
    chinese = ["".join(c["source"])[:80] for c in nb["cells"]
               if c["cell_type"] == "code" and CHINESE.search("".join(c["source"]))]
    assert chinese == []


def test_the_generator_picks_english_cases():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_demo_notebooks", ROOT / "scripts" / "make_demo_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    code = [c.source for c in module.gallery() if c.cell_type == "code"]
    assert code and not [s[:80] for s in code if CHINESE.search(s)]
