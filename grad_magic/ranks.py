"""The cards of a script run as one rank of a torch.distributed job (`torchrun ... -m grad_magic script.py`):
each card says its rank and the world size, and a card seen on several ranks is printed once, with the ranks.

torchrun gives each worker RANK, WORLD_SIZE and LOCAL_WORLD_SIZE, and a per-rank error file under one folder
per launch and attempt (TORCHELASTIC_ERROR_FILE: `.../attempt_0/<rank>/error.json`): that folder is shared by
the ranks of one machine and by no other launch. At its end each rank writes its cards there (`rank-<r>.json`,
written whole, then renamed); a rank with cards waits at most `MERGE_WAIT` seconds for the other ranks' files
(a rank that hangs or dies costs that much, no more: torchrun stops the others once one rank has exited with
an error), then takes each card's claim file (created only once, by `os.link`): the rank that takes it prints
the card with every rank whose file holds the same card; a later rank with the same card prints one line.

Torch-free; plain files only. Without torchrun's variables the cards are printed as they are.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import catalog
from .model import Diagnosis

MERGE_WAIT = 3.0  # seconds a rank with cards waits for the other ranks' files (GRAD_MAGIC_MERGE_WAIT)


def card_key(d: Diagnosis) -> str:
    """What makes two ranks' cards the same card: the kind, the error's type and the lines it names."""
    lines = [(sl.file, sl.cell, sl.lineno) for sl in d.lines]
    return json.dumps([d.kind, d.severity, d.error_type, lines])


@dataclass(frozen=True)
class Ranks:
    """This process's place in the job (rank -1: not a rank of a job) and the folder the ranks share."""

    rank: int = -1
    world: int = 1
    local_world: int = 1
    shared: str = ""  # the folder of the launch's ranks on this machine; "" when none is known
    json_dir: str = ""

    @classmethod
    def from_environment(cls, json_dir: Optional[str] = None) -> "Ranks":
        env = os.environ
        try:
            rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
            local_world = int(env.get("LOCAL_WORLD_SIZE", world))
        except (KeyError, ValueError):
            return cls(json_dir=json_dir or "")
        error_file = env.get("TORCHELASTIC_ERROR_FILE", "")
        shared = os.path.join(os.path.dirname(os.path.dirname(error_file)), "grad_magic") if error_file else ""
        return cls(rank, world, local_world, shared, json_dir or "")

    @property
    def in_job(self) -> bool:
        return self.rank >= 0

    def tell(self, cards: Sequence[Tuple[Diagnosis, str]], notes: Sequence[str],
             to_json: Callable[[Diagnosis, Dict[str, Any]], Dict[str, Any]]) -> None:
        """Print the cards (text) on stderr and write their JSON; as one rank of a job, merged with the others'."""
        extra = {"rank": self.rank, "world_size": self.world} if self.in_job else {}
        for n, (d, _) in enumerate(cards, 1):
            if self.json_dir:
                prefix = f"rank{self.rank}-" if self.in_job else ""
                _write(os.path.join(self.json_dir, f"{prefix}card-{n}-{d.kind}.json"), to_json(d, extra))
        if self.in_job and self.shared:
            self._merged(cards, notes, to_json)
            return
        for d, text in cards:
            head = [catalog.message("script.rank", d.language, rank=self.rank, world=self.world)] \
                if self.in_job else []
            _say("\n".join(head + [text]))
        for note in notes:
            _say(note)

    def _merged(self, cards: Sequence[Tuple[Diagnosis, str]], notes: Sequence[str],
                to_json: Callable[[Diagnosis, Dict[str, Any]], Dict[str, Any]]) -> None:
        os.makedirs(self.shared, exist_ok=True)
        mine = [{"key": card_key(d), "kind": d.kind} for d, _ in cards]
        _write(os.path.join(self.shared, f"rank-{self.rank}.json"), {"rank": self.rank, "cards": mine})
        if cards:
            self._wait_for_others()
        for d, text in cards:
            key = card_key(d)
            ranks = self._ranks_with(key)
            claim = os.path.join(self.shared, "claim-" + hashlib.sha1(key.encode()).hexdigest()[:16])
            if ranks[0] != self.rank:  # NB: the lowest rank with the card prints it (rank 0 writes `--write`'s files)
                self._wait_for(claim)
            if _claimed(claim, ranks):
                head = catalog.message("script.ranks", d.language, ranks=_ranks_text(ranks, d.language),
                                       world=self.world) if len(ranks) > 1 else \
                    catalog.message("script.rank", d.language, rank=self.rank, world=self.world)
                _say("\n".join([head, text]))
                if self.json_dir:
                    _write(os.path.join(self.json_dir, f"merged-{d.kind}-{_digest(key)}.json"),
                           to_json(d, {"ranks": ranks, "world_size": self.world}))
                continue
            listed = _read(claim).get("ranks", [])
            if self.rank not in listed:
                _say(catalog.message("script.same_card", d.language, rank=self.rank, kind=d.kind))
        for note in notes:
            _say(catalog.message("script.rank", "", rank=self.rank, world=self.world) + " " + note)

    def _wait_for_others(self) -> None:
        until = time.monotonic() + _merge_wait()
        while time.monotonic() < until and len(self._rank_files()) < self.local_world:
            time.sleep(0.05)

    @staticmethod
    def _wait_for(path: str) -> None:
        """Until `path` exists, at most `MERGE_WAIT` seconds: a rank that exits first with an error makes torchrun
        stop the others, and the rank that prints the card must not be stopped before it has."""
        until = time.monotonic() + _merge_wait()
        while time.monotonic() < until and not os.path.exists(path):
            time.sleep(0.05)

    def _rank_files(self) -> List[str]:
        try:
            return [n for n in os.listdir(self.shared) if n.startswith("rank-") and n.endswith(".json")]
        except OSError:
            return []

    def _ranks_with(self, key: str) -> List[int]:
        found = {self.rank}
        for name in self._rank_files():
            data = _read(os.path.join(self.shared, name))
            if any(c.get("key") == key for c in data.get("cards", [])) and isinstance(data.get("rank"), int):
                found.add(data["rank"])
        return sorted(found)


def _merge_wait() -> float:
    try:
        return max(0.0, float(os.environ.get("GRAD_MAGIC_MERGE_WAIT", MERGE_WAIT)))
    except ValueError:
        return MERGE_WAIT


def _claimed(path: str, ranks: List[int]) -> bool:
    """Whether this process took the claim at `path` (created with its content in one step, once)."""
    fd, scratch = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".claim-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"ranks": ranks}, f)
        os.link(scratch, path)
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(scratch)


def _write(path: str, data: Dict[str, Any]) -> None:
    """`data` as JSON at `path`, whole or not at all (written beside it, then renamed)."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, scratch = tempfile.mkstemp(dir=folder, prefix=".card-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
    os.replace(scratch, path)


def _read(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _ranks_text(ranks: Sequence[int], language: str) -> str:
    return catalog.listing([str(r) for r in ranks], language)


def _digest(key: str) -> str:
    return hashlib.sha1(key.encode()).hexdigest()[:8]


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
