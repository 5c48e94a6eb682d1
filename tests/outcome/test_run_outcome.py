"""One recorded outcome, rendered by every surface: they show the same treatment for every row of the policy.

A run's results are concluded once (:func:`claimcheck.outcome.run.conclude`) and recorded with the run.
The terminal and JUnit render that object; the run's report, ``claimcheck report`` and ``publish``
rebuild it from the store; the CI summary reads it too. None of them is handed the lock: after
recording, the lock file is replaced by an empty one, and every surface still shows what the run showed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from claimcheck import cli
from claimcheck.engine import expectations as locks
from claimcheck.engine.expectations import Expectations
from claimcheck.outcome import Flags, policy
from claimcheck.outcome.run import NOT_RECORDED, RunOutcome, conclude
from claimcheck.pytest_plugin.adapter import status
from claimcheck.pytest_plugin.junit import case_key, finalize
from claimcheck.store import EvidenceStore
from claimcheck.verdict import Verdict
from claimcheck.workflow import summary

from .test_policy_surfaces import EXPECTATIONS, FLAGS, MACHINE_CLASS, lock_for, result_with

CLEAN = {"args": ["claims/"], "selection": {"keyword": "", "markexpr": ""}}


def _html_rows(page: str) -> dict[str, tuple[str, str]]:
    """Item id -> (outcome category, outcome word) as an index.html shows them."""
    found = {}
    for category, body in re.findall(r'<tr data-verdict="[^"]*" data-outcome="([^"]*)">(.*?)</tr>', page, re.S):
        item = re.search(r"<code>([^<]*)</code>", body)
        word = re.search(r'<td class="outcome">([^<]*)</td>', body)
        if item and word:
            found[item.group(1)] = (category, word.group(1))
    return found


def _record(tmp_path: Path, expected: object, flags: Flags) -> tuple[Path, str, RunOutcome, Path]:
    results = [result_with(verdict) for verdict in Verdict]
    lock = lock_for(results, expected)
    lock_path = tmp_path / "verdicts.lock"
    if lock is not None:
        locks.write(lock_path, lock)
    path = tmp_path / "store.sqlite"
    with EvidenceStore(path) as store:
        run_id = store.begin_run(machine={"backend": "cpu"}, machine_class=MACHINE_CLASS, suite_commit="1" * 40,
                                 claims_commit="2" * 40,
                                 options={**CLEAN, "strict": flags.strict,
                                          "cascade": "fail" if flags.cascade_fails else "report"})
        for result in results:
            store.record(run_id, result)
        outcome = conclude(run_id, results, lock, flags, lock_path)
        store.record_outcome(outcome)
        store.finish_run(run_id)
    return path, run_id, outcome, lock_path


@pytest.mark.parametrize("expected", EXPECTATIONS, ids=str)
@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: f"strict={f.strict},cascade={f.cascade_fails}")
def test_every_surface_renders_the_one_recorded_outcome(expected: object, flags: Flags, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from claimcheck.report import build_reports

    store_path, run_id, outcome, lock_path = _record(tmp_path, expected, flags)
    wanted = {found.item_id: found.treatment for found in outcome.findings}

    # The summary reads the recorded outcome while the lock is the one the run was judged against.
    with EvidenceStore(store_path, readonly=True) as store:
        stored = store.outcome(run_id)
        assert {f.item_id: f.treatment for f in stored.findings} == wanted, "the store gives back what was shown"
        lock_now = locks.read(lock_path)
        shown, note = summary.shown_outcome(stored, lock_now, lock_path)
    if expected != "no lock":
        assert note is None, "a run judged against this lock is shown as judged"
    for row in summary.rows(shown):
        assert row.level == wanted[row.item_id].ci_level, row

    # The lock changes after the run: reports and publish still show what the run showed.
    locks.write(lock_path, Expectations())

    for found in outcome.findings:  # terminal: the category, letter and word pytest shows
        category, letter, (word, _) = status(found)
        assert (category, letter, word) == (wanted[found.item_id].category, wanted[found.item_id].letter,
                                             wanted[found.item_id].word)

    junit = tmp_path / "junit.xml"
    nodeids = {f"claims/x.yaml::{found.item_id}": found for found in outcome.findings}
    cases = "".join(f'<testcase classname="{case_key(n)[0]}" name="{case_key(n)[1]}"/>' for n in nodeids)
    junit.write_text(f'<testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>')
    finalize(junit, nodeids)
    for case in ET.parse(junit).getroot().iter("testcase"):
        item = case.get("name", "")
        tags = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        assert tags == ([] if wanted[item].junit == "passed" else [wanted[item].junit]), item

    pages = {"run": build_reports(store_path, run_id, tmp_path / "run", plots=False, docs=[]).index_html}
    assert cli.main(["report", "--store", str(store_path), "--run", run_id, "--out", str(tmp_path / "cli"),
                     "--no-plots"]) == 0
    pages["claimcheck report"] = tmp_path / "cli" / "index.html"
    assert cli.main(["publish", "--store", str(store_path), "--run", run_id, "--out", str(tmp_path / "published"),
                     "--no-plots"]) == 0, capsys.readouterr().err
    pages["publish"] = tmp_path / "published" / "index.html"
    for surface, page in pages.items():
        rows = _html_rows(page.read_text())
        assert set(rows) == set(wanted), surface
        for item, (category, word) in rows.items():
            assert (category, word) == (wanted[item].category, wanted[item].word.lower()), (surface, item)
    for surface, folder in (("run", "run"), ("claimcheck report", "cli"), ("publish", "published")):
        shown = _markdown_outcomes((tmp_path / folder / "index.md").read_text())
        assert shown == {item: treatment.word.lower() for item, treatment in wanted.items()}, f"{surface} index.md"
    compared = _comparison_cells((tmp_path / "published" / "profiles" / "comparison.md").read_text())
    assert set(compared) == set(wanted) - {f.item_id for f in outcome.findings if f.result.deterministic}
    for item, shown_cell in compared.items():
        found = outcome.finding(item)
        plain = policy.PLAIN[found.verdict].word
        treated = "" if wanted[item].word == plain else f" ({wanted[item].word.lower()})"
        assert shown_cell.startswith(f"**{found.verdict.value}**{treated} "), (item, shown_cell)
    capsys.readouterr()


def _markdown_outcomes(body: str) -> dict[str, str]:
    """Item id -> the outcome column of index.md's claim-items table."""
    table = body.split("## Claim items", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip().strip("|").split(" | ") for line in table.splitlines() if line.startswith("| ")]
    return {row[0].strip().replace("\\", ""): row[2].strip() for row in rows[1:] if len(row) > 2}


def _comparison_cells(body: str) -> dict[str, str]:
    """Item id -> its one class's cell in a comparison.md table."""
    cells = {}
    for line in body.splitlines():
        parts = [part.strip() for part in line.strip().strip("|").split(" | ")]
        if len(parts) == 3 and parts[0].startswith("`"):
            cells[parts[0].strip("`")] = parts[2]
    return cells


def test_the_summary_names_a_re_judgement_against_another_lock(tmp_path: Path) -> None:
    store_path, run_id, outcome, lock_path = _record(tmp_path, Verdict.HOLDS, Flags())
    refuted = result_with(Verdict.REFUTED).item_id
    assert outcome.finding(refuted).fails_run, "refuted where the lock expects a hold: changed"
    locks.write(lock_path, lock_for([outcome.finding(refuted).result], Verdict.REFUTED))
    with EvidenceStore(store_path, readonly=True) as store:
        shown, note = summary.shown_outcome(store.outcome(run_id), locks.read(lock_path), lock_path)
    assert note is not None and note.startswith(f"re-judged against `{lock_path}`") and "judged against" in note
    assert not shown.finding(refuted).fails_run, "today's lock expects the refutation"
    assert outcome.finding(refuted).fails_run, "the recorded outcome is untouched"


def test_a_run_stored_before_judgements_were_kept_says_so(tmp_path: Path) -> None:
    from claimcheck.report import build_reports

    path = tmp_path / "store.sqlite"
    with EvidenceStore(path) as store:
        run_id = store.begin_run(machine={"backend": "cpu"}, machine_class=MACHINE_CLASS, options=CLEAN)
        store.record(run_id, result_with(Verdict.REFUTED))
        store.finish_run(run_id)
        outcome = store.outcome(run_id)
    assert not outcome.judgement.recorded and outcome.judgement.describe() == NOT_RECORDED
    assert outcome.findings[0].fails_run, "judged without a lock, a refutation fails"
    built = build_reports(path, run_id, tmp_path / "out", plots=False, docs=[])
    assert NOT_RECORDED in built.index_md.read_text()


def test_the_summary_names_items_whose_final_outcome_differs_from_what_was_printed() -> None:
    held = result_with(Verdict.HOLDS)
    final = held.adjusted(__import__("claimcheck.engine.result", fromlist=["Adjustment"]).Adjustment(
        "family", Verdict.HOLDS, Verdict.INCONCLUSIVE, "Holm over 2"))
    outcome = conclude("run-1", [final], None, Flags(), None, {held.item_id: "PASSED"})
    assert outcome.changed_since_printed() == [(held.item_id, "PASSED", outcome.findings[0].treatment.word)]
    unchanged = conclude("run-1", [held], None, Flags(), None, {held.item_id: "PASSED"})
    assert unchanged.changed_since_printed() == [] and unchanged.printed == {}
