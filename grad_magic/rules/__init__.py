"""Rules: one module per family, registered in the order below (the order first-match-wins uses).

Order: the specific seed families first (requires_grad, leaf, inplace, optimizer, device_mismatch, loading);
within a module, the order of definition. The generic diagnosis (rules/generic.py) answers when no rule matches.
"""
# NB: import order is rule order.
from . import requires_grad, leaf, inplace, optimizer, device_mismatch, loading  # noqa: E402,F401
from . import backward, conversions, dtypes, shapes, channels, collate, arguments, memory, device_assert, numerics, training  # noqa: E402,F401
from . import distributed  # noqa: E402,F401
from . import generic  # noqa: E402,F401
