"""The end of a run: adjudicate, correct pytest's counts, store, report, gate the docs.

The verdict changes themselves live in :mod:`claimcheck.adjudicate`; this
module applies them to pytest's reports before the terminal summary is printed,
so the summary line and the exit code use the final verdicts.
"""

from __future__ import annotations

from typing import Any

import pytest

from claimcheck import evidence
from claimcheck.adjudicate import adjudicate_run
from claimcheck.result import ItemResult
from claimcheck.session import ClaimSession
from claimcheck.verdict import Verdict

# pytest's (category, letter, word) for a final verdict that differs from what the item reported.
CATEGORIES: dict[Verdict, tuple[str, str, Any]] = {
    Verdict.INCONCLUSIVE: ("inconclusive", "?", ("INCONCLUSIVE", {"yellow": True})),
    Verdict.STALE: ("stale", "s", ("STALE", {"yellow": True})),
}


def _move(terminal: Any, report: pytest.TestReport, category: str) -> None:
    if terminal is None:
        return
    for reports in terminal.stats.values():
        if report in reports:
            reports.remove(report)
    terminal.stats.setdefault(category, []).append(report)


def _relabel(cs: ClaimSession, session: pytest.Session, nodeid: str, result: ItemResult) -> None:
    """Make pytest's report of one item say its final verdict."""
    config = session.config
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    report = cs.reports.get(nodeid)
    if report is None:
        return
    verdict = result.verdict
    failing = verdict is Verdict.REFUTED or verdict is Verdict.ERROR or (
        verdict is Verdict.INCONCLUSIVE and config.getoption("--claims-strict")
    ) or (verdict is Verdict.STALE and config.getoption("--claims-cascade") == "fail")
    if failing and not report.failed:
        report.outcome = "failed"
        session.testsfailed += 1
    elif not failing and report.failed:
        report.outcome = "passed"
        session.testsfailed = max(0, session.testsfailed - 1)
    if verdict is Verdict.STALE and failing:
        category = ("failed", "S", "STALE")
    else:
        category = CATEGORIES.get(verdict, ("failed", "F", "FAILED") if failing else ("passed", ".", "PASSED"))
    report.claimcheck_category = category  # type: ignore[attr-defined]  # read by pytest_report_teststatus
    report.user_properties = [(k, v) for k, v in report.user_properties if k != "verdict"]
    report.user_properties.append(("verdict", verdict.value))
    _move(terminal, report, category[0])


def finish_session(cs: ClaimSession, session: pytest.Session) -> None:
    """Adjudicate the run, relabel pytest's reports, then store, report and gate docs."""
    config = session.config
    nodeids = list(cs.results)
    before = [cs.results[nodeid] for nodeid in nodeids]
    store, run_id = cs.store, cs.run_id

    def elsewhere(claim_ids: set[str]) -> dict[str, Verdict]:
        return evidence.latest_verdicts(store, run_id, claim_ids) if store is not None else {}

    run = adjudicate_run(before, family=config.getoption("--claims-family"), premises=cs.premises(),
                         premise_verdicts=elsewhere)
    for nodeid, old, new in zip(nodeids, before, run.results):
        cs.results[nodeid] = new
        if new.verdict is not old.verdict:
            _relabel(cs, session, nodeid, new)
    cs.stale = {claim_id: list(chain) for claim_id, chain in run.chains.items()}

    if session.testsfailed == 0 and session.exitstatus == pytest.ExitCode.TESTS_FAILED:
        session.exitstatus = pytest.ExitCode.OK
    elif session.testsfailed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

    if store is not None and run_id is not None:
        interrupted = bool(session.shouldstop or session.shouldfail or
                           session.exitstatus == pytest.ExitCode.INTERRUPTED)
        cs.drift_lines, cs.report_paths = evidence.close_run(
            store, run_id, before, run.results, complete=not interrupted,
            reports=evidence.reports_dir(config, cs.rootdir))
    docs = config.getoption("--claims-docs")
    if docs is not None:
        terminal = config.pluginmanager.get_plugin("terminalreporter")

        def write_line(text: str, **markup: bool) -> None:
            if terminal is not None:
                terminal.write_line(text, **markup)

        if terminal is not None:
            terminal.section("claimcheck docs gate", sep="-")
        failures = evidence.gate_docs(store, docs or ["docs/findings"], cs.claims_dirs(),
                                      evidence.reports_dir(config, cs.rootdir), write_line)
        if failures and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def terminal_summary(cs: ClaimSession, terminal: Any) -> None:
    """The claimcheck section of the terminal summary: final verdict counts, machine, stale chains, drift."""
    counts = evidence.counts(cs.results)
    terminal.section("claimcheck", sep="-")
    terminal.write_line("verdicts: " + ", ".join(f"{n} {v.value}" for v, n in sorted(counts.items(),
                                                                                       key=lambda kv: kv[0].value)))
    machine = next(iter(cs.results.values())).machine_class
    if machine:
        terminal.write_line(f"machine: {machine}")
    stale_ids = {r.claim_id for r in cs.results.values() if r.verdict is Verdict.STALE}
    for claim_id, chain in sorted(cs.stale.items()):
        if claim_id in stale_ids:
            terminal.write_line(f"stale: {claim_id} <- " + " -> ".join(chain), yellow=True)
    for line in cs.drift_lines:
        terminal.write_line(f"drifted: {line}", yellow=True)
    for path in cs.report_paths:
        terminal.write_line(f"report: {path}")
