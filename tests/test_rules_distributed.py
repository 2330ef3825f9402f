"""The distributed family (rules/distributed.py) on torch's real messages and a real one-process gloo group, and
the merging of ranks' cards (ranks.py) with two ranks played in turn in this process. The same in real torchrun
jobs: tests/test_script_ranks.py."""
from __future__ import annotations

import json
import os
import sys

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from cards import diagnosis
from grad_magic.model import Diagnosis, SourceLine
from grad_magic.ranks import Ranks, card_key
from grad_magic.rules.distributed import parse_no_group, parse_unused

# NB: torch 2.13's text, copied from a 2-rank gloo run (reducer.cpp)
UNUSED_MESSAGE = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. You can enable unused parameter "
    "detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`, and by \nmaking sure all `forward` function outputs participate "
    "in calculating loss. \nIf you already have done the above, then ...\nParameter indices which did not receive "
    "grad for rank 1: 4 5\n In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either "
    "INFO or DETAIL to print out information about which particular parameters did not receive gradient on this "
    "rank as part of this error")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)
        self.aux = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.body(x))


@pytest.fixture
def group(tmp_path):
    hook = sys.excepthook  # NB: init_process_group puts its own on, which prefixes the rank
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    yield
    dist.destroy_process_group()
    sys.excepthook = hook


def test_the_messages_parse():
    err = parse_unused(UNUSED_MESSAGE)
    assert (err.rank, err.indices, err.names) == (1, (4, 5), ())
    named = parse_unused(UNUSED_MESSAGE.replace("Parameter indices which did not receive grad for rank 1: 4 5",
                                                "Parameters which did not receive grad for rank 1: aux.bias, aux.weight"))
    assert named.names == ("aux.bias", "aux.weight")
    assert parse_unused("Expected all tensors to be on the same device") is None
    assert parse_no_group("Default process group has not been initialized, please make sure to call "
                          "init_process_group.") is not None
    assert parse_no_group("process group already initialized") is None


def test_the_real_error_names_the_parameters_and_the_fix_runs_clean(group):
    source = ("model = DDP(Net())\n"
              "for step in range(2):\n"
              "    model(torch.randn(8, 4)).sum().backward()\n")
    namespace = {"DDP": DDP, "Net": Net, "torch": torch}
    with pytest.raises(RuntimeError) as raised:
        exec(source, dict(namespace))
    assert parse_unused(str(raised.value)) is not None, "torch's message is the one the rule keys on"
    model = DDP(Net())
    d = diagnosis(source, str(raised.value), 3, kind="ddp-unused-parameters",
                  namespace={**namespace, "model": model})
    assert "`aux.weight` and `aux.bias`" in d.summary
    assert [sl.lineno for sl in d.lines] == [1, 3]
    assert d.fix.source.splitlines()[0] == "model = DDP(Net(), find_unused_parameters=True)"
    exec(d.fix.source, dict(namespace))  # NB: the fixed cell, in a fresh namespace: no error


def test_no_process_group_says_whether_a_launcher_set_the_rank(monkeypatch):
    source = "total = torch.ones(2)\ndist.all_reduce(total)\n"
    namespace = {"torch": torch, "dist": dist}
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises((ValueError, RuntimeError)) as raised:
        exec(source, dict(namespace))
    d = diagnosis(source, str(raised.value), 2, kind="no-process-group", namespace=namespace,
                  error_type=type(raised.value))
    assert "`torchrun --nproc_per_node N`" in d.why and d.fix is None
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("MASTER_ADDR", "localhost")
    monkeypatch.setenv("MASTER_PORT", "29500")
    d = diagnosis(source, str(raised.value), 2, kind="no-process-group", namespace=namespace,
                  error_type=type(raised.value))
    assert "torchrun started this process" in d.why


def card(kind: str, lineno: int) -> Diagnosis:
    return Diagnosis(kind, "error", "t", "s", "w", "y", "h", lines=(SourceLine(lineno, "x", file="/a.py"),),
                     error_type="RuntimeError")


def ranks_of(monkeypatch, shared: str, rank: int) -> Ranks:
    monkeypatch.setenv("RANK", str(rank))
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", os.path.join(shared, "attempt_0", str(rank), "error.json"))
    return Ranks.from_environment(os.path.join(shared, "json"))


def test_a_card_on_both_ranks_is_printed_once_with_the_ranks(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRAD_MAGIC_MERGE_WAIT", "0.2")
    to_json = lambda d, extra: {"kind": d.kind, **extra}  # noqa: E731
    one, other = ranks_of(monkeypatch, str(tmp_path), 1), ranks_of(monkeypatch, str(tmp_path), 0)
    assert one.shared == other.shared == str(tmp_path / "attempt_0" / "grad_magic")
    # NB: rank 1 first: rank 0, the lower rank with the card, has not written yet, so rank 1 prints it after the wait
    one.tell([(card("a", 3), "CARD A"), (card("b", 9), "CARD B")], [], to_json)
    other.tell([(card("a", 3), "CARD A")], [], to_json)
    err = capsys.readouterr().err
    assert err.count("CARD A") == 1 and err.count("CARD B") == 1
    assert "[rank 0] the same card as above (a)." in err
    assert "[rank 1 of 2]\nCARD A" in err and "[rank 1 of 2]\nCARD B" in err
    written = sorted(os.listdir(tmp_path / "json"))
    assert [n for n in written if n.startswith("rank")] == ["rank0-card-1-a.json", "rank1-card-1-a.json",
                                                           "rank1-card-2-b.json"]
    merged = [json.loads((tmp_path / "json" / n).read_text()) for n in written if n.startswith("merged-a")]
    assert merged == [{"kind": "a", "ranks": [1], "world_size": 2}]


def test_the_card_key_is_kind_error_and_lines():
    assert card_key(card("a", 3)) == card_key(card("a", 3)) != card_key(card("a", 4))


@pytest.mark.parametrize("set_epoch, shuffle, expected", [(False, True, True), (True, True, False),
                                                         (False, False, False)])
def test_a_sampler_whose_epoch_never_changes_is_seen_and_the_patch_comes_off(set_epoch, shuffle, expected):
    import grad_magic
    from torch.utils.data import DistributedSampler

    before = DistributedSampler.__dict__["__iter__"]
    sampler = DistributedSampler(range(8), num_replicas=2, rank=0, shuffle=shuffle)
    with grad_magic.capture() as run:
        for epoch in range(3):
            if set_epoch:
                sampler.set_epoch(epoch)
            order = list(sampler)
    assert DistributedSampler.__dict__["__iter__"] is before
    assert [u.iterations for u in run.record.samplers] == [3]
    assert any(d.kind == "sampler-epoch-not-set" for d in run.diagnoses) is expected
    assert len(order) == 4


def test_a_first_look_at_a_batch_then_one_epoch_is_no_card():
    """`next(iter(loader))` to see a batch's shape, then one epoch: two iterations at epoch 0, but not an epoch
    loop running the data loop again."""
    import grad_magic
    from torch.utils.data import DataLoader, DistributedSampler

    data = list(range(8))
    loader = DataLoader(data, batch_size=2, sampler=DistributedSampler(data, num_replicas=2, rank=0, seed=1))
    with grad_magic.capture() as run:
        first = next(iter(loader))
        seen = [int(v) for batch in loader for v in batch]
    assert [u.iterations for u in run.record.samplers] == [2]
    assert not [d.kind for d in run.diagnoses], run.diagnoses
    assert len(first) == 2 and len(seen) == 4
