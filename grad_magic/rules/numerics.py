"""Rules of the numerics family (issue 7)."""
