"""Rules of the loading family (filled in by issue 3)."""
