"""Rules: one module per family, registered in the order below (the order first-match-wins uses)."""
from .registry import RULES, Rule, rule, rules_of  # noqa: F401

# NB: import order is rule order. Seed rules and later families are imported here, before `generic`.
from . import generic  # noqa: E402,F401
