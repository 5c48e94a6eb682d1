"""A run's terminal output names its run, and a log kept beside a profile is the log of that profile's latest run.

A kept log is evidence a reader trusts as it stands (how long the run took, how it exited), so one left from
an older run says something the profile no longer does.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from claimcheck.store import EvidenceStore

PROFILES = Path(__file__).resolve().parents[2] / "reports" / "profiles"
RUN_LINE = re.compile(r"^run: (\S+) in (.+)$", re.MULTILINE)
LOG_SUFFIX = "-pytest.log"

CLAIM = """\
id: mean-above
title: a mean well above its threshold
statement: the mean of x is at least 10
source: {doc: d.md, section: "1", figure: "x >= 10"}
scope: {kind: portable, backend: any}
probe: {name: normal, params: {mean: 14, sd: 1}}
check: {rule: at_least, output: x, threshold: 10}
budget: {min_samples: 10, max_samples: 20, looks: 1}
"""


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


def published_logs() -> list[Path]:
    return sorted(PROFILES.glob(f"*{LOG_SUFFIX}"))


def test_every_kept_log_sits_beside_the_profile_it_ran_for() -> None:
    orphans = [log.name for log in published_logs()
               if not (PROFILES / (log.name.removesuffix(LOG_SUFFIX) + ".sqlite")).is_file()]
    assert not orphans, f"logs with no profile `<name>.sqlite` beside them: {orphans}"


@pytest.mark.parametrize("log", published_logs(), ids=lambda path: path.name)
def test_a_kept_log_is_the_log_of_its_profiles_latest_run(log: Path) -> None:
    named = RUN_LINE.findall(log.read_text(errors="replace"))
    assert len(named) == 1, f"{log.name}: names {len(named)} runs; a kept log is one run's, with its `run:` line"
    with EvidenceStore.open_readonly(PROFILES / (log.name.removesuffix(LOG_SUFFIX) + ".sqlite")) as profile:
        latest = profile.latest_run()
        assert latest is not None and named[0][0] == latest.run_id, (
            f"{log.name} is the log of run {named[0][0]}; the profile's latest run is "
            f"{latest.run_id if latest else None}: keep that run's log or none")
