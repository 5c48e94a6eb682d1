"""A 40-item family at its edge, through the runner and the run's adjudication.

Every item's true mean sits exactly at its threshold, where both error rates of a single
decision are largest: a refutation and a hold are each wrong there. Each item is sampled
sequentially (looks at n = 8, 19, 30, normal noise) by ``run_claim_item`` and the run is
adjusted by ``correct_family`` over the 40-item suite, as ``pytest claims/`` does. The family
must keep P(any false refutation) <= alpha and P(any false hold) <= alpha, within 2 SE of the
simulated rate; without it both are far above alpha (so the test can fail).
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from claimcheck.engine.adjudicate import correct_family
from claimcheck.claims.loader import load_claims_text
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.engine.runner import RunOptions, run_claim_item

from ..simulation.family_tally import assert_family_keeps_both_errors, tally


ITEMS = 40
ALPHA = 0.05
FAST_RUNS = 200
SLOW_RUNS = 2000

CLAIM = """
id: edge-{index}
title: an item at its edge
statement: the mean is at its threshold
source: {{doc: d.md, section: "1", figure: f}}
scope: {{kind: portable}}
probe: {{name: edge}}
check: {{rule: {rule}, output: x, threshold: 0.0, statistic: mean, alpha: {alpha}}}
budget: {{min_samples: 8, max_samples: 30, looks: 3, max_seconds: 60}}
"""


def _edge(ctx: ProbeContext, **params: object) -> dict[str, list[float]]:
    return {"x": [ctx.rng.gauss(0.0, 1.0) for _ in range(ctx.n)]}


PROBE = RegisteredProbe("edge", _edge, {"x": Output("ms")})


def _family(alphas: list[float]) -> list:
    return [load_claims_text(CLAIM.format(index=i, rule="at_least" if i % 2 else "at_most", alpha=a), "edge.yaml")[0]
            for i, a in enumerate(alphas)]


def _simulate(alphas: list[float], runs: int, seed: int) -> dict[str, float]:
    """Share of runs with any false refutation / hold, before and after the family."""
    claims = _family(alphas)
    collected = {claim.id: claim.check.alpha for claim in claims}
    counts: Counter[str] = Counter()
    for run in range(runs):
        options = RunOptions(seed=seed + run)
        results = [run_claim_item(c, c.id, {}, PROBE, options=options, machine={"backend": "cpu"}) for c in claims]
        tally(counts, results, correct_family(results, "holm", collected=collected))
    return {name: count / runs for name, count in counts.items()}


def _check(name: str, alphas: list[float], runs: int, seed: int, report_table) -> None:
    rates = _simulate(alphas, runs, seed)
    se = math.sqrt(ALPHA * (1 - ALPHA) / runs)
    bound = ALPHA + 2 * se
    lines = [f"{'':<28}{'no family':>10}{'Holm':>8}{'bound':>8}",
             f"{'P(any false refutation)':<28}{rates['raw refuted']:>10.3f}{rates['refuted']:>8.3f}{bound:>8.3f}",
             f"{'P(any false hold)':<28}{rates['raw holds']:>10.3f}{rates['holds']:>8.3f}{bound:>8.3f}"]
    report_table(f"{name}: {ITEMS} items at their edge, {runs} runs, looks 8/19/30, normal noise, "
                 f"family alpha {ALPHA} (bound = alpha + 2 SE, SE {se:.4f})", "\n".join(lines))
    assert_family_keeps_both_errors(rates, bound)


def test_forty_items_at_their_edge_keep_both_family_errors(report_table) -> None:
    _check("family (fast)", [ALPHA] * ITEMS, FAST_RUNS, 1000, report_table)


@pytest.mark.slow
def test_forty_items_at_their_edge_keep_both_family_errors_full(report_table) -> None:
    _check("family", [ALPHA] * ITEMS, SLOW_RUNS, 50_000, report_table)


@pytest.mark.slow
def test_forty_items_with_mixed_alpha_keep_both_family_errors(report_table) -> None:
    """Half the items at alpha 0.01: weighted Holm keeps both errors at the family's 0.05."""
    _check("family, mixed alpha (20 x 0.05, 20 x 0.01)", [ALPHA, 0.01] * (ITEMS // 2), SLOW_RUNS, 90_000, report_table)
