"""What the family simulations share: tallying a run's false verdicts before and after the family, and the bound."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from claimcheck.engine.result import ItemResult
from claimcheck.verdict import Verdict


def tally(counts: Counter[str], results: Sequence[ItemResult], adjusted: Sequence[ItemResult]) -> None:
    """Add one run at the edge: any false refutation / hold without the family ("raw") and with it, and per item."""
    counts["raw refuted"] += any(r.verdict is Verdict.REFUTED for r in results)
    counts["raw holds"] += any(r.verdict is Verdict.HOLDS for r in results)
    counts["refuted"] += any(r.verdict is Verdict.REFUTED for r in adjusted)
    counts["holds"] += any(r.verdict is Verdict.HOLDS for r in adjusted)
    counts["refuted items"] += sum(r.verdict is Verdict.REFUTED for r in results)
    counts["held items"] += sum(r.verdict is Verdict.HOLDS for r in results)


def assert_family_keeps_both_errors(rates: dict[str, float], bound: float) -> None:
    """Both family-wise errors at most ``bound``; without the family both common, so the check can fail."""
    assert rates["raw refuted"] > 0.3 and rates["raw holds"] > 0.3, "without the family both errors are common"
    assert rates["refuted"] <= bound, rates
    assert rates["holds"] <= bound, rates
