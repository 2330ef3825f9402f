"""Smoke run of the bench (bench/run.py --quick): it must run end to end and write every section.

A benchmark measures; this test only checks that it still runs and writes finite numbers, so the
bench cannot rot. No timing is asserted.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("overhead", "tiny_steps", "inplace_loop", "compile_time", "time_to_card", "grad_device", "load")


def numbers(value):
    """Every number in a JSON value, however deep."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from numbers(item)


@pytest.mark.slow
def test_quick_bench_writes_every_section(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp_path / "latest.json").read_text(encoding="utf-8"))
    for section in SECTIONS:
        assert results.get(section), f"section {section!r} missing or empty"
        found = list(numbers(results[section]))
        assert found and all(math.isfinite(x) for x in found), f"section {section!r}: {found}"
    assert set(results["overhead"]["cpu"]) == {"mlp", "cnn", "lstm", "transformer", "compiled"}
    for workload in results["overhead"]["cpu"].values():
        assert set(workload["seconds"]) == {"plain", "detect_anomaly", "gradcheck", "gradcheck_fast", "always_on"}
    assert set(results["tiny_steps"]["cpu"]) == {"mlp64", "mlp256", "mlp1024", "gru", "cnn"}
    for workload in results["tiny_steps"]["cpu"].values():
        assert set(workload["seconds"]) == {"plain", "always_on"} and workload["added_us_per_step"]["n"] == 3
    assert set(results["compile_time"]["seconds"]) == {"plain", "gradcheck_fast", "always_on"}
    cases = results["time_to_card"]["cases"]
    assert len(cases) == 6
    assert all(case["diagnosed"] for case in cases.values()), "a seed failure got no card"
    assert len(results["grad_device"]) >= 2
    assert results["targets"], "no target rows"
    table = (tmp_path / "latest.md").read_text(encoding="utf-8")
    assert "| Section | Figure |" in table and "Machine:" in table
