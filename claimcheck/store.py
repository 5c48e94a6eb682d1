"""SQLite evidence store: every run, the claims as they were, every raw sample and decision.

The store is the memory of the suite. A report can be rebuilt from it at any
time, a figure can be followed across runs and machines, and stores from a CI
matrix can be merged into one. It is a single SQLite file in WAL mode so that
several processes can write different runs to it at once (``busy_timeout`` and
``BEGIN IMMEDIATE`` serialise the writers), and each item is written in its own
transaction so a run killed with SIGKILL keeps every item it finished.

Layout (schema version 2, kept in ``PRAGMA user_version``):

* ``runs``: one row per session: ids of the suite and claims commits, machine
  fingerprint and class, options, status ``running | complete | incomplete``,
  and the writer's host and pid so a run whose process died can be told apart
  from one still going.
* ``claims``: each claim as it was in that run (content hash, text, scope,
  check), so a later edit of the YAML never rewrites old evidence.
* ``results``: one row per ``(run_id, item_id)`` with the decision flattened
  into columns for querying and the full outcome record kept as JSON. Written
  once; its verdict is the one the item finished with.
* ``adjustments``: append-only, one row per verdict change after the decision
  (noise gate, family correction, cascade), in order. The final verdict is the
  last one's; no row of ``results`` is ever updated to change a verdict.

A file with a newer or unknown schema is refused with one line and never
modified; an older one (version 0, the pre-release layout, or 1) is migrated in place.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import hashlib
import json
import math
import os
import socket
import sqlite3
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from claimcheck.errors import ClaimcheckError
from claimcheck.result import Adjustment, ItemResult
from claimcheck.verdict import Verdict

DEFAULT_PATH = Path("reports") / "claimcheck.sqlite"
SCHEMA_VERSION = 2
APPLICATION_ID = 0x436C4368  # "ClCh": marks the file as a claimcheck store
BUSY_TIMEOUT_MS = 60_000

VERDICTS = ("holds", "refuted", "inconclusive", "not-applicable", "error", "stale")
RUN_STATUSES = ("running", "complete", "incomplete")


class StoreError(ClaimcheckError):
    """The evidence store cannot be used as asked; ``str()`` is one line."""


class DuplicateResult(StoreError):
    """A second, different outcome for an item that already has one in this run."""


# --------------------------------------------------------------------------- schema

_V1_TABLES = """
CREATE TABLE IF NOT EXISTS runs (
    run_id        TEXT PRIMARY KEY,
    started       TEXT NOT NULL,
    finished      TEXT,
    status        TEXT NOT NULL CHECK (status IN ('running', 'complete', 'incomplete')),
    suite_commit  TEXT,
    claims_commit TEXT,
    machine       TEXT NOT NULL DEFAULT '{}',
    machine_class TEXT NOT NULL DEFAULT '',
    options       TEXT NOT NULL DEFAULT '{}',
    host          TEXT,
    pid           INTEGER,
    pid_started   TEXT
);
CREATE TABLE IF NOT EXISTS claims (
    run_id       TEXT NOT NULL REFERENCES runs(run_id),
    claim_id     TEXT NOT NULL,
    content_hash TEXT,
    title        TEXT,
    statement    TEXT,
    source       TEXT,
    scope        TEXT,
    check_spec   TEXT,
    probe        TEXT,
    depends_on   TEXT,
    tags         TEXT,
    path         TEXT,
    line         INTEGER,
    PRIMARY KEY (run_id, claim_id)
);
CREATE TABLE IF NOT EXISTS results (
    run_id           TEXT NOT NULL REFERENCES runs(run_id),
    item_id          TEXT NOT NULL,
    claim_id         TEXT NOT NULL,
    params           TEXT,
    samples          TEXT,
    statistic        REAL,
    low              REAL,
    high             REAL,
    confidence_level REAL,
    n                INTEGER,
    rule             TEXT,
    alpha            REAL,
    pvalue           REAL,
    mde              REAL,
    unit             TEXT,
    estimate_label   TEXT,
    verdict          TEXT NOT NULL,
    recorded_verdict TEXT,
    raw_verdict      TEXT,
    adjusted_verdict TEXT,
    adjusted_pvalue  REAL,
    reason           TEXT,
    duration         REAL,
    started          TEXT,
    finished         TEXT,
    probe            TEXT,
    info             TEXT,
    artifacts        TEXT,
    decision         TEXT,
    outcome          TEXT,
    outcome_hash     TEXT,
    PRIMARY KEY (run_id, item_id)
);
CREATE TABLE IF NOT EXISTS adjustments (
    run_id          TEXT NOT NULL REFERENCES runs(run_id),
    item_id         TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    step            TEXT NOT NULL,
    before          TEXT NOT NULL,
    after           TEXT NOT NULL,
    reason          TEXT,
    adjusted_pvalue REAL,
    chain           TEXT,
    PRIMARY KEY (run_id, item_id, seq)
);
CREATE INDEX IF NOT EXISTS results_claim ON results (claim_id);
CREATE INDEX IF NOT EXISTS runs_class_started ON runs (machine_class, started);
"""

# The pre-release layout (user_version 0). Kept here so the migration and its
# test agree on what "version 0" means.
V0_TABLES = """
CREATE TABLE runs (
    run_id        TEXT PRIMARY KEY,
    started       TEXT NOT NULL,
    finished      TEXT,
    status        TEXT NOT NULL,
    suite_commit  TEXT,
    machine       TEXT,
    machine_class TEXT,
    options       TEXT
);
CREATE TABLE results (
    run_id    TEXT NOT NULL,
    item_id   TEXT NOT NULL,
    claim_id  TEXT NOT NULL,
    params    TEXT,
    samples   TEXT,
    statistic REAL,
    low       REAL,
    high      REAL,
    n         INTEGER,
    rule      TEXT,
    alpha     REAL,
    pvalue    REAL,
    verdict   TEXT NOT NULL,
    reason    TEXT,
    duration  REAL,
    info      TEXT,
    artifacts TEXT,
    PRIMARY KEY (run_id, item_id)
);
"""

_V0_TO_V1_COLUMNS = {
    "runs": [
        ("claims_commit", "TEXT"),
        ("host", "TEXT"),
        ("pid", "INTEGER"),
        ("pid_started", "TEXT"),
    ],
    "results": [
        ("confidence_level", "REAL"),
        ("mde", "REAL"),
        ("unit", "TEXT"),
        ("estimate_label", "TEXT"),
        ("recorded_verdict", "TEXT"),
        ("raw_verdict", "TEXT"),
        ("adjusted_verdict", "TEXT"),
        ("adjusted_pvalue", "REAL"),
        ("started", "TEXT"),
        ("finished", "TEXT"),
        ("probe", "TEXT"),
        ("decision", "TEXT"),
        ("outcome", "TEXT"),
        ("outcome_hash", "TEXT"),
    ],
}


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    return {row[0] for row in rows}


def _classify(conn: sqlite3.Connection, label: str) -> int | None:
    """Return the schema version of an open database, ``None`` for an empty one.

    Raises :class:`StoreError` for anything this code must not touch.
    """
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = _tables(conn)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{label}: not an evidence store (SQLite says: {exc})") from None
    if app_id not in (0, APPLICATION_ID):
        raise StoreError(f"{label}: SQLite file belongs to another application (application_id {app_id:#x}); refusing to touch it")
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{label}: evidence store schema version {version} is newer than this claimcheck understands "
            f"({SCHEMA_VERSION}); upgrade claimcheck or use another --store. The file was not modified"
        )
    if version == 0:
        if not tables:
            return None
        v0_runs = {"run_id", "started", "finished", "status", "suite_commit", "machine", "machine_class", "options"}
        v0_results = {"run_id", "item_id", "claim_id", "verdict", "statistic", "low", "high", "samples"}
        if tables == {"runs", "results"} and v0_runs <= set(_columns(conn, "runs")) and v0_results <= set(
            _columns(conn, "results")
        ):
            return 0
        raise StoreError(
            f"{label}: unknown SQLite schema (tables: {', '.join(sorted(tables))}); not an evidence store, "
            "refusing to modify it"
        )
    if version in (1, SCHEMA_VERSION):
        if app_id != APPLICATION_ID or not {"runs", "claims", "results"} <= tables:
            raise StoreError(f"{label}: schema version {version} but not a claimcheck store; refusing to modify it")
        return version
    raise StoreError(f"{label}: unknown evidence store schema version {version}; refusing to modify it")


def _migrate_0_to_1(conn: sqlite3.Connection) -> None:
    """Add what version 1 has over the pre-release layout; keeps every row.

    v0 runs carry no host or pid, so one left ``running`` reads as incomplete.
    """
    for table, columns in _V0_TO_V1_COLUMNS.items():
        have = set(_columns(conn, table))
        for name, kind in columns:
            if name not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
    conn.execute("UPDATE results SET recorded_verdict = verdict WHERE recorded_verdict IS NULL")


def _create_or_migrate(conn: sqlite3.Connection, label: str) -> None:
    """Bring an empty or version-0 database to the current schema in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = _classify(conn, label)  # re-read under the write lock: another writer may have won
        if version == SCHEMA_VERSION:
            conn.execute("COMMIT")
            return
        if version == 0:
            _migrate_0_to_1(conn)
        # 1 -> 2 only adds the append-only `adjustments` table, created below.
        for statement in _V1_TABLES.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


# --------------------------------------------------------------------------- helpers


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, (Path, _dt.datetime, _dt.date)):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def dumps(value: Any) -> str:
    """Canonical JSON (sorted keys, compact) so equal records hash equally."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default)


def _loads(text: str | None, empty: Any = None) -> Any:
    if text is None or text == "":
        return empty
    return json.loads(text)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def _timestamp(value: Any) -> str | None:
    """Store times as ISO-8601 text whether the outcome gave text or epoch seconds."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _dt.datetime.fromtimestamp(float(value), _dt.timezone.utc).isoformat(timespec="milliseconds")
    return str(value)


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number


def _new_run_id() -> str:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{uuid.uuid4().hex[:8]}"


def _process_start(pid: int) -> str | None:
    """Kernel start time of a process (Linux), to tell a reused pid from the writer."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def _process_alive(pid: int | None, started: str | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    except OSError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        if state in ("Z", "X"):
            return False
    except (OSError, IndexError):
        pass
    if started is not None:
        now = _process_start(pid)
        if now is not None and now != started:
            return False
    return True


def git_commits(root: str | Path = ".") -> tuple[str | None, str | None]:
    """``(suite commit, last commit touching claims/)`` of the checkout at ``root``.

    A dirty tree gets ``+dirty`` appended so evidence never claims a clean
    commit it was not measured on. ``None`` where git or a commit is missing.
    """

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    suite = git("rev-parse", "HEAD")
    claims = git("log", "-1", "--format=%H", "--", "claims")
    if suite and git("status", "--porcelain", "--untracked-files=no"):
        suite += "+dirty"
    if claims and git("status", "--porcelain", "--", "claims"):
        claims += "+dirty"
    return suite or None, claims or None


def _claim_dict(claim: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(claim) and not isinstance(claim, type):
        claim = dataclasses.asdict(claim)
    if not isinstance(claim, Mapping):
        raise StoreError(f"claim must be a mapping or a Claim, got {type(claim).__name__}")
    return dict(claim)


def _probe_name(outcome: Mapping[str, Any]) -> str | None:
    """The probe that measured an item, wherever the outcome carries it."""
    for candidate in (
        outcome.get("probe"),
        (outcome.get("claim") or {}).get("probe"),
        (outcome.get("info") or {}).get("probe"),
    ):
        if isinstance(candidate, str) and candidate:
            return candidate
        if isinstance(candidate, Mapping) and isinstance(candidate.get("name"), str):
            return candidate["name"]
    return None


# --------------------------------------------------------------------------- value types


@dataclass(frozen=True)
class Drift:
    """One item whose verdict or figure moved since the previous run on the same machine class."""

    claim_id: str
    item_id: str
    run_id: str
    previous_run_id: str
    machine_class: str
    verdict: str
    previous_verdict: str
    statistic: float | None
    previous_statistic: float | None
    previous_low: float | None
    previous_high: float | None
    verdict_changed: bool
    figure_moved: bool
    claim_changed: bool

    def message(self) -> str:
        """One line for the index and the terminal."""
        parts = []
        if self.verdict_changed:
            parts.append(f"verdict {self.previous_verdict} → {self.verdict}")
        if self.figure_moved and self.statistic is not None:
            parts.append(
                f"figure {self.statistic:.4g} outside last run's interval "
                f"[{self.previous_low:.4g}, {self.previous_high:.4g}]"
            )
        if self.claim_changed:
            parts.append("claim text changed since then")
        return f"{self.item_id}: " + "; ".join(parts) + f" (vs run {self.previous_run_id})"


@dataclass
class MergeResult:
    """What :func:`merge` did: counts, and items it refused to overwrite."""

    runs_added: int = 0
    runs_updated: int = 0
    results_added: int = 0
    results_skipped: int = 0
    claims_added: int = 0
    conflicts: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- the store


class EvidenceStore:
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
            probe = _connect_readonly(self.path)
            try:
                # One read transaction: a store another process creates meanwhile is seen whole or not at all.
                probe.execute("BEGIN")
                version = _classify(probe, label)
                probe.execute("COMMIT")
            finally:
                probe.close()
        else:
            if readonly:
                raise StoreError(f"{label}: no evidence store there")
            version = None
        if readonly:
            if version not in (1, SCHEMA_VERSION):
                raise StoreError(f"{label}: evidence store is schema version {version}; open it writable once to migrate")
            self._conn = _connect_readonly(self.path)
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
            _create_or_migrate(self._conn, label)

    # -- plumbing

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "EvidenceStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self) -> "_Transaction":
        if self.readonly:
            raise StoreError(f"{self.path}: store opened read-only")
        return _Transaction(self._conn)

    def integrity_check(self) -> str:
        """SQLite's own verdict on the file: ``"ok"`` when sound."""
        return "; ".join(row[0] for row in self._conn.execute("PRAGMA integrity_check"))

    @property
    def schema_version(self) -> int:
        return self._conn.execute("PRAGMA user_version").fetchone()[0]

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
        run_id = run_id or _new_run_id()
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
                    _now(),
                    suite_commit,
                    claims_commit,
                    dumps(dict(machine)),
                    machine_class,
                    dumps(dict(options or {})),
                    host,
                    pid,
                    _process_start(pid),
                ),
            )
        return run_id

    def _mark_dead_runs(self, conn: sqlite3.Connection, host: str) -> None:
        rows = conn.execute(
            "SELECT run_id, host, pid, pid_started FROM runs WHERE status = 'running'"
        ).fetchall()
        for run_id, run_host, pid, pid_started in rows:
            if run_host is None or (run_host == host and not _process_alive(pid, pid_started)):
                conn.execute("UPDATE runs SET status = 'incomplete' WHERE run_id = ?", (run_id,))

    def record_claims(self, run_id: str, claims: Iterable[Any]) -> None:
        """Keep the claims of a run as they were (dicts in the outcome's ``claim`` shape, or ``Claim``)."""
        with self._write() as conn:
            self._require_run(conn, run_id)
            for claim in claims:
                data = _claim_dict(claim)
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

    def record(self, run_id: str, outcome: ItemResult | Mapping[str, Any]) -> bool:
        """Store one finished item (with the adjustments it already has), in one transaction.

        Exactly once per ``(run_id, item_id)``: repeating the *same* outcome
        is ignored (so a retried write is harmless) and returns ``False``; a
        *different* outcome for an item already stored raises
        :class:`DuplicateResult`, because evidence is never overwritten.

        Returns:
            ``True`` when the row was written.
        """
        record = outcome.to_record() if isinstance(outcome, ItemResult) else outcome
        row, claim = _result_row(run_id, record)
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
            _insert_result(conn, row)
            adjustments = [Adjustment.from_record(a) for a in record.get("adjustments") or ()]
            _insert_adjustments(conn, run_id, row["item_id"], adjustments, first_seq=0)
        return True

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
            _insert_adjustments(conn, run_id, item_id, adjustments, first_seq=seq)

    def adjustments(self, run_id: str) -> dict[str, list[Adjustment]]:
        """Every adjustment of a run by item, in the order applied."""
        if "adjustments" not in _tables(self._conn):
            return {}
        out: dict[str, list[Adjustment]] = {}
        cursor = self._conn.execute(
            "SELECT item_id, step, before, after, reason, adjusted_pvalue, chain FROM adjustments"
            " WHERE run_id = ? ORDER BY item_id, seq", (run_id,))
        for item_id, step, before, after, reason, pvalue, chain in cursor.fetchall():
            out.setdefault(item_id, []).append(Adjustment(
                step, Verdict(before), Verdict(after), reason or "", pvalue, tuple(_loads(chain, []) or ())))
        return out

    def finish_run(self, run_id: str, *, complete: bool = True) -> None:
        """Close a run: ``complete`` when every selected item ran, else ``incomplete``."""
        with self._write() as conn:
            self._require_run(conn, run_id)
            conn.execute(
                "UPDATE runs SET finished = ?, status = ? WHERE run_id = ?",
                (_now(), "complete" if complete else "incomplete", run_id),
            )

    # -- reading

    def _run_dict(self, row: sqlite3.Row | tuple, names: Sequence[str]) -> dict[str, Any]:
        run = dict(zip(names, row))
        run["machine"] = _loads(run.get("machine"), {})
        run["options"] = _loads(run.get("options"), {})
        run["effective_status"] = self._effective_status(run)
        return run

    @staticmethod
    def _effective_status(run: Mapping[str, Any]) -> str:
        """``running`` only while its writer is alive on this host; a dead or unknown writer means incomplete."""
        if run.get("status") != "running":
            return str(run.get("status"))
        if run.get("host") == socket.gethostname() and _process_alive(run.get("pid"), run.get("pid_started")):
            return "running"
        return "incomplete"

    def _select_runs(self, where: str = "", args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self._conn.execute(
            "SELECT r.*, (SELECT COUNT(*) FROM results x WHERE x.run_id = r.run_id) AS result_count"
            f" FROM runs r {where} ORDER BY r.started, r.rowid",
            tuple(args),
        )
        names = [d[0] for d in cursor.description]
        return [self._run_dict(row, names) for row in cursor.fetchall()]

    def runs(self, machine_class: str | None = None, *, limit: int | None = None) -> list[dict[str, Any]]:
        """Runs newest first (optionally of one machine class; at most ``limit``)."""
        if machine_class is None:
            found = self._select_runs()
        else:
            found = self._select_runs("WHERE r.machine_class = ?", (machine_class,))
        found.reverse()
        return found[:limit] if limit else found

    def run(self, run_id: str) -> dict[str, Any]:
        """One run; raises :class:`StoreError` when unknown."""
        found = self._select_runs("WHERE r.run_id = ?", (run_id,))
        if not found:
            raise StoreError(f"{self.path}: no run {run_id}")
        return found[0]

    def latest_run(self, machine_class: str | None = None) -> dict[str, Any] | None:
        """The most recently started run (of one machine class), or ``None``."""
        found = self.runs(machine_class, limit=1)
        return found[0] if found else None

    def resolve_run(self, ref: str | None) -> dict[str, Any]:
        """A run from a full id, a unique id prefix, or ``None``/``"latest"``."""
        if ref in (None, "", "latest"):
            latest = self.latest_run()
            if latest is None:
                raise StoreError(f"{self.path}: the store has no runs yet")
            return latest
        exact = self._select_runs("WHERE r.run_id = ?", (ref,))
        if exact:
            return exact[0]
        matches = self._select_runs("WHERE r.run_id LIKE ? ESCAPE '\\'", (_like_prefix(ref),))
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise StoreError(f"{self.path}: no run {ref}")
        raise StoreError(f"{self.path}: run prefix {ref} is ambiguous ({len(matches)} runs)")

    def claims(self, run_id: str) -> dict[str, dict[str, Any]]:
        """The claims of a run by id, in the outcome's ``claim`` shape."""
        cursor = self._conn.execute("SELECT * FROM claims WHERE run_id = ?", (run_id,))
        names = [d[0] for d in cursor.description]
        return {row["id"]: row for row in (_claim_row(dict(zip(names, r))) for r in cursor.fetchall())}

    def results(self, run_id: str) -> list[dict[str, Any]]:
        """Every item of a run, in recording order, each with its claim attached under ``claim``.

        Each dict has the flat result columns (``statistic``, ``low``, ...,
        ``verdict``) plus decoded ``params``, ``samples``, ``info``,
        ``artifacts``, ``decision`` and the run's ``machine_class``.
        """
        claims = self.claims(run_id)
        cursor = self._conn.execute(
            "SELECT x.*, r.machine_class AS machine_class, r.started AS run_started FROM results x"
            " JOIN runs r ON r.run_id = x.run_id WHERE x.run_id = ? ORDER BY x.rowid",
            (run_id,),
        )
        names = [d[0] for d in cursor.description]
        adjustments = self.adjustments(run_id)
        out = []
        for values in cursor.fetchall():
            result = _decode_result(dict(zip(names, values)))
            result["claim"] = claims.get(result["claim_id"], {"id": result["claim_id"]})
            _apply_adjustments(result, adjustments.get(result["item_id"], []))
            out.append(result)
        return out

    def history(self, claim_id: str) -> list[dict[str, Any]]:
        """Every stored item of a claim across runs and machines, oldest run first."""
        cursor = self._conn.execute(
            "SELECT x.run_id, x.item_id, x.claim_id, x.params, x.verdict, x.statistic, x.low, x.high,"
            " x.confidence_level, x.n, x.unit, x.rule, x.mde, x.reason, r.started AS run_started,"
            " r.machine_class, r.status AS run_status, r.host, r.pid, r.pid_started, c.content_hash"
            " FROM results x JOIN runs r ON r.run_id = x.run_id"
            " LEFT JOIN claims c ON c.run_id = x.run_id AND c.claim_id = x.claim_id"
            " WHERE x.claim_id = ? ORDER BY r.started, r.rowid, x.rowid",
            (claim_id,),
        )
        names = [d[0] for d in cursor.description]
        rows = []
        adjustments: dict[str, dict[str, list[Adjustment]]] = {}
        for values in cursor.fetchall():
            row = dict(zip(names, values))
            if row["run_id"] not in adjustments:
                adjustments[row["run_id"]] = self.adjustments(row["run_id"])
            _apply_adjustments(row, adjustments[row["run_id"]].get(row["item_id"], []))
            row["params"] = _loads(row["params"], {})
            row["run_status"] = self._effective_status(
                {"status": row.pop("run_status"), "host": row.pop("host"), "pid": row.pop("pid"),
                 "pid_started": row.pop("pid_started")}
            )
            rows.append(row)
        return rows

    def previous_run(self, run_id: str) -> dict[str, Any] | None:
        """The run started just before ``run_id`` on the same machine class."""
        run = self.run(run_id)
        same_class = self._select_runs("WHERE r.machine_class = ?", (run["machine_class"],))
        index = [r["run_id"] for r in same_class].index(run_id)
        return same_class[index - 1] if index > 0 else None

    def drift(self, run_id: str) -> list[Drift]:
        """Items that moved since the previous run on the same machine class.

        An item drifts when its verdict changed, or when its figure now lies
        outside the interval the previous run measured. Only runs of the same
        machine class are compared: a figure from another machine is a
        different measurement, not a change.
        """
        previous = self.previous_run(run_id)
        if previous is None:
            return []
        before = {r["item_id"]: r for r in self.results(previous["run_id"])}
        drifts = []
        for now in self.results(run_id):
            old = before.get(now["item_id"])
            if old is None:
                continue
            verdict_changed = now["verdict"] != old["verdict"]
            stat, low, high = now["statistic"], old["low"], old["high"]
            figure_moved = (
                stat is not None and low is not None and high is not None
                and not (math.isnan(stat) or math.isnan(low) or math.isnan(high))
                and not (low <= stat <= high)
            )
            claim_changed = bool(
                now["claim"].get("content_hash")
                and old["claim"].get("content_hash")
                and now["claim"]["content_hash"] != old["claim"]["content_hash"]
            )
            if verdict_changed or figure_moved:
                drifts.append(
                    Drift(
                        claim_id=now["claim_id"],
                        item_id=now["item_id"],
                        run_id=run_id,
                        previous_run_id=previous["run_id"],
                        machine_class=now["machine_class"],
                        verdict=now["verdict"],
                        previous_verdict=old["verdict"],
                        statistic=stat,
                        previous_statistic=old["statistic"],
                        previous_low=low,
                        previous_high=high,
                        verdict_changed=verdict_changed,
                        figure_moved=figure_moved,
                        claim_changed=claim_changed,
                    )
                )
        return drifts

    # -- merging

    def _dump_run(self, run_id: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        def rows(sql: str) -> list[dict[str, Any]]:
            cursor = self._conn.execute(sql, (run_id,))
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, r)) for r in cursor.fetchall()]

        run = rows("SELECT * FROM runs WHERE run_id = ?")[0]
        results = rows("SELECT * FROM results WHERE run_id = ? ORDER BY rowid")
        adjustments = self.adjustments(run_id)
        for row in results:
            row["_adjustments"] = adjustments.get(row["item_id"], [])
        return run, rows("SELECT * FROM claims WHERE run_id = ?"), results

    def _run_ids(self) -> list[str]:
        return [r[0] for r in self._conn.execute("SELECT run_id FROM runs ORDER BY started, rowid")]


class _Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT``: takes the write lock up front so writers queue instead of deadlocking."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind: type | None, *exc: object) -> None:
        if kind is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")


def _connect_readonly(path: Path) -> sqlite3.Connection:
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open evidence store ({exc})") from None
    return conn


def _like_prefix(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _result_row(run_id: str, outcome: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Flatten an outcome record into a ``results`` row (and its claim, if attached)."""
    if not isinstance(outcome, Mapping):
        raise StoreError(f"run {run_id}: an outcome must be a mapping, got {type(outcome).__name__}")
    item_id, claim_id, verdict = outcome.get("item_id"), outcome.get("claim_id"), outcome.get("verdict")
    verdict = getattr(verdict, "value", verdict)
    if not isinstance(item_id, str) or not item_id:
        raise StoreError(f"run {run_id}: outcome without an item_id")
    if not isinstance(claim_id, str) or not claim_id:
        raise StoreError(f"run {run_id}: outcome {item_id} has no claim_id")
    if verdict not in VERDICTS:
        raise StoreError(f"run {run_id}: outcome {item_id}: verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
    canonical = dumps(dict(outcome))
    decision = outcome.get("decision") or {}
    if not isinstance(decision, Mapping):
        raise StoreError(f"run {run_id}: outcome {item_id}: decision must be a mapping or null")
    claim = outcome.get("claim")
    claim = _claim_dict(claim) if claim else None

    def text(value: Any) -> str | None:
        value = getattr(value, "value", value)
        return None if value is None else str(value)

    n = decision.get("n")
    row = {
        "run_id": run_id,
        "item_id": item_id,
        "claim_id": claim_id,
        "params": dumps(outcome.get("params") or {}),
        "samples": dumps(outcome.get("samples") or {}),
        "statistic": _number(decision.get("statistic")),
        "low": _number(decision.get("low")),
        "high": _number(decision.get("high")),
        "confidence_level": _number(decision.get("confidence_level")),
        "n": int(n) if isinstance(n, (int, float)) and not isinstance(n, bool) and math.isfinite(n) else None,
        "rule": text(decision.get("rule") or ((claim or {}).get("check") or {}).get("rule")),
        "alpha": _number(decision.get("alpha")),
        "pvalue": _number(decision.get("pvalue")),
        "mde": _number(decision.get("mde")),
        "unit": text(decision.get("unit") or ((claim or {}).get("check") or {}).get("unit")),
        "estimate_label": text(decision.get("estimate_label")),
        "verdict": verdict,
        "recorded_verdict": verdict,
        "raw_verdict": text(outcome.get("raw_verdict") or decision.get("raw_verdict")),
        "adjusted_verdict": text(decision.get("adjusted_verdict")),
        "adjusted_pvalue": _number(decision.get("adjusted_pvalue")),
        "reason": text(outcome.get("reason")),
        "duration": _number(outcome.get("duration_s", outcome.get("duration"))),
        "started": _timestamp(outcome.get("started")),
        "finished": _timestamp(outcome.get("finished")),
        "probe": _probe_name(outcome),
        "info": dumps(outcome.get("info") or {}),
        "artifacts": dumps(outcome.get("artifacts") or {}),
        "decision": dumps(dict(decision)) if outcome.get("decision") is not None else None,
        "outcome": canonical,
        "outcome_hash": hashlib.sha256(canonical.encode()).hexdigest(),
    }
    return row, claim


def _insert_adjustments(conn: sqlite3.Connection, run_id: str, item_id: str, adjustments: Sequence[Adjustment],
                        *, first_seq: int) -> None:
    for seq, adjustment in enumerate(adjustments, start=first_seq):
        conn.execute(
            "INSERT INTO adjustments (run_id, item_id, seq, step, before, after, reason, adjusted_pvalue, chain)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, item_id, seq, adjustment.step, adjustment.before.value, adjustment.after.value,
             adjustment.reason, _number(adjustment.adjusted_pvalue),
             dumps(list(adjustment.chain)) if adjustment.chain else None),
        )


def _apply_adjustments(row: dict[str, Any], adjustments: Sequence[Adjustment]) -> None:
    """Give a result row its final verdict and reason from its adjustments (the row itself is never updated)."""
    row["adjustments"] = [a.to_record() for a in adjustments]
    if adjustments:
        row["verdict"] = adjustments[-1].after.value
        row["reason"] = adjustments[-1].reason
    family = next((a for a in adjustments if a.step == "family"), None)
    if family is not None:
        row["adjusted_verdict"] = family.after.value
        row["adjusted_pvalue"] = family.adjusted_pvalue


def _insert_result(conn: sqlite3.Connection, row: Mapping[str, Any]) -> None:
    names = list(row)
    conn.execute(
        f"INSERT INTO results ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
        tuple(row[name] for name in names),
    )


def _claim_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["claim_id"],
        "content_hash": row.get("content_hash"),
        "title": row.get("title"),
        "statement": row.get("statement"),
        "source": _loads(row.get("source"), {}),
        "scope": _loads(row.get("scope"), {}),
        "check": _loads(row.get("check_spec"), {}),
        "probe": _loads(row.get("probe"), None),
        "depends_on": _loads(row.get("depends_on"), []),
        "tags": _loads(row.get("tags"), []),
        "path": row.get("path"),
        "line": row.get("line"),
    }


def _decode_result(row: dict[str, Any]) -> dict[str, Any]:
    for name, empty in (("params", {}), ("samples", {}), ("info", {}), ("artifacts", {}), ("decision", None)):
        row[name] = _loads(row.get(name), empty)
    row.pop("outcome", None)
    row["duration_s"] = row.get("duration")
    return row


# --------------------------------------------------------------------------- merge


def _open_source(path: Path) -> EvidenceStore:
    """Open a merge source without ever writing to it (an old schema is migrated in a memory copy)."""
    if not path.exists():
        raise StoreError(f"{path}: no evidence store there")
    conn = _connect_readonly(path)
    try:
        version = _classify(conn, str(path))
        if version == SCHEMA_VERSION:
            store = EvidenceStore.__new__(EvidenceStore)
            store.path, store.readonly, store._conn = path, True, conn
            return store
        memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.backup(memory)
        conn.close()
        _create_or_migrate(memory, str(path))
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
                for run_id in src._run_ids():
                    run, claims, results = src._dump_run(run_id)
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
    run_columns = _columns(target._conn, "runs")
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
        claim_columns = _columns(conn, "claims")
        for claim in claims:
            names = [n for n in claim if n in claim_columns]
            cursor = conn.execute(
                f"INSERT OR IGNORE INTO claims ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                tuple(claim[n] for n in names),
            )
            result.claims_added += cursor.rowcount
        result_columns = _columns(conn, "results")
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
            _insert_result(conn, {n: row[n] for n in row if n in result_columns})
            _insert_adjustments(conn, row["run_id"], row["item_id"], row.get("_adjustments", []), first_seq=0)
            result.results_added += 1


def iter_outcomes(store: EvidenceStore, run_id: str) -> Iterator[dict[str, Any]]:
    """The stored outcome records of a run as they were recorded (for re-export)."""
    cursor = store._conn.execute("SELECT outcome FROM results WHERE run_id = ? ORDER BY rowid", (run_id,))
    for (text,) in cursor:
        if text:
            yield json.loads(text)
