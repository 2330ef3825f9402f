"""The argument-type family: a torch function, layer or model handed a value of the wrong type -- the tuple an
LSTM returns passed on to a Linear, the None of a forward that forgets its `return`, `x.size` for `x.size()`,
`model(device)` for `model.to(device)`, a NumPy array or a list of numbers where a tensor belongs.

Reads the message (message.py); finds the value the run passed, where the traceback holds it, and the user's
argument that held it (given.py: identity from torch's frame out to the user's, never by running code); says
where the value came from and fixes that line when the value's own type makes the edit certain (card.py).
"""
from . import card  # noqa: F401 -- registers the rule
