"""Which runs are evidence of a machine class: the one resolver the reports, the docs gate, ``compare`` and
``publish`` share.

A run is evidence when it is whole, finished and adjudicated: it ran to its end (``complete``), it is not
one shard of a matrix (shards count once merged and adjudicated, as the run ``claimcheck adjudicate``
stores), and it ran the whole suite rather than a selection (``-k``, ``-m``, one file or item). Anything
else measured a part, and taking it as a class's "latest run" would leave the rest of the class blank or
show one item's figure beside another run's.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ._types import StoredRun


def _part_of_claims(arg: str) -> bool:
    """A pytest argument naming less than a claims folder: one file, one item, a sub-folder."""
    parts = Path(arg.split("::", 1)[0]).parts
    return "::" in arg or ("claims" in parts and parts.index("claims") < len(parts) - 1)


def selection_of(run: StoredRun, *, markers_ok: bool = False) -> list[str]:
    """The part of the suite a run was limited to (``-k 'x'``, ``-m 'y'``, a file), empty for the whole suite.

    ``markers_ok``: a ``-m`` selection is the suite a CI job runs on its class.
    """
    selection = run.options.get("selection") or {}
    chosen = [f"{flag} {selection[key]!r}" for key, flag in (("keyword", "-k"), ("markexpr", "-m"))
              if selection.get(key) and not (markers_ok and key == "markexpr")]
    return chosen + [str(arg) for arg in run.options.get("args") or () if _part_of_claims(str(arg))]


def shard_of(run: StoredRun) -> str | None:
    """``shard 1/2`` for one shard of a matrix (not yet adjudicated), else None."""
    shard = run.options.get("shard")
    if not isinstance(shard, dict):
        return None
    return f"shard {shard.get('index', '?')}/{shard.get('total', '?')}"


def not_evidence(run: StoredRun, *, markers_ok: bool = False, part_ok: bool = False) -> list[str]:
    """Why a run is not evidence of its class (empty: it is): unfinished, a shard, or a selection.

    ``part_ok``: a selection is allowed (``accept --update`` takes part of the suite into the lock).
    """
    found = []
    if run.effective_status != "complete":
        found.append(f"run {run.run_id} is {run.effective_status} (crashed, interrupted or still running)")
    shard = shard_of(run)
    if shard is not None:
        found.append(f"run {run.run_id} is {shard} of a matrix (merge and adjudicate the shards, then use that run)")
    chosen = [] if part_ok else selection_of(run, markers_ok=markers_ok)
    if chosen:
        found.append(f"run {run.run_id} ran part of the suite ({', '.join(chosen)})")
    return found


def is_evidence(run: StoredRun) -> bool:
    """Whether a run is whole, finished and adjudicated.

    A ``-m`` selection counts as whole: it is the suite a CI job runs on its class (``-m portable`` on a
    virtual Mac), not a pick of items.
    """
    return not not_evidence(run, markers_ok=True)


def evidence_runs(runs: Iterable[StoredRun]) -> list[StoredRun]:
    """The runs among ``runs`` that are evidence, in the order given."""
    return [run for run in runs if is_evidence(run)]
