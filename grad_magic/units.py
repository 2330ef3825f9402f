"""Quantities written for people, the same in every language: byte counts.

No torch, no renderer: the data model, the rules and the renderers all use it.
"""
from __future__ import annotations


def human_bytes(n: float) -> str:
    """`512 B`, `1.5 KiB`, `3.0 MiB`, `2.0 GiB` (GiB is the largest unit)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")
