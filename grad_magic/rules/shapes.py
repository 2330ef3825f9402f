"""Rules of the shapes family (issue 7)."""
