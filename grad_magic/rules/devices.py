"""Rules of the devices family (filled in by issue 3)."""
