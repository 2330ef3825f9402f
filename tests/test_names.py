"""NameIndex: the user's names for objects. The first few `names_for` calls scan the namespaces instead
of building the index; the scan must give the index's answer, in the index's order."""
from __future__ import annotations

import dataclasses

import torch

from grad_magic.names import NameIndex


class _Raising:
    """An object whose __class__ raises: no name the rules can reason about."""

    @property
    def __class__(self):  # noqa: D401
        raise RuntimeError("no class for you")


def _namespaces():
    torch.manual_seed(0)
    w = torch.ones(2, requires_grad=True)
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    glob = {"w": w, "alias": w, "_private": w, "In": w, "model": model, "net": model, "opt": opt,
            "x": torch.zeros(1), "odd": _Raising(), 3: w, "weight": model[0].weight,
            **{f"filler_{i}": i for i in range(50)}}
    local = {"x": torch.ones(1), "w": w, "h": model[1].running_mean}
    return glob, local


def _objects_of_interest(glob, local):
    model = glob["model"]
    return [glob["w"], glob["x"], local["x"], model, model[0].weight, model[1].running_mean, glob["opt"],
            glob["odd"], torch.zeros(1)]


def test_the_scan_names_as_the_index_does():
    glob, local = _namespaces()
    for spaces in [(glob,), (local, glob), (glob, glob)]:
        for obj in _objects_of_interest(glob, local):
            scanned = NameIndex(*spaces).names_for(obj)
            indexed = NameIndex(*spaces)
            indexed._index()  # NB: the index built first: names_for reads it
            assert scanned == indexed.names_for(obj), (spaces, obj)


def test_names_are_found_by_identity_in_order():
    glob, local = _namespaces()
    index = NameIndex(local, glob)
    assert index.names_for(glob["w"]) == ["w", "alias"]
    assert index.names_for(glob["model"][0].weight) == ["model.0.weight", "net.0.weight", "weight"]
    assert index._objects is None  # NB: answered by scans so far
    assert index.names_for(local["h"]) == ["h", "model.1.running_mean", "net.1.running_mean"]
    assert index.name_for(glob["model"][0].weight) == "weight"
    assert index.names_for(local["x"]) == ["x"] and index.names_for(glob["x"]) == []


def test_after_a_few_scans_the_index_is_built():
    glob, local = _namespaces()
    index = NameIndex(glob)
    for _ in range(3):
        assert index.names_for(glob["w"]) == ["w", "alias"]
    assert index._objects is not None


def test_a_namespace_near_the_limit_is_left_to_the_index():
    glob = {f"t{i}": torch.zeros(1) for i in range(60)}
    index = NameIndex(glob, limit=50)
    assert index._scan(glob["t59"]) is None
    assert index.names_for(glob["t59"]) == [] and index.names_for(glob["t0"]) == ["t0"]


# ---- issue 19: only what the run touched is blamed; reading runs no user code ----

from grad_magic.facts import fact_for  # noqa: E402
from grad_magic.names import Touched, attribute_without_code, instance_dict, plain_class  # noqa: E402
from grad_magic.rules.context import dotted_names  # noqa: E402


def test_objects_are_only_what_the_run_touched():
    """A leftover `clf` of an earlier cell is no candidate for a tensor this run made with torch.randn."""
    clf, logits, held = torch.nn.Linear(3, 2), torch.randn(4, 2), torch.zeros(1)
    ns = {"clf": clf, "logits": logits, "held": held}
    index = NameIndex(ns, touched=Touched(frozenset({"logits"}), frozenset({id(held)})))
    assert dict(index.objects()) == {"logits": logits, "held": held}
    assert "clf" in dict(index.all_objects()) and "clf.weight" in dict(index.all_objects())
    assert index.names_for(clf.weight) == ["clf.weight"]  # NB: naming an object found by identity reads all
    assert index.lookup("clf.weight") is clf.weight
    whole = NameIndex(ns, touched=Touched(frozenset({"clf"})))
    assert {name for name, _ in whole.objects()} == {"clf", "clf.weight", "clf.bias"}


def test_a_calls_keywords_are_not_names():
    """`out=c`: the keyword is no variable (a stale `out` in the namespace is not the call's output)."""
    assert dotted_names("torch.add(a, 1, out=c)") == ["torch.add", "a", "c"]
    assert dotted_names("out = model.fc(x.grad, dim=1) + w") == ["out", "model.fc", "x.grad", "w"]
    assert dotted_names("y = f(x == out)[i]") == ["y", "f", "x", "out", "i"]


class Counting:
    calls = 0


class SlowClass(Counting):
    """An object whose `__class__` is a property: `isinstance(obj, Tensor)` would call it."""

    def __init__(self) -> None:
        self.t = torch.zeros(1)

    @property
    def __class__(self):  # noqa: D401
        Counting.calls += 1
        return SlowClass


class OwnGetattribute(Counting):
    def __getattribute__(self, name):
        Counting.calls += 1
        return object.__getattribute__(self, name)


class DictProperty(Counting):
    def __init__(self) -> None:
        vars(Counting)["__dict__"].__get__(self)["t"] = torch.zeros(1)

    @property
    def __dict__(self):
        Counting.calls += 1
        return {}


class Overriding(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(2, 3)

    def parameters(self, recurse=True):
        Counting.calls += 1
        raise RuntimeError("user code ran")

    buffers = named_parameters = named_modules = modules = parameters


class Traced(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        Counting.calls += 1
        return super().__torch_function__(func, types, args, kwargs or {})


def test_reading_objects_runs_no_user_code():
    Counting.calls = 0
    slow, own, hidden, model = SlowClass(), OwnGetattribute(), DictProperty(), Overriding()
    traced = torch.zeros(2, 3).as_subclass(Traced)
    ns = {"slow": slow, "own": own, "hidden": hidden, "model": model, "traced": traced}
    index = NameIndex(ns)
    assert not plain_class(slow) and not plain_class(own) and plain_class(model) and plain_class(traced)
    assert index.lookup("slow") is None and index.lookup("own") is None  # no name the rules reason about
    assert index.lookup("model.fc.weight") is model.fc.weight and index.names_for(traced) == ["traced"]
    assert instance_dict(hidden) == {"t": hidden_t(hidden)} and attribute_without_code(hidden, "t") is not None
    assert fact_for("slow", slow) is None and fact_for("own", own) is None
    facts = fact_for("model", model)
    assert (facts.kind, facts.shape, facts.dtype, facts.device, facts.requires_grad) == \
        ("module", "Overriding", "float32", "cpu", True)
    traced_fact = fact_for("traced", traced)
    assert (traced_fact.shape, traced_fact.dtype, traced_fact.version) == ("(2, 3)", "float32", 0)
    list(index.objects())
    assert Counting.calls == 0


def hidden_t(obj):
    return vars(Counting)["__dict__"].__get__(obj)["t"]


def test_a_diagnosis_indexes_the_namespace_once_for_every_context_that_reads_the_same_frame():
    """The running cell's context, the contexts device-mismatch re-bases on its frames and lines, and the
    root of a view read the same names: one NameIndex, one `touched`, for the whole diagnosis."""
    from grad_magic.record import RunRecord
    from grad_magic.rules.context import RuleContext
    from grad_magic.rules.places import root
    from grad_magic.sources import Frame, Site

    ns = {"w": torch.zeros(2), "model": torch.nn.Linear(2, 2)}
    record = RunRecord("<cell>", "y = w + 1\n", error_locals=ns)
    ctx = RuleContext(record, ns)
    moved = ctx.rebased(dataclasses.replace(record, error_lineno=1))
    assert moved.names is ctx.names and moved.touched is ctx.touched
    view = ctx.view(Frame(Site("helpers.py", 3, "helper", None), {"x": ns["w"]}))
    assert view.names is not ctx.names and root(view) is not ctx and root(view).names is ctx.names
    other = RuleContext(dataclasses.replace(record, error_locals={"w": ns["w"]}), ns)
    assert other.names is not ctx.names  # NB: another diagnosis, or another frame's variables: its own index
