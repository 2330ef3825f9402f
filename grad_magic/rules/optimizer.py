"""Rules of the optimizer family (filled in by issue 3)."""
