"""Expected verdicts: comparing a run with the lock, and `claimcheck accept` writing it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from claimcheck import cli
from claimcheck.engine import expectations
from claimcheck.engine.expectations import Agreement, LockError, compare
from claimcheck.store import EvidenceStore
from claimcheck.verdict import Verdict

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("cc_synthetic", ROOT / "tests" / "store" / "synthetic.py")
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)

H, R, I, N = Verdict.HOLDS, Verdict.REFUTED, Verdict.INCONCLUSIVE, Verdict.NOT_APPLICABLE


@pytest.mark.parametrize("verdict, expected, agreement", [
    (H, H, Agreement.AS_EXPECTED),
    (R, R, Agreement.EXPECTED_REFUTATION),
    (R, H, Agreement.CHANGED),
    (H, R, Agreement.CHANGED),
    (H, None, Agreement.UNREVIEWED),
    (R, None, Agreement.UNREVIEWED),
    (I, H, Agreement.UNDECIDED),
    (I, None, Agreement.NOT_COMPARED),
    (I, I, Agreement.AS_EXPECTED),
    (H, I, Agreement.NEWLY_DECIDED),
    (R, I, Agreement.NEWLY_DECIDED),
    (N, H, Agreement.NOT_COMPARED),
    (Verdict.ERROR, H, Agreement.NOT_COMPARED),
])
def test_every_verdict_against_every_expectation(verdict, expected, agreement) -> None:
    assert compare(verdict, expected) is agreement


def test_the_lock_round_trips_and_keeps_other_classes(tmp_path) -> None:
    lock = tmp_path / "verdicts.lock"
    first = expectations.accepted(expectations.read(lock), "cpu/x", "run-1", [("a", H), ("b", R), ("c", I)])
    expectations.write(lock, first)
    second = expectations.accepted(expectations.read(lock), "metal/y", "run-2", [("a", R)])
    expectations.write(lock, second)
    back = expectations.read(lock)
    assert back.expected("cpu/x", "a") is H and back.expected("cpu/x", "b") is R
    assert back.expected("cpu/x", "c") is I, "an item this machine cannot decide is expected to stay undecided"
    assert expectations.accepted(back, "cpu/x", "run-3", [("d", N)]).expected("cpu/x", "d") is None
    assert back.expected("metal/y", "a") is R and back.classes["metal/y"].run_id == "run-2"
    assert lock.read_text().startswith("# Expected verdicts per machine class")


@pytest.mark.parametrize("text, message", [
    ("version: 9\nclasses: {}\n", "not a version-1 verdict lock"),
    ("version: 1\nclasses: {cpu: {items: {a: maybe}}}\n", "cpu / a: 'maybe' is not a verdict"),
    ("version: 1\nclasses: {cpu: []}\n", "has no `items` mapping"),
    ("version: [1\n", "cannot read the expected verdicts"),
])
def test_a_broken_lock_is_one_line_naming_the_file(tmp_path, text, message) -> None:
    lock = tmp_path / "verdicts.lock"
    lock.write_text(text)
    with pytest.raises(LockError, match=message) as error:
        expectations.read(lock)
    assert str(lock) in str(error.value) and "\n" not in str(error.value)


def test_accept_writes_the_runs_decided_verdicts_and_lists_the_changes(tmp_path, capsys) -> None:
    store_path, lock = tmp_path / "ev.sqlite", tmp_path / "verdicts.lock"
    with EvidenceStore(store_path) as store:
        for verdict in ("holds", "refuted"):
            run_id = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, options={})
            store.record(run_id, synth.outcome(verdict=verdict))
            store.record(run_id, synth.outcome(item="size_mib=64", verdict="inconclusive"))
            store.finish_run(run_id)
            args = ["accept", "--store", str(store_path), "--lock", str(lock), "--machine-class", synth.CLASS_A]
            assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "2 item(s); 0 changed, 2 new" in out
    assert "changed  qmv-large-bw[size_mib=256]: holds -> refuted" in out
    assert expectations.read(lock).expected(synth.CLASS_A, "qmv-large-bw[size_mib=256]") is R


def test_an_update_from_part_of_the_suite_keeps_the_items_it_did_not_run() -> None:
    base = expectations.accepted(expectations.Expectations(), "cpu/x", "run-1", [("a", H), ("b", R), ("c", I)])
    part = expectations.accepted(base, "cpu/x", "run-2", [("b", H), ("c", N), ("d", R)], update=True)
    section = part.classes["cpu/x"]
    assert dict(section.items) == {"a": H, "b": H, "d": R}, "c ran and was not decided, so it is dropped"
    assert section.run_id == "run-1", "the section stays the run it was accepted from"
    assert section.run_of("a") == "run-1" and section.run_of("b") == section.run_of("d") == "run-2", \
        "each item added or changed by the update names its own run"
    replaced = expectations.accepted(base, "cpu/x", "run-2", [("d", R)])
    assert dict(replaced.classes["cpu/x"].items) == {"d": R}, "without update the run is the whole suite"


def test_a_deterministic_item_of_another_backend_keeps_its_own_expectation() -> None:
    """A model-bound exact result is the same wherever the backend is, not across backends: a CUDA run
    accepting an item the every-class section holds for the CPU files it under its own class, and the
    CPU's entry stays."""
    cpu = expectations.Independent(Verdict.HOLDS, "exact curve result: the same wherever the backend is cpu", "cpu")
    current = expectations.Expectations({}, {"exact-twin": cpu, "arith": expectations.Independent(
        Verdict.REFUTED, "arithmetic", "any")})
    cuda = "cuda/NVIDIA H200/128-256GiB"
    independent = {"exact-twin": ("cuda", "exact: the same wherever the backend is cuda"), "arith": ("any", "arith")}
    for verdict in (Verdict.HOLDS, Verdict.REFUTED):
        updated = expectations.accepted(current, cuda, "run-1", [("exact-twin", verdict), ("arith", Verdict.HOLDS)],
                                        independent=independent)
        assert updated.every_class["exact-twin"] == cpu, "the CPU's expectation is not the CUDA run's to change"
        assert updated.classes[cuda].items["exact-twin"] is verdict
        assert updated.expected(cuda, "exact-twin") is verdict
        assert updated.every_class["arith"].verdict is Verdict.HOLDS, "arithmetic stays machine-independent"
