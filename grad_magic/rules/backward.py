"""Rules of the backward family (issue 7)."""
