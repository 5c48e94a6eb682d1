"""Merging stores from a CI matrix: union of runs, no duplicates, sources untouched."""

from __future__ import annotations

import hashlib
import importlib.util
import sqlite3
from pathlib import Path

from claimcheck.store import V0_TABLES, EvidenceStore, merge

_spec = importlib.util.spec_from_file_location("cc_synthetic", Path(__file__).with_name("synthetic.py"))
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)


def _store_with_run(path: Path, machine: dict, machine_class: str, statistic: float) -> str:
    with EvidenceStore(path) as store:
        run_id = store.begin_run(machine=machine, machine_class=machine_class, options={},
                                 suite_commit="s", claims_commit="c")
        for size in (64, 256):
            store.record(run_id, synth.outcome(item=f"size_mib={size}", statistic=statistic, machine=machine,
                                               machine_class=machine_class))
        store.finish_run(run_id)
    return run_id


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_merge_two_machines_then_again_adds_nothing(tmp_path: Path) -> None:
    a, b, dest = tmp_path / "a.sqlite", tmp_path / "b.sqlite", tmp_path / "merged" / "all.sqlite"
    run_a = _store_with_run(a, synth.MACHINE_A, synth.CLASS_A, 0.41)
    run_b = _store_with_run(b, synth.MACHINE_B, synth.CLASS_B, 0.80)
    digests = (_digest(a), _digest(b))

    first = merge(dest, [a, b])
    assert (first.runs_added, first.results_added, first.conflicts) == (2, 4, [])
    with EvidenceStore(dest) as merged:
        assert {r.run_id for r in merged.runs()} == {run_a, run_b}
        assert {r.machine_class for r in merged.runs()} == {synth.CLASS_A, synth.CLASS_B}
        assert [r.decision.statistic for r in merged.results(run_b)] == [0.80, 0.80]
        assert merged.results(run_a)[0].claim.title.startswith("qmv"), "claims travel with their runs"
        assert merged.integrity_check() == "ok"

    again = merge(dest, [a, b])
    assert (again.runs_added, again.results_added, again.results_skipped) == (0, 0, 4)
    with EvidenceStore(dest) as merged:
        assert sum(len(merged.results(r.run_id)) for r in merged.runs()) == 4
    assert (_digest(a), _digest(b)) == digests, "sources are never modified"


def test_merge_reports_conflicting_items_and_keeps_the_stored_one(tmp_path: Path) -> None:
    a, dest = tmp_path / "a.sqlite", tmp_path / "dest.sqlite"
    run_id = _store_with_run(a, synth.MACHINE_A, synth.CLASS_A, 0.41)
    merge(dest, [a])
    # Forge a second store holding the same run id with a different figure for one item.
    forged = tmp_path / "forged.sqlite"
    with EvidenceStore(forged) as store:
        store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, options={}, suite_commit="s",
                        claims_commit="c", run_id=run_id)
        store.record(run_id, synth.outcome(item="size_mib=64", statistic=0.99))
    result = merge(dest, [forged])
    assert result.results_added == 0 and len(result.conflicts) == 1
    assert "size_mib=64" in result.conflicts[0]
    with EvidenceStore(dest) as merged:
        assert {r.decision.statistic for r in merged.results(run_id)} == {0.41}


def test_merge_finalises_a_run_still_running_in_dest(tmp_path: Path) -> None:
    src, dest = tmp_path / "src.sqlite", tmp_path / "dest.sqlite"
    with EvidenceStore(dest) as store:
        run_id = store.begin_run(machine={}, machine_class="x", options={}, suite_commit=None,
                                 claims_commit=None, run_id="shared-run")
    with EvidenceStore(src) as store:
        store.begin_run(machine={}, machine_class="x", options={}, suite_commit=None, claims_commit=None,
                        run_id=run_id)
        store.finish_run(run_id)
    assert merge(dest, [src]).runs_updated == 1
    with EvidenceStore(dest) as store:
        assert store.run(run_id).status == "complete"


def test_merge_reads_an_old_store_without_migrating_it(tmp_path: Path) -> None:
    old, dest = tmp_path / "old.sqlite", tmp_path / "dest.sqlite"
    conn = sqlite3.connect(old)
    conn.executescript(V0_TABLES)
    conn.execute("INSERT INTO runs VALUES ('old-1', '2026-01-01', '2026-01-01', 'complete', 'c', '{}', 'k', '{}')")
    conn.execute(
        "INSERT INTO results VALUES ('old-1', 'i', 'c-1', '{}', '{}', 1.0, 0.9, 1.1, 3, 'at_least', 0.05, 0.01,"
        " 'holds', 'ok', 1.0, '{}', '{}')"
    )
    conn.commit()
    conn.close()
    before = _digest(old)
    result = merge(dest, [old])
    assert (result.runs_added, result.results_added) == (1, 1)
    assert _digest(old) == before
    assert sqlite3.connect(old).execute("PRAGMA user_version").fetchone()[0] == 0


def test_merging_the_destination_into_itself_is_skipped(tmp_path: Path) -> None:
    dest = tmp_path / "dest.sqlite"
    _store_with_run(dest, synth.MACHINE_A, synth.CLASS_A, 0.41)
    result = merge(dest, [dest])
    assert result.results_added == 0 and "is the destination" in result.conflicts[0]


def test_a_merged_store_is_one_file_that_reads_without_side_files(tmp_path: Path) -> None:
    """A merged store gets committed (a profile) or uploaded: rollback-journal mode, no -wal/-shm when read."""
    a = tmp_path / "a.sqlite"
    _store_with_run(a, synth.MACHINE_A, synth.CLASS_A, 0.4)
    dest = tmp_path / "merged.sqlite"
    merge(dest, [a])
    assert dest.read_bytes()[18:20] == b"\x01\x01", "left in write-ahead-log mode"
    with EvidenceStore.open_readonly(dest) as store:
        assert store.run_ids()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("merged.sqlite-")]
