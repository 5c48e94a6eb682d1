"""`pytest --claims-changed`: an unchanged item is carried forward, an edited claim's items are measured again."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from claimcheck.store import EvidenceStore

CLAIMS = """
id: carry-alpha
title: Alpha holds
statement: Samples of mean 10 are at least 5.
source: {doc: demo.md, section: "1", figure: "alpha"}
scope: {kind: portable, backend: any}
probe: {name: normal, params: {mean: 10.0}, grid: {sd: [0.5, 1.0]}}
check: {rule: at_least, output: x, threshold: 5}
budget: {min_samples: 6, max_samples: 12, looks: 2}
---
id: carry-beta
title: Beta holds
statement: Samples of mean 3 are at most 6.
source: {doc: demo.md, section: "2", figure: "beta"}
scope: {kind: portable, backend: any}
probe: {name: normal, params: {mean: 3.0}}
check: {rule: at_most, output: x, threshold: 6}
budget: {min_samples: 6, max_samples: 12, looks: 2}
---
id: carry-gamma
title: Gamma holds
statement: Samples of mean 20 are at least 15.
source: {doc: demo.md, section: "3", figure: "gamma"}
scope: {kind: portable, backend: any}
probe: {name: normal, params: {mean: 20.0}}
check: {rule: at_least, output: x, threshold: 15}
budget: {min_samples: 6, max_samples: 12, looks: 2}
"""


def _latest(project: pytest.Pytester):
    with EvidenceStore(project.path / "reports" / "claimcheck.sqlite") as store:
        run = store.runs()[0]
        return run, {stored.item_id: stored.result for stored in store.results(run.run_id)}


def _run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest("claims", "-v", "-p", "no:cacheprovider", *args)


@pytest.fixture
def carried_project(demo_project: pytest.Pytester) -> pytest.Pytester:
    (demo_project.path / "claims" / "carry.yaml").write_text(CLAIMS)
    first = _run(demo_project)
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()[-3000:]
    return demo_project


def test_an_unchanged_suite_measures_nothing_and_carries_every_item(carried_project: pytest.Pytester) -> None:
    first_run, first = _latest(carried_project)
    assert len(first) == 4 and all(result.content_key and not result.carried_from for result in first.values())
    junit = carried_project.path / "junit.xml"
    second = _run(carried_project, "--claims-changed", f"--junitxml={junit}")
    assert second.ret == pytest.ExitCode.OK, second.stdout.str()[-3000:]
    second.stdout.fnmatch_lines(["claimcheck: 0 to measure, 4 carried forward unchanged",
                                 f"*carry-beta PASSED (carried from {first_run.run_id})*",
                                 f"carried: 4 item(s) from earlier run(s) ({first_run.run_id}; content unchanged), 0 measured"])
    run, results = _latest(carried_project)
    assert run.run_id != first_run.run_id and run.status == "complete"
    assert {item: result.carried_from for item, result in results.items()} == {item: first_run.run_id for item in first}
    assert {item: result.decision.statistic for item, result in results.items()} == \
        {item: result.decision.statistic for item, result in first.items()}
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    properties = {p.get("name"): p.get("value") for p in cases["carry-gamma"].iter("property")}
    assert properties["carried_from"] == first_run.run_id
    html = (carried_project.path / ".claimcheck" / "reports" / "index.html").read_text(encoding="utf-8")
    assert f"carried from <code>{first_run.run_id}</code>" in html


def test_a_one_claim_edit_measures_only_that_claims_items(carried_project: pytest.Pytester) -> None:
    first_run, first = _latest(carried_project)
    path = carried_project.path / "claims" / "carry.yaml"
    path.write_text(path.read_text().replace("threshold: 6}", "threshold: 7}"))  # carry-beta only
    second = _run(carried_project, "--claims-changed")
    assert second.ret == pytest.ExitCode.OK, second.stdout.str()[-3000:]
    second.stdout.fnmatch_lines(["claimcheck: 1 to measure, 3 carried forward unchanged"])
    run, results = _latest(carried_project)
    measured = sorted(item for item, result in results.items() if not result.carried_from)
    assert measured == ["carry-beta"]
    assert results["carry-beta"].claim.check.params["threshold"] == 7
    # the carried run is itself the newest evidence: a third run carries everything, beta from the second run
    third = _run(carried_project, "--claims-changed")
    third.stdout.fnmatch_lines(["claimcheck: 0 to measure, 4 carried forward unchanged"])
    _, results = _latest(carried_project)
    assert results["carry-beta"].carried_from == run.run_id
    assert results["carry-alpha[sd=0.5]"].carried_from == first_run.run_id


def test_a_probe_edit_or_another_seed_measures_again(carried_project: pytest.Pytester) -> None:
    reseeded = _run(carried_project, "--claims-changed", "--claims-seed=7")
    reseeded.stdout.fnmatch_lines(["claimcheck: 4 to measure, 0 carried forward unchanged"])
    probe = carried_project.path / "probes" / "synthetic.py"
    probe.write_text(probe.read_text() + "\n# an edit of the probe module\n")
    edited = _run(carried_project, "--claims-changed")
    edited.stdout.fnmatch_lines(["claimcheck: 4 to measure, 0 carried forward unchanged"])


def test_since_run_names_the_run_to_compare_with(carried_project: pytest.Pytester) -> None:
    first_run, _ = _latest(carried_project)
    _run(carried_project, "--claims-seed=3")  # a newer run under other keys
    since = _run(carried_project, f"--since-run={first_run.run_id}")
    since.stdout.fnmatch_lines(["claimcheck: 0 to measure, 4 carried forward unchanged"])
    missing = _run(carried_project, "--since-run=nosuchrun")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["*--since-run nosuchrun: no run of that id in *"])


BROKEN = """
---
id: carry-broken
title: A probe that fails
statement: Never decided.
source: {doc: demo.md, section: "4", figure: "broken"}
scope: {kind: portable, backend: any}
probe: {name: broken}
check: {rule: at_least, output: x, threshold: 1}
budget: {min_samples: 4, max_samples: 8, looks: 1}
"""


def test_an_item_that_errored_is_measured_again(demo_project: pytest.Pytester) -> None:
    (demo_project.path / "claims" / "carry.yaml").write_text(CLAIMS + BROKEN)
    assert _run(demo_project).ret == pytest.ExitCode.TESTS_FAILED
    again = _run(demo_project, "--claims-changed")
    again.stdout.fnmatch_lines(["claimcheck: 1 to measure, 4 carried forward unchanged"])
    _, results = _latest(demo_project)
    assert results["carry-broken"].carried_from is None and results["carry-broken"].verdict.value == "error"
