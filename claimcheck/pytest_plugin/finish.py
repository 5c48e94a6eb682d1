"""The end of a run: adjudicate, correct pytest's counts, store, report, gate the docs.

The verdict changes themselves live in :mod:`claimcheck.engine.adjudicate`; this
module applies them to pytest's reports before the terminal summary is printed,
so the summary line and the exit code use the final verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from claimcheck.pytest_plugin import evidence
from claimcheck.engine.adjudicate import adjudicate_run, family_members
from claimcheck.engine.families import group_members
from claimcheck.engine.controls import NOT_SHOWN, attach_controls, control_outcomes
from claimcheck.outcome.run import conclude
from claimcheck.outcome.summary import expectation_lines
from claimcheck.pytest_plugin import adapter
from claimcheck.pytest_plugin.adapter import flags_of
from claimcheck.engine.result import ItemResult
from claimcheck.stats import family_lines
from claimcheck.pytest_plugin.session import ClaimSession
from claimcheck.verdict import Verdict

def family_summary(results: Sequence[ItemResult], collected: Mapping[str, float] | None, method: str,
                   level: float | None, families: Mapping[str, str] | None = None) -> list[str]:
    """The lines on the families the run was adjusted over: one per family (or the ones with undone
    decisions, when there are many, and a total), then the suite-wide Benjamini–Hochberg line."""
    if method == "none":
        return ["family: no adjustment (each item at its own alpha)"]
    groups = group_members(results, family_members(results), collected, families)
    if not groups:
        return ["family: empty (no sampled item in scope)"]
    members = {name: [m.member for m in group] for name, group in groups.items()}
    return family_lines(members, method=method, level=level)  # type: ignore[arg-type]  # checked by pytest's choices


def finish_session(cs: ClaimSession, session: pytest.Session) -> None:
    """Adjudicate the run, find what each item means, apply that to pytest, then store, report and gate docs."""
    config = session.config
    cs.interrupted = bool(session.shouldstop or session.shouldfail or
                          session.exitstatus == pytest.ExitCode.INTERRUPTED)
    nodeids = list(cs.results)
    before = [cs.results[nodeid] for nodeid in nodeids]
    store, run_id = cs.store, cs.run_id

    def elsewhere(claim_ids: set[str]) -> dict[str, Verdict]:
        return evidence.latest_verdicts(store, run_id, claim_ids) if store is not None else {}

    machine = next((r.machine for r in before if r.machine), None)
    slots = cs.family_slots(machine, config.getoption("--claims-alpha")) if machine is not None else None
    collected = {item_id: slot.alpha for item_id, slot in slots.items()} if slots is not None else None
    families = {item_id: slot.family for item_id, slot in slots.items()} if slots is not None else None
    run = adjudicate_run(before, family=config.getoption("--claims-family"), premises=cs.premises(),
                         premise_verdicts=elsewhere, collected=collected,
                         family_level=config.getoption("--claims-family-alpha"), retracted=cs.retractions(),
                         families=families)
    cs.family = family_summary(before, collected, config.getoption("--claims-family"),
                               config.getoption("--claims-family-alpha"), families)
    final = attach_controls(run.results)
    printed = {cs.results[nodeid].item_id: cs.provisional[nodeid].treatment.word
               for nodeid in nodeids if nodeid in cs.provisional}
    lock = cs.expectations_path
    named = lock.relative_to(cs.rootdir) if lock.is_relative_to(cs.rootdir) else lock  # as the repository names it
    outcome = conclude(run_id or "", final, cs.expectations(), flags_of(config), named, printed, lock_file=lock)
    for nodeid, finding in zip(nodeids, outcome.findings):
        cs.results[nodeid] = finding.result
        cs.findings[nodeid] = finding
    cs.outcome = outcome
    cs.unlocked_class = outcome.judgement.unlocked_class
    adapter.apply(session, cs.reports, nodeids, outcome.findings, cs.expectations_path)
    cs.stale = {claim_id: list(chain) for claim_id, chain in run.chains.items()}

    if store is not None and run_id is not None:
        cs.drift_lines, cs.report_paths = evidence.close_run(
            store, run_id, before, final, complete=evidence.session_finished(session) and not cs.interrupted,
            reports=evidence.reports_dir(config, cs.rootdir), config=config, outcome=outcome)
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


def chain_text(claim_id: str, chain: Sequence[str]) -> str:
    """``child <- root (refuted) -> child``; a claim its source withdrew itself is named once, with the reason."""
    if len(chain) == 1 and chain[0].startswith(claim_id + " ("):
        return f"{claim_id} {chain[0][len(claim_id) + 1:]}"
    return f"{claim_id} <- " + " -> ".join(chain)


def terminal_summary(cs: ClaimSession, terminal: Any) -> None:
    """The claimcheck section of the terminal summary, rendered from the run's findings."""
    findings = cs.current_findings()
    claims = [f for f in findings.values() if f.result.control_for is None]
    counts: dict[str, int] = {}
    for finding in claims:
        counts[finding.verdict.value] = counts.get(finding.verdict.value, 0) + 1
    terminal.section("claimcheck", sep="-")
    if cs.interrupted:
        terminal.write_line(f"interrupted: {len(findings)} item(s) decided before the run was cut short; "
                            "their verdicts below, with the expected verdicts applied", yellow=True)
    terminal.write_line("verdicts: " + ", ".join(f"{n} {name}" for name, n in sorted(counts.items())))
    for line in cs.family:
        terminal.write_line(line)
    for line, alarming in expectation_lines(findings, cs.expectations_path, cs.unlocked_class):
        terminal.write_line(line, red=alarming)
    outcomes = control_outcomes([f.result for f in findings.values()])
    if outcomes:
        shown = sum(o.shown_able_to_fail for o in outcomes.values())
        terminal.write_line(f"controls: {shown} of {len(outcomes)} refuted (claim shown able to fail here)")
    for claim_id, outcome in sorted(outcomes.items()):
        if not outcome.shown_able_to_fail:
            terminal.write_line(f"{NOT_SHOWN}: {claim_id} (control {outcome.item_id} {outcome.verdict.value}: "
                                f"{outcome.reason})", yellow=True)
    if cs.outcome is not None:
        for item_id, word, final in cs.outcome.changed_since_printed():
            terminal.write_line(f"changed after it was printed: {item_id}: {word} -> {final} "
                                "(the run-level steps: family, cascade, controls)", yellow=True)
    carried_line = carried_summary(findings.values())  # --claims-changed: what was not measured now
    if carried_line:
        terminal.write_line(carried_line)
    machine = next((f.result.machine_class for f in findings.values() if f.result.machine_class), None)
    if machine:
        terminal.write_line(f"machine: {machine}")
    if cs.run_id is not None and cs.store is not None:  # where the evidence is, so a kept log names its run
        terminal.write_line(f"run: {cs.run_id} in {cs.store.path}")
    chained = {f.claim_id: f.verdict.value for f in claims if f.treatment.listed == "chain"}
    for claim_id, chain in sorted(cs.stale.items()):
        if claim_id in chained:
            terminal.write_line(f"{chained[claim_id]}: {chain_text(claim_id, chain)}", yellow=True)
    for finding in sorted(claims, key=lambda f: f.item_id):
        if finding.treatment.listed == "reason":  # the source contradicts itself: say where
            terminal.write_line(f"{finding.verdict.value}: {finding.item_id}: {finding.result.reason}", yellow=True)
    for line in cs.drift_lines:
        terminal.write_line(f"drifted: {line}", yellow=True)
    for path in cs.report_paths:
        terminal.write_line(f"report: {path}")


def carried_summary(findings: Any) -> str | None:
    """``carried: 13 item(s) from earlier runs (content unchanged), 1 measured``; None when nothing was carried."""
    results = [finding.result for finding in findings]
    carried = [result for result in results if result.carried_from]
    if not carried:
        return None
    runs = sorted({str(result.carried_from) for result in carried})
    return (f"carried: {len(carried)} item(s) from earlier run(s) ({', '.join(runs)}; content unchanged), "
            f"{len(results) - len(carried)} measured")
