"""What pytest shows of findings, end to end: live letters, JUnit elements, and a run cut short."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from claimcheck import cli

DEMO = Path(__file__).resolve().parents[1] / "demo"

INTERRUPTING_PROBE = '''
from claimcheck.api import Output, ProbeContext, probe


@probe("interrupt", outputs={"x": Output("")})
def interrupt(ctx: ProbeContext) -> dict[str, list[float]]:
    """Stands for the user pressing Ctrl-C while this item measures."""
    raise KeyboardInterrupt
'''

INTERRUPTING_CLAIM = """
---
id: zz-interrupted-here
title: The item during which the run is cut short
statement: Never decided.
source: {doc: demo.md, section: "9", figure: "x"}
scope: {kind: portable, backend: any}
probe: {name: interrupt}
check: {rule: at_least, output: x, threshold: 1}
budget: {min_samples: 4, max_samples: 8, looks: 1}
"""


def _run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest("claims", "--claims-family=none", *args)


@pytest.fixture
def accepted_demo(demo_project: pytest.Pytester) -> pytest.Pytester:
    """The demo claims, run once and accepted into a lock (two expected refutations)."""
    shutil.copy(DEMO / "claims" / "rules.yaml", demo_project.path / "claims" / "rules.yaml")
    assert _run(demo_project).ret == pytest.ExitCode.TESTS_FAILED
    store, lock = demo_project.path / "reports" / "claimcheck.sqlite", demo_project.path / "claims" / "verdicts.lock"
    assert cli.main(["accept", "--store", str(store), "--lock", str(lock)]) == 0
    return demo_project


def test_junit_marks_undecided_items_skipped_and_fails_only_what_fails_the_run(accepted_demo: pytest.Pytester) -> None:
    junit = accepted_demo.path / "junit.xml"
    run = _run(accepted_demo, f"--junitxml={junit}")
    assert run.ret == pytest.ExitCode.OK, run.stdout.str()[-2000:]
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    undecided = cases["demo-inconclusive"].find("skipped")
    assert undecided is not None and undecided.get("message", "").startswith("inconclusive: ")
    refuted = cases["demo-at-most-refuted"]
    assert refuted.find("failure") is None
    skipped = refuted.find("skipped")
    assert skipped is not None and skipped.get("message", "").startswith("expected refutation: ")
    properties = {p.get("name"): p.get("value") for p in refuted.iter("property")}
    assert (properties["verdict"], properties["raw_verdict"], properties["expected"]) == ("refuted",) * 3
    assert cases["demo-at-least-holds"].find("skipped") is None and cases["demo-at-least-holds"].find("failure") is None
    suite = next(ET.parse(junit).getroot().iter("testsuite"))
    assert suite.get("failures") == "0" and suite.get("skipped") == str(
        sum(1 for case in cases.values() if case.find("skipped") is not None))


def test_a_strict_run_fails_undecided_items_in_junit_and_the_terminal(accepted_demo: pytest.Pytester) -> None:
    junit = accepted_demo.path / "junit.xml"
    run = _run(accepted_demo, "--claims-strict", f"--junitxml={junit}")
    assert run.ret == pytest.ExitCode.TESTS_FAILED
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    assert cases["demo-inconclusive"].find("failure") is not None
    assert cases["demo-at-most-refuted"].find("failure") is None, "an expected refutation stays expected"
    run.stdout.fnmatch_lines(["claims/rules.yaml .x..x....Fs *"])


def test_an_interrupted_run_shows_what_was_decided_with_expectations_applied(accepted_demo: pytest.Pytester) -> None:
    (accepted_demo.path / "probes" / "interrupt.py").write_text(INTERRUPTING_PROBE)
    claims = accepted_demo.path / "claims" / "rules.yaml"
    claims.write_text(claims.read_text() + INTERRUPTING_CLAIM)
    # In a child process: the interrupt must end that run, not this one.
    run = accepted_demo.runpytest_subprocess("claims", "--claims-family=none", "-p", "no:cacheprovider")
    assert run.ret == pytest.ExitCode.INTERRUPTED
    out = run.stdout.str()
    assert "FAILED" not in out, "an expected refutation is not a failure because the run was cut short"
    run.stdout.fnmatch_lines(["claims/rules.yaml .x..x....?s*",
                              "interrupted: 11 item(s) decided before the run was cut short*",
                              "expected verdicts (*): 8 as expected, 2 expected refutation"])
