"""Evidence store: recording, reading back, exactly-once items, stale runs, drift, history."""

from __future__ import annotations

import dataclasses
import importlib.util
import sqlite3
from pathlib import Path

import pytest

from claimcheck.claim import Claim
from claimcheck.engine.result import Adjustment
from claimcheck.verdict import Verdict

from claimcheck.store import DuplicateResult, EvidenceStore, StoreError, git_commits

_spec = importlib.util.spec_from_file_location("cc_synthetic", Path(__file__).with_name("synthetic.py"))
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)


def _run(store: EvidenceStore, machine_class: str = synth.CLASS_A, machine: dict | None = None) -> str:
    return store.begin_run(
        machine=machine or synth.MACHINE_A,
        machine_class=machine_class,
        options={"alpha": None, "seed": 0},
        suite_commit="a" * 40,
        claims_commit="b" * 40,
    )


def test_record_and_read_back(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev.sqlite")
    run_id = _run(store)
    record = synth.outcome()
    assert store.record(run_id, record) is True
    store.finish_run(run_id)

    (result,) = store.results(run_id)
    assert result.item_id == "qmv-large-bw[size_mib=256]"
    assert (result.decision.statistic, result.decision.low, result.decision.high, result.decision.n) == (0.41, 0.38, 0.44, 24)
    assert result.decision.rule == "ratio" and result.decision.alpha == 0.05 and result.decision.confidence_level == 0.95
    assert result.verdict.value == "refuted" and result.result.raw_verdict.value == "refuted"
    assert result.result.samples == record.samples, "every raw sample is kept"
    assert result.params == {"dtype": "bfloat16", "size_mib": 256}
    assert result.claim.probe.name == "qmv"
    assert result.claim.source.doc == "docs/qmv-bandwidth.md"
    assert result.claim.check.params["threshold"] == 0.74
    run = store.run(run_id)
    assert run.status == "complete" and run.effective_status == "complete"
    assert run.machine["device"].startswith("AMD EPYC")
    assert run.suite_commit == "a" * 40 and run.claims_commit == "b" * 40
    assert store.integrity_check() == "ok"
    assert store.schema_version == 4


def test_wal_mode(tmp_path: Path) -> None:
    EvidenceStore(tmp_path / "ev.sqlite").close()
    conn = sqlite3.connect(tmp_path / "ev.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_repeat_of_same_outcome_is_ignored_and_a_different_one_refused(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev.sqlite")
    run_id = _run(store)
    assert store.record(run_id, synth.outcome()) is True
    assert store.record(run_id, synth.outcome()) is False
    with pytest.raises(DuplicateResult, match="never overwritten"):
        store.record(run_id, synth.outcome(statistic=0.9))
    assert len(store.results(run_id)) == 1
    assert store.results(run_id)[0].decision.statistic == 0.41


@pytest.mark.parametrize(
    "broken, message",
    [
        (lambda r: dataclasses.replace(r, item_id=""), "without an item_id"),
        (lambda r: dataclasses.replace(r, claim=dataclasses.replace(r.claim, id="")), "no claim_id"),
        (lambda r: r.to_record(), "must be an ItemResult"),
    ],
)
def test_malformed_outcomes_are_refused_in_one_line(tmp_path: Path, broken, message: str) -> None:
    store = EvidenceStore(tmp_path / "ev.sqlite")
    run_id = _run(store)
    with pytest.raises(StoreError, match=message) as error:
        store.record(run_id, broken(synth.outcome()))
    assert "\n" not in str(error.value)
    assert store.results(run_id) == []


def test_unknown_run_and_complete_run_are_refused(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev.sqlite")
    with pytest.raises(StoreError, match="no run nope"):
        store.record("nope", synth.outcome())
    run_id = _run(store)
    store.finish_run(run_id)
    with pytest.raises(StoreError, match="is complete"):
        store.record(run_id, synth.outcome())


def test_claims_are_kept_as_they_were_in_the_run(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev.sqlite")
    run_id = _run(store)
    store.record_claims(run_id, [Claim.from_record(synth.claim_record("qmv-large-bw")),
                                 Claim.from_record(synth.claim_record("other-claim", title="T2"))])
    claims = store.claims(run_id)
    assert set(claims) == {"qmv-large-bw", "other-claim"}
    assert claims["other-claim"].title == "T2"
    assert claims["qmv-large-bw"].probe.name == "qmv"


def test_cascade_adjustment_is_appended_and_the_recorded_verdict_kept(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev.sqlite")
    run_id = _run(store)
    store.record(run_id, synth.outcome(verdict="holds", statistic=0.8, low=0.77, high=0.83))
    stale = Adjustment("cascade", Verdict.HOLDS, Verdict.STALE, "premise raw-read-bw was refuted",
                       chain=("raw-read-bw (refuted)", "qmv-large-bw"))
    store.add_adjustments(run_id, "qmv-large-bw[size_mib=256]", [stale])
    (result,) = store.results(run_id)
    assert result.verdict.value == "stale"
    assert result.result.raw_verdict.value == "holds"
    assert result.reason == "premise raw-read-bw was refuted"
    assert result.result.adjustments == (stale,)


def test_adjustments_append_in_order_until_the_run_is_finished(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev.sqlite")
    run_id = _run(store)
    store.record(run_id, synth.outcome())
    family = Adjustment("family", Verdict.REFUTED, Verdict.INCONCLUSIVE, "refuted before adjusting for 12 claims",
                        adjusted_pvalue=0.012)
    store.add_adjustments(run_id, "qmv-large-bw[size_mib=256]", [family])
    (result,) = store.results(run_id)
    assert (result.verdict.value, result.result.raw_verdict.value) == ("inconclusive", "refuted")
    family_step = result.result.adjustment("family")
    assert (family_step.after.value, family_step.adjusted_pvalue) == ("inconclusive", 0.012)
    assert result.reason == "refuted before adjusting for 12 claims"
    with pytest.raises(StoreError, match="no item nope"):
        store.add_adjustments(run_id, "nope", [family])
    with pytest.raises(StoreError, match="is inconclusive; an adjustment from refuted does not apply"):
        store.add_adjustments(run_id, "qmv-large-bw[size_mib=256]", [family])
    store.finish_run(run_id)
    late = Adjustment("cascade", Verdict.INCONCLUSIVE, Verdict.STALE, "late")
    with pytest.raises(StoreError, match="is complete"):
        store.add_adjustments(run_id, "qmv-large-bw[size_mib=256]", [late])


def test_runs_are_listed_newest_first(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev.sqlite")
    first, other, second = _three_runs(store)
    assert [r.run_id for r in store.runs()] == [second, other, first]
    assert [r.run_id for r in store.runs(synth.CLASS_A)] == [second, first]
    assert [r.run_id for r in store.runs(limit=1)] == [second]
    assert store.latest_run(synth.CLASS_B).run_id == other
    assert store.runs(synth.CLASS_A)[0].result_count == 3


def test_running_run_of_a_dead_process_reads_incomplete_and_is_marked_so(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev.sqlite")
    run_id = _run(store)
    assert store.run(run_id).effective_status == "running"
    # Pretend the writer was a process that no longer exists.
    store._conn.execute("UPDATE runs SET pid = 2147483600 WHERE run_id = ?", (run_id,))
    assert store.run(run_id).status == "running"
    assert store.run(run_id).effective_status == "incomplete"
    _run(store)
    assert store.run(run_id).status == "incomplete"


def _three_runs(store: EvidenceStore) -> tuple[str, str, str]:
    """run 1 (class A), run on class B in between, run 2 (class A)."""
    first = _run(store)
    store.record(first, synth.outcome(item="size_mib=64", verdict="holds", statistic=0.80, low=0.78, high=0.82))
    store.record(first, synth.outcome(item="size_mib=128", verdict="holds", statistic=0.90, low=0.85, high=0.95))
    store.record(first, synth.outcome(item="size_mib=256", verdict="holds", statistic=0.76, low=0.75, high=0.80))
    store.finish_run(first)
    other = _run(store, synth.CLASS_B, synth.MACHINE_B)
    store.record(other, synth.outcome(item="size_mib=64", verdict="refuted", statistic=0.10, low=0.05, high=0.2,
                                      machine=synth.MACHINE_B, machine_class=synth.CLASS_B))
    store.finish_run(other)
    second = _run(store)
    store.record(second, synth.outcome(item="size_mib=64", verdict="refuted", statistic=0.70, low=0.68, high=0.72))
    store.record(second, synth.outcome(item="size_mib=128", verdict="holds", statistic=0.97, low=0.96, high=0.98))
    store.record(second, synth.outcome(item="size_mib=256", verdict="holds", statistic=0.77, low=0.75, high=0.79))
    store.finish_run(second)
    return first, other, second


def test_drift_compares_with_the_previous_run_of_the_same_machine_class(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev.sqlite")
    first, other, second = _three_runs(store)
    assert store.previous_run(second).run_id == first, "the class-B run in between is not comparable"
    drifts = {d.item_id: d for d in store.drift(second)}
    assert set(drifts) == {"qmv-large-bw[size_mib=64]", "qmv-large-bw[size_mib=128]"}
    verdict = drifts["qmv-large-bw[size_mib=64]"]
    assert verdict.verdict_changed and verdict.previous_verdict == "holds" and verdict.verdict == "refuted"
    assert verdict.previous_run_id == first
    figure = drifts["qmv-large-bw[size_mib=128]"]
    assert figure.figure_moved and not figure.verdict_changed, "0.97 lies outside last run's [0.85, 0.95]"
    assert "outside last run's interval" in figure.message()
    assert store.drift(first) == [], "a first run has nothing to drift from"
    assert store.drift(other) == [], "the only class-B run has no class-B predecessor"


def test_history_spans_runs_and_machine_classes(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev.sqlite")
    first, other, second = _three_runs(store)
    rows = [r for r in store.history("qmv-large-bw") if r.item_id.endswith("[size_mib=64]")]
    assert [r.run_id for r in rows] == [first, other, second]
    assert [r.machine_class for r in rows] == [synth.CLASS_A, synth.CLASS_B, synth.CLASS_A]
    assert [r.verdict.value for r in rows] == ["holds", "refuted", "refuted"]
    assert store.history("no-such-claim") == []


def test_history_reads_only_its_own_claim_from_each_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A report reads every claim's history; reading every claim of every run there was quadratic."""
    from claimcheck.store import _reading

    store = EvidenceStore(tmp_path / "ev.sqlite")
    for _ in range(4):
        run_id = _run(store)
        for number in range(10):
            store.record(run_id, synth.outcome(f"claim-{number}", item=None))
        store.finish_run(run_id)
    parsed: list[str] = []
    original = _reading.stored_claim
    monkeypatch.setattr(_reading, "stored_claim", lambda row: parsed.append(row["claim_id"]) or original(row))
    rows = store.history("claim-3")
    assert len(rows) == 4 and {row.claim.id for row in rows} == {"claim-3"}
    assert parsed == ["claim-3"] * 4


def test_resolve_run_by_prefix_and_latest(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev.sqlite")
    with pytest.raises(StoreError, match="no runs yet"):
        store.resolve_run(None)
    a = store.begin_run(machine={}, machine_class="x", options={}, suite_commit=None, claims_commit=None,
                        run_id="run-alpha")
    b = store.begin_run(machine={}, machine_class="x", options={}, suite_commit=None, claims_commit=None,
                        run_id="run-beta")
    assert store.resolve_run("latest").run_id == b
    assert store.resolve_run("run-a").run_id == a
    with pytest.raises(StoreError, match="ambiguous"):
        store.resolve_run("run-")
    with pytest.raises(StoreError, match="already exists"):
        store.begin_run(machine={}, machine_class="x", options={}, suite_commit=None, claims_commit=None,
                        run_id="run-alpha")


def test_git_commits_outside_a_repository_is_none(tmp_path: Path) -> None:
    assert git_commits(tmp_path) == (None, None)


def test_reading_commands_choose_this_machines_class_first(tmp_path: Path) -> None:
    from claimcheck.store import choose_class

    store = EvidenceStore(tmp_path / "ev.sqlite")
    first, other, second = _three_runs(store)  # class A, class B, class A; class A's run is not the newest
    later = _run(store, synth.CLASS_B, synth.MACHINE_B)
    store.finish_run(later)
    assert choose_class(store, mine=synth.CLASS_A).machine_class == synth.CLASS_A
    assert choose_class(store, mine=synth.CLASS_A).how == "this machine's class"
    assert store.resolve_run(None, synth.CLASS_A).run_id == second
    elsewhere = choose_class(store, mine="cpu/Other/1-2GiB")
    assert elsewhere.machine_class == synth.CLASS_B and "no run of this machine's class cpu/Other/1-2GiB" in elsewhere.how
    assert choose_class(store, synth.CLASS_A, mine=synth.CLASS_B).how == "given with --machine-class"
    assert choose_class(None, mine=synth.CLASS_A).machine_class == synth.CLASS_A
