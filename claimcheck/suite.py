"""Run-level steps after every item has a verdict.

1. Multiple comparisons: a run decides many claims; a refutation must survive
   Holm (default) or Benjamini–Hochberg over the run's decided claims.
2. Cascade: a claim whose premise (``depends_on``) did not hold is *stale*.
3. Evidence: finish the store run, write the reports, list drift.

The pytest report categories are updated before the terminal summary is
printed, so the summary line and the exit code use the adjusted verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from claimcheck.verdict import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from claimcheck.plugin import ClaimSession

FAILED_PREMISE = {Verdict.REFUTED.value, Verdict.INCONCLUSIVE.value, Verdict.ERROR.value, Verdict.STALE.value}


@dataclass
class Adjustment:
    """What the family step changed for one item."""

    nodeid: str
    adjusted_pvalue: float
    raw_verdict: str
    adjusted_verdict: str


def family_members(records: dict[str, dict[str, Any]]) -> list[str]:
    """Items that enter the multiplicity family: decided with sampling error.

    Deterministic (arithmetic, header) decisions carry no sampling error and
    would only dilute the family, so they are left out.
    """
    members = []
    for nodeid, record in records.items():
        decision = record.get("decision") or {}
        if not decision or decision.get("details", {}).get("deterministic"):
            continue
        if record["verdict"] in (Verdict.HOLDS.value, Verdict.REFUTED.value, Verdict.INCONCLUSIVE.value):
            if decision.get("pvalue") is not None:
                members.append(nodeid)
    return members


def adjust(records: dict[str, dict[str, Any]], method: str) -> list[Adjustment]:
    """Adjust refutations for multiplicity; returns the items whose verdict changed."""
    members = family_members(records)
    for record in records.values():
        if record.get("decision"):
            record["decision"].setdefault("adjusted_verdict", record["verdict"])
    if method == "none" or not members:
        return []
    from claimcheck.stats import adjust_pvalues

    pvalues = [float(records[nodeid]["decision"]["pvalue"]) for nodeid in members]
    adjusted = adjust_pvalues(pvalues, method=method)
    changes = []
    for nodeid, p_adj in zip(members, adjusted):
        record = records[nodeid]
        decision = record["decision"]
        decision["adjusted_pvalue"] = float(p_adj)
        decision["family"] = {"method": method, "size": len(members)}
        alpha = float(decision.get("alpha") or 0.05)
        if record["verdict"] == Verdict.REFUTED.value and p_adj > alpha:
            name = "Holm" if method == "holm" else "Benjamini-Hochberg"
            record["reason"] = (f"refutation does not survive {name} over {len(members)} claims "
                                f"(adjusted p = {p_adj:.3g} > {alpha:g}); raw: {record['reason']}")
            decision["adjusted_verdict"] = Verdict.INCONCLUSIVE.value
            record["verdict"] = Verdict.INCONCLUSIVE.value
            changes.append(Adjustment(nodeid, float(p_adj), Verdict.REFUTED.value, Verdict.INCONCLUSIVE.value))
    return changes


def claim_verdicts(records: dict[str, dict[str, Any]]) -> dict[str, str]:
    """One verdict per claim from its items: the worst item decides."""
    order = [Verdict.ERROR.value, Verdict.REFUTED.value, Verdict.STALE.value, Verdict.INCONCLUSIVE.value,
             Verdict.HOLDS.value, Verdict.NOT_APPLICABLE.value]
    verdicts: dict[str, str] = {}
    for record in records.values():
        current = verdicts.get(record["claim_id"])
        if current is None or order.index(record["verdict"]) < order.index(current):
            verdicts[record["claim_id"]] = record["verdict"]
    return verdicts


def stale_chains(records: dict[str, dict[str, Any]], premises: dict[str, tuple[str, ...]],
                 elsewhere: dict[str, str] | None = None) -> dict[str, list[str]]:
    """Claims made stale by a failed premise, each with the chain down from the failing root.

    Args:
        records: this run's outcome records.
        premises: claim id -> the ids it depends on (the whole suite's graph).
        elsewhere: verdicts of premises not run now (latest on this machine class).
    """
    verdicts = dict(elsewhere or {})
    verdicts.update(claim_verdicts(records))
    chains: dict[str, list[str]] = {}

    def chain_for(claim_id: str, seen: tuple[str, ...] = ()) -> list[str] | None:
        if claim_id in chains:
            return chains[claim_id]
        for premise in premises.get(claim_id, ()):
            if premise in seen:
                continue
            if verdicts.get(premise) in FAILED_PREMISE:
                deeper = chain_for(premise, seen + (claim_id,))
                return (deeper or [f"{premise} ({verdicts[premise]})"]) + [claim_id]
            deeper = chain_for(premise, seen + (claim_id,))
            if deeper:
                return deeper + [claim_id]
        return None

    for claim_id in sorted({r["claim_id"] for r in records.values()}):
        chain = chain_for(claim_id)
        if chain:
            chains[claim_id] = chain
    return chains


def _move(terminal: Any, report: pytest.TestReport, category: str) -> None:
    if terminal is None:
        return
    for key, reports in terminal.stats.items():
        if report in reports:
            reports.remove(report)
    terminal.stats.setdefault(category, []).append(report)


def finish_session(cs: "ClaimSession", session: pytest.Session) -> None:
    """Adjust, cascade, store and report; then fix up the summary line and exit code."""
    config = session.config
    records = cs.records
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    changes = adjust(records, config.getoption("--claims-family"))
    strict = config.getoption("--claims-strict")
    for change in changes:
        report = cs.reports[change.nodeid]
        if strict:
            continue
        report.outcome = "passed"
        report.claimcheck_category = ("inconclusive", "?", "INCONCLUSIVE")
        _move(terminal, report, "inconclusive")
        session.testsfailed = max(0, session.testsfailed - 1)

    premises = {claim_id: claim.depends_on for claim_id, claim in cs.all_claims().items()}
    for record in records.values():
        premises.setdefault(record["claim_id"], tuple(record["claim"].get("depends_on", ())))
    chains = stale_chains(records, premises, _premise_verdicts_elsewhere(cs, premises, records))
    cs.stale = chains
    cascade_fails = config.getoption("--claims-cascade") == "fail"
    for nodeid, record in records.items():
        chain = chains.get(record["claim_id"])
        if not chain or record["verdict"] not in (Verdict.HOLDS.value, Verdict.INCONCLUSIVE.value):
            continue
        record["stale"] = {"chain": chain, "own_verdict": record["verdict"]}
        report = cs.reports[nodeid]
        if cascade_fails:
            if report.passed:
                report.outcome = "failed"
                session.testsfailed += 1
            report.claimcheck_category = ("failed", "S", "STALE")
            _move(terminal, report, "failed")
        else:
            report.claimcheck_category = ("stale", "s", ("STALE", {"yellow": True}))
            _move(terminal, report, "stale")

    if session.testsfailed == 0 and session.exitstatus == pytest.ExitCode.TESTS_FAILED:
        session.exitstatus = pytest.ExitCode.OK
    elif session.testsfailed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

    if cs.store is not None:
        from claimcheck import evidence

        cs.report_paths = evidence.close_run(cs, session, changes, chains)
    docs = config.getoption("--claims-docs")
    if docs is not None:
        from claimcheck import evidence

        failures = evidence.gate_docs(cs, docs or ["docs/findings"])
        if failures and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _premise_verdicts_elsewhere(cs: "ClaimSession", premises: dict[str, tuple[str, ...]],
                                records: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Latest verdicts, on this machine class, of premises that were not run now."""
    ran = {r["claim_id"] for r in records.values()}
    wanted = {p for claim_id in ran for p in premises.get(claim_id, ())} - ran
    if not wanted or cs.store is None:
        return {}
    from claimcheck import evidence

    return evidence.latest_verdicts(cs, wanted)


def terminal_summary(cs: "ClaimSession", terminal: Any) -> None:
    """The claimcheck section of the terminal summary."""
    counts: dict[str, int] = {}
    for record in cs.records.values():
        counts[record["verdict"]] = counts.get(record["verdict"], 0) + 1
    terminal.section("claimcheck", sep="-")
    terminal.write_line("verdicts: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    machine = next(iter(cs.records.values())).get("machine_class", "")
    if machine:
        terminal.write_line(f"machine: {machine}")
    stale_ids = {r["claim_id"] for r in cs.records.values() if r.get("stale")}
    for claim_id, chain in sorted(getattr(cs, "stale", {}).items()):
        if claim_id not in stale_ids:
            continue
        terminal.write_line(f"stale: {claim_id} <- " + " -> ".join(chain), yellow=True)
    for line in getattr(cs, "drift_lines", []):
        terminal.write_line(f"drifted: {line}", yellow=True)
    for path in getattr(cs, "report_paths", []) or []:
        terminal.write_line(f"report: {path}")
