"""NameIndex: the user's names for objects. The first few `names_for` calls scan the namespaces instead
of building the index; the scan must give the index's answer, in the index's order."""
from __future__ import annotations

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
