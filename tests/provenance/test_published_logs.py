"""A run's terminal output names its run, and a log kept beside a profile is the log of that profile's latest run.

A kept log is evidence a reader trusts as it stands (how long the run took, how it exited), so one left from
an older run says something the profile no longer does.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from claimcheck.store import EvidenceStore
from tests.reliability._project import claim_yaml

PROFILES = Path(__file__).resolve().parents[2] / "reports" / "profiles"
RUN_LINE = re.compile(r"^run: (\S+) in (.+)$", re.MULTILINE)
LOG_SUFFIX = "-pytest.log"

CLAIM = claim_yaml("mean-above", "normal", params={"mean": 14, "sd": 1},
                   check={"rule": "at_least", "output": "x", "threshold": 10},
                   budget={"min_samples": 10, "max_samples": 20, "looks": 1})


def test_the_summary_names_the_run_and_the_store_it_was_recorded_in(demo_project: pytest.Pytester) -> None:
    (demo_project.path / "claims" / "one.yaml").write_text(CLAIM)
    store = demo_project.path / "evidence.sqlite"
    result = demo_project.runpytest("claims", "--claims-store", str(store))
    found = RUN_LINE.findall(result.stdout.str())
    with EvidenceStore.open_readonly(store) as opened:
        latest = opened.latest_run()
    assert latest is not None and found == [(latest.run_id, str(store))]


def test_a_run_that_keeps_no_evidence_names_no_run(demo_project: pytest.Pytester) -> None:
    (demo_project.path / "claims" / "one.yaml").write_text(CLAIM)
    result = demo_project.runpytest("claims", "--claims-no-store")
    assert result.ret == pytest.ExitCode.OK and not RUN_LINE.findall(result.stdout.str())


def log_problems(folder: Path) -> list[str]:
    """What is wrong with each ``<profile>-pytest.log`` in ``folder``: no profile beside it, not one run's, not the latest."""
    problems = []
    for log in sorted(folder.glob(f"*{LOG_SUFFIX}")):
        profile = folder / (log.name.removesuffix(LOG_SUFFIX) + ".sqlite")
        if not profile.is_file():
            problems.append(f"{log.name}: no profile `{profile.name}` beside it")
            continue
        named = RUN_LINE.findall(log.read_text(errors="replace"))
        if len(named) != 1:
            problems.append(f"{log.name}: names {len(named)} runs; a kept log is one run's, with its `run:` line")
            continue
        with EvidenceStore.open_readonly(profile) as opened:
            latest = opened.latest_run()
        if latest is None or named[0][0] != latest.run_id:
            problems.append(f"{log.name} is the log of run {named[0][0]}; the profile's latest run is "
                            f"{latest.run_id if latest else None}: keep that run's log or none")
    return problems


def test_every_log_kept_beside_a_profile_is_the_log_of_its_latest_run() -> None:
    assert not log_problems(PROFILES)


def test_a_log_of_an_older_run_or_of_no_run_is_found(tmp_path: Path) -> None:
    with EvidenceStore(tmp_path / "gpu.sqlite") as store:
        older = store.begin_run(machine={}, machine_class="cuda/x")
        store.finish_run(older)
        latest = store.begin_run(machine={}, machine_class="cuda/x")
        store.finish_run(latest)
    log = tmp_path / f"gpu{LOG_SUFFIX}"
    log.write_text(f"verdicts: 3 holds\nrun: {latest} in /root/gpu.sqlite\n")
    assert log_problems(tmp_path) == []
    log.write_text(f"verdicts: 3 holds\nrun: {older} in /root/gpu.sqlite\n")
    assert [problem.split(" is ")[0] for problem in log_problems(tmp_path)] == [log.name]
    log.write_text("verdicts: 3 holds\n")
    assert "names 0 runs" in log_problems(tmp_path)[0]
    (tmp_path / f"cpu{LOG_SUFFIX}").write_text("")
    assert any("no profile" in problem for problem in log_problems(tmp_path))
