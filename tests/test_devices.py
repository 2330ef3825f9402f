"""`%grad_device` and `grad_magic.inventory`: where every tensor in the namespace lives.

CPU only: the `meta` device plays "the other device". Data model first, then the renders (English as it
always was, and Chinese), then the magic through a real InteractiveShell.
"""
from __future__ import annotations

import collections
import dataclasses
import gc
import html.parser
import re
import subprocess
import sys
import warnings
import weakref
from unittest import mock

import pytest
import torch
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from torch.utils._python_dispatch import TorchDispatchMode

from grad_magic.device_magic import DeviceMagics, ShownReport, shown
from grad_magic.inventory import build
from grad_magic.inventory.build import build_report, device_matches
from grad_magic.inventory.report import DeviceOptions, DeviceReport, DeviceTotal
from grad_magic.inventory.walk import Walk, storage_key
from grad_magic.render.inventory import DISPLAY_ROWS, render_html, render_text
from grad_magic.units import human_bytes


def report(namespace, language="en", **options) -> DeviceReport:
    return build_report(namespace, DeviceOptions(**options), language)


def paths(rep: DeviceReport) -> set:
    return {row.path for row in rep.rows}


def row(rep: DeviceReport, path: str):
    found = [r for r in rep.rows if r.path == path]
    assert len(found) == 1, f"{path} in {sorted(paths(rep))}"
    return found[0]


def kinds(rep: DeviceReport) -> list:
    return [w.kind for w in rep.warnings]


# NB: the first optimizer step imports torch internals that add a warning filter (sympy's); done here,
# at collection, so that conftest's check after each test sees only what the test itself changed.
torch.optim.SGD([torch.zeros(1, requires_grad=True)]).step()

Pair = collections.namedtuple("Pair", "inputs target")


@dataclasses.dataclass
class Batch:
    x: object
    label: int = 0


@dataclasses.dataclass(slots=True)
class SlotBatch:
    x: object


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.norm = torch.nn.BatchNorm1d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.fc(x))


def trained(model: torch.nn.Module, optimizer_class=torch.optim.Adam):
    """The model after one backward and one optimizer step, and its optimizer."""
    optimizer = optimizer_class(model.parameters())
    model(torch.randn(4, 3)).sum().backward()
    optimizer.step()
    return model, optimizer


# ---- finding tensors ----

def test_nested_containers_give_exact_paths():
    t = [torch.zeros(i + 1) for i in range(7)]

    class Holder:
        def __init__(self) -> None:
            self.tensors = [None, None, t[4]]

    ns = {"pairs": [(0, t[0])], "batch": {"x": t[1], 2: {"deep": t[2]}}, "pair": Pair(t[3], 1),
          "holder": Holder(), "b": Batch(t[5]), "s": SlotBatch(t[6]), "bag": {torch.ones(9)}}
    rep = report(ns)
    assert paths(rep) == {"pairs[0][1]", "batch['x']", "batch[2]['deep']", "pair.inputs",
                          "holder.tensors[2]", "b.x", "s.x"}  # NB: sets are not looked into
    assert row(rep, "batch['x']").shape == (2,) and row(rep, "b.x").role == "tensor"


def test_deques_datasets_and_distributions_are_looked_into():
    ds = torch.utils.data.TensorDataset(torch.zeros(4, 2), torch.zeros(4))
    ns = {"replay": collections.deque([None, torch.zeros(1)]), "loader": torch.utils.data.DataLoader(ds),
          "normal": torch.distributions.Normal(torch.zeros(2), torch.ones(2))}
    assert paths(report(ns)) == {"replay[1]", "loader.dataset.tensors[0]", "loader.dataset.tensors[1]",
                                 "normal.loc", "normal.scale"}


def test_notebook_machinery_is_not_walked():
    shell = InteractiveShell.instance()
    shell.user_ns["hidden_in_the_shell"] = torch.zeros(1)
    try:
        rep = report({"ip": shell, "log": __import__("logging").getLogger("x")}, include_private=True)
    finally:
        del shell.user_ns["hidden_in_the_shell"]
    assert rep.rows == () and rep.skipped == ()


def test_earlier_reports_in_the_output_history_are_not_walked():
    earlier = report({f"t{i}": torch.zeros(1) for i in range(50)})
    walk = Walk(DeviceOptions(include_private=True))
    walk.phase([("Out", {1: earlier, 2: shown(earlier)}), ("_1", earlier)], keep=True)
    assert walk.objects == 1  # `Out` itself; the report (strings only) is not opened


def test_module_parameters_buffers_and_grads():
    model, _ = trained(Net())
    seq = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    rep = report({"model": model, "seq": seq})
    assert row(rep, "model.fc.weight").role == "parameter"
    grad = row(rep, "model.fc.weight.grad")
    assert (grad.role, grad.shape, grad.requires_grad) == ("grad", (2, 3), False)
    assert row(rep, "model.norm.running_mean").role == "buffer"
    assert row(rep, "model.norm.num_batches_tracked").dtype == "int64"
    assert {"seq[0].weight", "seq[2].bias"} <= paths(rep)  # Sequential indices, as Python spells them
    assert "seq[0].weight.grad" not in paths(rep)  # no grad yet: nothing to list


def test_row_metadata():
    leaf = torch.ones(2, 3, dtype=torch.float16, requires_grad=True)
    rep = report({"leaf": leaf, "y": leaf * 2, "i": torch.arange(5), "m": torch.empty(4, device="meta")})
    assert dataclasses.astuple(row(rep, "leaf")) == (
        "leaf", "tensor", (2, 3), "float16", "cpu", True, True, None, 12)
    y = row(rep, "y")
    assert (y.is_leaf, y.grad_fn, y.requires_grad) == (False, "MulBackward0", True)
    assert row(rep, "i").dtype == "int64" and row(rep, "m").device == "meta"
    with pytest.raises(dataclasses.FrozenInstanceError):
        row(rep, "i").path = "j"


def test_optimizer_state_is_named_after_its_parameter():
    model, opt = trained(Net())
    rep = report({"opt": opt, "model": model})  # NB: optimizer first: its parameters get paths later
    state = row(rep, "opt.state[model.fc.weight]['exp_avg']")
    assert (state.role, state.shape) == ("optimizer state", (2, 3))
    assert "opt.state[model.fc.weight]['exp_avg_sq']" in paths(rep)
    assert not any(p.startswith("opt.param_groups") for p in paths(rep))


def test_optimizer_without_its_model_falls_back_to_param_groups():
    _, opt = trained(Net(), torch.optim.SGD)
    _, adam = trained(Net())
    rep = report({"adam": adam, "sgd": opt})
    assert row(rep, "sgd.param_groups[0]['params'][0]").role == "parameter"
    assert row(rep, "sgd.param_groups[0]['params'][0].grad").role == "grad"
    assert "adam.state[adam.param_groups[0]['params'][0]]['exp_avg']" in paths(rep)


def test_a_tensor_reached_twice_is_listed_once_under_its_shortest_path():
    model = Net()
    t = torch.zeros(3)
    rep = report({"nested": [[t]], "model": model, "t": t, "w": model.fc.weight, "again": [t, t]})
    assert [r.path for r in rep.rows if r.shape == (3,)] == ["t"]
    assert row(rep, "w").role == "parameter" and "model.fc.weight" not in paths(rep)


# ---- bytes ----

def test_views_count_their_storage_once():
    x = torch.zeros(100)
    rep = report({"x": x, "v": x[10:20], "w": x.view(10, 10), "other": torch.zeros(5)})
    assert DeviceTotal(count=4, bytes=420) == rep.totals["cpu"]
    assert row(rep, "v").nbytes == 40  # a row shows its own view's size
    # NB: id() of a storage wrapper is reused once the wrapper is freed: distinct storages must stay apart
    many = report({f"t{i}": torch.zeros(1) for i in range(50)})
    assert many.totals["cpu"] == DeviceTotal(count=50, bytes=200)


def test_meta_tensors_are_listed_and_take_no_bytes():
    a, b = torch.empty(4, device="meta"), torch.empty(6, device="meta")
    assert a.untyped_storage().nbytes() == 16  # NB: what torch says, though a meta tensor holds no memory
    rep = report({"a": a, "b": b, "view": a[1:], "real": torch.zeros(2)})
    assert rep.totals["meta"] == DeviceTotal(count=3, bytes=0)
    assert {r.path: r.nbytes for r in rep.rows} == {"real": 8, "a": 0, "b": 0, "view": 0}
    assert "meta: 3 tensors, 0 B" in render_text(rep)


def test_storage_key_is_shared_by_views_and_stable_across_wrappers():
    a, b = torch.empty(4, device="meta"), torch.zeros(4)
    first = storage_key(a)
    gc.collect()  # the Python storage wrappers may be made anew; the key must not change
    assert storage_key(a) == first == storage_key(a[2:])
    assert storage_key(b) != first and storage_key(b) == storage_key(b.view(2, 2))
    assert first == a.untyped_storage()._cdata


def test_a_tensor_without_storage_is_listed_with_its_own_bytes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "Sparse invariant checks are implicitly disabled"
        sparse = torch.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (5,))
    with pytest.raises(NotImplementedError):
        sparse.untyped_storage()  # NB: the case under test: torch has no storage to count
    rep = report({"sparse": sparse, "dense": torch.zeros(3)})
    assert {row.path: row.nbytes for row in rep.rows} == {"sparse": 20, "dense": 12}
    assert rep.totals["cpu"] == DeviceTotal(count=2, bytes=32) and not rep.skipped


def test_human_bytes():
    assert [human_bytes(n) for n in (0, 1023, 1536, 5 * 2**20, 3 * 2**30, 2**42)] == [
        "0 B", "1023 B", "1.5 KiB", "5.0 MiB", "3.0 GiB", "4096.0 GiB"]


# ---- bounds and hostile objects ----

def nested(levels: int, leaf: object) -> list:
    for _ in range(levels):
        leaf = [leaf]
    return leaf


def test_depth_bound_is_exact_and_reported():
    ns = {"deep": nested(6, torch.zeros(1))}
    assert paths(report(ns, depth=6)) == {"deep" + "[0]" * 6}
    shallow = report(ns, depth=5)
    assert shallow.rows == ()
    assert [s.path for s in shallow.skipped] == ["deep" + "[0]" * 5]
    assert "depth limit" in shallow.skipped[0].reason
    assert paths(report({"t": torch.zeros(1), "l": [torch.zeros(1)]}, depth=0)) == {"t"}


def test_tensor_limit_stops_the_walk_and_says_so():
    rep = report({f"t{i}": torch.zeros(1) for i in range(10)}, max_tensors=3)
    assert len(rep.rows) == 3
    assert "tensor limit" in rep.skipped[0].reason and rep.skipped[0].path == "t3"
    assert rep.skipped[1].reason == "not walked: `t4`, `t5`, `t6`, `t7`, `t8`, … (at least 6 objects)"


def test_cycles_end():
    t = torch.zeros(2)
    loop: list = [t]
    loop.append(loop)
    d: dict = {"t": t}
    d["self"] = d

    class Node:
        pass

    node = Node()
    node.me, node.t = node, t
    rep = report({"loop": loop, "d": d, "node": node})
    assert paths(rep) == {"loop[0]"}


class RaisingGetattr:
    def __init__(self) -> None:
        self.t = torch.zeros(1)

    def __getattr__(self, name):
        raise KeyError(name)


class RaisingProperty:
    def __init__(self) -> None:
        self.t = torch.zeros(2)

    @property
    def boom(self):
        raise KeyError("boom")


class RaisingDict:
    @property
    def __dict__(self):
        raise KeyError("__dict__")


def test_hostile_objects_are_skipped_and_reported():
    ns = {"getattr": RaisingGetattr(), "prop": RaisingProperty(), "nodict": RaisingDict(),
          "mock": mock.Mock(), "fake": mock.Mock(spec=torch.Tensor), "magic": mock.MagicMock(),
          "fine": torch.zeros(3)}
    rep = report(ns)
    assert paths(rep) == {"fine", "prop.t"}  # a raising property is never read: only __dict__ is
    reasons = {s.path: s.reason for s in rep.skipped}
    assert "__getattr__" in reasons["getattr"] and "__getattr__" in reasons["mock"]
    assert "__getattr__" in reasons["magic"] and "__getattr__" in reasons["fake"]
    # NB: a `__dict__` property is the class's own code: never called, said so
    assert reasons["nodict"] == "RaisingDict makes its own `__dict__` (a property); not called, not looked into"


def test_mock_is_not_asked_for_anything():
    m = mock.Mock()
    report({"m": m, "inside": [m]})
    assert m.mock_calls == [] and not m._mock_children  # no attribute was invented on it


def test_non_leaf_grad_is_not_read():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reading y.grad would warn ("not a leaf Tensor")
        rep = report({"y": y, "x": x})
    assert paths(rep) == {"x", "y"}


def test_collector_state_is_restored():
    report({"t": torch.zeros(1)})
    assert gc.isenabled()
    gc.disable()
    try:
        report({"t": torch.zeros(1)})
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_report_keeps_no_tensor_alive():
    t = torch.zeros(3)
    ref = weakref.ref(t)
    rep = report({"t": t, "model": Net()})
    del t
    gc.collect()
    assert ref() is None and rep.rows


# ---- names, filter, sort ----

def test_private_names_and_output_history_hidden_unless_all():
    t, out = torch.zeros(1), torch.zeros(2)
    ns = {"x": t, "_private": torch.zeros(3), "Out": {4: out}, "_4": out, "_": out, "__": None,
          "_oh": {4: out}, "_i4": "x", "In": ["", "x"], "exit": object(), "__builtins__": {}}
    assert paths(report(ns)) == {"x"}
    assert paths(report(ns, include_private=True)) == {"x", "_private", "_4"}  # `_4` reached first


def test_device_filter():
    ns = {"c": torch.zeros(2), "m": torch.empty(3, device="meta")}
    assert paths(report(ns, device="meta")) == {"m"}
    assert list(report(ns, device="cpu").totals) == ["cpu"]
    empty = report(ns, device="cuda")
    assert empty.rows == () and "no tensors found on cuda" in render_text(empty)
    assert device_matches("cuda:1", "cuda") and not device_matches("cuda:1", "cuda:0")
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        DeviceOptions(device="gpu")


def test_sort_orders():
    ns = {"b": torch.zeros(10), "a": torch.zeros(1), "c": torch.empty(5, device="meta")}
    assert [r.path for r in report(ns).rows] == ["b", "a", "c"]  # NB: a meta tensor takes no memory
    assert [r.path for r in report(ns, sort="name").rows] == ["a", "b", "c"]
    assert [r.path for r in report(ns, sort="device").rows] == ["b", "a", "c"]
    ties = {"z": torch.zeros(2), "y": torch.zeros(2), "x": torch.zeros(3)}
    assert [r.path for r in report(ties).rows] == ["x", "y", "z"]  # equal sizes: by name
    with pytest.raises(ValueError):
        DeviceOptions(sort="bytes")


# ---- warnings ----

def test_module_spanning_devices_is_named_with_its_devices():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))
    model[1].to("meta")
    rep = report({"model": model})
    (warning,) = rep.warnings
    assert warning.kind == "module-spans-devices"
    assert "`model`" in warning.message and "cpu" in warning.message and "meta" in warning.message
    assert "`model[1].weight`" in warning.message
    assert "will-collide" not in kinds(rep)  # a split model has no one device to collide with


def test_module_bookkeeping_is_not_walked_even_with_all():
    model = Net()
    model._cache = torch.zeros(3)  # a user's private attribute: listed with --all
    assert paths(report({"model": model})) == {"model.fc.weight", "model.fc.bias", "model.norm.weight",
                                               "model.norm.bias", "model.norm.running_mean",
                                               "model.norm.running_var", "model.norm.num_batches_tracked"}
    everything = report({"model": model}, include_private=True)
    assert paths(everything) - paths(report({"model": model})) == {"model._cache"}
    assert not any("_parameters" in p or "_modules" in p for p in paths(everything))


def test_plain_tensor_attribute_left_behind_by_to_counts():
    model = Net()
    model.mask = torch.ones(2)  # not a buffer: model.to() leaves it where it is
    model.to("meta")
    rep = report({"model": model})
    assert kinds(rep) == ["module-spans-devices"] and "`model.mask`" in rep.warnings[0].message


def test_will_collide_names_the_tensor_and_the_model():
    model = Net().to("meta")
    ns = {"model": model, "x": torch.zeros(4, 3), "lr": torch.tensor(0.1), "batch": {"y": torch.zeros(4)},
          "loss_fn": torch.nn.MSELoss(), "also_meta": torch.empty(2, device="meta")}
    rep = report(ns)
    assert [w.message for w in rep.warnings] == [
        "`x` is on cpu; it will collide with `model` on meta",
        "`batch['y']` is on cpu; it will collide with `model` on meta"]  # 0-dim `lr` mixes freely


def test_no_will_collide_when_models_disagree_or_without_a_model():
    a, b = Net(), Net().to("meta")
    assert "will-collide" not in kinds(report({"a": a, "b": b, "x": torch.zeros(1)}))
    assert report({"x": torch.zeros(1), "m": torch.empty(1, device="meta")}).warnings == ()


def test_model_and_optimizer_tensors_never_will_collide():
    model, opt = trained(Net())
    rep = report({"model": model, "opt": opt, "w": model.fc.weight})
    assert rep.warnings == ()  # Adam's 0-dim `step` stays on the CPU by design: no warning either


def test_optimizer_state_on_another_device_than_its_parameter():
    model, opt = trained(Net())
    state = opt.state[model.fc.weight]
    state["exp_avg"] = state["exp_avg"].to("meta")
    (warning,) = report({"model": model, "opt": opt}).warnings
    assert warning.kind == "optimizer-state-device"
    assert warning.message.startswith(
        "`opt.state[model.fc.weight]['exp_avg']` on meta, but the parameter is on cpu: "
        "`opt.step()` will fail")
    state["exp_avg_sq"] = state["exp_avg_sq"].to("meta")
    (warning,) = report({"model": model, "opt": opt}).warnings
    assert warning.message.startswith("`opt.state[model.fc.weight]['exp_avg']` and 1 more on meta")


def test_kept_by_output_history(monkeypatch):
    # NB: the warning is for CUDA memory; on this CPU-only run `meta` stands in for CUDA.
    monkeypatch.setattr(build, "KEPT_BY_HISTORY_DEVICES", ("meta",))
    out = torch.empty(256, device="meta")
    ns = {"x": torch.zeros(1), "Out": {7: out, 8: torch.zeros(2)}, "_7": out}
    (warning,) = report(ns).warnings
    assert warning.kind == "kept-by-output-history"
    assert warning.message.startswith("`_7` keeps 1 tensor(s) (0 B) on meta alive")
    assert "kept-by-output-history" in kinds(report(ns, include_private=True))
    ns["still_used"] = out
    assert report(ns).warnings == ()
    monkeypatch.setattr(build, "KEPT_BY_HISTORY_DEVICES", ("cuda",))
    del ns["still_used"]
    assert report(ns).warnings == ()  # CPU / meta memory in Out is not worth a warning


# ---- reads no tensor data ----

class RecordingMode(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


def test_reads_no_tensor_data():
    model, opt = trained(Net())
    x = torch.arange(6.0).reshape(2, 3)
    leaf = torch.ones(2, requires_grad=True)
    ns = {"model": model, "opt": opt, "x": x, "view": x[1], "twice": [x, x], "keyed": {x: "by tensor"},
          "y": leaf * 3, "leaf": leaf, "meta": torch.empty(3, device="meta"), "half": model.fc.weight.half(),
          "batch": Batch(Pair(x, torch.zeros(1, dtype=torch.int64)))}
    with RecordingMode() as probe:
        torch.add(x, 1)  # the probe really records: otherwise this test could not fail
    assert probe.ops
    with RecordingMode() as mode:
        rep = build_report(ns, DeviceOptions(include_private=True))
        text, page = render_text(rep), render_html(rep)
    assert mode.ops == []
    assert "keyed[<Tensor>]" not in text and len(rep.rows) > 20 and page


# ---- renders ----

def test_text_table_is_aligned_with_summary_and_warnings():
    model = Net().to("meta")
    text = render_text(report({"model": model, "a_longer_name": torch.zeros(300)}))
    lines = text.splitlines()
    assert lines[0].split() == ["path", "role", "shape", "dtype", "device", "grad", "size"]
    role_at = lines[0].index("role")
    table = lines[:lines.index("")]
    assert all(line[role_at - 2:role_at] == "  " and line[role_at] != " " for line in table)
    assert len({len(line) for line in table}) == 1  # the size column is right-aligned
    assert re.search(r"^a_longer_name +tensor +\(300,\) +float32 +cpu +no +1.2 KiB$", text, re.M)
    assert "total: cpu: 1 tensor, 1.2 KiB; meta: 7 tensors" in text
    assert "[will-collide] `a_longer_name` is on cpu" in text


def test_long_reports_are_clipped_in_the_renders_not_in_the_rows():
    rep = report({f"t{i}": torch.zeros(1) for i in range(DISPLAY_ROWS + 5)})
    assert len(rep.rows) == DISPLAY_ROWS + 5
    assert "… 5 more rows" in render_text(rep) and "5 more rows" in render_html(rep)
    assert render_text(rep).count(" tensor  ") == DISPLAY_ROWS


def test_skipped_objects_are_listed_in_the_text():
    text = render_text(report({"m": mock.Mock(), "t": torch.zeros(1)}))
    assert "skipped m: Mock answers any attribute name (__getattr__); not looked into" in text


def test_empty_namespace_says_so():
    rep = report({"n": 1, "s": "text"})
    assert render_text(rep) == str(shown(rep)) == repr(shown(rep)) == "grad_device: no tensors found in the namespace"
    assert "no tensors found" in render_html(rep) and "no tensors found" in shown(rep)._repr_html_()
    assert repr(rep) == "DeviceReport(rows=0, devices=[], warnings=0, skipped=0)"  # the data, not a render


def report_of_a_trained_model(language: str) -> DeviceReport:
    """A namespace with every kind of row, a warning and a skipped object, as %grad_device reports it."""
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.ones(4, 2)).sum().backward()
    opt.step()
    ns = {"model": model, "opt": opt, "x": torch.zeros(4, 2, device="meta"), "batch": {"y": torch.zeros(4)},
          "proxy": mock.Mock()}
    return report(ns, language)


def without_style(page: str) -> str:
    return re.sub(r"<style>.*?</style>\n", "", page, flags=re.S)


# NB: the English report as %grad_device wrote it before its words moved to the catalog, byte for byte --
# but for `meta`, whose tensors hold no memory: 0 B (the row last, its bar empty)
ENGLISH_TEXT = (
    "path                                        role             shape   dtype    device  grad  size\n"
    "batch['y']                                  tensor           (4,)    float32  cpu     no    16 B\n"
    "model.weight                                parameter        (1, 2)  float32  cpu     leaf   8 B\n"
    "model.weight.grad                           grad             (1, 2)  float32  cpu     no     8 B\n"
    "opt.state[model.weight]['momentum_buffer']  optimizer state  (1, 2)  float32  cpu     no     8 B\n"
    "model.bias                                  parameter        (1,)    float32  cpu     leaf   4 B\n"
    "model.bias.grad                             grad             (1,)    float32  cpu     no     4 B\n"
    "opt.state[model.bias]['momentum_buffer']    optimizer state  (1,)    float32  cpu     no     4 B\n"
    "x                                           tensor           (4, 2)  float32  meta    no     0 B\n"
    "\n"
    "total: cpu: 7 tensors, 52 B; meta: 1 tensor, 0 B\n"
    "  [will-collide] `x` is on meta; it will collide with `model` on cpu\n"
    "  skipped proxy: Mock answers any attribute name (__getattr__); not looked into"
)
ENGLISH_HTML = (
    '<div class="gd-report">\n'
    '<div class="gd-head">grad_device · 8 tensors</div>\n'
    '<div class="gd-bars">\n'
    '<span class="gd-dev">cpu</span><span class="gd-track">'
    '<span class="gd-fill gd-cpu" style="width:100.0%"></span></span>'
    '<span class="gd-size">52 B · 7 tensors</span>\n'
    '<span class="gd-dev">meta</span><span class="gd-track">'
    '<span class="gd-fill gd-meta" style="width:0.0%"></span></span>'
    '<span class="gd-size">0 B · 1 tensor</span>\n'
    "</div>\n"
    "<table>\n"
    "<thead><tr><th>path</th><th>role</th><th>shape</th><th>dtype</th><th>device</th><th>grad</th>"
    '<th class="gd-num">size</th></tr></thead>\n'
    "<tbody>\n"
    "<tr><td>batch[&#39;y&#39;]</td><td>tensor</td><td>(4,)</td><td>float32</td><td>cpu</td><td>no</td>"
    '<td class="gd-num">16 B</td></tr>\n'
    "<tr><td>model.weight</td><td>parameter</td><td>(1, 2)</td><td>float32</td><td>cpu</td><td>leaf</td>"
    '<td class="gd-num">8 B</td></tr>\n'
    "<tr><td>model.weight.grad</td><td>grad</td><td>(1, 2)</td><td>float32</td><td>cpu</td><td>no</td>"
    '<td class="gd-num">8 B</td></tr>\n'
    "<tr><td>opt.state[model.weight][&#39;momentum_buffer&#39;]</td><td>optimizer state</td>"
    '<td>(1, 2)</td><td>float32</td><td>cpu</td><td>no</td><td class="gd-num">8 B</td></tr>\n'
    "<tr><td>model.bias</td><td>parameter</td><td>(1,)</td><td>float32</td><td>cpu</td><td>leaf</td>"
    '<td class="gd-num">4 B</td></tr>\n'
    "<tr><td>model.bias.grad</td><td>grad</td><td>(1,)</td><td>float32</td><td>cpu</td><td>no</td>"
    '<td class="gd-num">4 B</td></tr>\n'
    "<tr><td>opt.state[model.bias][&#39;momentum_buffer&#39;]</td><td>optimizer state</td><td>(1,)</td>"
    '<td>float32</td><td>cpu</td><td>no</td><td class="gd-num">4 B</td></tr>\n'
    "<tr><td>x</td><td>tensor</td><td>(4, 2)</td><td>float32</td><td>meta</td><td>no</td>"
    '<td class="gd-num">0 B</td></tr>\n'
    "</tbody>\n"
    "</table>\n"
    '<ul class="gd-warnings">\n'
    '<li><code class="gd-kind">will-collide</code> '
    "<code>x</code> is on meta; it will collide with <code>model</code> on cpu</li>\n"
    "</ul>\n"
    "<details><summary>1 object not looked into</summary>\n"
    "<ul>\n"
    "<li><code>proxy</code>: Mock answers any attribute name (__getattr__); not looked into</li>\n"
    "</ul>\n"
    "</details>\n"
    "</div>"
)


def test_the_english_report_is_as_it_always_was():
    rep = report_of_a_trained_model("en")
    assert rep.language == "en"
    assert render_text(rep) == ENGLISH_TEXT
    assert without_style(render_html(rep)) == ENGLISH_HTML


def test_the_chinese_report_says_everything_in_chinese():
    rep = report_of_a_trained_model("zh")
    assert rep.language == "zh"
    assert [(w.kind, w.message) for w in rep.warnings] == [
        ("will-collide", "`x` 在 meta 上，而 `model` 在 cpu 上：两者一起运算时会出错")]
    assert [(s.path, s.reason) for s in rep.skipped] == [
        ("proxy", "Mock 对任何属性名都会作答（__getattr__）；未查看其内部")]
    text = render_text(rep)
    lines = text.splitlines()
    assert lines[0].split() == ["路径", "角色", "形状", "数据类型", "设备", "梯度", "大小"]
    assert lines[8].split() == ["x", "张量", "(4,", "2)", "float32", "meta", "无", "0", "B"]
    assert "opt.state[model.bias]['momentum_buffer']    优化器状态  (1,)    float32   cpu   无     4 B" \
        in lines
    assert "合计：cpu：7 个张量，52 B；meta：1 个张量，0 B" in lines
    assert "  [will-collide] `x` 在 meta 上，而 `model` 在 cpu 上：两者一起运算时会出错" in lines
    assert lines[-1] == "  已跳过 proxy：Mock 对任何属性名都会作答（__getattr__）；未查看其内部"
    # NB: a Chinese character takes two columns of a terminal: the table is aligned as it is seen
    wide = [sum(2 if "\u4e00" <= c <= "\u9fff" else 1 for c in line) for line in lines[:lines.index("")]]
    assert len(set(wide)) == 1
    page = without_style(render_html(rep))
    assert "<th>路径</th>" in page and '<th class="gd-num">大小</th>' in page and "<td>优化器状态</td>" in page
    assert "grad_device · 8 个张量" in page and "52 B · 7 个张量" in page
    assert "<summary>1 个对象未查看内部</summary>" in page
    assert "<code>x</code> 在 meta 上，而 <code>model</code> 在 cpu 上" in page
    assert "<li><code>proxy</code>：Mock 对任何属性名" in page
    assert not re.search(r">[^<]*\b(tensors?|parameter|optimizer state|skipped|not looked into)\b", page)


def test_every_warning_and_reason_in_chinese():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))
    model[1].to("meta")
    (spans,) = report({"model": model}, "zh").warnings
    assert spans.message == (
        "`model` 的参数和缓冲区分布在 2 个设备上：cpu（2 个，例如 `model[0].weight`）、"
        "meta（2 个，例如 `model[1].weight`）；请用 `model.to(device)` 把它整体移到一个设备上")
    net, opt = trained(Net())
    state = opt.state[net.fc.weight]
    state["exp_avg"], state["exp_avg_sq"] = state["exp_avg"].to("meta"), state["exp_avg_sq"].to("meta")
    (off,) = report({"model": net, "opt": opt}, "zh").warnings
    assert off.message.startswith(
        "`opt.state[model.fc.weight]['exp_avg']` 等另外 1 个在 meta 上，但对应的参数在 cpu 上")
    deep = report({"deep": nested(3, torch.zeros(1))}, "zh", depth=2)
    assert deep.skipped[0].reason == "深度限制：超过 2 层；未查看其内部"
    full = report({f"t{i}": torch.zeros(1) for i in range(3)}, "zh", max_tensors=2)
    assert full.skipped[-1].reason == \
        "张量数量限制：找到 2 个张量后停止；命名空间的其余部分没有查看"
    assert render_text(report({"n": 1}, "zh")) == "grad_device：命名空间中没有找到张量"
    assert render_text(report({"n": 1}, "zh", device="cuda")) == \
        "grad_device：命名空间中没有找到 cuda 上的张量"


def test_the_magic_reports_in_the_chosen_language(device_shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    device_shell.run_cell("import torch\nalpha = torch.zeros(2)")
    rep = device_shell.run_line_magic("grad_device", "")
    assert rep.language == "zh" and str(rep).startswith("路径") and "合计：cpu：1 个张量，8 B" in str(rep)
    assert "<th>路径</th>" in device_shell.display_formatter.format(rep)[0]["text/html"]
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    assert str(device_shell.run_line_magic("grad_device", "")).startswith("path")


class TagCounter(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list = []
        self.text: list = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_html_escapes_user_controlled_names():
    hostile = "<img src=x onerror=alert(1)>"
    ns = {"d": {hostile: torch.zeros(2)}, "model": Net().to("meta"), "p": RaisingDict()}
    ns["d"][hostile + "<script>"] = RaisingDict()
    page = render_html(report(ns))
    parser = TagCounter()
    parser.feed(page)
    assert "img" not in parser.tags and "script" not in parser.tags
    assert f"d['{hostile}']" in "".join(parser.text)  # shown, as text
    assert "table" in parser.tags and "style" in parser.tags and "var(--jp-ui-font-color1" in page


def test_html_lists_bars_rows_and_warnings():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))
    model[1].to("meta")
    page = render_html(report({"model": model}))
    assert page.count('class="gd-fill') == 2 and "width:100.0%" in page
    assert "module-spans-devices" in page and "<code>model[1].weight</code>" in page


def test_importing_the_magic_does_not_import_jinja2():
    code = "import sys, grad_magic.device_magic; print('jinja2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- the magic, through a real shell ----

@pytest.fixture
def device_shell():
    shell = InteractiveShell.instance()
    shell.reset(new_session=True)
    shell.register_magics(DeviceMagics)
    try:
        yield shell
    finally:
        shell.magics_manager.magics["line"].pop("grad_device", None)
        shell.magics_manager.registry.pop("DeviceMagics", None)
        shell.reset(new_session=True)


def test_magic_returns_the_report(device_shell):
    device_shell.run_cell("import torch\nzeta = torch.zeros(8)\nalpha = torch.zeros(2)\n"
                          "_hidden = torch.zeros(1)")
    result = device_shell.run_cell("%grad_device --sort name")
    result.raise_error()
    assert isinstance(result.result, ShownReport) and isinstance(result.result, DeviceReport)
    assert [r.path for r in result.result.rows] == ["alpha", "zeta"]
    rep = device_shell.run_line_magic("grad_device", "")
    assert [r.path for r in rep.rows] == ["zeta", "alpha"]
    assert "_hidden" in paths(device_shell.run_line_magic("grad_device", "--all --depth 2"))
    assert "text/html" in device_shell.display_formatter.format(rep)[0]


def test_magic_report_assignment_and_filter(device_shell):
    device_shell.run_cell("import torch\nm = torch.empty(2, device='meta')\nc = torch.zeros(1)")
    device_shell.run_cell("report = %grad_device meta").raise_error()
    assert paths(device_shell.user_ns["report"]) == {"m"}


def test_magic_usage_errors(device_shell):
    for line in ("--bogus", "--sort bytes", "--depth -1", "gpu", "cpu meta"):
        with pytest.raises(UsageError):
            device_shell.run_line_magic("grad_device", line)


def test_magic_help(device_shell, capsys):
    assert device_shell.run_line_magic("grad_device", "--help") is None
    out = capsys.readouterr().out
    assert out.startswith("usage: %grad_device") and "--sort" in out and "--depth N" in out


# ---- issue 19: no user code, bounded in time and in text, words in the chosen language ----

class Counted:
    calls = 0


class DictByProperty(Counted):
    """Its `__dict__` is a property: `object.__getattribute__(obj, "__dict__")` would call it."""

    def __init__(self) -> None:
        self.t = torch.zeros(2)

    @property
    def __dict__(self):
        Counted.calls += 1
        return {"t": torch.zeros(99)}


class OverridingModel(torch.nn.Module):
    """Every listing method overridden (one raising): the registries are what the model holds."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(2, 3)
        self.register_buffer("scale", torch.ones(3))

    def named_parameters(self, *args, **kwargs):
        Counted.calls += 1
        raise RuntimeError("user code ran")

    def named_modules(self, *args, **kwargs):
        Counted.calls += 1
        return iter([("", self)])

    named_buffers = parameters = buffers = modules = named_children = named_parameters


class TracedTensor(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        Counted.calls += 1
        return super().__torch_function__(func, types, args, kwargs or {})


def test_the_walk_runs_no_user_code():
    Counted.calls = 0
    ns = {"holder": DictByProperty(), "model": OverridingModel(),
          "traced": torch.zeros(2, 3, requires_grad=True).as_subclass(TracedTensor)}
    rep = report(ns)
    assert Counted.calls == 0
    assert paths(rep) == {"holder.t", "model.fc.weight", "model.fc.bias", "model.scale", "traced"}
    assert row(rep, "model.fc.weight").role == "parameter" and row(rep, "model.scale").role == "buffer"
    assert (row(rep, "traced").shape, row(rep, "traced").requires_grad) == ((2, 3), True)
    assert not rep.skipped


def test_the_walk_stops_at_its_time_limit_and_names_what_it_did_not_walk():
    ns = {f"l{i}": [i] for i in range(200_000)}
    ns["a_tensor"] = torch.zeros(1)
    rep = report(ns, time_limit=0.001)
    stop, unwalked = rep.skipped[:2]
    assert stop.reason == "time limit: stopped after 0.001 s; the rest of the namespace was not walked"
    assert re.fullmatch(r"not walked: `l\d+`, `l\d+`, `l\d+`, `l\d+`, `l\d+`, … \(at least [\d,]+ objects\)",
                        unwalked.reason), unwalked.reason
    assert "a_tensor" not in paths(rep)
    zh = report(ns, "zh", time_limit=0.001).skipped[0].reason
    assert zh == "时间限制：0.001 秒后停止；命名空间的其余部分没有查看"
    assert DeviceOptions().time_limit <= 3


def test_every_text_of_the_report_is_bounded():
    long_key = "k" * 100_000
    ns = {"d": {long_key: torch.zeros(1)}, "obj": Batch(torch.zeros(1), torch.zeros(1))}
    setattr(ns["obj"], "a" * 50_000, torch.zeros(1, device="meta"))
    model = torch.nn.Linear(1, 1)
    model.add_module("m" * 50_000, torch.nn.Linear(1, 1).to("meta"))
    ns["model"] = model
    rep = report(ns)
    assert max(len(r.path) for r in rep.rows) <= build.MAX_PATH + 40
    assert all(len(w.message) <= 2_100 for w in rep.warnings) and rep.warnings
    assert len(render_text(rep)) < 30_000 and len(render_html(rep)) < 60_000


def test_usage_errors_speak_the_chosen_language(device_shell, monkeypatch):
    monkeypatch.setenv("GRAD_MAGIC_LANG", "zh")
    with pytest.raises(UsageError, match="未知设备 'gpu'：可以用 cpu"):
        device_shell.run_line_magic("grad_device", "gpu")
    with pytest.raises(UsageError, match="运行 `%grad_device --help` 查看所有选项"):
        device_shell.run_line_magic("grad_device", "--bogus")
    monkeypatch.setenv("GRAD_MAGIC_LANG", "en")
    with pytest.raises(UsageError, match="unknown device 'gpu': try cpu"):
        device_shell.run_line_magic("grad_device", "gpu")
    device_shell.run_cell("import torch\nalpha = torch.zeros(2)")
    assert paths(device_shell.run_line_magic("grad_device", "--time 5")) == {"alpha"}
