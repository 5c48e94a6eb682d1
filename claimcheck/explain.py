"""Human-readable text for one outcome: what was claimed, what was measured, where."""

from __future__ import annotations

from typing import Any

from claimcheck.runner import Outcome


def expectation(check: dict[str, Any]) -> str:
    """The claim's decision rule in words, e.g. ``ratio gbps / raw_gbps >= 0.74``."""
    rule = check.get("rule", "?")
    out, ref = check.get("output"), check.get("reference")
    unit = f" {check['unit']}" if check.get("unit") else ""
    stat = check.get("statistic", "mean")
    if rule in ("at_least", "at_most"):
        sign = ">=" if rule == "at_least" else "<="
        over = f" at every {check['over']}" if check.get("over") else ""
        return f"{stat} {out} {sign} {check.get('threshold'):g}{unit}{over}"
    if rule == "ratio":
        sign = ">=" if check.get("bound") == "at_least" else "<="
        return f"{stat} {out} / {stat} {ref} {sign} {check.get('threshold'):g}"
    if rule == "equivalent":
        scale = "log ratio" if check.get("scale") == "log-ratio" else "difference"
        return f"{out} ≈ {ref}: |{scale}| <= {check.get('margin'):g}{unit}" + (" (paired)" if check.get("paired") else "")
    if rule == "ordering":
        items = check.get("outputs") or [f"{out}@{check.get('over')}"]
        return " > ".join(map(str, items))
    if rule == "monotone":
        return f"{out} {check.get('direction', 'increasing')} over {check.get('over')}"
    if rule in ("rate_at_most", "zero_rate"):
        lead = "no event" if rule == "zero_rate" else "event rate"
        return f"{lead} in {out}: rate <= {check.get('threshold'):g}"
    if rule == "exact":
        return f"{out} = {check.get('expected'):g} ± {check.get('tolerance'):g}{unit}"
    return rule


def measured(decision: dict[str, Any] | None) -> str:
    """Estimate with interval and n, e.g. ``0.41 [0.38, 0.44] (95% CI, n=24)``."""
    if not decision:
        return "nothing measured"
    stat, low, high = decision.get("statistic"), decision.get("low"), decision.get("high")
    level = decision.get("confidence_level") or 0
    fmt = lambda v: "?" if v is None else f"{v:.4g}"  # noqa: E731
    if low == high:
        return f"{fmt(stat)} (computed, n={decision.get('n')})"
    return f"{fmt(stat)} [{fmt(low)}, {fmt(high)}] ({level:.0%} CI, n={decision.get('n')})"


def machine_line(outcome: dict[str, Any]) -> str:
    machine = outcome.get("machine", {})
    info = outcome.get("info", {})
    model = info.get("model")
    variant = f" ({info['variant']})" if info.get("variant") else ""
    where = outcome.get("machine_class") or machine.get("device", "?")
    return f"{where}" + (f"; model {model}{variant}" if model else "")


def failure_text(outcome: Outcome | dict[str, Any]) -> str:
    """The readable failure shown by pytest for a refuted, errored or strict-inconclusive item."""
    record = outcome.to_record() if isinstance(outcome, Outcome) else outcome
    claim = record["claim"]
    source = claim.get("source", {})
    lines = [
        f"{record['verdict'].upper()}: {record['item_id']} — {claim.get('title', '')}",
        f"  claim:    {claim.get('statement', '').strip()}",
        f"  source:   {source.get('doc')} {source.get('section')} — \"{source.get('figure')}\"",
        f"  expected: {expectation(claim.get('check', {}))}",
        f"  measured: {measured(record.get('decision'))}",
        f"  why:      {record.get('reason')}",
        f"  machine:  {machine_line(record)}",
        f"  at:       {claim.get('path')}:{claim.get('line')}",
    ]
    return "\n".join(lines)
