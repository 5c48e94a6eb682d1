"""Plot declarations travel with the run: stored once per probe, read back typed, merged, migrated."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from claimcheck.probing.plots import PackPlot
from claimcheck.store import SCHEMA_VERSION, EvidenceStore, NotAStore, OutputUnit, StoredPlot, StoreError, merge
from tests.store import synthetic as synth

SWEEP = StoredPlot("qmv", PackPlot("qmv-sweep", "GEMV bandwidth", "sweep", "what it shows", outputs=("gbps",),
                                   reference="raw_gbps", x="size_mib", x_unit="MiB"),
                   {"gbps": OutputUnit("GB/s"), "raw_gbps": OutputUnit("GB/s")})


def _run(store: EvidenceStore) -> str:
    return store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, options={})


def test_a_plot_declaration_is_stored_once_and_read_back_typed(tmp_path: Path) -> None:
    with EvidenceStore(tmp_path / "s.sqlite") as store:
        run_id = _run(store)
        assert store.record_plot(run_id, SWEEP) is True
        assert store.record_plot(run_id, SWEEP) is False, "a repeat is ignored"
        assert store.plots(run_id) == {"qmv": SWEEP}
        other = _run(store)
        assert store.plots(other) == {}


def test_declarations_are_copied_with_their_run(tmp_path: Path) -> None:
    source = tmp_path / "source.sqlite"
    with EvidenceStore(source) as store:
        run_id = _run(store)
        store.record_plot(run_id, SWEEP)
        store.record(run_id, synth.outcome(item="size_mib=64", verdict="holds", statistic=0.8, low=0.78, high=0.82))
        store.finish_run(run_id)
    merge(tmp_path / "dest.sqlite", [source])
    with EvidenceStore.open_readonly(tmp_path / "dest.sqlite") as dest:
        assert dest.plots(run_id) == {"qmv": SWEEP}


def test_a_version_2_store_is_migrated_to_hold_plots_keeping_every_row(tmp_path: Path) -> None:
    path = tmp_path / "v2.sqlite"
    with EvidenceStore(path) as store:
        run_id = _run(store)
        store.record(run_id, synth.outcome(item="size_mib=64", verdict="holds", statistic=0.8, low=0.78, high=0.82))
        store.finish_run(run_id)
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE plots")
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with EvidenceStore.open_readonly(path) as old:  # read from a migrated copy: the file is not touched
        assert old.plots(run_id) == {} and [r.item_id for r in old.results(run_id)] == ["qmv-large-bw[size_mib=64]"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    with EvidenceStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 4
        assert [r.item_id for r in store.results(run_id)] == ["qmv-large-bw[size_mib=64]"]
        later = _run(store)
        store.record_plot(later, SWEEP)
        assert store.plots(later) == {"qmv": SWEEP} and store.plots(run_id) == {}


def test_a_file_that_is_not_a_store_is_one_line_naming_it_and_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    path.write_text("not a database\n" * 100)
    with pytest.raises(NotAStore) as error:
        EvidenceStore(path)
    assert isinstance(error.value, StoreError)
    assert str(error.value) == (f"the store {path} is not a claimcheck store (file is not a database); it was not "
                                "modified: move it away or name another store")
    assert error.value.detail == "file is not a database"
