"""``monotone`` and ``ordering`` on serially dependent levels: decided on their magnitude, from YAML to verdict."""

from __future__ import annotations

import math

import numpy as np
import pytest

from claimcheck import rules
from claimcheck.claims.loader import load_claims_text
from claimcheck.engine.runner import RunOptions, run_claim_item
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.stats import Decision, Hypothesis
from claimcheck.stats._ordered_dependent import decide_ordered_dependent
from claimcheck.verdict import Verdict

# qmv-bw-rises-with-size-portable and its control as a 2-core AMD EPYC measured them in run
# 20261206T042919Z-0d993ad6 (GB/s, 18 rounds, each level's in the order measured). The gate flagged
# the 1 MiB level (lag-1 rank autocorrelation +0.25 in the claim, +0.49 in the control), which left
# both undecided: every 4 MiB sample lies above every 1 MiB one, and the control's 10 KiB level sits
# at 0.42 against 0.70.
EPYC_GBPS = {
    1: [0.70104, 0.6875, 0.69588, 0.70414, 0.70461, 0.70415, 0.70113, 0.70167, 0.70352, 0.70183, 0.70204,
        0.70247, 0.70054, 0.70192, 0.7019, 0.70076, 0.69749, 0.70227],
    4: [0.70749, 0.71038, 0.70983, 0.71357, 0.71132, 0.70973, 0.70807, 0.70607, 0.7096, 0.70801, 0.71105,
        0.70765, 0.70652, 0.70841, 0.70436, 0.70984, 0.7086, 0.70646],
    32: [0.72101, 0.72117, 0.7207, 0.72294, 0.72073, 0.72059, 0.72242, 0.72248, 0.7157, 0.72075, 0.72458,
         0.72389, 0.72121, 0.72128, 0.712, 0.72088, 0.71907, 0.72005],
}
EPYC_CONTROL = {
    1: [0.69686, 0.70063, 0.70016, 0.70182, 0.70302, 0.70215, 0.7013, 0.69916, 0.70013, 0.65796, 0.65825,
        0.66291, 0.70438, 0.70202, 0.7032, 0.70217, 0.70239, 0.70568],
    0.01: [0.42674, 0.20636, 0.4319, 0.43236, 0.38495, 0.43642, 0.41609, 0.43636, 0.43435, 0.43664, 0.42115,
           0.43207, 0.4321, 0.37264, 0.43212, 0.41985, 0.44533, 0.41264],
}
CLAIM = """\
id: qmv-bw-rises
title: t
statement: s
source: {{doc: d.md, section: "1", figure: f}}
scope: {{kind: portable}}
probe: {{name: recorded, params: {{size_mib: {sizes}}}}}
check: {{rule: monotone, output: gbps, over: size_mib, direction: increasing{extra}}}
budget: {{min_samples: 6, max_samples: 18, looks: 3, exclusive: true}}
"""


def _recorded(series: dict[float, list[float]]) -> RegisteredProbe:
    """Replays recorded rounds, each level's in the order measured."""
    taken = dict.fromkeys(series, 0)

    def probe(ctx: ProbeContext, *, size_mib: float) -> dict[str, list[float]]:
        start, taken[size_mib] = taken[size_mib], taken[size_mib] + ctx.n
        return {"gbps": series[size_mib][start:start + ctx.n]}

    return RegisteredProbe("recorded", probe, {"gbps": Output("GB/s")})


def _run(series: dict[float, list[float]], sizes: list[float], extra: str = ""):
    (claim,) = load_claims_text(CLAIM.format(sizes=sizes, extra=extra), "c.yaml")
    return run_claim_item(claim, claim.id, dict(claim.probe.params), _recorded(series), options=RunOptions(seed=0),
                          machine={"backend": "cpu"})


def test_a_dependent_level_no_longer_leaves_a_clear_trend_undecided() -> None:
    result = _run(EPYC_GBPS, [1, 4, 32])
    assert result.verdict is Verdict.HOLDS, result.reason
    assert "serially dependent" in result.reason and "decided on effective n" in result.reason
    decision = result.decision
    assert decision is not None and decision.hypothesis is not None and decision.hypothesis.bound == "increasing"
    assert 0 < decision.low < decision.statistic < decision.high, result.reason  # the interval agrees with the verdict
    assert sorted(result.samples["gbps@size_mib=1"]) == sorted(EPYC_GBPS[1]), "every recorded round, once"


def test_the_control_with_its_levels_reversed_is_refuted() -> None:
    result = _run(EPYC_CONTROL, [1, 0.01])
    assert result.verdict is Verdict.REFUTED, result.reason
    assert "is reversed" in result.reason and result.decision is not None and result.decision.high < 0


def _flagged(groups: list[tuple[str, np.ndarray]], bound: str = "decreasing", tolerance: float = 0.0,
             paired: bool = False, statistic: str = "median") -> Decision | None:
    hypothesis = Hypothesis(bound, statistic, threshold=tolerance, paired=paired)  # type: ignore[arg-type]
    undecided = Decision(rule="monotone", statistic=0.0, low=-math.inf, high=math.inf, confidence_level=0.9,
                         n=sum(len(x) for _, x in groups), verdict=Verdict.INCONCLUSIVE, reason="", pvalue=1.0,
                         alpha=0.05, hypothesis=hypothesis)
    return decide_ordered_dependent(undecided, groups, 0.05, "serially dependent", lags=10)


def _ar1(rng: np.random.Generator, n: int, rho: float, level: float) -> np.ndarray:
    x, state = np.empty(n), 0.0
    for i in range(n):
        state = rho * state + math.sqrt(1 - rho ** 2) * rng.standard_normal()
        x[i] = level + state
    return x


@pytest.mark.parametrize("paired", [False, True])
def test_the_interval_always_agrees_with_the_verdict(paired: bool) -> None:
    """HOLDS exactly when the reported lower end is above 0, REFUTED exactly when the upper end is below."""
    rng = np.random.default_rng(5)
    for effect in np.linspace(-3, 3, 25):
        groups = [("a", _ar1(rng, 24, 0.7, effect)), ("b", _ar1(rng, 24, 0.7, 0.0))]
        decision = _flagged(groups, paired=paired)
        assert decision is not None
        assert (decision.verdict is Verdict.HOLDS) == (decision.low > 0), decision.reason
        assert (decision.verdict is Verdict.REFUTED) == (decision.high < 0), decision.reason


def test_a_tolerance_lets_a_tie_hold_and_direction_is_read_off_the_hypothesis() -> None:
    rng = np.random.default_rng(2)
    tie = [("low", _ar1(rng, 30, 0.5, 0.0) * 0.01 + 5.0), ("high", _ar1(rng, 30, 0.5, 0.0) * 0.01 + 5.0)]
    strict = _flagged(tie, bound="increasing")
    loose = _flagged(tie, bound="increasing", tolerance=1.0)
    assert strict is not None and strict.verdict is not Verdict.HOLDS
    assert loose is not None and loose.verdict is Verdict.HOLDS, loose.reason
    rising = [("low", tie[0][1]), ("high", tie[1][1] + 1.0)]
    up, down = _flagged(rising, bound="increasing"), _flagged(rising, bound="decreasing")
    assert up is not None and up.verdict is Verdict.HOLDS
    assert down is not None and down.verdict is Verdict.REFUTED


def test_too_few_samples_and_a_mean_stay_with_the_gate() -> None:
    assert _flagged([("a", np.arange(5.0)), ("b", np.arange(5.0))]) is None
    rising = [("a", np.arange(10.0) + 100.0), ("b", np.arange(10.0))]
    assert _flagged(rising) is not None
    assert _flagged(rising, statistic="mean") is None  # a timing mean is never decided: the noise step says why


def test_ordering_and_monotone_declare_an_ordered_hypothesis() -> None:
    monotone = rules.make_check("monotone", {"direction": "decreasing", "strict": False, "tolerance": 0.5})
    monotone = type(monotone)(rule=monotone.rule, output="y", over="x", params=monotone.params)
    hypothesis = rules.get("monotone").hypothesis(monotone)
    assert hypothesis is not None and (hypothesis.bound, hypothesis.threshold, hypothesis.ordered) == \
        ("decreasing", 0.5, True)
    assert hypothesis.assumed_spread is None  # no between-run component: the levels share the run
    with pytest.raises(ValueError, match="tolerance"):
        Hypothesis("increasing", "median", threshold=-1.0)
