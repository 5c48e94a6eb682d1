"""Both error rates of every rule at its boundary, under six noise models, through the claim path.

Fast part (default run, a few seconds): the harness is shown able to fail (a mean under spikes,
re-testing at full alpha), a handful of cells, and sequential power. The full table runs under
``-m slow`` and is printed in the test summary.

Bounds: an error rate passes at ``alpha + k SE`` with ``SE = sqrt(alpha (1 - alpha) / R)``. The
exact boundaries spend alpha *exactly*, so a 2-SE bound on a rate that is alpha fails for 2.3% of
seeds; the fast cells (R = 300) and the full table's assertion (R = 1000, SE 0.0069) use 3 SE, and
the table prints every cell's 2-SE verdict, and every cell is asserted (no known limits).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from claimcheck import rules
from claimcheck.stats import SequentialPlan
from claimcheck.verdict import Verdict

from . import harness as H

R_FAST = 300
R_FULL = 1000


def _se(reps: int) -> float:
    return math.sqrt(H.ALPHA * (1 - H.ALPHA) / reps)


def test_harness_fails_a_mean_under_spikes() -> None:
    """The failure the robust default removes: a t bound on the mean of spiky timing samples."""
    noise = H.NOISES[1]
    threshold = H.population(noise, np.mean)
    check = rules.make_check("at_least", {"threshold": threshold, "statistic": "mean"}, labels=("x",))
    data = noise.draw(np.random.default_rng(5), R_FAST)
    refuted = np.mean([H.run_item(check, [("x", data[r])], timing=False)[0] is Verdict.REFUTED
                       for r in range(R_FAST)])
    assert refuted > 0.3  # measured 0.47 (R = 1000): a true claim about the mean refuted half the time
    # as a timing item, the same claim is inconclusive: a timing mean has no valid interval
    timing = [H.run_item(check, [("x", data[r])], timing=True)[0] for r in range(50)]
    assert all(v is Verdict.INCONCLUSIVE for v in timing)


def test_harness_fails_naive_retesting() -> None:
    """Re-testing at the full alpha at every look (no spending) breaks the 2-SE bound."""
    noise = H.NOISES[0]
    check = rules.make_check("at_least", {"threshold": 100.0}, labels=("x",))
    data = noise.draw(np.random.default_rng(6), R_FAST)
    refuted = 0
    for r in range(R_FAST):
        looks = [rules.decide_check(check, [("x", data[r][:n])], H.ALPHA) for n in H.PLAN.sizes]
        refuted += any(d.verdict is Verdict.REFUTED for d in looks)
    assert refuted / R_FAST > H.ALPHA + 2 * _se(R_FAST)


FAST = [  # (rule label, noise) pairs of the default run
    ("at_least", "normal"), ("ratio paired", "spiky 5% x1.3"), ("at_most", "integer 9/12"),
    ("equivalent paired", "heavy t(3)"), ("ordering", "Bernoulli"), ("rate_at_most", "Bernoulli"),
    ("at_least", "slow drift"), ("equivalent paired", "integer 9/12"),
]


def _cell(label: str, noise: str) -> H.Cell:
    return next(c for c in H.cells() if (c.label or c.rule) == label and c.noise.name == noise)


@pytest.mark.parametrize(("label", "noise"), FAST, ids=[f"{a}-{b}" for a, b in FAST])
def test_fast_cells_keep_both_error_rates(label: str, noise: str) -> None:
    result = H.simulate(_cell(label, noise), R_FAST, seed=11 + FAST.index((label, noise)))
    limit = H.ALPHA + 3 * _se(R_FAST)
    assert result.refuted <= limit and result.held <= limit, H.table([result])


def test_sequential_power_at_half_an_sd() -> None:
    """Exact boundaries recover most of the power the union bound loses against one look at n = 30."""
    power = H.power_at(0.5, 600, seed=3)
    se = math.sqrt(0.8 * 0.2 / 600)
    assert power.sequential >= 0.78 - 3 * se  # measured 0.80 (R = 10,000, linear spending); fixed n = 30 0.85
    assert power.sequential > power.union + 2 * se
    assert power.mean_n < 0.8 * power.fixed_n


@pytest.mark.slow
def test_full_table(report_table, request) -> None:
    """Every rule x noise model at R = 1000 with both rates and their 2-SE verdicts; power at 0.5 SD."""
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("the full table (about 8 minutes of CPU) runs with -m slow")
    results = [H.simulate(cell, R_FULL, seed=1000 + i) for i, cell in enumerate(H.cells())]
    power = H.power_at(0.5, 10_000, seed=3)
    text = H.table(results) + (
        f"\npower at 0.5 SD, at_least mean, normal, R = {power.reps}: sequential (exact t boundaries, looks "
        f"8/19/30, linear spending) {power.sequential:.3f} (SE {math.sqrt(power.sequential * (1 - power.sequential) / power.reps):.3f}), "
        f"union bound {power.union:.3f}, fixed n = 30 {power.fixed:.3f}; "
        f"mean samples to a verdict {power.mean_n:.1f} vs {power.fixed_n}")
    report_table(f"error rates at the boundary (alpha {H.ALPHA}, plan 8/19/30)", text)
    # each t-based cell's rate *is* alpha under exact boundaries, so over ~40 cells a 2-SE bound fails
    # about one by chance (a rerun of such a cell at R = 6000 came out 0.052); the assertion is 3 SE,
    # the table shows the 2-SE verdict of every cell
    failing = [r for r in results if not r.within(3.0)]
    assert not failing, H.table(failing)
    assert power.sequential >= 0.78  # the point estimate, not within an SE of it


def test_plan_is_the_common_plan() -> None:
    assert H.PLAN.sizes == (8, 19, 30) and H.PLAN == SequentialPlan(0.05, 8, 30, 3)
