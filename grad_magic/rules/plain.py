"""What torch's message means, in one plain sentence, for the errors no rule explains (the generic card), and
which library call the error came out of.

Each entry is keyed on the words torch 2.x really raises (reproduced with real torch; `tests/test_generic_card.py`
raises each one and reads the card). A sentence explains the message; it never names a culprit or proposes an
edit: that stays with the rules, which read what the run did.
"""
from __future__ import annotations

import os
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

_NUM = r"-?\d+"

# (name, pattern): the catalog's `plain.<name>.title` and `plain.<name>.means` say it, filled with the groups
PLAIN: List[Tuple[str, "re.Pattern[str]"]] = [(name, re.compile(pattern)) for name, pattern in [
    ("broadcast", r"The size of tensor a \((?P<a>\d+)\) must match the size of tensor b \((?P<b>\d+)\) at "
                  r"non-singleton dimension (?P<dim>\d+)"),
    ("expand", r"The expanded size of the tensor \((?P<a>-?\d+)\) must match the existing size \((?P<b>\d+)\) at "
               r"non-singleton dimension (?P<dim>\d+)"),
    ("cat", r"Sizes of tensors must match except in dimension (?P<dim>\d+)\. Expected size (?P<a>\d+) but got "
            r"size (?P<b>\d+) for tensor number (?P<n>\d+) in the list"),
    ("dim_range", r"Dimension out of range \(expected to be in range of \[-(?P<n>\d+), (?P<hi>-?\d+)\], but got "
                  r"(?P<got>-?\d+)\)"),
    ("index_bounds", r"index (?P<i>-?\d+) is out of bounds for dimension (?P<dim>\d+) with size (?P<size>\d+)"),
    ("too_many_indices", r"too many indices for tensor of dimension (?P<n>\d+)"),
    ("index_range", r"^index out of range in self"),
    ("index_dtype", r"Expected tensor for argument #\d+ 'indices' to have one of the following scalar types: "
                    r"(?P<want>[\w, ]+); but got (?:torch\.)?(?P<got>\w+) instead"),
    ("index_dtype", r"tensors used as indices must be long, int, byte or bool tensors()"),
    ("scalar", r"a Tensor with (?P<n>\d+) elements cannot be converted to Scalar"),
    ("scalar", r"only one element tensors can be converted to Python scalars()"),
    ("object_array", r"can't convert np\.ndarray of type numpy\.object_"),
    ("ragged", r"expected sequence of length (?P<a>\d+) at dim (?P<dim>\d+) \(got (?P<b>\d+)\)"),
    ("layer_norm", r"Given normalized_shape=\[(?P<want>[^\]]*)\], expected input with shape \[\*, [^\]]*\], but "
                   r"got input of size\s*\[(?P<got>[^\]]*)\]"),
    ("batch_norm", r"running_mean should contain (?P<got>\d+) elements not (?P<want>\d+)"),
    ("batch_of_one", r"Expected more than 1 value per channel when training, got input size "
                     r"torch\.Size\(\[(?P<size>[^\]]*)\]\)"),
    ("rnn_input", r"input\.size\(-1\) must be equal to input_size\. Expected (?P<want>\d+), got (?P<got>\d+)"),
    ("rnn_state", r"For (?P<batched>batched 3-D|unbatched 2-D) input, hx(?: and cx)? should also be [23]-D but got "
                  r"\((?P<state>[^)]*)\) tensors?"),
    ("rnn_state", r"For (?P<batched>batched 3-D|unbatched 2-D) input, hx should also be [23]-D but got "
                  r"(?P<state>\d-D) tensor"),
    # LSTM: "Expected hidden[0] size (2, 3, 8), got [2, 7, 8]" (h; hidden[1]: c); GRU / RNN: "Expected hidden size"
    ("rnn_hidden", r"Expected hidden(?:\[\d\])? size \((?P<want>[^)]*)\), got \[(?P<got>[^\]]*)\]"),
    ("too_small", r"Given input size: \((?P<inp>[^)]*)\)\. Calculated output size: \((?P<out>[^)]*)\)\. "
                  r"Output size is too small"),
    ("too_small", r"Calculated padded input size per channel: \((?P<inp>[^)]*)\)\. Kernel size: \((?P<out>[^)]*)\)"
                  r"\. Kernel size can't be greater than actual input size"),
    ("pooled_size", r"(?P<op>\w+)\(\) Invalid computed output size: (?P<out>-?\d+)"),
    ("conv_dims", r"Expected (?P<want>\d+D \(unbatched\) or \d+D \(batched\)) input to (?P<op>\w+), but got input of "
                  r"size: \[(?P<got>[^\]]*)\]"),
    ("view_stride", r"view size is not compatible with input tensor's size and stride"),
    ("float_only", r"(?P<op>\w+)\(\): could not infer output dtype\. Input dtype must be either a floating point "
                   r"or complex dtype\. Got: (?P<got>\w+)"),
    ("cast", r"result type (?P<res>\w+) can't be cast to the desired output type (?P<out>\w+)"),
    ("where_mask", r"where expected condition to be a boolean tensor, but got a tensor with dtype (?P<got>\w+)"),
    ("bmm", r"Expected size for first two dimensions of batch2 tensor to be: \[(?P<want>[^\]]*)\] but got: "
            r"\[(?P<got>[^\]]*)\]"),
    ("dot", r"inconsistent tensor size, expected tensor \[(?P<a>\d+)\] and src \[(?P<b>\d+)\] to have the same "
            r"number of elements"),
    ("worker_died", r"DataLoader worker \(pid\(s\) [^)]*\) exited unexpectedly"),
    ("none_attribute", r"^'NoneType' object has no attribute '(?P<attr>\w+)'"),
    ("not_callable", r"^'(?P<type>\w+)' object is not callable"),
    ("unpack", r"^not enough values to unpack \(expected (?P<want>\d+), got (?P<got>\d+)\)"),
    ("unpack", r"^too many values to unpack \(expected (?P<want>\d+)(?:, got (?P<got>\d+))?\)"),
    # Lightning's automatic optimization reading what `training_step` returned (lightning 1.5 ... 2.6; before
    # 1.1: "No `loss` value in the dictionary returned from `model.training_step()`")
    ("step_no_loss", r"when `training_step` returns a dict, the 'loss' key needs to be present"),
    ("step_no_loss", r"No `loss` value in the dictionary returned from `model\.training_step\(\)`"),
    ("step_output", r"`training_step` must return a Tensor, a dict, or None"),
]]

# the message torch wraps around an error a DataLoader worker raised (torch/_utils.py ExceptionWrapper.reraise)
_WORKER = re.compile(r"^Caught (?P<type>\w+) in DataLoader worker process \d+\.\nOriginal Traceback \(most recent "
                     r"call last\):\n(?P<trace>.*)", re.S)
_TRACE_LINE = re.compile(r'^  File "(?P<file>[^"\n]+)", line \d+, in (?P<function>[^\n]+)$', re.M)


def inner_message(message: str) -> str:
    """The error the message carries: for a DataLoader worker's error, the worker's own message."""
    worker = _WORKER.match(message)
    if worker is None:
        return message
    lines = worker["trace"].rstrip("\n").split("\n")
    for i, line in enumerate(lines):  # NB: the first line after the frames that starts at column 0
        if line and not line.startswith(" ") and not line.startswith("Traceback"):
            return "\n".join(lines[i:]).split(": ", 1)[-1]
    return message


MAX_TEXT = 4000  # torch's messages are short; a huge one (a repr of a tensor) is read at its start


def plain_words(message: str) -> Optional[Tuple[str, Dict[str, str]]]:
    """(name, parameters) of the first entry whose pattern the (inner) message matches."""
    text = inner_message(message)[:MAX_TEXT]  # NB: `(?P<op>\w+)\(\)` on a megabyte of letters is quadratic
    for name, pattern in PLAIN:
        m = pattern.search(text)
        if m is not None:
            return name, {k: v or "" for k, v in m.groupdict().items()}
    return None


# torch's calling machinery between a user line and the call it made: never the call to name
_PLUMBING = frozenset({"_wrapped_call_impl", "_call_impl", "decorate_context", "wrapper", "_fn", "inner",
                       "__call__", "handle_torch_function", "_get_tracing_state", "__next__", "_next_data"})


def library_call(exc: Optional[BaseException], is_user: Callable[[str], bool]) -> str:
    """The library function the user's innermost line called on the way to the error, as `module.function`
    (`torch.nn.modules.sparse.Embedding.forward`, `torch.utils.data._utils.collate.collate`): the first frame
    after the innermost user frame that is not torch's calling machinery. "" where the error came straight
    out of torch's C++ on the user's line (`torch.cat`), where no user frame is known, or nothing follows it."""
    worker = _WORKER.match(str(exc)) if exc is not None and type(exc).__module__ == "builtins" else None
    if worker is not None:
        frames = [(m["file"], m["function"]) for m in _TRACE_LINE.finditer(worker["trace"])]
    else:
        frames = []
        tb = exc.__traceback__ if exc is not None else None
        while tb is not None:
            code = tb.tb_frame.f_code
            frames.append((code.co_filename, getattr(code, "co_qualname", code.co_name)))
            tb = tb.tb_next
    users = [i for i, (file, _) in enumerate(frames) if is_user(file)]
    if not users:
        return ""
    for file, function in frames[users[-1] + 1:]:
        if function.rsplit(".", 1)[-1] not in _PLUMBING and not function.startswith("<"):
            module = module_of(file)
            return f"{module}.{function}" if module else function
    return ""


def module_of(filename: str) -> str:
    """`torch.nn.functional` for `.../site-packages/torch/nn/functional.py`; "" for a file outside one."""
    parts = filename.replace(os.sep, "/").split("/")
    for root in ("site-packages", "dist-packages"):
        if root in parts:
            dotted = parts[len(parts) - parts[::-1].index(root):]
            dotted[-1] = dotted[-1].rsplit(".", 1)[0]
            return ".".join(p for p in dotted if p != "__init__")
    return ""


def worker_error(message: str) -> bool:
    return _WORKER.match(message) is not None


def fill(params: Dict[str, Any]) -> Dict[str, Any]:
    """The parameters a sentence uses besides the message's own: the last valid index."""
    out = dict(params)
    if params.get("size", "").isdigit():
        out["last"] = int(params["size"]) - 1
    return out
