"""``accept`` and ``publish`` refuse a run that would silently drop what was known, unless ``--force``."""

from __future__ import annotations

from pathlib import Path

import pytest

from claimcheck import cli
from claimcheck.engine import expectations
from claimcheck.store import EvidenceStore

from ._shared import synth

CLEAN = {"args": ["claims/"], "selection": {"keyword": "", "markexpr": ""}}


def _run(path: Path, n_items: int = 2, *, options: dict = CLEAN, suite: str = "1" * 40, finish: bool = True) -> str:
    with EvidenceStore(path) as store:
        run_id = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, options=options,
                                 suite_commit=suite, claims_commit="2" * 40)
        for k in range(n_items):
            store.record(run_id, synth.outcome(item=f"size_mib={k}", statistic=0.4, low=0.38, high=0.42))
        if finish:
            store.finish_run(run_id)
    return run_id


def _accept(store: Path, lock: Path, *extra: str) -> int:
    return cli.main(["accept", "--store", str(store), "--lock", str(lock), "--machine-class", synth.CLASS_A, *extra])


@pytest.mark.parametrize(("make", "reason"), [
    (lambda p: _run(p, options={**CLEAN, "selection": {"keyword": "qmv", "markexpr": ""}}), "ran part of the suite (-k 'qmv')"),
    (lambda p: _run(p, options={**CLEAN, "args": ["claims/arithmetic"]}), "ran part of the suite (claims/arithmetic)"),
    (lambda p: _run(p, finish=False), "(crashed, interrupted or still running)"),
    (lambda p: _run(p, suite="3" * 40 + "+dirty"), "was measured on a dirty tree (suite)"),
])
def test_accept_refuses_a_partial_crashed_or_dirty_run_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                     make, reason: str) -> None:
    store, lock = tmp_path / "s.sqlite", tmp_path / "verdicts.lock"
    make(store)
    assert _accept(store, lock) == 1
    err = capsys.readouterr().err
    assert reason in err and "accept: refused: " in err and "pass --force to accept it anyway" in err, err
    assert len(err.strip().splitlines()) == 1, "a refusal is one line"
    assert not lock.exists()
    assert _accept(store, lock, "--force") == 0
    assert expectations.read(lock).classes[synth.CLASS_A].items


def test_accept_refuses_a_run_with_fewer_items_than_the_last_accepted_one(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    store, lock = tmp_path / "s.sqlite", tmp_path / "verdicts.lock"
    _run(store, 3)
    assert _accept(store, lock) == 0
    smaller = _run(store, 1)
    assert _accept(store, lock) == 1
    assert f"run {smaller} has 1 item(s), fewer than the 3 of the last one of {synth.CLASS_A}" in capsys.readouterr().err
    assert len(expectations.read(lock).classes[synth.CLASS_A].items) == 3


def test_accept_dry_run_prints_the_lock_diff_and_writes_nothing(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    store, lock = tmp_path / "s.sqlite", tmp_path / "verdicts.lock"
    run_id = _run(store, 2)
    capsys.readouterr()
    assert _accept(store, lock, "--dry-run") == 0
    out = capsys.readouterr().out
    assert f"+++ b/{lock}" in out and f"+    run: {run_id}" in out
    assert "+      qmv-large-bw[size_mib=1]: refuted" in out
    assert "accept --dry-run: 0 changed, 2 new, 0 dropped; nothing written" in out
    assert not lock.exists()


def test_publish_refuses_a_dirty_run_and_its_dry_run_lists_what_would_change(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    store, out = tmp_path / "s.sqlite", tmp_path / "reports"
    _run(store, 2, suite="3" * 40 + "+dirty")
    args = ["publish", "--store", str(store), "--out", str(out), "--no-plots", "--machine-class", synth.CLASS_A]
    assert cli.main(args) == 1
    assert "was measured on a dirty tree (suite)" in capsys.readouterr().err
    assert not out.exists()
    assert cli.main([*args, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "added    index.md" in printed and "added    profiles/" in printed, printed
    assert "file(s) of" in printed and "would change; nothing written" in printed
    assert not out.exists(), "a dry run writes nothing"


@pytest.mark.parametrize(("options", "finish", "reason"), [
    ({**CLEAN, "shard": {"index": 1, "total": 2, "group": "local"}}, True, "is shard 1/2 of a matrix"),
    (CLEAN, False, "(crashed, interrupted or still running)"),
    ({**CLEAN, "selection": {"keyword": "qmv", "markexpr": ""}}, True, "ran part of the suite (-k 'qmv')"),
], ids=["shard", "interrupted", "selection"])
def test_publish_refuses_a_shard_an_interrupted_run_or_a_selection_with_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], options: dict, finish: bool, reason: str) -> None:
    store, out = tmp_path / "s.sqlite", tmp_path / "reports"
    run_id = _run(store, 2, options=options, finish=finish)
    capsys.readouterr()
    args = ["publish", "--store", str(store), "--out", str(out), "--no-plots", "--run", run_id]
    assert cli.main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("publish: refused: ") and reason in err[0], err
    assert not (out / "profiles").exists(), "nothing is recorded"
    assert cli.main([*args, "--force"]) == 0, "--force publishes it anyway"


def test_a_profile_holds_its_own_class_only(tmp_path: Path) -> None:
    """Publishing a run of another class never writes into a profile of this one."""
    from claimcheck.cli._evidence import profile_for

    folder = tmp_path / "profiles"
    folder.mkdir()
    mine = folder / "mine.sqlite"
    _run(mine, 1)
    assert profile_for(folder, synth.CLASS_A) == mine
    other = profile_for(folder, "cuda/NVIDIA H200/128-256GiB")
    assert other != mine and other.name == "cuda-nvidia-h200-128-256gib.sqlite"


def test_a_dry_run_links_the_docs_as_the_real_report_folder_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The dry run builds in a scratch folder; its pages must still link the docs as from ``--out``.

    Otherwise every page that cites a doc line reads as changed, and a publish that would change nothing says it would.
    """
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "finding.md").write_text("# F\n\nIt streams 0.3x. <!-- claim: qmv-large-bw -->\n")
    store, out = tmp_path / "s.sqlite", tmp_path / "reports"
    _run(store, 2)
    args = ["publish", "--store", str(store), "--out", str(out), "--no-plots", "--machine-class", synth.CLASS_A]
    assert cli.main(args) == 0
    assert 'href="../docs/finding.md#L3"' in (out / "index.html").read_text()
    capsys.readouterr()
    profile = next((out / "profiles").glob("*.sqlite"))
    before = profile.read_bytes()
    assert cli.main([*args, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "index.html" not in printed and "index.md" not in printed, printed
    assert "profiles/" not in printed and "0 file(s)" in printed, "the run is recorded already: nothing to change"
    assert cli.main(args) == 0 and "already recorded" in capsys.readouterr().out
    assert profile.read_bytes() == before, "publishing a recorded run again leaves its profile as it was"
