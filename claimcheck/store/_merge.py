"""Merging stores from a CI matrix into one: runs unioned, items keyed by ``(run_id, item_id)``, sources untouched."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ._store import EvidenceStore
from ._types import MergeResult


def merge(dest: str | Path, sources: Iterable[str | Path]) -> MergeResult:
    """Union the runs of several stores into ``dest`` (created if missing), for CI matrices.

    Items are keyed by ``(run_id, item_id)``: one already in ``dest`` is
    skipped (merging the same store twice adds nothing); one with different
    content is reported in ``conflicts`` and left as it was. A run still
    ``running`` in ``dest`` takes the final status a source has for it.
    Sources are never modified (an older schema is read from a migrated copy in memory). ``dest`` is
    left settled (:meth:`EvidenceStore.settle`), one file in rollback-journal mode, as a merged store is
    one that gets committed or uploaded: reading it read-only then leaves no ``-wal``/``-shm`` beside it.
    """
    result = MergeResult()
    dest_path = Path(dest)
    target = EvidenceStore(dest_path)
    try:
        dest_real = dest_path.resolve()
        for source in sources:
            source_path = Path(source)
            if source_path.exists() and source_path.resolve() == dest_real:
                result.conflicts.append(f"{source_path}: is the destination; skipped")
                continue
            result.sources.append(str(source_path))
            with EvidenceStore.open_readonly(source_path) as src:
                for run_id in src.run_ids():
                    copied = target.copy_run(src.run_rows(run_id), str(source_path))
                    result.runs_added += copied.run_added
                    result.runs_updated += copied.run_finalised
                    result.claims_added += copied.claims_added
                    result.results_added += copied.results_added
                    result.results_skipped += copied.results_skipped
                    result.conflicts.extend(copied.conflicts)
    finally:
        target.settle()
    return result
