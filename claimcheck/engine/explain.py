"""Human-readable text for one result: what was claimed, what was measured, where, and how it was decided."""

from __future__ import annotations

from claimcheck import rules
from claimcheck.claim import Check
from claimcheck.numbers import estimate
from claimcheck.engine.probe_traceback import failure_lines
from claimcheck.engine.result import ItemResult, verdict_path
from claimcheck.stats import Decision
from claimcheck.verdict import Verdict


def expectation(check: Check) -> str:
    """The claim's decision rule in words, e.g. ``mean gbps / mean raw_gbps >= 0.74``."""
    try:
        return rules.get(check.rule).expectation(check)
    except (ValueError, KeyError):
        return check.rule


def measured(decision: Decision | None, unit: str | None = None) -> str:
    """Estimate with interval and n, e.g. ``0.41 [0.38, 0.44] (90% CI, n=24)``."""
    if decision is None:
        return "nothing measured"
    return estimate(decision.statistic, decision.low, decision.high, decision.confidence_level, decision.n, unit)


def machine_line(result: ItemResult) -> str:
    """Where it ran: the machine class (or device) and the model measured."""
    model = result.info.get("model")
    variant = f" ({result.info['variant']})" if result.info.get("variant") else ""
    where = result.machine_class or str(result.machine.get("device", "?"))
    return where + (f"; model {model}{variant}" if model else "")


def failure_text(result: ItemResult, tb_style: str = "auto") -> str:
    """The readable failure shown by pytest for a refuted, errored or strict-inconclusive (or -inconsistent) item.

    Args:
        tb_style: pytest's ``--tb``; how much of a failed probe's traceback is shown after its reason.
    """
    claim = result.claim
    source = claim.source
    lines = [
        f"{result.verdict.value.upper()}: {result.item_id} — {claim.title}",
        f"  claim:    {claim.statement.strip()}",
        f"  source:   {source.doc} {source.section} — \"{source.figure}\"",
        f"  expected: {expectation(claim.check)}",
        f"  measured: {measured(result.decision, claim.check.unit)}",
        f"  why:      {result.reason}",
        f"  machine:  {machine_line(result)}",
        f"  at:       {claim.path}:{claim.line}",
    ]
    if result.adjustments:
        lines.insert(6, f"  verdict:  {verdict_path(result.raw_verdict, result.adjustments)}")
    if result.verdict is Verdict.ERROR:
        at = lines.index(f"  why:      {result.reason}") + 1
        lines[at:at] = failure_lines(result.info, tb_style)
    return "\n".join(lines)
