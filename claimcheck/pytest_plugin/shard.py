"""``--claims-shard K/N``: this runner's part of the collected items, balanced by recorded durations.

Every runner of a CI matrix collects the same items and computes the same split, so the parts
are disjoint and together whole. Items are weighed by the duration the evidence recorded for
them on this machine class (any class when this one has none; items with none get the median of
the known ones; an item carried forward by ``--claims-changed`` weighs nothing, since it measures
nothing), and assigned longest first to the lightest shard (ties: the lower shard), which keeps
the longest shard within the longest unit of the ideal. A timing claim (``exclusive: true``) is
one unit with all its grid points and its control: its items are never run beside another item,
so they are measured together on one runner, under one machine's conditions. The stores of the
shards are merged with ``claimcheck merge`` and decided as one run with ``claimcheck adjudicate``.
"""

from __future__ import annotations

import os
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

#: A run adjudicated from shards (``--claims-adjudicate``): the shard runs it decides; their machine is the run's.
shards_key = pytest.StashKey[list[Any]]()

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
#: Environment variables naming the matrix a shard belongs to, first set wins.
GROUP_ENV = ("CLAIMCHECK_SHARD_GROUP",)


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``total``."""

    index: int
    total: int

    def text(self) -> str:
        return f"{self.index}/{self.total}"


def parse_shard(text: str) -> Shard:
    """``"2/4"`` -> ``Shard(2, 4)``.

    Raises:
        ValueError: one line saying what the option takes.
    """
    found = _SHARD.match(text or "")
    if found is None:
        raise ValueError(f"--claims-shard {text!r}: expected K/N with whole numbers, e.g. 2/4")
    index, total = int(found[1]), int(found[2])
    if total < 1 or not 1 <= index <= total:
        raise ValueError(f"--claims-shard {text}: expected 1 <= K <= N")
    return Shard(index, total)


def shard_group() -> str:
    """The matrix this shard belongs to: ``$CLAIMCHECK_SHARD_GROUP``, else the CI run (GitHub), else ``local``.

    A GitHub run's attempts are one group: a re-run shard replaces its earlier attempt (the newest
    complete run of each shard is the one adjudicated).
    """
    for name in GROUP_ENV:
        if os.environ.get(name):
            return os.environ[name]
    run = os.environ.get("GITHUB_RUN_ID")
    return f"github-{run}" if run else "local"


@dataclass
class Unit:
    """Items that go to one shard together, and what they are expected to take."""

    key: str
    members: list[Any] = field(default_factory=list)
    seconds: float = 0.0


def units(items: Sequence[T], *, name: Callable[[T], str], claim_of: Callable[[T], str],
          exclusive: Callable[[T], bool]) -> list[Unit]:
    """Each item its own unit, except that the items of one exclusive claim form one unit."""
    found: dict[str, Unit] = {}
    for item in items:
        key = f"claim:{claim_of(item)}" if exclusive(item) else f"item:{name(item)}"
        found.setdefault(key, Unit(key)).members.append(item)
    return list(found.values())


def weigh(found: Sequence[Unit], seconds: Callable[[Any], float | None], median: float) -> None:
    """Give each unit the sum of its items' seconds; an item with none recorded gets ``median``."""
    for unit in found:
        unit.seconds = sum(median if (value := seconds(member)) is None else value for member in unit.members)


def split(found: Sequence[Unit], total: int) -> list[list[Any]]:
    """The members of each of ``total`` shards: longest unit first to the lightest shard (deterministic).

    Ties go to the shard with fewer items, then to the lower shard.
    """
    loads = [0.0] * total
    counts = [0] * total  # among equally loaded shards, the one with fewest items (carried items weigh 0)
    shards: list[list[Any]] = [[] for _ in range(total)]
    for unit in sorted(found, key=lambda u: (-u.seconds, u.key)):
        lightest = min(range(total), key=lambda k: (loads[k], counts[k], k))
        loads[lightest] += unit.seconds
        counts[lightest] += len(unit.members)
        shards[lightest].extend(unit.members)
    return shards


def shard_of(options: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The shard a run recorded in its options (``index``, ``total``, ``group``), or None."""
    found = options.get("shard")
    return found if isinstance(found, Mapping) and found.get("total") else None


def group_runs(runs: Iterable[Any], group: str | None) -> set[str]:
    """The ids of the runs that are shards of ``group``: their siblings never decide a shard's split."""
    if group is None:
        return set()
    return {run.run_id for run in runs if (found := shard_of(run.options)) is not None and found.get("group") == group}


def recorded_seconds(paths: Iterable[Path], machine_class: str, group: str | None = None) -> dict[str, float]:
    """Item id -> its duration in the newest run that measured it: of ``machine_class``, else of any class.

    Runs that are shards of ``group`` are left out, so that shards of one matrix that share a store,
    run one after the other, still split alike.
    """
    from contextlib import ExitStack

    from claimcheck.store import EvidenceStore, StoreError

    mine: dict[str, float] = {}
    anywhere: dict[str, float] = {}
    with ExitStack() as stack:
        for path in paths:
            try:
                store = stack.enter_context(EvidenceStore.open_readonly(path))
            except StoreError:
                continue
            skip = group_runs(store.runs(), group)
            anywhere.update(store.latest_durations(skip=skip))
            mine.update(store.latest_durations(machine_class, skip=skip))
    return mine if mine else anywhere


def mine(items: Sequence[T], shard: Shard, *, name: Callable[[T], str], claim_of: Callable[[T], str],
         exclusive: Callable[[T], bool], seconds: Mapping[str, float], weightless: Callable[[T], bool]) -> list[T]:
    """The items of ``shard``, in their collection order."""
    found = units(items, name=name, claim_of=claim_of, exclusive=exclusive)
    known = [seconds[name(item)] for item in items if name(item) in seconds]
    weigh(found, lambda item: 0.0 if weightless(item) else seconds.get(name(item)),
          statistics.median(known) if known else 1.0)
    chosen = {id(member) for member in split(found, shard.total)[shard.index - 1]}
    return [item for item in items if id(item) in chosen]


class ShardSetError(LookupError):
    """The store does not hold one whole set of shard runs; ``str()`` is the one line saying why."""


def shard_runs(runs: Sequence[Any], group: str | None = None) -> list[Any]:
    """The runs of one sharded matrix, shard 1 first: the newest complete run of each shard of ``group``.

    Args:
        runs: the store's runs, newest first (:meth:`EvidenceStore.runs`).
        group: the matrix (``shard.group`` in the run's options); default the newest shard run's.

    Raises:
        ShardSetError: no shard run, a shard missing, or shards of different machine classes.
    """
    sharded = [run for run in runs if shard_of(run.options) is not None and run.effective_status == "complete"]
    if group is not None:
        sharded = [run for run in sharded if shard_of(run.options).get("group") == group]  # type: ignore[union-attr]
    if not sharded:
        raise ShardSetError("no complete shard run (a run of `pytest --claims-shard K/N`)" +
                            (f" of group {group}" if group else "") + " in the store")
    newest = shard_of(sharded[0].options)
    assert newest is not None
    chosen_group, total = newest.get("group"), int(newest["total"])
    by_index: dict[int, Any] = {}
    for run in sharded:
        found = shard_of(run.options)
        assert found is not None
        if found.get("group") == chosen_group and int(found["total"]) == total:
            by_index.setdefault(int(found["index"]), run)
    missing = [index for index in range(1, total + 1) if index not in by_index]
    if missing:
        raise ShardSetError(f"group {chosen_group}: shard(s) {', '.join(f'{k}/{total}' for k in missing)} have no "
                            "complete run in the store; merge every shard's store first (`claimcheck merge`)")
    chosen = [by_index[index] for index in range(1, total + 1)]
    classes = sorted({run.machine_class for run in chosen})
    if len(classes) > 1:
        raise ShardSetError(f"group {chosen_group}: the shards ran on different machine classes ({'; '.join(classes)}); "
                            "a run is adjudicated on one class")
    return chosen
