"""Rules of the inplace family (filled in by issue 3)."""
