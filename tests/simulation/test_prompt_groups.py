"""Error control of the curve probes' prompt-group design: on the boundary, false verdicts within alpha + 2 SE."""

from __future__ import annotations

import math

import pytest

from tests.simulation.prompt_groups import ALPHA, CASES, simulate

REPLICATES = 2000


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_grouped_looks_keep_false_verdicts_within_alpha_plus_two_se(case, record_property) -> None:
    tally = simulate(case, REPLICATES)
    record_property("tally", tally.__dict__)
    se = math.sqrt(ALPHA * (1 - ALPHA) / REPLICATES)
    for count in (tally.full_holds, tally.full_refuted, tally.grouped_holds, tally.grouped_refuted):
        assert tally.rate(count) <= tally.bound, tally
    assert tally.rate(tally.flips) <= 2 * se, tally  # a decided verdict almost never turns into its opposite
    assert tally.prompts_grouped <= tally.prompts_full

