"""Position within an ABBA round as a covariate: no bias, no lost power, both error rates kept."""

from __future__ import annotations

import math

import numpy as np
import pytest

from claimcheck.harness.position import position_adjusted, positions_of
from claimcheck.harness.timing import Interleaved, interleaved_order
from claimcheck.claims.loader import load_claims_text
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.engine.runner import RunOptions, run_claim_item
from claimcheck.verdict import Verdict


def test_positions_follow_the_abba_order() -> None:
    order = [arm for round_arms in interleaved_order(["a", "b"], 4) for arm in round_arms]
    assert positions_of(["a", "b"], order) == {"a": [0, 1, 0, 1], "b": [1, 0, 1, 0]}
    with pytest.raises(ValueError, match="does not split into rounds"):
        positions_of(["a", "b"], ["a", "b", "a"])


def test_a_pure_position_effect_is_removed_and_the_arm_means_stay() -> None:
    order = [arm for round_arms in interleaved_order(["a", "b"], 6) for arm in round_arms]
    first_slow = {arm: [10.0 + (3.0 if p == 0 else 0.0) for p in positions_of(["a", "b"], order)[arm]]
                  for arm in ("a", "b")}
    fit = position_adjusted(first_slow, order)
    assert fit.effects == pytest.approx([1.5, -1.5])
    assert fit.samples["a"] == pytest.approx([11.5] * 6) and fit.samples["b"] == pytest.approx([11.5] * 6)
    adjusted = Interleaved(first_slow, order).position_adjusted()
    assert adjusted.paired_differences("a", "b") == pytest.approx([0.0] * 6)
    assert Interleaved({"a": [1.0, 2.0], "b": [2.0, 1.0]}, ["a", "b", "b", "a"]).position_adjusted().samples == {
        "a": [1.0, 2.0], "b": [2.0, 1.0]}, "too few rounds to fit: returned as given"


CLAIM = """
id: arms-equal
title: a equals b within 4%
statement: the two arms take the same time
source: {doc: d.md, section: "1", figure: f}
scope: {kind: portable}
probe: {name: abba}
check: {rule: equivalent, output: a, reference: b, margin: 0.04, scale: log-ratio, paired: true}
budget: {min_samples: 8, max_samples: 30, looks: 3, max_seconds: 60}
"""
POSITION_EFFECT = 0.03  # the first arm of a round runs 3% slower
NOISE = 0.02  # each sample's own log-normal noise
EDGE = math.log1p(0.04)  # the margin 0.04 as a log-ratio: the band is [1/1.04, 1.04]


def _abba(log_ratio: float, adjust: bool) -> RegisteredProbe:
    def probe(ctx: ProbeContext, **params: object) -> dict[str, list[float]]:
        rng = np.random.default_rng(ctx.seed * 100 + ctx.look)
        rounds = interleaved_order(["a", "b"], ctx.n)
        samples: dict[str, list[float]] = {"a": [], "b": []}
        order: list[str] = []
        for round_arms in rounds:
            shared = rng.normal(0.0, 0.05)  # what both arms of a round share (load, clocks)
            for position, arm in enumerate(round_arms):
                level = log_ratio if arm == "a" else 0.0
                value = 100 * math.exp(level + shared + (POSITION_EFFECT if position == 0 else 0.0) + rng.normal(0, NOISE))
                samples[arm].append(value)
                order.append(arm)
        run = Interleaved(samples, order)
        return dict((run.position_adjusted() if adjust else run).samples)

    return RegisteredProbe("abba", probe, {"a": Output("ms"), "b": Output("ms")})


def _rate(log_ratio: float, adjust: bool, verdict: Verdict, runs: int, seed: int) -> float:
    claim = load_claims_text(CLAIM, "abba.yaml")[0]
    probe = _abba(log_ratio, adjust)
    hits = sum(run_claim_item(claim, "arms-equal", {}, probe, options=RunOptions(seed=seed + run),
                              machine={"backend": "cpu"}).verdict is verdict for run in range(runs))
    return hits / runs


def _table(runs: int, seed: int, report_table) -> dict[str, float]:
    rates = {
        "power at half the margin, raw": _rate(EDGE / 2, False, Verdict.HOLDS, runs, seed),
        "power at half the margin, covariate": _rate(EDGE / 2, True, Verdict.HOLDS, runs, seed),
        "false hold at the margin, raw": _rate(EDGE, False, Verdict.HOLDS, runs, seed),
        "false hold at the margin, covariate": _rate(EDGE, True, Verdict.HOLDS, runs, seed),
        "false refutation at the margin, raw": _rate(EDGE, False, Verdict.REFUTED, runs, seed),
        "false refutation at the margin, covariate": _rate(EDGE, True, Verdict.REFUTED, runs, seed),
    }
    se = math.sqrt(0.05 * 0.95 / runs)
    report_table(f"paired TOST (margin 4% as a log-ratio, per-sample noise 2%, looks 8/19/30) with a {POSITION_EFFECT:.0%} ABBA position effect, "
                 f"{runs} runs each (bound alpha + 2 SE = {0.05 + 2 * se:.3f})",
                 "\n".join(f"{name:<44}{rate:>7.3f}" for name, rate in rates.items()))
    assert rates["power at half the margin, covariate"] > rates["power at half the margin, raw"] + 0.05
    assert rates["false hold at the margin, covariate"] <= 0.05 + 2 * se
    assert rates["false refutation at the margin, covariate"] <= 0.05 + 2 * se
    return rates


def test_the_position_covariate_restores_power_and_keeps_both_errors(report_table) -> None:
    _table(200, 7_000, report_table)


@pytest.mark.slow
def test_the_position_covariate_restores_power_and_keeps_both_errors_full(report_table) -> None:
    rates = _table(4000, 70_000, report_table)
    assert rates["power at half the margin, covariate"] >= 0.95
