"""A run judged against committed expected verdicts, played as a maintainer would: run, accept, change."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from claimcheck import cli
from claimcheck.engine import expectations
from claimcheck.verdict import Verdict

DEMO = Path(__file__).resolve().parents[1] / "demo"
REFUTED = "claims/rules.yaml::demo-at-most-refuted"


def _run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest("claims", "--claims-family=none", "-p", "no:randomly", *args)


def test_a_known_refutation_is_expected_and_a_change_fails(demo_project: pytest.Pytester) -> None:
    shutil.copy(DEMO / "claims" / "rules.yaml", demo_project.path / "claims" / "rules.yaml")
    first = _run(demo_project)
    assert first.ret == pytest.ExitCode.TESTS_FAILED, "without a lock a refutation fails the run"

    store, lock = demo_project.path / "reports" / "claimcheck.sqlite", demo_project.path / "claims" / "verdicts.lock"
    assert cli.main(["accept", "--store", str(store), "--lock", str(lock)]) == 0
    accepted = expectations.read(lock)
    (machine_class,) = accepted.classes
    assert accepted.expected(machine_class, "demo-at-most-refuted") is Verdict.REFUTED

    junit = demo_project.path / "junit.xml"
    again = _run(demo_project, f"--junitxml={junit}")
    assert again.ret == pytest.ExitCode.OK, again.stdout.str()[-2000:]
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    known = cases["demo-at-most-refuted"]
    assert known.find("failure") is None, "an expected refutation is no failure in the XML either"
    assert {p.get("name"): p.get("value") for p in known.iter("property")}["verdict"] == "refuted"
    assert junit.stat().st_size < 20_000
    again.stdout.fnmatch_lines(["claims/rules.yaml .x..x....?s *",  # the live letters already say the outcome
                                "expected verdicts (*verdicts.lock): 8 as expected, 2 expected refutation"])
    summary = again.stdout.lines[-1]
    assert all(part in summary for part in ("7 passed", "1 skipped", "1 inconclusive", "2 expected refutation")), summary

    # Someone claims the refuted item holds: the run fails, naming the item and the expectation.
    text = lock.read_text().replace("demo-at-most-refuted: refuted", "demo-at-most-refuted: holds")
    lock.write_text(text)
    changed = _run(demo_project)
    assert changed.ret == pytest.ExitCode.TESTS_FAILED
    changed.stdout.fnmatch_lines(["*verdict changed: expected holds*now refuted*claimcheck accept*",
                                  f"changed: {REFUTED} (expected holds)"])

    # A decided item nobody accepted fails too.
    edited = expectations.read(lock)
    assert "demo-exact-holds" in edited.every_class, "an exact decision of a deterministic probe is every class's"
    del edited.every_class["demo-exact-holds"]
    expectations.write(lock, edited)
    unreviewed = _run(demo_project)
    assert unreviewed.ret == pytest.ExitCode.TESTS_FAILED
    unreviewed.stdout.fnmatch_lines(["no expectation: claims/rules.yaml::demo-exact-holds"])


def test_inconclusive_against_an_expectation_warns_unless_strict(demo_project: pytest.Pytester) -> None:
    one = (DEMO / "claims" / "rules.yaml").read_text().split("---\n")[8]  # the under-budgeted claim
    (demo_project.path / "claims" / "one.yaml").write_text(one)
    assert _run(demo_project).ret == pytest.ExitCode.OK
    store, lock = demo_project.path / "reports" / "claimcheck.sqlite", demo_project.path / "claims" / "verdicts.lock"
    from claimcheck.store import EvidenceStore

    with EvidenceStore(store, readonly=True) as opened:
        run = opened.latest_run()
        (item,) = opened.results(run.run_id)
    assert item.verdict is Verdict.INCONCLUSIVE
    expectations.write(lock, expectations.accepted(expectations.Expectations(), run.machine_class, run.run_id,
                                                   [(item.item_id, Verdict.HOLDS)]))
    relaxed = _run(demo_project)
    assert relaxed.ret == pytest.ExitCode.OK
    relaxed.stdout.fnmatch_lines(["*1 undecided*"])
    assert _run(demo_project, "--claims-strict").ret == pytest.ExitCode.TESTS_FAILED



def test_a_claims_folder_outside_claims_dirs_says_how_to_collect_it(demo_project: pytest.Pytester) -> None:
    other = demo_project.path / "other"
    other.mkdir()
    one = (DEMO / "claims" / "rules.yaml").read_text().split("---\n")[0]
    (other / "one.yaml").write_text(one)
    folder = demo_project.runpytest("other", "--co", "-q", "--claims-no-store")
    folder.stdout.fnmatch_lines(["claimcheck: */other is outside claims_dirs (claims): its 1 YAML file(s) were not "
                                 "collected as claims; add the folder's name to claims_dirs*"])
    direct = demo_project.runpytest("other/one.yaml", "--co", "-q", "--claims-no-store")
    direct.stdout.fnmatch_lines(["other/one.yaml::*"])
    assert "outside claims_dirs" not in direct.stdout.str()


def test_a_machine_class_without_a_section_is_judged_by_the_plain_rule(demo_project: pytest.Pytester) -> None:
    shutil.copy(DEMO / "claims" / "rules.yaml", demo_project.path / "claims" / "rules.yaml")
    lock = demo_project.path / "claims" / "verdicts.lock"
    other = expectations.accepted(expectations.Expectations(), "metal/Apple M1 Max/64-128GiB", "run-m1",
                                  [("demo-at-most-refuted", Verdict.HOLDS)])
    expectations.write(lock, other)
    result = _run(demo_project)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, "the refutations fail as without a lock"
    result.stdout.fnmatch_lines(["expected verdicts (*verdicts.lock): none for machine class cpu/*; judged without them*"])
