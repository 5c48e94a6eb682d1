"""Every row of the verdict policy, walked through the terminal, JUnit and the HTML report: they must agree.

A row is a final verdict, what the lock expects of it (no lock, no expectation, or each accepted
verdict), ``--claims-strict`` and ``--claims-cascade``. Each surface is rendered by its own code from
the item's finding, and read back: the progress letter and word, the JUnit element, the HTML row's
outcome and colour, and the report file it links to.
"""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from claimcheck.claim import Budget, Check, Claim, ProbeSpec, Scope, Source
from claimcheck.engine.expectations import ACCEPTED, ClassExpectations, Expectations, compare
from claimcheck.pytest_plugin.junit import case_key, finalize
from claimcheck.outcome import Flags, Role, find, policy, treat
from claimcheck.outcome.run import conclude
from claimcheck.pytest_plugin.adapter import status
from claimcheck.engine.result import Adjustment, ItemResult
from claimcheck.verdict import Verdict

MACHINE_CLASS = "cpu/Test CPU/16-32GiB"
NO_LOCK, NO_EXPECTATION = "no lock", "no expectation"
EXPECTATIONS: list[object] = [NO_LOCK, NO_EXPECTATION, *ACCEPTED]
FLAGS = [Flags(strict, cascade) for strict, cascade in itertools.product((False, True), repeat=2)]


def _claim(claim_id: str) -> Claim:
    return Claim(claim_id, "A claim", "It holds.", Source("doc.md", "§1", "42 ms"), Scope(), ProbeSpec("p"),
                 Check("at_most", output="ms", params={"threshold": 1.0}), budget=Budget())


def result_with(verdict: Verdict, claim_id: str | None = None) -> ItemResult:
    """A final result of ``verdict``: stale by the cascade step, as a run makes it."""
    claim = _claim(claim_id or f"row-{verdict.value}")
    if verdict is Verdict.STALE:
        base = ItemResult(claim, claim.id, {}, Verdict.HOLDS, "held", machine_class=MACHINE_CLASS)
        return base.adjusted(Adjustment("cascade", Verdict.HOLDS, Verdict.STALE, "premise p did not hold"))
    return ItemResult(claim, claim.id, {}, verdict, f"it is {verdict.value}", machine_class=MACHINE_CLASS)


def lock_for(results: list[ItemResult], expected: object) -> Expectations | None:
    if expected == NO_LOCK:
        return None
    items = {} if expected == NO_EXPECTATION else {r.item_id: expected for r in results}
    return Expectations({MACHINE_CLASS: ClassExpectations("run-0", items)})  # type: ignore[arg-type]


ROWS = [(verdict, expected, flags) for verdict in Verdict for expected in EXPECTATIONS for flags in FLAGS]


@pytest.mark.parametrize(("verdict", "expected", "flags"), ROWS,
                         ids=[f"{v.value}-{e}-{'strict' if f.strict else 'lenient'}-{'cascade' if f.cascade_fails else 'report'}"
                              for v, e, f in ROWS])
def test_terminal_and_junit_say_the_policy_row(verdict: Verdict, expected: object, flags: Flags,
                                               tmp_path: Path) -> None:
    result = result_with(verdict)
    finding = find(result, lock_for([result], expected), flags)
    agreement = None if expected == NO_LOCK else compare(verdict, None if expected == NO_EXPECTATION else expected)  # type: ignore[arg-type]
    treatment = treat(verdict, None if agreement is None or agreement.value == "not compared" else agreement,
                      flags=flags)
    assert finding.treatment == treatment

    category, letter, (word, markup) = status(finding)
    assert (category, letter, word) == (treatment.category, treatment.letter, treatment.word)
    assert markup == {treatment.markup: True}
    # The run's failures are exactly the red F/E rows, and nothing else shows as a failure.
    assert treatment.fails_run == (category in ("failed", "error"))

    nodeid = f"claims/x.yaml::{result.item_id}"
    junit = tmp_path / "junit.xml"
    classname, name = case_key(nodeid)
    junit.write_text(f'<testsuites><testsuite name="pytest" failures="0"><testcase classname="{classname}" '
                     f'name="{name}"/></testsuite></testsuites>')
    finalize(junit, {nodeid: finding})
    (case,) = ET.parse(junit).getroot().iter("testcase")
    tags = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
    assert tags == ([] if treatment.junit == "passed" else [treatment.junit])
    assert bool(set(tags) & {"failure", "error"}) == treatment.fails_run
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties["verdict"] == verdict.value and properties["raw_verdict"] == result.raw_verdict.value
    if expected not in (NO_LOCK, NO_EXPECTATION):
        assert properties["expected"] == expected.value  # type: ignore[attr-defined]
    if treatment.junit == "skipped" and not treatment.skips:
        (skipped,) = case.iter("skipped")
        assert skipped.get("message", "").startswith(treatment.word.lower() + ":")


def test_each_progress_letter_has_one_meaning_but_fail_and_pass() -> None:
    from claimcheck.outcome.policy import JUDGED, PLAIN, ROLES

    words: dict[str, set[str]] = {}
    for treatment in [*PLAIN.values(), *JUDGED.values(), *ROLES.values()]:
        words.setdefault(treatment.letter, set()).add(treatment.word)
    assert all(treatment.fails_run for treatment in [*PLAIN.values(), *JUDGED.values()] if treatment.letter == "F")
    assert {letter: meant for letter, meant in words.items() if len(meant) > 1 and letter not in "F."} == {}


def test_controls_and_unshown_claims_have_their_own_rows() -> None:
    refuted_control = treat(Verdict.REFUTED, role=Role.CONTROL)
    assert (refuted_control.letter, refuted_control.fails_run, refuted_control.junit) == ("c", False, "passed")
    for verdict in (Verdict.HOLDS, Verdict.INCONCLUSIVE):
        held = treat(verdict, role=Role.CONTROL)
        assert (held.word, held.fails_run, held.junit) == ("CONTROL NOT REFUTED", False, "skipped")
    assert treat(Verdict.ERROR, role=Role.CONTROL).fails_run
    unshown = treat(Verdict.HOLDS, role=Role.NOT_SHOWN)
    assert (unshown.letter, unshown.junit, unshown.fails_run) == ("n", "skipped", False)
    assert treat(Verdict.REFUTED, role=Role.NOT_SHOWN) == treat(Verdict.REFUTED), "only a hold needs its control"


@pytest.mark.parametrize("expected", EXPECTATIONS, ids=str)
@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: f"strict={f.strict},cascade={f.cascade_fails}")
def test_the_html_report_shows_each_items_outcome_colour_and_report(expected: object, flags: Flags,
                                                                    tmp_path: Path) -> None:
    from claimcheck.report import build_reports
    from claimcheck.store import EvidenceStore

    results = [result_with(verdict) for verdict in Verdict]
    lock = lock_for(results, expected)
    store = EvidenceStore(tmp_path / "store.sqlite")
    run_id = store.begin_run(machine={"backend": "cpu"}, machine_class=MACHINE_CLASS,
                             options={"strict": flags.strict, "cascade": "fail" if flags.cascade_fails else "report"})
    for result in results:
        store.record(run_id, result)
    store.record_outcome(conclude(run_id, results, lock, flags, tmp_path / "verdicts.lock"))
    store.finish_run(run_id)
    built = build_reports(store, run_id, tmp_path / "out", plots=False, docs=[])
    page = built.index_html.read_text()
    for result in results:
        treatment = find(result, lock, flags).treatment
        row = re.search(rf'<tr data-verdict="{result.verdict.value}" data-outcome="([^"]*)">(.*?)</tr>', page, re.S)
        assert row is not None, f"no row for {result.item_id}"
        assert row.group(1) == treatment.category
        assert f'<td class="outcome">{treatment.word.lower()}</td>' in row.group(2)
        assert f"background:{policy.colour(result.verdict)}" in row.group(2)
        linked = re.search(r'<td class="link"><a href="#([a-z]+)-', row.group(2))
        kind = policy.report_kind(result.verdict)
        assert (linked.group(1) if linked else None) == (policy.REPORT_WORDS[kind] if kind else None)
        folder = built.out_dir / (policy.REPORT_FOLDERS[kind] if kind else "nowhere")
        assert (folder / f"{result.claim_id}.md").exists() == (kind is not None)
    store.close()


def test_the_published_outcome_table_is_the_policy() -> None:
    from claimcheck.outcome.table import markdown

    published = Path(__file__).resolve().parents[2] / "docs" / "outcomes.md"
    assert published.read_text() == markdown(), "regenerate: python -m claimcheck.outcome.table > docs/outcomes.md"


GATE_CLAIM = """\
id: {id}
title: A cited claim
statement: It holds.
source: {{doc: doc.md, section: "§1", figure: "some figure"}}
scope: {{kind: portable, backend: any}}
probe: {{name: p}}
check: {{rule: at_most, output: ms, threshold: 1.0}}
"""


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_the_docs_gate_judges_a_citation_as_the_policy_says(strict: bool, tmp_path: Path) -> None:
    """A sentence citing an item: overturned is an error, undecided a warning (an error under strict), a
    premise that failed or a probe that failed an error, a holding claim nothing; never a verdict of its own."""
    from claimcheck.gate import check_docs
    from claimcheck.store import EvidenceStore

    results = [result_with(verdict) for verdict in Verdict]
    claims = tmp_path / "claims"
    claims.mkdir()
    (claims / "cited.yaml").write_text("---\n".join(GATE_CLAIM.format(id=r.claim_id) for r in results))
    doc = tmp_path / "doc.md"
    doc.write_text("".join(f"This sentence cites it. <!-- claim: {r.claim_id} -->\n\n" for r in results))
    with EvidenceStore(tmp_path / "store.sqlite") as store:
        run_id = store.begin_run(machine={"device": MACHINE_CLASS}, machine_class=MACHINE_CLASS)
        for result in results:
            store.record(run_id, result)
        store.finish_run(run_id)
        report = check_docs([doc], store, claim_paths=[claims], machine_class=MACHINE_CLASS,
                            reports_dir=tmp_path / "reports", strict=strict)
    for line, result in enumerate(results, start=1):
        verdict = result.verdict
        found = {p.severity for p in report.problems if p.line == 2 * line - 1}
        if policy.standing(verdict):
            expected: set[str] = set()
        elif policy.not_checked(verdict):
            continue  # outside its scope here: the gate looks for the committed evidence of its own class
        elif policy.undecided(verdict):
            expected = {"error" if strict else "warning"}
        else:  # overturned, stale or errored: the sentence cites what does not stand here
            expected = {"error"}
        assert found == expected, (verdict, [str(p) for p in report.problems])
        assert policy.cites_badly(verdict) == bool(found)
