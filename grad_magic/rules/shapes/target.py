"""`target-out-of-range`: class labels beyond the classifier's outputs. Fixes: labels shifted by one, or the
classifier's literal `out_features` set to the number of classes."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Optional, Tuple

import torch

from ...cell import cell_tree, node_span
from ...edits import make_fix
from ...model import ERROR, Diagnosis, Fix, TextEdit
from ..context import RuleContext
from ..registry import rule
from .common import fold, joined, last_assignment, linear_calls, module_name, text_of
from .loss import LossCall, find_loss, loss_facts, named


# ATen's CPU nll_loss / nll_loss2d since the port from THNN (torch 1.8); an IndexError in 2.x (2.13 checked)
_TARGET = re.compile(r"Target (?P<n>-?\d+) is out of bounds")
# the CUDA kernels' CUDA_KERNEL_ASSERT (Loss.cu, NLLLoss2d.cu): the kernel prints it to stderr, the exception
# only says "device-side assert triggered" -- matched when a wrapper or a paste carries it; torch <= 1.5's THNN
# raised it on the CPU as "Assertion `cur_target >= 0 && cur_target < n_classes' failed."
_ASSERT = re.compile(r"(?:t|cur_target) >= 0 && (?:t|cur_target) < n_classes")
_DEVICE_ASSERT = "device-side assert triggered"  # RuntimeError, torch.AcceleratorError since 2.8
_CLASS_COUNT_NAMES = ("num_classes", "n_classes", "NUM_CLASSES", "N_CLASSES", "nclasses", "classes_count")


# -- target-out-of-range --

TARGET = "target-out-of-range"


@dataclass(frozen=True)
class Labels:
    """What the cell says about the labels' range, without reading them: `torch.randint(lo, hi, ...)`
    assigned to the target, or a class-count variable."""

    low: Optional[int]
    count: Optional[int]  # labels are below this
    source: str  # the code or the variable that says so
    lineno: Optional[int] = None


def parse_target_error(message: str) -> Optional[Tuple[Optional[int], bool]]:
    """(the out-of-range label when the message says it, whether it is CUDA's device-side assert)."""
    m = _TARGET.search(message)
    if m is not None:
        return int(m["n"]), False
    if _ASSERT.search(message):
        return None, _DEVICE_ASSERT in message
    if _DEVICE_ASSERT in message:
        return None, True
    return None


@rule(TARGET, matches=(
    "Target 10 is out of bounds. (CPU, IndexError)",
    "CUDA error: device-side assert triggered (CUDA; stderr: Assertion `t >= 0 && t < n_classes` failed.)",
    "Assertion `cur_target >= 0 && cur_target < n_classes' failed. (torch <= 1.5)",
), fix="the classifier's literal out_features set to the number of classes the labels imply, when the cell "
       "says it (torch.randint(0, K, ...), num_classes = K)")
def target_out_of_range(ctx: RuleContext) -> Optional[Diagnosis]:
    """A class label at or beyond the classifier's number of outputs (or negative) given to the loss."""
    if not isinstance(ctx.exception, Exception):
        return None
    parsed = parse_target_error(ctx.error_message)
    if parsed is None:
        return None
    label, on_device = parsed
    tree = cell_tree(ctx.record.source)
    loss = find_loss(ctx, tree)
    if on_device and loss.call is None and loss.input_shot is None and not _ASSERT.search(ctx.error_message):
        return None  # a device-side assert from some other kernel (an index, an embedding...)
    return TargetRange(ctx, tree, loss, label, on_device).diagnosis()


class TargetRange:
    def __init__(self, ctx: RuleContext, tree: Optional[ast.Module], loss: LossCall, label: Optional[int],
                 on_device: bool) -> None:
        self.ctx, self.tree, self.loss, self.label, self.on_device = ctx, tree, loss, label, on_device
        self.lineno = ctx.record.error_lineno
        self.classes = self._classes()
        self.ctors = [c for c in linear_calls(ctx, tree) if self.classes and c.out_features == self.classes]
        self.layer = self._layer_name()
        self.labels = self._labels()

    def _classes(self) -> Optional[int]:
        shot = self.loss.input_shot
        if shot is None:
            t = self.ctx.names.lookup(self.loss.input_name) if self.loss.input_name.isidentifier() else None
            shape = tuple(t.shape) if isinstance(t, torch.Tensor) else ()
        else:
            shape = shot.shape
        return shape[1] if len(shape) >= 2 else shape[0] if shape else None

    def _layer_name(self) -> str:
        """The namespace's Linear with that many outputs (the classifier), when there is one."""
        found = {}
        for name, obj in self.ctx.names.objects():
            if name.endswith(".weight") and isinstance(obj, torch.Tensor) and obj.dim() == 2 and \
                    obj.shape[0] == self.classes:
                module = self.ctx.names.lookup(name[:-7])
                if isinstance(module, torch.nn.Linear):
                    found[id(module)] = module_name(self.ctx, module, obj)
            elif isinstance(obj, torch.nn.Linear) and obj.out_features == self.classes:
                found.setdefault(id(obj), name)
        return next(iter(found.values())) if len(found) == 1 else ""

    def _labels(self) -> Optional[Labels]:
        target = self.loss.target_node
        if self.tree is not None and isinstance(target, ast.Name):
            found = last_assignment(self.tree, target.id, self.loss.call.lineno if self.loss.call else 10**9)
            call = found.value if found is not None else None
            if isinstance(call, ast.Call) and self.ctx.names.lookup(text_of(self.ctx, call.func)) is torch.randint:
                # torch.randint(high, size) or torch.randint(low, high, size)
                args = dict(zip(("low", "high") if len(call.args) >= 3 else ("high",), call.args))
                args.update((k.arg, k.value) for k in call.keywords if k.arg in ("low", "high"))
                low = self._int(args["low"]) if "low" in args else 0
                high = self._int(args.get("high"))
                if low is not None and high is not None:
                    return Labels(low, high, text_of(self.ctx, call), found.lineno)
        for name in _CLASS_COUNT_NAMES:
            value = self.ctx.names.lookup(name)
            if type(value) is int and value > 0:
                return Labels(None, value, name)
        return None

    def _int(self, node: Optional[ast.AST]) -> Optional[int]:
        """`10`, `2 * 5`, or a name bound to an int (`num_classes`)."""
        value = fold(node)
        if value is None and isinstance(node, ast.Name):
            found = self.ctx.names.lookup(node.id)
            value = found if type(found) is int else None
        return value

    def diagnosis(self) -> Diagnosis:
        ctx, loss = self.ctx, self.loss
        shown_target = named(ctx, loss.target_name, "shapes.the_target")
        shown_in = named(ctx, loss.input_name, "shapes.the_input")
        classes = self.classes if self.classes is not None else "?"
        layer = f"`{self.layer}`" if self.layer else ctx.say("shapes.target.the_classifier")
        fix, reason = self.fix()
        why = [ctx.say("shapes.target.why", classes=classes, last=self.classes - 1 if self.classes else "?")]
        if self.on_device:
            why.append(ctx.say("shapes.target.why_device"))
        why.append(self._cause(layer))
        if fix is None and reason:
            why.append(ctx.say(reason, layer=layer, label=self.label, classes=classes,
                               target=loss.target_name if loss.target_name.isidentifier() else "y"))
        lines = sorted({n for n in (self.lineno, self.labels.lineno if self.labels else None,
                                    self.ctors[0].call.lineno if len(self.ctors) == 1 else None) if n})
        title = "shapes.target.title_device" if self.label is None else "shapes.target.title"
        what = "shapes.target.what_device" if self.label is None else "shapes.target.what"
        return ctx.diagnosis(
            TARGET, ERROR, title=ctx.say(title, label=self.label, classes=classes, target=shown_target),
            summary=ctx.say("shapes.target.summary"),
            what=ctx.say(what, label=self.label, classes=classes, target=shown_target, input=shown_in,
                         origin=ctx.say("shapes.target.from_layer", layer=layer) if self.layer else "",
                         lineno=self.lineno or "?"),
            why=joined(ctx, why), where=ctx.where(self.lineno), lines=lines,
            names=[n for n in (loss.input_name, loss.target_name, self.layer) if n], tensors=loss_facts(loss), fix=fix)

    def _cause(self, layer: str) -> str:
        ctx, labels = self.ctx, self.labels
        if labels is not None and labels.count is not None:
            if labels.lineno is not None:
                return ctx.say("shapes.target.labels_from_code", code=labels.source, lineno=labels.lineno,
                               low=labels.low, high=labels.count - 1, layer=layer, classes=self.classes)
            return ctx.say("shapes.target.labels_from_name", name=labels.source, count=labels.count, layer=layer,
                           classes=self.classes)
        if self.label is not None and self.label < 0:
            return ctx.say("shapes.target.negative", label=self.label)
        if self.label is not None and self.label == self.classes:
            return ctx.say("shapes.target.one_based", label=self.label, classes=self.classes, layer=layer)
        return ""

    def fix(self) -> Tuple[Optional[Fix], str]:
        labels, label, classes = self.labels, self.label, self.classes
        if labels is None or labels.count is None or classes is None:
            return None, "shapes.target.no_fix_range" if label is None or label >= 0 else ""
        if labels.low == 1 and labels.count == classes + 1:
            return self._shift(), "shapes.target.no_fix_parse"
        if labels.low not in (0, None) or labels.count <= classes or label is not None and label >= labels.count:
            return None, "shapes.target.no_fix_range"
        if len(self.ctors) != 1 or self.ctors[0].out_node is None:
            return None, "shapes.target.no_fix_ctor"
        src = self.ctx.record.source
        node = self.ctors[0].out_node
        start, end = node_span(src, node)
        description = self.ctx.say("shapes.target.fix_out_features",
                                   layer=f"`{self.layer}`" if self.layer else "nn.Linear",
                                   count=labels.count, old=src[start:end], lineno=node.lineno)
        return make_fix(src, [TextEdit(start, end, str(labels.count))], description), "shapes.target.no_fix_parse"

    def _shift(self) -> Optional[Fix]:
        """Labels 1..C for C outputs: `y - 1` where the loss takes them."""
        node = self.loss.target_node
        if node is None:
            return None
        src = self.ctx.record.source
        start, end = node_span(src, node)
        text = f"{src[start:end]} - 1" if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) \
            else f"({src[start:end]}) - 1"
        description = self.ctx.say("shapes.target.fix_shift", code=text, lineno=node.lineno)
        return make_fix(src, [TextEdit(start, end, text)], description)
