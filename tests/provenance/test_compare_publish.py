"""``claimcheck compare`` and ``publish`` rebuild the committed comparison from recorded runs, commits shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claimcheck import cli
from claimcheck.store import EvidenceStore


def _run(path: Path, synth: Any, machine_class: str, statistic: float, suite: str | None) -> str:
    with EvidenceStore(path) as store:
        machine = synth.MACHINE_A if machine_class == synth.CLASS_A else synth.MACHINE_B
        run_id = store.begin_run(machine=machine, machine_class=machine_class, suite_commit=suite,
                                 claims_commit="2" * 40)
        store.record(run_id, synth.outcome(statistic=statistic, low=statistic - 0.02, high=statistic + 0.02,
                                           machine=machine, machine_class=machine_class))
        store.finish_run(run_id)
    return run_id


def test_compare_takes_the_latest_run_of_each_class_and_names_its_commits(tmp_path: Path, synthetic: Any,
                                                                          capsys: Any) -> None:
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    _run(a, synthetic, synthetic.CLASS_A, 0.30, "1" * 40)
    newer_a = _run(a, synthetic, synthetic.CLASS_A, 0.41, "3" * 40 + "+dirty")
    only_b = _run(b, synthetic, synthetic.CLASS_B, 0.80, None)
    assert cli.main(["compare", str(a), str(b), "--out", str(tmp_path / "out")]) == 0
    body = (tmp_path / "out" / "comparison.md").read_text()
    assert f"run `{newer_a}`" in body and f"suite {'3' * 12} (dirty), claims {'2' * 12}" in body
    assert f"run `{only_b}`" in body and "suite not recorded" in body
    assert "0.41" in body and "0.30" not in body, "the older run of class A is not compared"
    assert newer_a in capsys.readouterr().out


def test_compare_refuses_a_missing_store_in_one_line(tmp_path: Path, capsys: Any) -> None:
    assert cli.main(["compare", str(tmp_path / "none.sqlite"), "--out", str(tmp_path)]) != 0
    assert "no evidence store there" in capsys.readouterr().err


def test_publish_records_the_run_in_a_profile_and_rebuilds_reports_and_comparison(tmp_path: Path, synthetic: Any,
                                                                                  monkeypatch: Any) -> None:
    store = tmp_path / "ev.sqlite"
    run_id = _run(store, synthetic, synthetic.CLASS_A, 0.41, "1" * 40)
    monkeypatch.chdir(tmp_path)
    args = ["publish", "--store", str(store), "--run", run_id, "--no-plots"]
    assert cli.main(args) == 0
    profile = tmp_path / "reports" / "profiles" / "cpu-amd-epyc-9xxx-16-32gib.sqlite"
    with EvidenceStore.open_readonly(profile) as recorded:
        assert recorded.run_ids() == [run_id] and recorded.run(run_id).suite_commit == "1" * 40
    assert run_id in (tmp_path / "reports" / "index.md").read_text()
    assert f"run `{run_id}`" in (tmp_path / "reports" / "profiles" / "comparison.md").read_text()
    assert cli.main(args) == 0, "publishing the same run again is harmless"
    with EvidenceStore.open_readonly(profile) as recorded:
        assert recorded.run_ids() == [run_id]


def test_a_run_is_recorded_in_the_profile_of_its_class_only(tmp_path: Path, synthetic: Any) -> None:
    """A profile holding another class's runs is never written to: a reader of one profile reads one class."""
    from claimcheck.cli._evidence import profile_for, profile_slug

    mixed, own = tmp_path / "a-mixed.sqlite", tmp_path / "b-own.sqlite"
    _run(mixed, synthetic, synthetic.CLASS_A, 0.4, None)
    _run(mixed, synthetic, synthetic.CLASS_B, 0.8, None)  # another class's run merged in for reading
    _run(own, synthetic, synthetic.CLASS_B, 0.8, None)
    assert profile_for(tmp_path, synthetic.CLASS_B) == own
    assert profile_for(tmp_path, synthetic.CLASS_A) == tmp_path / f"{profile_slug(synthetic.CLASS_A)}.sqlite" != mixed
    assert profile_for(tmp_path, "cuda/NVIDIA H200/128-256GiB") == tmp_path / "cuda-nvidia-h200-128-256gib.sqlite"
    assert profile_for(tmp_path, synthetic.CLASS_A, "cpu-epyc") == tmp_path / "cpu-epyc.sqlite"


def test_a_published_profile_is_one_file_that_reading_leaves_alone(tmp_path: Path, synthetic: Any,
                                                                   monkeypatch: Any) -> None:
    """A committed profile holds everything itself: no write-ahead log to lose, no side files when it is read."""
    import sqlite3

    store = tmp_path / "ev.sqlite"
    run_id = _run(store, synthetic, synthetic.CLASS_A, 0.41, "1" * 40)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["publish", "--store", str(store), "--run", run_id, "--no-plots"]) == 0
    profiles = tmp_path / "reports" / "profiles"
    profile = profiles / "cpu-amd-epyc-9xxx-16-32gib.sqlite"
    assert sorted(p.name for p in profiles.glob("*.sqlite*")) == [profile.name]
    with sqlite3.connect(profile) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert cli.main(["compare", str(profile), "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in profiles.glob("*.sqlite*")) == [profile.name], "reading wrote side files"
