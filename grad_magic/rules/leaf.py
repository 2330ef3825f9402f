"""Rules of the leaf family (filled in by issue 3)."""
