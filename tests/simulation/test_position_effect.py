"""A 3% position effect in ABBA rounds: bias and both error rates with and without the position model.

Through the runner (:mod:`.position_model`): the probe reports each sample's position or not, and
the sampler removes each call's position effect from a paired check's groups when it does. Bounds:
``alpha + 2 SE`` (slow) or ``+ 3 SE`` (fast), ``SE = sqrt(alpha (1 - alpha) / R)``.
"""

from __future__ import annotations

import math

import pytest

from . import position_model as P

R_FAST = 60
R_FULL = 1000


def test_the_position_model_restores_the_median_contrast(report_table) -> None:
    rows = [P.measure(True, positions, R_FAST, seed=400) for positions in (False, True)]
    ignored, modelled = rows
    report_table(f"position effect {P.POSITION_EFFECT:.0%} (fast, R = {R_FAST})", P.table(rows))
    bound = 0.05 + 3 * modelled.se
    assert modelled.false_hold <= bound and modelled.false_refutation <= bound
    assert modelled.power > ignored.power + 0.2  # measured 0.975 against 0.50 (R = 200)


@pytest.mark.slow
def test_the_position_model_full(report_table, request) -> None:
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("12,000 runner items (about 2 minutes of CPU) run with -m slow")
    rows = [P.measure(timing, positions, R_FULL, seed=4000 + 10 * timing)
            for timing in (True, False) for positions in (False, True)]
    report_table(f"position effect {P.POSITION_EFFECT:.0%}: paired equivalent (log-ratio, margin 5%), looks "
                 f"8/19/30, R = {R_FULL} per rate; bias at a true ratio of 1 (its SE = sd / sqrt(R))",
                 P.table(rows))
    for row in rows:
        if row.positions:
            assert row.false_hold <= 0.05 + 2 * row.se and row.false_refutation <= 0.05 + 2 * row.se
            assert abs(row.bias) <= 3 * row.sd / math.sqrt(R_FULL)
    median_ignored, median_modelled = rows[0], rows[1]
    assert median_ignored.bias > 3 * median_ignored.sd / math.sqrt(R_FULL)  # ignored, the median is biased
    assert median_modelled.power > median_ignored.power + 0.3


def test_positions_give_the_run_order_and_a_robust_fit_removes_the_effect() -> None:
    from claimcheck.harness.position import adjust_by_positions, order_from_positions

    positions = {"a": [0.0, 1.0, 1.0, 0.0], "b": [1.0, 0.0, 0.0, 1.0]}
    assert order_from_positions(positions) == ["a", "b", "b", "a", "b", "a", "a", "b"]
    with pytest.raises(ValueError, match="round 1: positions"):
        order_from_positions({"a": [0.0, 0.0], "b": [1.0, 0.0]})
    with pytest.raises(ValueError, match="one entry per round"):
        order_from_positions({"a": [0.0], "b": [1.0, 0.0]})
    first_slow = {arm: [10.0 + (3.0 if p == 0 else 0.0) + 0.01 * i for i, p in enumerate(positions[arm])] * 2
                  for arm in positions}
    twice = {arm: values * 2 for arm, values in positions.items()}
    for robust in (False, True):
        fit = adjust_by_positions(first_slow, twice, robust=robust)
        assert fit.effects == pytest.approx([1.5, -1.5])
        assert [x - y for x, y in zip(fit.samples["a"], fit.samples["b"])] == pytest.approx([0.0] * 8, abs=1e-9)
    # an arm that always runs first: the effect is the arm's, not estimable, so nothing moves
    confounded = {"a": [0.0] * 8, "b": [1.0] * 8}
    assert adjust_by_positions(first_slow, confounded, robust=True).samples == first_slow


def test_the_sampler_adjusts_only_what_the_probe_reported() -> None:
    from claimcheck.errors import ProbeError
    from claimcheck.probing.registry import ProbeContext
    from claimcheck.engine.sampler import Sampler

    claim = P.load_claims_text(P.CLAIM.format(timing="true"), "abba.yaml")[0]
    ctx = ProbeContext(seed=3)
    sampler = Sampler(claim, P.abba_probe(0.0, True), {}, ctx)
    sampler.draw(9, 0)
    raw = sampler.samples()
    (_, a), (_, b) = sampler.groups()
    assert len(a) == 9 and a != raw["a"] and raw["a.position"][:2] == [0.0, 1.0]  # measured samples kept
    assert ctx.artifacts["position_effects"][0]["effects"][0] > 0  # the first position is the slow one
    plain = Sampler(claim, P.abba_probe(0.0, False), {}, ProbeContext(seed=3))
    plain.draw(9, 0)
    assert plain.groups()[0][1] == plain.samples()["a"]

    def short(ctx: ProbeContext, **params: object) -> dict[str, list[float]]:
        return {"a": [1.0, 2.0], "b": [1.0, 2.0], "a.position": [0.0], "b.position": [1.0]}

    broken = Sampler(claim, P.RegisteredProbe("abba", short, {}), {}, ProbeContext(seed=3))
    with pytest.raises(ProbeError, match=r"`a.position` has 1 values for 2 samples"):
        broken.draw(2, 0)
