"""Rules of the conversions family (issue 7)."""
