"""The evidence store: one SQLite file in WAL mode, opened for writing runs or for reading them."""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claimcheck.claim import Claim
from claimcheck.engine.result import Adjustment, ItemResult

from ._base import BUSY_TIMEOUT_MS, DEFAULT_PATH, SCHEMA_VERSION, DuplicateResult, StoreError, Transaction, \
    connect_readonly, dumps, now
from ._provenance import new_run_id, process_alive, process_start
from ._reading import MEASURED_IN_RUN, StoreReading
from ._rows import claim_dict, insert_adjustments, insert_result, result_row
from ._copying import RunCopy, copy_rows
from ._schema import classify, create_or_migrate
from ._types import RunRows, StoredPlot

if TYPE_CHECKING:
    from claimcheck.outcome.run import RunOutcome


class EvidenceStore(StoreReading):
    """A claimcheck evidence store in one SQLite file.

    Args:
        path: the file; created (with its folder) if missing. ``":memory:"``
            works for tests.
        readonly: open without creating, migrating or writing anything.

    Raises:
        StoreError: the file is a newer or unknown schema, or not SQLite at all.
    """

    def __init__(self, path: str | Path = DEFAULT_PATH, *, readonly: bool = False) -> None:
        self.path = Path(path) if str(path) != ":memory:" else Path(":memory:")
        self.readonly = readonly
        label = str(path)
        memory = str(path) == ":memory:"
        if not memory and self.path.exists():
            # Inspect read-only first so a refused file is never touched (not even the WAL switch).
            probe = connect_readonly(self.path)
            try:
                # One read transaction: a store another process creates meanwhile is seen whole or not at all.
                probe.execute("BEGIN")
                version = classify(probe, label)
                probe.execute("COMMIT")
            finally:
                probe.close()
        else:
            if readonly:
                raise StoreError(f"{label}: no evidence store there")
            version = None
        if readonly:
            if version not in (1, 2, 3, SCHEMA_VERSION):
                raise StoreError(f"{label}: evidence store is schema version {version}; open it writable once to migrate")
            self._conn = connect_readonly(self.path)
            return
        if not memory:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(
            str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not memory:
            mode = self._conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"{label}: cannot switch the store to WAL mode (got {mode})")
        # FULL: an item reported as recorded survives a crash of the machine too, not just of the process.
        self._conn.execute("PRAGMA synchronous = FULL")
        self._conn.execute("PRAGMA foreign_keys = ON")
        if version != SCHEMA_VERSION:
            create_or_migrate(self._conn, label)

    @classmethod
    def open_readonly(cls, path: str | Path) -> "EvidenceStore":
        """Open a store file for reading without ever writing to it, whatever its schema.

        The current schema is read in place; an older one is migrated in a copy in memory, so a
        merge source or a committed profile from an older release can be read but is never changed.

        Raises:
            StoreError: no file there, or a newer or unknown schema.
        """
        path = Path(path)
        if not path.exists():
            raise StoreError(f"{path}: no evidence store there")
        conn = connect_readonly(path)
        try:
            version = classify(conn, str(path))
            if version != SCHEMA_VERSION:  # older, or empty: read a migrated copy
                conn = _migrated_copy(conn, str(path))
        except BaseException:
            conn.close()
            raise
        return cls._over(path, conn, readonly=True)

    @classmethod
    def in_memory(cls, source: str | Path | None = None) -> "EvidenceStore":
        """A writable store that lives in memory: empty, or a copy of ``source`` (never written to).

        For scratch work on committed evidence (merging profiles to read them together) and tests.
        """
        if source is None:
            return cls(":memory:")
        path = Path(source)
        if not path.exists():
            raise StoreError(f"{path}: no evidence store there")
        conn = connect_readonly(path)
        try:
            classify(conn, str(path))
            conn = _migrated_copy(conn, str(path))
        except BaseException:
            conn.close()
            raise
        conn.execute("PRAGMA foreign_keys = ON")
        return cls._over(Path(":memory:"), conn, readonly=False)

    @classmethod
    def _over(cls, path: Path, conn: sqlite3.Connection, *, readonly: bool) -> "EvidenceStore":
        """A store over a connection already opened and brought to the current schema."""
        store = cls.__new__(cls)
        store.path, store.readonly, store._conn = path, readonly, conn
        return store

    # -- plumbing

    def close(self) -> None:
        self._conn.close()

    def settle(self) -> None:
        """Fold the write-ahead log into the file and leave it in rollback-journal mode, then close.

        For a file that is committed (a profile): it is then the whole store on its own, and reading it
        read-only leaves no ``-wal``/``-shm`` files beside it. Opening it writable again switches back to WAL.
        """
        if not self.readonly and str(self.path) != ":memory:":
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.execute("PRAGMA journal_mode = DELETE")
        self.close()

    def __enter__(self) -> "EvidenceStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self) -> Transaction:
        if self.readonly:
            raise StoreError(f"{self.path}: store opened read-only")
        return Transaction(self._conn)

    def integrity_check(self) -> str:
        """SQLite's own verdict on the file: ``"ok"`` when sound."""
        return "; ".join(row[0] for row in self._conn.execute("PRAGMA integrity_check"))

    @property
    def schema_version(self) -> int:
        return self._conn.execute("PRAGMA user_version").fetchone()[0]

    def latest_durations(self, machine_class: str | None = None, *, skip: Iterable[str] = ()) -> dict[str, float]:
        """Item id -> seconds it took in the newest run that measured it (of ``machine_class``, or any).

        Results carried forward from an earlier run measured nothing and are left out, as are
        items without a positive duration and the runs in ``skip``. For splitting a suite into
        shards of similar length.
        """
        skipped = set(skip)
        where = f"WHERE x.duration > 0 AND {MEASURED_IN_RUN}" + (" AND r.machine_class = ?" if machine_class is not None else "")
        rows = self._conn.execute(
            "SELECT x.run_id, x.item_id, x.duration FROM results x JOIN runs r ON r.run_id = x.run_id "
            f"{where} ORDER BY r.started, r.rowid", (machine_class,) if machine_class is not None else ()).fetchall()
        found: dict[str, float] = {}
        for run_id, item_id, duration in rows:
            if run_id in skipped:
                continue
            found[str(item_id)] = float(duration)
        return found

    # -- writing

    def begin_run(
        self,
        *,
        machine: Mapping[str, Any],
        machine_class: str,
        options: Mapping[str, Any] | None = None,
        suite_commit: str | None = None,
        claims_commit: str | None = None,
        run_id: str | None = None,
    ) -> str:
        """Open a run (status ``running``) and return its id.

        Also marks as ``incomplete`` every ``running`` run of this host whose
        writer process is gone (killed, crashed), so it is never mistaken for
        one in progress.
        """
        run_id = run_id or new_run_id()
        host = socket.gethostname()
        pid = os.getpid()
        with self._write() as conn:
            self._mark_dead_runs(conn, host)
            if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone():
                raise StoreError(f"{self.path}: run {run_id} already exists")
            conn.execute(
                "INSERT INTO runs (run_id, started, status, suite_commit, claims_commit, machine, machine_class,"
                " options, host, pid, pid_started) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    now(),
                    suite_commit,
                    claims_commit,
                    dumps(dict(machine)),
                    machine_class,
                    dumps(dict(options or {})),
                    host,
                    pid,
                    process_start(pid),
                ),
            )
        return run_id

    def _mark_dead_runs(self, conn: sqlite3.Connection, host: str) -> None:
        rows = conn.execute(
            "SELECT run_id, host, pid, pid_started FROM runs WHERE status = 'running'"
        ).fetchall()
        for run_id, run_host, pid, pid_started in rows:
            if run_host is None or (run_host == host and not process_alive(pid, pid_started)):
                conn.execute("UPDATE runs SET status = 'incomplete' WHERE run_id = ?", (run_id,))

    def record_claims(self, run_id: str, claims: Iterable[Claim]) -> None:
        """Keep the claims of a run as they were, before any of its items is recorded."""
        with self._write() as conn:
            self._require_run(conn, run_id)
            for claim in claims:
                data = claim_dict(claim)
                claim_id = data.get("id") or data.get("claim_id")
                if not isinstance(claim_id, str) or not claim_id:
                    raise StoreError(f"run {run_id}: a claim without an id cannot be recorded")
                self._insert_claim(conn, run_id, claim_id, data)

    def _insert_claim(self, conn: sqlite3.Connection, run_id: str, claim_id: str, data: Mapping[str, Any]) -> int:
        probe = data.get("probe")
        cursor = conn.execute(
            "INSERT OR IGNORE INTO claims (run_id, claim_id, content_hash, title, statement, source, scope,"
            " check_spec, probe, depends_on, tags, path, line) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                claim_id,
                data.get("content_hash"),
                data.get("title"),
                data.get("statement"),
                dumps(data.get("source") or {}),
                dumps(data.get("scope") or {}),
                dumps(data.get("check") or {}),
                dumps(probe) if probe is not None else None,
                dumps(list(data.get("depends_on") or [])),
                dumps(list(data.get("tags") or [])),
                data.get("path"),
                data.get("line"),
            ),
        )
        return cursor.rowcount

    def _require_run(self, conn: sqlite3.Connection, run_id: str, *, running: bool = False) -> None:
        row = conn.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise StoreError(f"{self.path}: no run {run_id}")
        if running and row[0] == "complete":
            raise StoreError(f"{self.path}: run {run_id} is complete; no results can be added to it")

    def record(self, run_id: str, outcome: ItemResult) -> bool:
        """Store one finished item (with the adjustments it already has), in one transaction.

        Exactly once per ``(run_id, item_id)``: repeating the *same* outcome
        is ignored (so a retried write is harmless) and returns ``False``; a
        *different* outcome for an item already stored raises
        :class:`DuplicateResult`, because evidence is never overwritten.

        Returns:
            ``True`` when the row was written.
        """
        if not isinstance(outcome, ItemResult):
            raise StoreError(f"run {run_id}: a result must be an ItemResult, got {type(outcome).__name__}")
        record = outcome.to_record()
        row, claim = result_row(run_id, record)
        with self._write() as conn:
            self._require_run(conn, run_id, running=True)
            existing = conn.execute(
                "SELECT outcome_hash FROM results WHERE run_id = ? AND item_id = ?", (run_id, row["item_id"])
            ).fetchone()
            if existing is not None:
                if existing[0] == row["outcome_hash"]:
                    return False
                raise DuplicateResult(
                    f"run {run_id}: item {row['item_id']} already has a different result; evidence is never overwritten"
                )
            if claim:
                self._insert_claim(conn, run_id, row["claim_id"], claim)
            insert_result(conn, row)
            insert_adjustments(conn, run_id, row["item_id"], outcome.adjustments, first_seq=0)
        return True

    def record_plot(self, run_id: str, plot: StoredPlot) -> bool:
        """Keep a probe's plot declaration with the run, so its reports never need the probe's code.

        Once per ``(run_id, probe)``: a repeat is ignored and returns ``False``.
        """
        with self._write() as conn:
            self._require_run(conn, run_id)
            cursor = conn.execute("INSERT OR IGNORE INTO plots (run_id, probe, declaration) VALUES (?, ?, ?)",
                                  (run_id, plot.probe, dumps(plot.to_record())))
        return cursor.rowcount > 0

    def add_adjustments(self, run_id: str, item_id: str, adjustments: Sequence[Adjustment]) -> None:
        """Append run-level adjustments (family, cascade) to a stored item; earlier rows are never changed.

        Each adjustment must start from the item's current final verdict. Allowed until the run is finished.
        """
        if not adjustments:
            return
        with self._write() as conn:
            self._require_run(conn, run_id, running=True)
            row = conn.execute("SELECT verdict FROM results WHERE run_id = ? AND item_id = ?",
                               (run_id, item_id)).fetchone()
            if row is None:
                raise StoreError(f"run {run_id}: no item {item_id} to adjust")
            last = conn.execute("SELECT seq, after FROM adjustments WHERE run_id = ? AND item_id = ?"
                                " ORDER BY seq DESC LIMIT 1", (run_id, item_id)).fetchone()
            current, seq = (last[1], last[0] + 1) if last else (row[0], 0)
            if adjustments[0].before.value != current:
                raise StoreError(f"run {run_id}: item {item_id} is {current}; an adjustment from "
                                 f"{adjustments[0].before.value} does not apply")
            insert_adjustments(conn, run_id, item_id, adjustments, first_seq=seq)

    def copy_run(self, rows: RunRows, label: str) -> RunCopy:
        """Copy a run read from another store (:meth:`run_rows`) into this one, in one transaction.

        Items are keyed by ``(run_id, item_id)``: one already here is kept (a different one is a
        conflict, reported with ``label``); a run still ``running`` here takes the copy's final status.
        """
        with self._write() as conn:
            return copy_rows(conn, rows, label)

    def record_outcome(self, outcome: RunOutcome) -> None:
        """Keep the run's judgement (flags, lock, expected verdicts) and what pytest printed, with the run.

        Every later reader rebuilds the findings from it (:meth:`outcome`), so they show what the run showed.
        Allowed until the run is finished; recording it again replaces the earlier record of the same run.
        """
        record = {"judgement": outcome.judgement.to_record(), "printed": dict(outcome.printed)}
        with self._write() as conn:
            self._require_run(conn, outcome.run_id, running=True)
            conn.execute("UPDATE runs SET judgement = ? WHERE run_id = ?", (dumps(record), outcome.run_id))

    def finish_run(self, run_id: str, *, complete: bool = True) -> None:
        """Close a run: ``complete`` when every selected item ran, else ``incomplete``."""
        with self._write() as conn:
            self._require_run(conn, run_id)
            conn.execute(
                "UPDATE runs SET finished = ?, status = ? WHERE run_id = ?",
                (now(), "complete" if complete else "incomplete", run_id),
            )


def _migrated_copy(conn: sqlite3.Connection, label: str) -> sqlite3.Connection:
    """Copy a database into memory and bring the copy to the current schema; closes ``conn``."""
    memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    try:
        conn.backup(memory)
        conn.close()
        create_or_migrate(memory, label)
    except BaseException:
        memory.close()
        raise
    return memory
