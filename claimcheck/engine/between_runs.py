"""The between-run variance component of a timing item: its decision widened by the item's history.

The runner passes the item's estimates from earlier complete runs on the machine class (plain
numbers the caller read from the store; the engine never opens it) and the claim's declared
margin of indifference to :func:`claimcheck.stats.widen_between_runs`. Only timing (exclusive)
items take it: their estimate moves with the machine's load and clock state between runs; a
deterministic or shared item's does not.
"""

from __future__ import annotations

from collections.abc import Sequence

from claimcheck.claim import Claim
from claimcheck.stats import Decision, widen_between_runs


def between_runs(claim: Claim, decision: Decision, history: Sequence[float]) -> Decision:
    """``decision`` of a timing item widened by the between-run spread; any other decision unchanged."""
    if not claim.budget.exclusive:
        return decision
    return widen_between_runs(decision, history, indifference=getattr(claim, "indifference", None))
