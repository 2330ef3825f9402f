"""Rules of the requires_grad family (filled in by issue 3)."""
