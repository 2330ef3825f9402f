"""The backward family's messages: torch's text -> a frozen dataclass, one parser per kind.

May touch: the message string only (no torch import, no cell, no live objects).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

# torch 0.4 ... 2.13 (unchanged): "grad can be implicitly created only for scalar outputs"; torch >= 1.8 adds
# the complex case "... only for real scalar outputs but got torch.complex64".
NON_SCALAR = re.compile(r"grad can be implicitly created only for (?P<real>real )?scalar outputs")
# torch >= 1.9 ... 2.13: "Trying to backward through the graph a second time (or directly access saved tensors
# after they have already been freed). ..."; torch 1.0 ... 1.8: "..., but the saved intermediate results have
# already been freed."; torch 0.4: "..., but the buffers have already been freed."
TWICE = re.compile(r"Trying to backward through the graph a second time")
# torch 1.x ... 2.13: "add(): functions with out=... arguments don't support automatic differentiation, but
# one of the arguments requires grad."
OUT = re.compile(r"functions with out=\.\.\. arguments don't support automatic differentiation")
OUT_OP = re.compile(r"(?<![\w.])(?P<op>[\w.]{1,80})\(\): \Z")
# torch 1.9 ... 2.x: "Inference tensors cannot be saved for backward. To work around you can make a clone to get
# a normal tensor and use it in autograd."; torch 2.13 adds "Please do not use Tensors created in inference
# mode ... or use `torch.no_grad()` instead of `torch.inference_mode()`." The other two: torch 1.9 ... 2.13.
INFERENCE = re.compile(r"Inference tensors cannot be saved for backward|(?P<inplace>Inplace update to inference "
                       r"tensor outside InferenceMode)|(?P<requires>Setting requires_grad=True on inference tensor "
                       r"outside InferenceMode)")
# backward() or autograd.grad() of a result made under inference_mode (missing-requires-grad's message; this rule
# keeps it only when the run shows an inference tensor there)
NO_GRAPH = re.compile(r"element \d+ of (?:tensors|variables) does not require grad and does not have a grad_fn")
# NB: not keyed on: "Inference tensors do not track version counter." (torch 1.9 ... 2.13, from `t._version` of
# an inference tensor): alone, it is not the user's inference tensor in a graph.


@dataclass(frozen=True)
class NonScalar:
    """backward() or autograd.grad() needs `gradient=` for a tensor of more than one element."""

    complex: bool  # the "real scalar outputs" wording: the tensor is complex (a one-element one too)


@dataclass(frozen=True)
class GraphFreed:
    """backward() through a graph whose saved tensors were already freed (every wording alike)."""


@dataclass(frozen=True)
class OutWithGrad:
    """An `out=` call on tensors that require grad."""

    op: str  # "add", as the message names it; "?" when it does not


@dataclass(frozen=True)
class InferenceTensor:
    """A tensor made under inference_mode used where autograd (or its version counter) needs it."""

    variant: str  # "saved" (in a graph), "inplace" (changed in place), "requires" (requires_grad set), "nograd"
    # ("nograd": "element 0 of tensors does not require grad": kept only where the run shows an inference tensor)


def parse_non_scalar(message: str) -> Optional[NonScalar]:
    m = NON_SCALAR.search(message)
    return NonScalar(complex=bool(m["real"])) if m is not None else None


def parse_graph_freed(message: str) -> Optional[GraphFreed]:
    return GraphFreed() if TWICE.search(message) else None


def parse_out_with_grad(message: str) -> Optional[OutWithGrad]:
    m = OUT.search(message)
    if m is None:
        return None
    # NB: the op is the message's `name(): ` just before the match; a bounded look-back keeps this linear
    op = OUT_OP.search(message[max(0, m.start() - 84):m.start()])
    return OutWithGrad(op["op"] if op else "?")


def parse_inference_tensor(message: str) -> Optional[InferenceTensor]:
    m = INFERENCE.search(message)
    if m is None:
        return InferenceTensor("nograd") if NO_GRAPH.search(message) else None
    return InferenceTensor("inplace" if m["inplace"] else "requires" if m["requires"] else "saved")
