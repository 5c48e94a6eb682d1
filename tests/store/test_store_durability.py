"""Evidence store under stress: concurrent writers, SIGKILL mid-run, schema migration and refusal.

No test here depends on how the scheduler interleaves processes: writers meet at a barrier
(files) so their runs are open at the same time by construction, every wait has a generous
deadline that only a hung process reaches, and the creation race is replayed statement by
statement instead of being left to chance.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import queue
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from claimcheck.store import SCHEMA_VERSION, V0_TABLES, EvidenceStore, StoreError

ROOT = Path(__file__).resolve().parents[2]
SYNTHETIC = Path(__file__).with_name("synthetic.py")
DEADLINE_S = 900.0  # only a hung process gets near it (a loaded machine must not); nothing here waits for a duration

_spec = importlib.util.spec_from_file_location("cc_synthetic", SYNTHETIC)
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)

# A writer process: opens the store, begins a run (printing its id), then, if given a barrier
# folder, creates `ready-<index>` there and waits for `go`; then records `count` items (printing
# each id once committed; item i has statistic index + i / 1000) and finishes the run.
# count < 0 means "forever" (for the SIGKILL test).
WRITER = textwrap.dedent(
    """
    import importlib.util, pathlib, sys, time
    from claimcheck.store import EvidenceStore
    spec = importlib.util.spec_from_file_location("cc_synthetic", sys.argv[3])
    synth = importlib.util.module_from_spec(spec); spec.loader.exec_module(synth)
    path, count, barrier, index = sys.argv[1], int(sys.argv[2]), sys.argv[4], int(sys.argv[5])
    store = EvidenceStore(path)
    run_id = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, options={},
                             suite_commit=None, claims_commit=None)
    print("run", run_id, flush=True)
    if barrier != "-":
        folder = pathlib.Path(barrier)
        (folder / f"ready-{index}").touch()
        deadline = time.monotonic() + float(sys.argv[6])
        while not (folder / "go").exists():
            if time.monotonic() > deadline:
                sys.exit(f"writer {index}: no `go` in {folder} before the deadline")
            time.sleep(0.01)
    i = 0
    while count < 0 or i < count:
        store.record(run_id, synth.outcome(item=f"size_mib={i}", statistic=index + i / 1000))
        print("item", f"qmv-large-bw[size_mib={i}]", flush=True)
        i += 1
    store.finish_run(run_id)
    print("done", flush=True)
    """
)


def _writer(path: Path, count: int, *, barrier: Path | None = None, index: int = 0) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    args = [str(path), str(count), str(SYNTHETIC), str(barrier or "-"), str(index), str(DEADLINE_S)]
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )


def _wait_until(predicate: Callable[[], bool], what: str, writers: list[subprocess.Popen]) -> None:
    """Poll ``predicate`` until it holds; fail (with the writers' stderr) only if one dies or the deadline passes."""
    deadline = time.monotonic() + DEADLINE_S
    while not predicate():
        dead = [w for w in writers if w.poll() is not None]
        if dead or time.monotonic() > deadline:
            errors = "\n".join(w.communicate(timeout=DEADLINE_S)[1] for w in dead)
            why = "a writer exited" if dead else f"no progress in {DEADLINE_S:g} s"
            raise AssertionError(f"{why} while waiting for {what}\n{errors}")
        time.sleep(0.01)


def test_concurrent_writers_each_keep_every_item(tmp_path: Path) -> None:
    """Three runs open at once and written concurrently each end complete with exactly their own items.

    The store is created first (creation races are replayed deterministically below); the
    writers then begin their runs and wait at a barrier, so all three runs are open together
    whatever the scheduling. The checks hold in every interleaving of their writes.
    """
    path = tmp_path / "shared.sqlite"
    EvidenceStore(path).close()
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    count = 25
    writers = [_writer(path, count, barrier=barrier, index=i) for i in range(3)]
    try:
        _wait_until(lambda: all((barrier / f"ready-{i}").exists() for i in range(3)), "3 writers at the barrier",
                    writers)
        with EvidenceStore(path) as store:
            open_runs = [run for run in store.runs() if run.status == "running"]
        assert len(open_runs) == 3, "a writer's begin_run marked another live writer's run as dead"
        (barrier / "go").touch()
        outputs = [w.communicate(timeout=DEADLINE_S) for w in writers]
    finally:
        for w in writers:
            if w.poll() is None:
                w.kill()
                w.wait()
    for writer, (out, err) in zip(writers, outputs):
        assert writer.returncode == 0, err
        assert out.strip().endswith("done")
    run_ids = [out.splitlines()[0].split()[1] for out, _ in outputs]
    assert len(set(run_ids)) == 3
    assert {run.run_id for run in open_runs} == set(run_ids)
    with EvidenceStore(path) as store:
        assert store.integrity_check() == "ok"
        for index, run_id in enumerate(run_ids):
            assert store.run(run_id).status == "complete"
            rows = store.results(run_id)
            assert sorted(r.item_id for r in rows) == sorted(f"qmv-large-bw[size_mib={i}]" for i in range(count))
            wrong = [r.item_id for r in rows
                     if r.decision.statistic != pytest.approx(index + int(r.item_id.split("=")[1][:-1]) / 1000)]
            assert not wrong, f"run {run_id} holds items written by another writer: {wrong}"


class _Lines:
    """A process's stdout lines, read on a thread so every read has a deadline instead of blocking forever."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def next(self) -> str:
        try:
            line = self.lines.get(timeout=DEADLINE_S)
        except queue.Empty:
            raise AssertionError(f"the writer printed nothing for {DEADLINE_S:g} s") from None
        assert line is not None, f"the writer exited early:\n{self.proc.stderr.read()}"
        return line

    def rest(self) -> list[str]:
        """Every line still to come; call once the process has exited."""
        self.reader.join(timeout=DEADLINE_S)
        assert not self.reader.is_alive(), "the writer's stdout stayed open after it exited"
        lines = []
        while (line := self.lines.get_nowait()) is not None:
            lines.append(line)
        return lines


def test_sigkill_mid_run_keeps_completed_items_and_reads_incomplete(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite"
    writer = _writer(path, -1)
    try:
        lines = _Lines(writer)
        run_id = lines.next().split()[1]
        committed = []
        while len(committed) < 8:
            line = lines.next()
            assert line.startswith("item"), line
            committed.append(line.split()[1])
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=DEADLINE_S)
        # Anything it printed after our last read also committed; read it so the check is exact.
        # A line cut short by the kill (no newline) names no item for sure: its item counts as the one in flight.
        committed += [line.split()[1] for line in lines.rest()
                      if line.startswith("item ") and line.endswith("\n") and len(line.split()) == 2]
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
        for pipe in (writer.stdout, writer.stderr):  # closed on every path: a leaked pipe warns in a later test
            if pipe is not None:
                pipe.close()
    assert writer.returncode == -signal.SIGKILL

    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    raw.close()

    store = EvidenceStore(path)
    stored = {r.item_id for r in store.results(run_id)}
    assert set(committed) <= stored, "every item reported as recorded survived the kill"
    assert len(stored) - len(committed) <= 1, "at most the one in flight when killed may also be there"
    run = store.run(run_id)
    assert run.status == "running" and run.effective_status == "incomplete"
    later = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, options={},
                            suite_commit=None, claims_commit=None)
    assert store.run(run_id).status == "incomplete", "a later run marks the dead one"
    assert store.run(later).status == "running"


# Statements that never wait for another connection's write lock (WAL readers, connection
# settings, deferred BEGIN); anything else may, so the creator commits before it runs.
_NO_WRITE_LOCK = re.compile(
    r"\s*(SELECT\b|PRAGMA\s+\w+\s*;?\s*$|PRAGMA\s+(busy_timeout|synchronous|foreign_keys|journal_mode)\b"
    r"|BEGIN(\s+DEFERRED)?(\s+TRANSACTION)?\s*;?\s*$|COMMIT\b|END\b|ROLLBACK\b)",
    re.IGNORECASE,
)


class _InterleavingFailed(AssertionError):
    """Opening a store failed in at least one interleaving with a concurrent creator."""


def _layout(path: Path) -> tuple[list[str], int, int]:
    """The schema a fresh store gets (``CREATE`` statements, application_id, user_version), read back from one."""
    EvidenceStore(path).close()
    conn = sqlite3.connect(path)
    try:
        statements = [row[0] for row in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]
        return statements, conn.execute("PRAGMA application_id").fetchone()[0], conn.execute(
            "PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def _open_with_creator_committing_before(
    path: Path, layout: tuple[list[str], int, int], k: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[int | None, str | None]:
    """Open ``path`` while another connection has created the whole store but not committed yet.

    That creator commits just before the ``k``-th SQL statement the opening store runs (or
    before the first statement that needs the write lock it holds, if that comes sooner): one
    exact interleaving of two processes creating the same store at once.

    Returns:
        ``(statement the commit preceded, error)``; error is ``None`` when the store opened.
    """
    statements, application_id, user_version = layout
    connect = sqlite3.connect
    creator = connect(path, isolation_level=None)
    creator.execute("PRAGMA journal_mode = WAL")
    creator.execute("BEGIN IMMEDIATE")
    for statement in statements:
        creator.execute(statement)
    creator.execute(f"PRAGMA application_id = {application_id}")
    creator.execute(f"PRAGMA user_version = {user_version}")
    seen: dict[str, Any] = {"count": 0, "committed_before": None, "error": None}

    def trace(sql: str) -> None:
        seen["count"] += 1
        if seen["committed_before"] is None and (seen["count"] == k or not _NO_WRITE_LOCK.match(sql)):
            seen["committed_before"] = seen["count"]
            try:
                creator.execute("COMMIT")
            except sqlite3.Error as exc:  # sqlite3 swallows exceptions raised in trace callbacks
                seen["error"] = exc

    def traced_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(trace)
        return conn

    error = None
    try:
        with monkeypatch.context() as patch:
            patch.setattr(sqlite3, "connect", traced_connect)
            try:
                with EvidenceStore(path) as store:
                    assert store.schema_version == user_version
            except StoreError as exc:
                error = str(exc)
    finally:
        creator.close()
    assert seen["error"] is None, f"the creator could not commit: {seen['error']}"
    return seen["committed_before"], error


def test_store_created_concurrently_opens_in_every_interleaving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes creating one store at once: opening succeeds wherever the other's commit lands.

    Replays each interleaving deterministically (the other creator's commit before statement
    1, 2, 3, ... of the opening store) instead of hoping the scheduler produces the bad one.
    """
    layout = _layout(tmp_path / "reference.sqlite")
    failures = []
    for k in range(1, 200):
        committed_before, error = _open_with_creator_committing_before(tmp_path / f"fresh-{k}.sqlite", layout, k,
                                                                       monkeypatch)
        if error is not None:
            failures.append(f"commit before statement {committed_before}: {error}")
        if committed_before != k:  # the commit came earlier (write lock) or never: later k are the same run
            break
    else:
        raise AssertionError("opening a store ran more than 200 statements")
    if failures:
        raise _InterleavingFailed("opening a store that another process creates concurrently failed:\n"
                                  + "\n".join(failures))


def _v0_store(path: Path) -> None:
    """The pre-release layout (user_version 0), with one finished and one abandoned run."""
    conn = sqlite3.connect(path)
    conn.executescript(V0_TABLES)
    conn.execute(
        "INSERT INTO runs VALUES ('old-1', '2026-01-01T00:00:00+00:00', '2026-01-01T00:10:00+00:00', 'complete',"
        " 'c0ffee', '{\"backend\": \"cpu\"}', 'cpu/AMD EPYC 9xxx/16-32GiB', '{}')"
    )
    conn.execute(
        "INSERT INTO runs VALUES ('old-2', '2026-01-02T00:00:00+00:00', NULL, 'running', 'c0ffee', '{}',"
        " 'cpu/AMD EPYC 9xxx/16-32GiB', '{}')"
    )
    conn.execute(
        "INSERT INTO results VALUES ('old-1', 'qmv-large-bw[size_mib=64]', 'qmv-large-bw', '{\"size_mib\": 64}',"
        " '{\"qmv_gbps\": [1.0, 2.0]}', 0.8, 0.78, 0.82, 2, 'ratio', 0.05, 0.01, 'holds', 'ok', 3.5, '{}', '{}')"
    )
    conn.commit()
    conn.close()


def test_v0_store_is_migrated_keeping_every_row(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    _v0_store(path)
    store = EvidenceStore(path)
    assert store.schema_version == SCHEMA_VERSION == 4
    assert store.integrity_check() == "ok"
    (old,) = store.results("old-1")
    assert old.decision.statistic == 0.8 and old.verdict.value == "holds" and old.result.raw_verdict.value == "holds"
    assert old.result.samples == {"qmv_gbps": (1.0, 2.0)}
    assert old.decision.mde is None, "a v0 row has no MDE; its decision is rebuilt from its columns"
    assert store.run("old-1").status == "complete"
    assert store.run("old-2").effective_status == "incomplete", "a v0 run left running has no writer"
    run_id = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, options={},
                             suite_commit=None, claims_commit="x")
    store.record(run_id, synth.outcome(item="size_mib=64", verdict="holds", statistic=0.79, low=0.77, high=0.81))
    assert [d.item_id for d in store.drift(run_id)] == [], "0.79 is inside the v0 run's [0.78, 0.82]"
    store.close()
    # Opening again finds the current version and changes nothing.
    assert EvidenceStore(path).schema_version == 4


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_newer_schema_is_refused_with_one_line_and_not_modified(tmp_path: Path) -> None:
    path = tmp_path / "newer.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE runs (run_id TEXT)")
    conn.execute("PRAGMA user_version = 7")
    conn.commit()
    conn.close()
    before, mtime = _digest(path), path.stat().st_mtime_ns
    with pytest.raises(StoreError) as error:
        EvidenceStore(path)
    message = str(error.value)
    assert "\n" not in message
    assert "schema version 7 is newer" in message and "not modified" in message
    assert _digest(path) == before and path.stat().st_mtime_ns == mtime
    assert not Path(str(path) + "-wal").exists()


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda c: c.execute("CREATE TABLE notes (body TEXT)"), "unknown SQLite schema"),
        (lambda c: c.execute("PRAGMA application_id = 1234"), "another application"),
        (lambda c: (c.execute("CREATE TABLE x (y)"), c.execute("PRAGMA user_version = 1")), "not a claimcheck store"),
    ],
)
def test_unknown_schema_is_refused_and_not_modified(tmp_path: Path, make, message: str) -> None:
    path = tmp_path / "foreign.sqlite"
    conn = sqlite3.connect(path)
    make(conn)
    conn.commit()
    conn.close()
    before = _digest(path)
    with pytest.raises(StoreError, match=message):
        EvidenceStore(path)
    assert _digest(path) == before


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("these are my notes, not a database\n" * 200)
    before = _digest(path)
    with pytest.raises(StoreError, match=r"not a claimcheck store \(file is not a database\)"):
        EvidenceStore(path)
    assert _digest(path) == before
