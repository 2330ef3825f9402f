"""Rules of the training family (issue 7)."""
