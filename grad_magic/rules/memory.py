"""Rules of the memory family (issue 7)."""
