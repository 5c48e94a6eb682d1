"""Positive controls: `control:` params under which a claim must be refuted, run with --claims-controls."""

from __future__ import annotations

import json

import pytest

from claimcheck.engine.controls import attach_controls
from claimcheck.errors import ClaimError
from claimcheck.claims.loader import check_probe, load_claims_text
from claimcheck.engine.result import ControlOutcome, ItemResult
from claimcheck.verdict import Verdict

CLAIMS = """\
id: able-to-fail
title: a mean well above its threshold
statement: the mean of x is at least 10
source: {doc: d.md, section: "1", figure: "x >= 10"}
scope: {kind: portable, backend: any}
probe: {name: normal, params: {mean: 14, sd: 1}}
check: {rule: at_least, output: x, threshold: 10}
budget: {min_samples: 10, max_samples: 40, looks: 3}
control: {params: {mean: 6}, why: "a mean of 6 is below the threshold, so the check must refute it"}
---
id: cannot-fail
title: a check whose control is still true
statement: the mean of x is at least 10
source: {doc: d.md, section: "2", figure: "x >= 10"}
scope: {kind: portable, backend: any}
probe: {name: normal, params: {mean: 14, sd: 1}}
check: {rule: at_least, output: x, threshold: 10}
budget: {min_samples: 10, max_samples: 40, looks: 3}
control: {params: {mean: 13}, why: "a control that does not make the claim false (a broken control)"}
"""


@pytest.fixture
def project(demo_project: pytest.Pytester) -> pytest.Pytester:
    (demo_project.path / "claims" / "controls.yaml").write_text(CLAIMS)
    return demo_project


def test_controls_run_beside_their_claims_only_when_asked(project: pytest.Pytester) -> None:
    plain = project.runpytest("claims", "--collect-only", "-q", "--claims-no-store")
    assert "[control]" not in plain.stdout.str()
    asked = project.runpytest("claims", "--collect-only", "-q", "--claims-no-store", "--claims-controls",
                              "-k", "able-to-fail")
    asked.stdout.fnmatch_lines(["claims/controls.yaml::able-to-fail", "claims/controls.yaml::able-to-fail[[]control[]]"])


def test_a_claim_whose_control_is_not_refuted_is_not_shown_able_to_fail(project: pytest.Pytester) -> None:
    result = project.runpytest("claims", "-v", "--claims-no-store", "--claims-controls")
    result.stdout.fnmatch_lines([
        "*able-to-fail PASSED*",
        "*able-to-fail[[]control[]] CONTROL REFUTED*",
        "*cannot-fail[[]control[]] CONTROL NOT REFUTED*",
    ])
    result.stdout.fnmatch_lines([
        "controls: 1 of 2 refuted (claim shown able to fail here)",
        "not shown able to fail here: cannot-fail (control cannot-fail[[]control[]] holds: *",
    ])
    # the holding claim whose control held leaves "passed" for a category of its own
    result.stdout.fnmatch_lines(["*= 1 passed, *2 controls, 1 not shown able to fail here in *"])
    assert "verdicts: 2 holds" in result.stdout.str(), "a control's verdict is not counted as a claim's"
    assert result.ret == pytest.ExitCode.OK


def test_the_control_outcome_travels_on_the_claims_results() -> None:
    claim = load_claims_text(CLAIMS, "c.yaml")[0]
    control = claim.for_control()
    assert control.id == "able-to-fail--control" and control.probe.params == {"mean": 6, "sd": 1}
    assert control.check == claim.check and control.scope == claim.scope and control.control is None
    mine = ItemResult(claim, claim.id, {"mean": 14}, Verdict.HOLDS, "holds")
    probe_result = ItemResult(control, f"{claim.id}[control]", {"mean": 6}, Verdict.REFUTED, "refuted",
                              control_for=claim.id)
    attached = attach_controls([mine, probe_result])
    assert attached[1] is probe_result and attached[0].verdict is Verdict.HOLDS
    assert attached[0].control == ControlOutcome(f"{claim.id}[control]", {"mean": 6}, Verdict.REFUTED, "refuted")
    assert attached[0].control.shown_able_to_fail
    for result in attached:
        again = ItemResult.from_record(json.loads(json.dumps(result.to_record())))
        assert again.control == result.control and again.control_for == result.control_for
        assert again.claim.control == result.claim.control
    assert "control" not in mine.to_record() and "control_for" not in mine.to_record(), "old records stay as they were"


def test_a_control_budget_replaces_the_claims_budget_for_the_control_alone() -> None:
    text = CLAIMS.split("---\n")[0].replace(
        'why: "a mean of 6', 'budget: {max_samples: 90, max_seconds: 30}, why: "a mean of 6')
    claim = load_claims_text(text, "c.yaml")[0]
    control = claim.for_control()
    assert (control.budget.min_samples, control.budget.max_samples, control.budget.looks) == (10, 90, 3)
    assert control.budget.max_seconds == 30 and claim.budget.max_samples == 40, "the claim keeps its own budget"
    again = type(claim).from_record(json.loads(json.dumps(claim.to_record())))
    assert again.control == claim.control and again.for_control().budget == control.budget
    unmeasurable = text.replace("budget: {max_samples: 90, max_seconds: 30}", "budget: {max_samples: 5}")
    with pytest.raises(ClaimError, match=r"c.yaml:9: control.budget.min_samples: the control's budget would measure"):
        load_claims_text(unmeasurable, "c.yaml")
    misspelt = text.replace("max_samples: 90", "max_sample: 90")
    with pytest.raises(ClaimError, match=r"control.budget.max_sample.*unknown key"):
        load_claims_text(misspelt, "c.yaml")


def test_a_control_is_checked_against_the_probe_like_any_param(project: pytest.Pytester) -> None:
    from claimcheck.probing.registry import load_probe_modules

    load_probe_modules(str(project.path))
    text = CLAIMS.split("---\n")[0].replace("params: {mean: 6}", "params: {maen: 6}")
    with pytest.raises(ClaimError, match=r"c.yaml:9: control.params.maen: probe `normal` has no param `maen`"):
        check_probe(load_claims_text(text, "c.yaml")[0])
    empty = CLAIMS.split("---\n")[0].replace("params: {mean: 6}, ", "")
    with pytest.raises(ClaimError, match=r"control.params: a control must replace at least one probe param \(or say `none: true`"):
        load_claims_text(empty, "c.yaml")


def test_accepting_a_run_with_controls_leaves_the_controls_out_of_the_lock(project: pytest.Pytester) -> None:
    from claimcheck import cli
    from claimcheck.engine import expectations

    assert project.runpytest("claims", "--claims-controls", "-k", "able-to-fail").ret == pytest.ExitCode.OK
    store, lock = project.path / "reports" / "claimcheck.sqlite", project.path / "claims" / "verdicts.lock"
    assert cli.main(["accept", "--store", str(store), "--lock", str(lock), "--update"]) == 0
    (section,) = expectations.read(lock).classes.values()
    assert section.items == {"able-to-fail": Verdict.HOLDS}, "a control is judged against its claim, not the lock"


def test_a_hold_whose_control_was_not_refuted_is_accepted_as_undecided(project: pytest.Pytester,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Accepting it as a hold would make a hold that nothing showed able to fail the class's expectation."""
    from claimcheck import cli
    from claimcheck.engine import expectations

    assert project.runpytest("claims", "--claims-controls", "-k", "fail").ret == pytest.ExitCode.OK
    store, lock = project.path / "reports" / "claimcheck.sqlite", project.path / "claims" / "verdicts.lock"
    assert cli.main(["accept", "--store", str(store), "--lock", str(lock), "--update"]) == 0
    (section,) = expectations.read(lock).classes.values()
    assert section.items["able-to-fail"] is Verdict.HOLDS
    assert section.items["cannot-fail"] is Verdict.INCONCLUSIVE
    assert "undecided cannot-fail: it held, but its control was not refuted" in capsys.readouterr().out
