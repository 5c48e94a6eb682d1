"""Evidence store under stress: concurrent writers, SIGKILL mid-run, schema migration and refusal."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from claimcheck.store import SCHEMA_VERSION, V0_TABLES, EvidenceStore, StoreError

ROOT = Path(__file__).resolve().parents[2]
SYNTHETIC = Path(__file__).with_name("synthetic.py")

_spec = importlib.util.spec_from_file_location("cc_synthetic", SYNTHETIC)
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)

# A writer process: opens the store, begins a run, records `count` items (printing each id once
# committed), then finishes the run. count < 0 means "forever" (for the SIGKILL test).
WRITER = textwrap.dedent(
    """
    import importlib.util, sys, time
    from claimcheck.store import EvidenceStore
    spec = importlib.util.spec_from_file_location("cc_synthetic", sys.argv[3])
    synth = importlib.util.module_from_spec(spec); spec.loader.exec_module(synth)
    path, count = sys.argv[1], int(sys.argv[2])
    store = EvidenceStore(path)
    run_id = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, options={},
                             suite_commit=None, claims_commit=None)
    print("run", run_id, flush=True)
    i = 0
    while count < 0 or i < count:
        store.record(run_id, synth.outcome(item=f"size_mib={i}", statistic=0.4 + i / 1000))
        print("item", f"qmv-large-bw[size_mib={i}]", flush=True)
        i += 1
    store.finish_run(run_id)
    print("done", flush=True)
    """
)


def _writer(path: Path, count: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(count), str(SYNTHETIC)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )


def test_concurrent_writers_each_keep_every_item(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    writers = [_writer(path, 25) for _ in range(3)]
    outputs = [w.communicate(timeout=120) for w in writers]
    for writer, (out, err) in zip(writers, outputs):
        assert writer.returncode == 0, err
        assert out.strip().endswith("done")
    run_ids = [out.splitlines()[0].split()[1] for out, _ in outputs]
    store = EvidenceStore(path)
    assert store.integrity_check() == "ok"
    assert len(set(run_ids)) == 3
    for run_id in run_ids:
        assert store.run(run_id)["status"] == "complete"
        assert len(store.results(run_id)) == 25


def test_sigkill_mid_run_keeps_completed_items_and_reads_incomplete(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite"
    writer = _writer(path, -1)
    run_id = writer.stdout.readline().split()[1]
    committed = []
    while len(committed) < 8:
        line = writer.stdout.readline()
        assert line.startswith("item"), writer.stderr.read()
        committed.append(line.split()[1])
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    # Anything it printed after our last read also committed; read it so the check is exact.
    committed += [line.split()[1] for line in writer.stdout.read().splitlines() if line.startswith("item")]

    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    raw.close()

    store = EvidenceStore(path)
    stored = {r["item_id"] for r in store.results(run_id)}
    assert set(committed) <= stored, "every item reported as recorded survived the kill"
    assert len(stored) - len(committed) <= 1, "at most the one in flight when killed may also be there"
    run = store.run(run_id)
    assert run["status"] == "running" and run["effective_status"] == "incomplete"
    later = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, options={},
                            suite_commit=None, claims_commit=None)
    assert store.run(run_id)["status"] == "incomplete", "a later run marks the dead one"
    assert store.run(later)["status"] == "running"


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
    assert store.schema_version == SCHEMA_VERSION == 1
    assert store.integrity_check() == "ok"
    (old,) = store.results("old-1")
    assert old["statistic"] == 0.8 and old["verdict"] == "holds" and old["recorded_verdict"] == "holds"
    assert old["samples"] == {"qmv_gbps": [1.0, 2.0]}
    assert old["mde"] is None and old["decision"] is None
    assert store.run("old-1")["status"] == "complete"
    assert store.run("old-2")["effective_status"] == "incomplete", "a v0 run left running has no writer"
    run_id = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, options={},
                             suite_commit=None, claims_commit="x")
    store.record(run_id, synth.outcome(item="size_mib=64", verdict="holds", statistic=0.79, low=0.77, high=0.81))
    assert [d.item_id for d in store.drift(run_id)] == [], "0.79 is inside the v0 run's [0.78, 0.82]"
    store.close()
    # Opening again finds the current version and changes nothing.
    assert EvidenceStore(path).schema_version == 1


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
    with pytest.raises(StoreError, match="not an evidence store"):
        EvidenceStore(path)
    assert _digest(path) == before
