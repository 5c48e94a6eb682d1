"""The end of a run: adjudicate, correct pytest's counts, store, report, gate the docs.

The verdict changes themselves live in :mod:`claimcheck.adjudicate`; this
module applies them to pytest's reports before the terminal summary is printed,
so the summary line and the exit code use the final verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from claimcheck import evidence
from claimcheck.adjudicate import FAMILY_NAMES, adjudicate_run, family_members
from claimcheck import expectations
from claimcheck.controls import NOT_SHOWN, attach_controls, control_outcomes, not_shown
from claimcheck.expectations import Agreement
from claimcheck.expected_run import Judged, judge, summary_lines
from claimcheck.numbers import number
from claimcheck.result import ItemResult
from claimcheck.stats import family_alpha
from claimcheck.session import ClaimSession
from claimcheck.verdict import Verdict

# pytest's (category, letter, word) for a final verdict that differs from what the item reported.
CATEGORIES: dict[Verdict, tuple[str, str, Any]] = {
    Verdict.INCONCLUSIVE: ("inconclusive", "?", ("INCONCLUSIVE", {"yellow": True})),
    Verdict.STALE: ("stale", "s", ("STALE", {"yellow": True})),
    Verdict.INCONSISTENT: ("inconsistent", "~", ("INCONSISTENT", {"yellow": True})),
}


def _move(terminal: Any, report: pytest.TestReport, category: str) -> None:
    if terminal is None:
        return
    for reports in terminal.stats.values():
        if report in reports:
            reports.remove(report)
    terminal.stats.setdefault(category, []).append(report)


def _relabel(cs: ClaimSession, session: pytest.Session, nodeid: str, result: ItemResult,
             judged: Judged | None = None) -> None:
    """Make pytest's report of one item say its final verdict (as the lock judges it, when there is one)."""
    config = session.config
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    report = cs.reports.get(nodeid)
    if report is None:
        return
    verdict = result.verdict
    failing = verdict is Verdict.REFUTED or verdict is Verdict.ERROR or (
        verdict in (Verdict.INCONCLUSIVE, Verdict.INCONSISTENT) and config.getoption("--claims-strict")
    ) or (verdict is Verdict.STALE and (config.getoption("--claims-cascade") == "fail"
                                        or config.getoption("--claims-strict")))
    if judged is not None:
        failing = judged.failing
        if failing and judged.agreement is not Agreement.UNDECIDED:
            report.longrepr = judged.message(result, cs.expectations_path)
    if failing and not report.failed:
        report.outcome = "failed"
        session.testsfailed += 1
    elif not failing and report.failed:
        report.outcome = "passed"
        session.testsfailed = max(0, session.testsfailed - 1)
    if judged is not None:
        category = judged.category
    elif verdict is Verdict.STALE and failing:
        category = ("failed", "S", "STALE")
    else:
        category = CATEGORIES.get(verdict, ("failed", "F", "FAILED") if failing else ("passed", ".", "PASSED"))
    report.claimcheck_category = category  # type: ignore[attr-defined]  # read by pytest_report_teststatus
    report.user_properties = [(k, v) for k, v in report.user_properties if k != "verdict"]
    report.user_properties.append(("verdict", verdict.value))
    _move(terminal, report, category[0])


def _show_not_shown(cs: ClaimSession, session: pytest.Session, nodeid: str) -> None:
    """A holding item whose claim's control was not refuted: its own category, not a pass."""
    report = cs.reports.get(nodeid)
    if report is None:
        return
    category = (NOT_SHOWN, "n", ("NOT SHOWN ABLE TO FAIL", {"yellow": True}))
    report.claimcheck_category = category  # type: ignore[attr-defined]  # read by pytest_report_teststatus
    _move(session.config.pluginmanager.get_plugin("terminalreporter"), report, category[0])


def family_summary(results: Sequence[ItemResult], collected: Mapping[str, float] | None, method: str,
                   level: float | None) -> str:
    """One line on the family the run was adjusted over: its size, how many decided here, its level."""
    if method == "none":
        return "family: no adjustment (each item at its own alpha)"
    members = [results[i] for i in family_members(results)]
    ran = {r.item_id for r in members}
    absent = [a for item_id, a in (collected or {}).items() if item_id not in ran]
    alphas = [r.decision.alpha for r in members if r.decision is not None] + absent
    if not alphas:
        return "family: empty (no sampled item in scope)"
    size = len(alphas)
    alpha = family_alpha(alphas) if level is None else level
    name = FAMILY_NAMES.get(method, method)
    return (f"family: {name} over {size} sampled, in-scope items ({len(members)} decided in this run, {len(absent)} "
            f"count at p = 1), level {number(alpha)}, refutations and holds each")


def finish_session(cs: ClaimSession, session: pytest.Session) -> None:
    """Adjudicate the run, relabel pytest's reports, then store, report and gate docs."""
    config = session.config
    nodeids = list(cs.results)
    before = [cs.results[nodeid] for nodeid in nodeids]
    store, run_id = cs.store, cs.run_id

    def elsewhere(claim_ids: set[str]) -> dict[str, Verdict]:
        return evidence.latest_verdicts(store, run_id, claim_ids) if store is not None else {}

    machine = next((r.machine for r in before if r.machine), None)
    collected = cs.family_items(machine, config.getoption("--claims-alpha")) if machine is not None else None
    run = adjudicate_run(before, family=config.getoption("--claims-family"), premises=cs.premises(),
                         premise_verdicts=elsewhere, collected=collected,
                         family_level=config.getoption("--claims-family-alpha"), retracted=cs.retractions())
    cs.family = family_summary(run.results, collected, config.getoption("--claims-family"),
                               config.getoption("--claims-family-alpha"))
    final = attach_controls(run.results)
    unsupported = not_shown(final)
    lock = cs.expectations_path
    expected = expectations.read(lock) if lock.exists() else None
    for nodeid, old, new in zip(nodeids, before, final):
        cs.results[nodeid] = new
        judged = judge(new, expected, strict=config.getoption("--claims-strict")) if expected else None
        if expected is not None and new.machine_class and new.machine_class not in expected.classes:
            cs.unlocked_class = new.machine_class
        if judged is not None:
            cs.judged[nodeid] = judged
        if new.claim_id in unsupported and new.verdict is Verdict.HOLDS:
            _show_not_shown(cs, session, nodeid)
        elif judged is not None or new.verdict is not old.verdict:
            _relabel(cs, session, nodeid, new, judged)
    cs.stale = {claim_id: list(chain) for claim_id, chain in run.chains.items()}

    if session.testsfailed == 0 and session.exitstatus == pytest.ExitCode.TESTS_FAILED:
        session.exitstatus = pytest.ExitCode.OK
    elif session.testsfailed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

    if store is not None and run_id is not None:
        interrupted = bool(session.shouldstop or session.shouldfail or
                           session.exitstatus == pytest.ExitCode.INTERRUPTED)
        cs.drift_lines, cs.report_paths = evidence.close_run(
            store, run_id, before, final, complete=not interrupted,
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
    claims = {nodeid: r for nodeid, r in cs.results.items() if r.control_for is None}
    counts = evidence.counts(claims)
    terminal.section("claimcheck", sep="-")
    terminal.write_line("verdicts: " + ", ".join(f"{n} {v.value}" for v, n in sorted(counts.items(),
                                                                                       key=lambda kv: kv[0].value)))
    if cs.family:
        terminal.write_line(cs.family)
    for line in summary_lines(cs.judged, cs.expectations_path, cs.unlocked_class):
        terminal.write_line(line, red=line.startswith((Agreement.CHANGED.value, Agreement.UNREVIEWED.value)))
    outcomes = control_outcomes(list(cs.results.values()))
    if outcomes:
        shown = sum(o.shown_able_to_fail for o in outcomes.values())
        terminal.write_line(f"controls: {shown} of {len(outcomes)} refuted (claim shown able to fail here)")
    for claim_id, outcome in sorted(outcomes.items()):
        if not outcome.shown_able_to_fail:
            terminal.write_line(f"{NOT_SHOWN}: {claim_id} (control {outcome.item_id} {outcome.verdict.value}: "
                                f"{outcome.reason})", yellow=True)
    machine = next(iter(cs.results.values())).machine_class
    if machine:
        terminal.write_line(f"machine: {machine}")
    stale_ids = {r.claim_id for r in cs.results.values() if r.verdict is Verdict.STALE}
    for claim_id, chain in sorted(cs.stale.items()):
        if claim_id in stale_ids:
            terminal.write_line(f"stale: {claim_id} <- " + " -> ".join(chain), yellow=True)
    for result in sorted(claims.values(), key=lambda r: r.item_id):
        if result.verdict is Verdict.INCONSISTENT:  # the source contradicts itself: say where
            terminal.write_line(f"inconsistent: {result.item_id}: {result.reason}", yellow=True)
    for line in cs.drift_lines:
        terminal.write_line(f"drifted: {line}", yellow=True)
    for path in cs.report_paths:
        terminal.write_line(f"report: {path}")
