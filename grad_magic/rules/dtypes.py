"""Rules of the dtypes family (issue 7)."""
