"""The store's tables, how a file is recognised, and the migrations from older layouts."""

from __future__ import annotations

import sqlite3

from ._base import APPLICATION_ID, SCHEMA_VERSION, NotAStore, StoreError


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
    pid_started   TEXT,
    judgement     TEXT
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
CREATE TABLE IF NOT EXISTS plots (
    run_id      TEXT NOT NULL REFERENCES runs(run_id),
    probe       TEXT NOT NULL,
    declaration TEXT NOT NULL,
    PRIMARY KEY (run_id, probe)
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


def column_names(conn: sqlite3.Connection, table: str) -> list[str]:
    """The columns of ``table`` in order."""
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def table_names(conn: sqlite3.Connection) -> set[str]:
    """The database's own tables (SQLite's internal ones left out)."""
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    return {row[0] for row in rows}


def classify(conn: sqlite3.Connection, label: str) -> int | None:
    """Return the schema version of an open database, ``None`` for an empty one.

    Raises :class:`StoreError` for anything this code must not touch.
    """
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = table_names(conn)
    except sqlite3.OperationalError as exc:  # the file could not be read (permissions, a read-only WAL store)
        raise StoreError(f"cannot read the store {label} ({exc})") from None
    except sqlite3.DatabaseError as exc:
        raise NotAStore(label, str(exc)) from None
    if app_id not in (0, APPLICATION_ID):
        raise NotAStore(label, f"an SQLite file of another application, application_id {app_id:#x}")
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
        if tables == {"runs", "results"} and v0_runs <= set(column_names(conn, "runs")) and v0_results <= set(
            column_names(conn, "results")
        ):
            return 0
        raise NotAStore(label, f"an unknown SQLite schema, tables: {', '.join(sorted(tables))}")
    if version in (1, 2, 3, SCHEMA_VERSION):
        if app_id != APPLICATION_ID or not {"runs", "claims", "results"} <= tables:
            raise NotAStore(label, f"schema version {version} without a claimcheck store's marks")
        return version
    raise StoreError(f"{label}: unknown evidence store schema version {version}; refusing to modify it")


def _migrate_0_to_1(conn: sqlite3.Connection) -> None:
    """Add what version 1 has over the pre-release layout; keeps every row.

    v0 runs carry no host or pid, so one left ``running`` reads as incomplete.
    """
    for table, added in _V0_TO_V1_COLUMNS.items():
        have = set(column_names(conn, table))
        for name, kind in added:
            if name not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
    conn.execute("UPDATE results SET recorded_verdict = verdict WHERE recorded_verdict IS NULL")


def create_or_migrate(conn: sqlite3.Connection, label: str) -> None:
    """Bring an empty or version-0 database to the current schema in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = classify(conn, label)  # re-read under the write lock: another writer may have won
        if version == SCHEMA_VERSION:
            conn.execute("COMMIT")
            return
        if version == 0:
            _migrate_0_to_1(conn)
        # 1 -> 2 only adds the append-only `adjustments` table, 2 -> 3 the `plots` table; both created below.
        for statement in _V1_TABLES.split(";"):
            if statement.strip():
                conn.execute(statement)
        # 3 -> 4: the run's recorded judgement (flags, lock, expected verdicts); NULL for older runs.
        if "judgement" not in column_names(conn, "runs"):
            conn.execute("ALTER TABLE runs ADD COLUMN judgement TEXT")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
