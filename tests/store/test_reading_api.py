"""The store's public reading API: read-only and in-memory opening, run ids, columns, a run's rows."""

from __future__ import annotations

import hashlib
import importlib.util
import sqlite3
from pathlib import Path

import pytest

from claimcheck.store import SCHEMA_VERSION, V0_TABLES, EvidenceStore, StoreError

_spec = importlib.util.spec_from_file_location("cc_synthetic", Path(__file__).with_name("synthetic.py"))
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)


def _two_runs(path: Path) -> list[str]:
    with EvidenceStore(path) as store:
        ids = []
        for statistic in (0.41, 0.52):
            run_id = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, suite_commit="s",
                                     claims_commit="c")
            store.record(run_id, synth.outcome(statistic=statistic))
            store.finish_run(run_id)
            ids.append(run_id)
    return ids


def test_open_readonly_reads_in_place_and_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "ev.sqlite"
    ids = _two_runs(path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with EvidenceStore.open_readonly(path) as store:
        assert store.run_ids() == ids
        rows = store.run_rows(ids[1])
        assert rows.run["run_id"] == ids[1] and [r["statistic"] for r in rows.results] == [0.52]
        assert {"run_id", "suite_commit", "claims_commit", "machine"} <= set(store.column_names("runs"))
        with pytest.raises(StoreError, match="read-only"):
            store.finish_run(ids[0])
        with pytest.raises(StoreError, match="no table"):
            store.column_names("nothing")
        with pytest.raises(StoreError, match="no run"):
            store.run_rows("missing")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_an_old_schema_is_read_from_a_migrated_copy(tmp_path: Path) -> None:
    path = tmp_path / "v0.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(V0_TABLES)
        conn.execute("INSERT INTO runs VALUES ('r0', '2026-01-01T00:00:00', NULL, 'complete', 'abc', '{}', 'x', '{}')")
        conn.execute("INSERT INTO results (run_id, item_id, claim_id, verdict, statistic) VALUES ('r0', 'i', 'c', 'holds', 1.5)")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with EvidenceStore.open_readonly(path) as store:
        assert store.schema_version == SCHEMA_VERSION and store.run_ids() == ["r0"]
        assert store.run_rows("r0").results[0]["statistic"] == 1.5
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_in_memory_copy_is_writable_and_leaves_the_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "ev.sqlite"
    ids = _two_runs(path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with EvidenceStore.in_memory(path) as scratch:
        run_id = scratch.begin_run(machine={}, machine_class="y")
        assert scratch.run_ids() == [*ids, run_id]
    with EvidenceStore.in_memory() as empty:
        assert empty.run_ids() == []
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    with pytest.raises(StoreError, match="no evidence store"):
        EvidenceStore.open_readonly(tmp_path / "missing.sqlite")
