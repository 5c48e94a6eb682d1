"""Which collected claim items this session measures: ``--claims-changed`` / ``--since-run`` and ``--claims-shard``.

Carrying comes first, so that the shard split can weigh a carried item at nothing; both read the
same evidence (the local store and the committed profiles), so every shard of a matrix computes the
same carried items and the same split. Items of other kinds (plain pytest tests) are left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # pragma: no cover
    from claimcheck.pytest_plugin.session import ClaimSession

#: Where the session keeps what selection did, for the run's record and the summary.
selection_key = pytest.StashKey[dict[str, Any]]()


def wanted(config: pytest.Config) -> bool:
    """Whether this session selects: carrying forward, sharding or adjudicating shards was asked for."""
    return bool(config.getoption("--claims-changed") or config.getoption("--since-run")
                or config.getoption("--claims-shard") or config.getoption("--claims-adjudicate"))


def select(cs: ClaimSession, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the carried items and keep this shard's items (in place), as the options ask."""
    from claimcheck.machine import fingerprint, machine_class
    from claimcheck.pytest_plugin import changed, evidence, shard

    claim_items: list[Any] = [item for item in items if hasattr(item, "claim") and hasattr(item, "carried")]
    if not claim_items:
        return
    if config.getoption("--claims-adjudicate"):
        from_shards(config, claim_items, Path(config.getoption("--claims-adjudicate")))
        return
    klass = machine_class(fingerprint())
    sources = changed.evidence_sources(evidence.store_path(config, cs.rootdir), cs.rootdir)
    chosen = config.getoption("--claims-shard")
    group = shard.shard_group() if chosen else None
    done: dict[str, Any] = {}
    if config.getoption("--claims-changed") or config.getoption("--since-run"):
        try:
            earlier = changed.earlier_results(sources, klass, config.getoption("--since-run"), group=group)
        except LookupError as error:
            raise pytest.UsageError(str(error)) from None
        for item in claim_items:
            key = item.content_key()
            item.carried = changed.carried(earlier.get(item.name), key, item.claim)
        done["carried"] = sum(item.carried is not None for item in claim_items)
    if chosen:
        part = shard.parse_shard(chosen)
        keep = shard.mine(claim_items, part, name=lambda item: item.name,
                          claim_of=lambda item: item.control_for or item.claim.id,
                          exclusive=lambda item: bool(item.claim.budget.exclusive),
                          seconds=shard.recorded_seconds(sources, klass, group),
                          weightless=lambda item: item.carried is not None)
        kept = {id(item) for item in keep}
        dropped = [item for item in claim_items if id(item) not in kept]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [item for item in items if id(item) not in {id(d) for d in dropped}]
        done["shard"] = part.text()
        done["kept"] = len(keep)
        done["of"] = len(claim_items)
    config.stash[selection_key] = done


def from_shards(config: pytest.Config, claim_items: Sequence[Any], path: Path) -> None:
    """Carry every item from the shard runs of one matrix in ``path`` (``claimcheck adjudicate``); nothing is measured.

    The group is ``$CLAIMCHECK_SHARD_GROUP`` or the CI run's when set, else the newest shard run's.
    An item collected here that no shard ran, or that two shards ran, is a usage error: the shards
    would not make this run whole.
    """
    import dataclasses

    from claimcheck.pytest_plugin import changed, shard
    from claimcheck.store import EvidenceStore, StoreError

    group = shard.shard_group()
    try:
        with EvidenceStore.open_readonly(path) as store:
            runs = shard.shard_runs(store.runs(), None if group == "local" else group)
            found: dict[str, changed.Earlier] = {}
            twice: list[str] = []
            for run in runs:
                for stored in store.results(run.run_id):
                    if stored.item_id in found:
                        twice.append(stored.item_id)
                    found[stored.item_id] = changed.Earlier(run.run_id, stored.result)
    except (StoreError, shard.ShardSetError) as error:
        raise pytest.UsageError(f"claimcheck adjudicate: {path}: {error}") from None
    if twice:
        raise pytest.UsageError(f"claimcheck adjudicate: {path}: {len(twice)} item(s) ran in two shards (first: "
                                f"{sorted(twice)[0]}); the shards of one matrix must split one collection")
    missing = [item.name for item in claim_items if item.name not in found]
    if missing:
        raise pytest.UsageError(f"claimcheck adjudicate: {path}: {len(missing)} collected item(s) ran in no shard "
                                f"(first: {missing[0]}); adjudicate the checkout and selection the shards ran")
    for item in claim_items:
        earlier = found[item.name]
        measured = changed.as_measured(earlier.result)
        item.carried = dataclasses.replace(measured, claim=item.claim.at_point(measured.params),
                                           carried_from=earlier.measured_in)
    config.stash[shard.shards_key] = runs
    config.stash[selection_key] = {"adjudicated": [run.run_id for run in runs]}


def summary_line(items: Sequence[Any], done: dict[str, Any]) -> str | None:
    """One line on what selection did (for the collection report), or None when nothing was asked."""
    parts = []
    if "adjudicated" in done:
        parts.append(f"adjudicating the {len(done['adjudicated'])} shard run(s) {', '.join(done['adjudicated'])}: "
                     "nothing is measured")
    if "shard" in done:
        parts.append(f"shard {done['shard']}: {done['kept']} of {done['of']} claim items")
    if "carried" in done:
        claim_items = [item for item in items if hasattr(item, "carried")]
        carried = sum(1 for item in claim_items if item.carried is not None)
        parts.append(f"{len(claim_items) - carried} to measure, {carried} carried forward unchanged")
    return "claimcheck: " + "; ".join(parts) if parts else None
