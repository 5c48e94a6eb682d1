"""Merging stores from a CI matrix into one: runs unioned, items keyed by ``(run_id, item_id)``, sources untouched."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._base import StoreError, connect_readonly
from ._rows import insert_adjustments, insert_result
from ._schema import SCHEMA_VERSION, classify, column_names, create_or_migrate
from ._store import EvidenceStore
from ._types import MergeResult

def _open_source(path: Path) -> EvidenceStore:
    """Open a merge source without ever writing to it (an old schema is migrated in a memory copy)."""
    if not path.exists():
        raise StoreError(f"{path}: no evidence store there")
    conn = connect_readonly(path)
    try:
        version = classify(conn, str(path))
        if version == SCHEMA_VERSION:
            store = EvidenceStore.__new__(EvidenceStore)
            store.path, store.readonly, store._conn = path, True, conn
            return store
        memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.backup(memory)
        conn.close()
        create_or_migrate(memory, str(path))
        conn = memory
        store = EvidenceStore.__new__(EvidenceStore)
        store.path, store.readonly, store._conn = path, True, memory
        return store
    except BaseException:
        conn.close()
        raise


def merge(dest: str | Path, sources: Iterable[str | Path]) -> MergeResult:
    """Union the runs of several stores into ``dest`` (created if missing), for CI matrices.

    Items are keyed by ``(run_id, item_id)``: one already in ``dest`` is
    skipped (merging the same store twice adds nothing); one with different
    content is reported in ``conflicts`` and left as it was. A run still
    ``running`` in ``dest`` takes the final status a source has for it.
    Sources are never modified.
    """
    result = MergeResult()
    dest_path = Path(dest)
    with EvidenceStore(dest_path) as target:
        dest_real = dest_path.resolve()
        for source in sources:
            source_path = Path(source)
            if source_path.exists() and source_path.resolve() == dest_real:
                result.conflicts.append(f"{source_path}: is the destination; skipped")
                continue
            result.sources.append(str(source_path))
            src = _open_source(source_path)
            try:
                for run_id in _run_ids(src):
                    run, claims, results = _dump_run(src, run_id)
                    _merge_run(target, run, claims, results, result, str(source_path))
            finally:
                src.close()
    return result


def _merge_run(
    target: EvidenceStore,
    run: dict[str, Any],
    claims: list[dict[str, Any]],
    results: list[dict[str, Any]],
    result: MergeResult,
    label: str,
) -> None:
    run_columns = column_names(target._conn, "runs")
    with target._write() as conn:
        have = conn.execute("SELECT status FROM runs WHERE run_id = ?", (run["run_id"],)).fetchone()
        if have is None:
            names = [n for n in run if n in run_columns]
            conn.execute(
                f"INSERT INTO runs ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                tuple(run[n] for n in names),
            )
            result.runs_added += 1
        elif have[0] == "running" and run.get("status") in ("complete", "incomplete"):
            conn.execute(
                "UPDATE runs SET status = ?, finished = ? WHERE run_id = ?",
                (run["status"], run.get("finished"), run["run_id"]),
            )
            result.runs_updated += 1
        claim_columns = column_names(conn, "claims")
        for claim in claims:
            names = [n for n in claim if n in claim_columns]
            cursor = conn.execute(
                f"INSERT OR IGNORE INTO claims ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                tuple(claim[n] for n in names),
            )
            result.claims_added += cursor.rowcount
        result_columns = column_names(conn, "results")
        for row in results:
            existing = conn.execute(
                "SELECT outcome_hash FROM results WHERE run_id = ? AND item_id = ?", (row["run_id"], row["item_id"])
            ).fetchone()
            if existing is not None:
                if existing[0] is not None and row.get("outcome_hash") is not None and existing[0] != row["outcome_hash"]:
                    result.conflicts.append(
                        f"{label}: run {row['run_id']} item {row['item_id']} differs from the stored one; kept the stored one"
                    )
                result.results_skipped += 1
                continue
            insert_result(conn, {n: row[n] for n in row if n in result_columns})
            insert_adjustments(conn, row["run_id"], row["item_id"], row.get("_adjustments", []), first_seq=0)
            result.results_added += 1


def _dump_run(store: EvidenceStore, run_id: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """A run's rows as they are (merging copies rows, it never re-interprets them)."""
    run = store._rows("SELECT * FROM runs WHERE run_id = ?", (run_id,))[0]
    results = store._rows("SELECT * FROM results WHERE run_id = ? ORDER BY rowid", (run_id,))
    adjustments = store.adjustments(run_id)
    for row in results:
        row["_adjustments"] = adjustments.get(row["item_id"], [])
    return run, store._rows("SELECT * FROM claims WHERE run_id = ?", (run_id,)), results


def _run_ids(store: EvidenceStore) -> list[str]:
    return [r[0] for r in store._conn.execute("SELECT run_id FROM runs ORDER BY started, rowid")]
