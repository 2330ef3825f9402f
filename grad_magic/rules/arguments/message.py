"""torch's messages for an argument of the wrong type -> `BadArgument`. Reads only the message; no torch import.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

# torch/csrc/utils/python_arg_parser.cpp, torch 1.x ... 2.13:
#   "linear(): argument 'input' (position 1) must be Tensor, not tuple"
#   "empty(): argument 'size' (position 1) must be tuple of ints, not builtin_function_or_method"
#   "conv2d() received an invalid combination of arguments - got (list, Parameter, ...), but expected one of:\n
#    * (Tensor input, ...)\n      didn't match because some of the arguments have invalid types: (!list!, ...)"
#   "expected Tensor as element 0 in argument 0, but got list" (torch.stack / cat of a list holding a non-tensor)
ONE = re.compile(r"(?P<fn>\w+)\(\): argument '(?P<arg>\w+)' \(position (?P<pos>\d+)\) must be (?P<want>[\w .]+?), "
                 r"(?:not|but found element of type) (?P<got>[\w.]+)")
#   "view(): argument 'size' failed to unpack the object at pos 3 with error \"type must be tuple of ints,but got
#    float\"" (sizes given one by one, one of them a float; pos counts from 1)
UNPACK = re.compile(r"(?P<fn>\w+)\(\): argument '(?P<arg>\w+)' failed to unpack the object at pos (?P<pos>\d+) "
                    r"with error \"type must be (?P<want>[\w .]+?),\s*but got (?P<got>[\w.]+)\"")
COMBINATION = re.compile(r"(?P<fn>\w+)\(\) received an invalid combination of arguments - got \((?P<got>.*)\), but")
MARKED = re.compile(r"invalid types: \((?P<types>[^\n]*)\)")
#   "view() received an invalid combination of arguments - got (float, int), but expected one of:\n * (torch.dtype
#    dtype)\n * (tuple of ints size)" (sizes given one by one: no "invalid types" line)
SIZES = "(tuple of ints size"
#   "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class 'NoneType'>"
#   (torch/utils/data/_utils/collate.py, torch 1.x ... 2.13: a sample item no batch can hold)
UNCOLLATABLE = re.compile(r"default_collate: batch must contain (?P<want>[\w ,]+); found <class '(?P<got>[\w.]+)'>")
FIRST_FORM = re.compile(r"\n \* (?P<form>\([^\n]*\))")
#   "index out of range in self" (IndexError from an nn.Embedding / F.embedding given an id past its table, torch
#   1.x ... 2.13): an argument of the right type with a value the table cannot take; the rule looks only for one
#   passed into the wrong parameter (misbound.py), else it leaves the error to the generic card
INDEX_RANGE = "index out of range in self"


@dataclass(frozen=True)
class BadArgument:
    """Argument `position` (0-based, the call's own arguments) or `name` of `function` was a `got` where torch
    takes a `want`."""

    function: str
    name: str  # "" when torch does not say
    position: Optional[int]
    want: str
    got: str  # torch's name of the value's type: "tuple", "NoneType", "numpy.ndarray", "torch.device"
    # NB: every argument torch marks as the wrong type in its first form, and what that form takes at each
    # position: a layer's own argument is often not the first one marked (layer_value.py)
    marked: Tuple[int, ...] = field(default=(), compare=False)
    wants: Tuple[str, ...] = field(default=(), compare=False)

    @property
    def got_type(self) -> str:
        """The type's own name (`ndarray` for torch's `numpy.ndarray`)."""
        return self.got.rsplit(".", 1)[-1]


def parse_bad_argument(message: str) -> Optional[BadArgument]:
    if message.startswith(INDEX_RANGE):
        return BadArgument("embedding", "input", None, "", INDEX_RANGE)
    m = UNCOLLATABLE.search(message)
    if m is not None:
        return BadArgument("default_collate", "batch", None, m["want"], m["got"])
    m = UNPACK.search(message)
    if m is not None:
        return BadArgument(m["fn"], "", int(m["pos"]) - 1, "int", m["got"])
    m = ONE.search(message)
    if m is not None:
        return BadArgument(m["fn"], m["arg"], int(m["pos"]) - 1, m["want"], m["got"])
    m = COMBINATION.search(message)
    marked = MARKED.search(message) if m is not None else None
    if m is not None and marked is None and SIZES in message:  # NB: sizes as numbers (view, randn): no marks
        got = _items(m["got"])
        return BadArgument(m["fn"], "size", got.index("float"), "int", "float") if "float" in got else None
    if m is not None and marked is None:  # NB: no form takes this many arguments (`normal(0, 2)`): which one is
        form = FIRST_FORM.search(message)  # wrong is not said; the forms are
        return BadArgument(m["fn"], "", None, _short(form["form"]) if form else "", f"({m['got']})")
    if m is None or marked is None:
        return None
    got = _items(m["got"])
    marks = _marks(marked["types"], len(got))
    if not marks:
        return None
    i, types = marks[0], _items(marked["types"])
    wants = tuple(_wanted(message, j) for j in range(len(got)))
    # NB: `marked`: the positions every form torch lists refuses (a position only one form refuses is that
    # form's reading of arguments meant for another: lstm()'s packed form reads num_layers as has_biases)
    every = set(marks).intersection(*(_marks(f["types"], len(got)) for f in MARKED.finditer(message)))
    return BadArgument(m["fn"], "", i, _wanted(message, i), types[i].strip("!").split(" ")[0],
                       tuple(sorted(every)), wants)


def _marks(types: str, count: int) -> Tuple[int, ...]:
    return tuple(i for i, t in enumerate(_items(types))
                 if t.startswith("!") and t.endswith("!") and "=" not in t and i < count)


def _short(form: str, most: int = 3) -> str:
    """`(Tensor mean, Tensor std, …)`: the first parameters of a form torch lists."""
    params = [p.strip() for p in form.strip("()").split(",")]
    return "(" + ", ".join(params[:most]) + (", …)" if len(params) > most else ")")


def _items(text: str) -> List[str]:
    """A list torch writes with ", " between items, items that hold brackets of their own (`list of [Tensor,
    Tensor]`, `tuple of (int, int)`) kept whole."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([" and 1 or ch in ")]" and -1 or 0
        if ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return items


def _wanted(message: str, index: int) -> str:
    """What the first signature torch lists takes at `index` (`Tensor` for `(Tensor input, ...)`)."""
    m = re.search(r"\n \* \((?P<params>[^)]*)\)", message)
    params = [p.strip() for p in m["params"].split(",")] if m else []
    if index >= len(params) or params[index] == "*":
        return "Tensor"
    param = params[index].split(" = ", 1)[0].strip()  # NB: `tuple of ints stride = 1`: the default left out
    return param.rsplit(" ", 1)[0] if " " in param else param
