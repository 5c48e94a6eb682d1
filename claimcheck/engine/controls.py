"""Positive controls: show that a claim's measurement can refute it on this machine.

A claim that cannot fail passes for "holds". A claim may therefore declare ``control:``,
probe parameters under which the claim is false (a smaller matrix, an evaluated lazy
chain, host spin injected into one arm). With ``--claims-controls`` the control runs
beside the claim as its own item (claim id ``<claim-id>--control``, so its verdict never
counts as the claim's) and is decided by the claim's unchanged check, at the claim's alpha
and outside the multiplicity family (it is a test of the measurement, not a claim).

After the run each of the claim's results carries a :class:`~claimcheck.engine.result.ControlOutcome`;
a claim whose control was not refuted is "not shown able to fail here".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from claimcheck.engine.result import ControlOutcome, ItemResult

NOT_SHOWN = "not shown able to fail here"


def control_outcomes(results: Sequence[ItemResult]) -> dict[str, ControlOutcome]:
    """Claim id -> what its control showed, for every control that ran."""
    return {
        result.control_for: ControlOutcome(result.item_id, dict(result.params), result.verdict, result.reason)
        for result in results if result.control_for is not None
    }


def attach_controls(results: Sequence[ItemResult]) -> list[ItemResult]:
    """The results with each claim's control outcome attached (verdicts untouched)."""
    outcomes = control_outcomes(results)
    return [
        dataclasses.replace(result, control=outcomes[result.claim_id])
        if result.control_for is None and result.claim_id in outcomes else result
        for result in results
    ]


def not_shown(results: Sequence[ItemResult]) -> dict[str, ControlOutcome]:
    """Claim id -> control outcome, for the claims whose control was not refuted."""
    return {claim_id: outcome for claim_id, outcome in control_outcomes(results).items()
            if not outcome.shown_able_to_fail}
