"""``--claims-changed``: measure only the items whose content key moved; carry the others forward.

An item's content key (:mod:`claimcheck.engine.item_key`) holds everything its measurement depends
on. Each item is compared with the newest complete run of this machine class that recorded it, in
the local evidence store or a committed profile (``reports/profiles/``), or with the run named by
``--since-run``. Where the keys are the same, the stored result is carried into this run as it was
measured (its run-level adjustments dropped, since the family and the premises are this run's),
with the run it came from in ``carried_from``; it then takes part in the family adjustment like any
other result. An item whose earlier result was an ``error`` is measured again: a probe failure may
not recur.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from claimcheck.claim import Claim
from claimcheck.engine.result import ItemResult
from claimcheck.pytest_plugin.shard import group_runs
from claimcheck.outcome.policy import treat

if TYPE_CHECKING:  # pragma: no cover
    from claimcheck.store import EvidenceStore, StoredRun

#: The adjustments a result is recorded with as it is measured; every later one is its run's.
ITEM_STEPS = ("between-runs", "noise-gate")  # engine.adjudicate.ITEM_STEPS, kept light here


def as_measured(result: ItemResult) -> ItemResult:
    """The result as its item finished: without the run-level adjustments (family, cascade) and control."""
    own = tuple(itertools.takewhile(lambda adjustment: adjustment.step in ITEM_STEPS, result.adjustments))
    return dataclasses.replace(result, adjustments=own, control=None)


@dataclass(frozen=True)
class Earlier:
    """The newest complete earlier result of one item on this machine class, and the run that measured it."""

    run_id: str
    result: ItemResult

    @property
    def measured_in(self) -> str:
        """The run that measured it: its own, or the one it was itself carried from."""
        return self.result.carried_from or self.run_id


def evidence_sources(store: Path, rootdir: Path) -> list[Path]:
    """The stores an earlier result may come from: the local store (if any), then the committed profiles."""
    found = [store] if store.is_file() else []
    return found + sorted((rootdir / "reports" / "profiles").glob("*.sqlite"))


def _open(paths: Iterable[Path], stack: ExitStack) -> Iterator[EvidenceStore]:
    from claimcheck.store import EvidenceStore, StoreError

    for path in paths:
        try:
            yield stack.enter_context(EvidenceStore.open_readonly(path))
        except StoreError:
            continue  # not a store (the run reports that itself when it writes)


def earlier_results(paths: Sequence[Path], machine_class: str, since_run: str | None = None, *,
                    group: str | None = None) -> dict[str, Earlier]:
    """Item id -> its newest result in a complete run of ``machine_class`` (or only in ``since_run``).

    Args:
        group: a shard group whose own runs are passed over (see :func:`claimcheck.pytest_plugin.shard.group_runs`).

    Raises:
        LookupError: ``since_run`` names no run of the sources (one line saying where it looked).
    """
    with ExitStack() as stack:
        stores = list(_open(paths, stack))
        runs: list[tuple[StoredRun, EvidenceStore]] = []
        for store in stores:
            if since_run is not None:
                runs += [(run, store) for run in store.runs() if run.run_id == since_run or
                         run.run_id.startswith(since_run)]
            else:
                skip = group_runs(store.runs(), group)
                runs += [(run, store) for run in store.runs(machine_class)
                         if run.effective_status == "complete" and run.run_id not in skip]
        if since_run is not None:
            ids = {run.run_id for run, _ in runs}
            if len(ids) != 1:
                where = ", ".join(str(path) for path in paths) or "no store"
                what = "no run" if not ids else f"{len(ids)} runs"
                raise LookupError(f"claimcheck: --since-run {since_run}: {what} of that id in {where}")
        runs.sort(key=lambda pair: (pair[0].started, pair[0].run_id), reverse=True)
        found: dict[str, Earlier] = {}
        seen: set[str] = set()
        for run, store in runs:
            if run.run_id in seen:
                continue  # the same run merged into several stores
            seen.add(run.run_id)
            for stored in store.results(run.run_id):
                found.setdefault(stored.item_id, Earlier(run.run_id, stored.result))
        return found


def carried(earlier: Earlier | None, key: str, claim: Claim) -> ItemResult | None:
    """The earlier result carried into this run when its key is ``key``, else None (measure it).

    Args:
        claim: the item's claim as collected now; it replaces the stored one, which may sit at
            another line of its file (the key leaves the position out).
    """
    if earlier is None or not key or earlier.result.content_key != key:
        return None
    if treat(earlier.result.raw_verdict).category == "error":  # a probe failure may not recur
        return None
    measured = as_measured(earlier.result)
    return dataclasses.replace(measured, claim=claim.at_point(measured.params), carried_from=earlier.measured_in)
