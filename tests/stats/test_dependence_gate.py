"""Serial dependence and warm-up: the gate's tests and what the sequential loop does with them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from claimcheck import rules
from claimcheck.stats import Decision, SequentialPlan
from claimcheck.stats._noise import is_dependence, lag1_dependence, quantity_gate, warm_up_count
from claimcheck.stats._sequential import drop_warm_up, early_dependence
from claimcheck.verdict import Verdict


def _ar1(rho: float, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = np.empty(n)
    e[0] = rng.standard_normal()
    for t in range(1, n):
        e[t] = rho * e[t - 1] + math.sqrt(1 - rho**2) * rng.standard_normal()
    return 100 + 2 * e


def test_lag1_dependence_flags_ar1_noise_and_not_independent_noise() -> None:
    flagged = sum(lag1_dependence(_ar1(0.8, 30, seed)) is not None for seed in range(200))
    false_flags = sum(lag1_dependence(100 + 2 * np.random.default_rng(seed).standard_normal(30)) is not None
                      for seed in range(1000))
    assert flagged >= 180  # measured 197 of 200
    assert 60 <= false_flags <= 140  # the test's level, 0.10, within sampling error
    problem = quantity_gate(_ar1(0.8, 30, 1))
    assert is_dependence(problem) and problem.startswith("serially dependent: lag-1 autocorrelation of the ranks +")


def test_warm_up_is_the_leading_run_of_far_samples_at_most_a_fifth() -> None:
    x = 100 + 2 * np.random.default_rng(2).standard_normal(30)
    assert warm_up_count(x) == 0
    warm = x.copy()
    warm[:3] *= 2
    assert warm_up_count(warm) == 3
    warm[:8] = 300.0
    assert warm_up_count(warm) == 5  # capped: a longer run is not warm-up but the machine's state
    short = x[:12].copy()
    short[:2] = 200.0
    assert warm_up_count(short) == 2 and warm_up_count(short[:9]) == 0  # a fifth of 12; none below 10
    spike_later = x.copy()
    spike_later[4] *= 2
    assert warm_up_count(spike_later) == 0  # only a leading run counts


def test_rounds_lose_the_same_leading_warm_up_in_every_arm() -> None:
    a = 100 + np.random.default_rng(3).standard_normal(20)
    b = a.copy()
    a[:2] *= 2
    groups, dropped = drop_warm_up([("a", a), ("b", b)])
    assert dropped == 2 and [len(x) for _, x in groups] == [18, 18]


def _window(draw_from: np.ndarray, check_params: dict[str, object]):  # type: ignore[no-untyped-def]
    check = rules.for_timing(rules.make_check("at_least", check_params, labels=("x",)), timing=True)
    taken = 0

    def draw(k: int) -> list[tuple[str, np.ndarray]]:
        nonlocal taken
        taken += k
        return [("x", draw_from[taken - k: taken])]

    return rules.sequential(check, draw, SequentialPlan(0.05, 8, 30, 3), gate=rules.timing_gate(check))


def test_a_timing_window_drops_its_warm_up_and_says_so() -> None:
    x = 100 + 2 * np.random.default_rng(4).standard_normal(30)
    x[:3] *= 2
    decision = _window(x, {"threshold": 95.0})
    assert decision.verdict is Verdict.HOLDS and decision.details["warm_up_dropped"] == 3
    assert "the first 3 samples dropped as warm-up" in decision.reason and decision.n == 27


def test_a_dependent_window_decides_on_its_effective_n_and_says_so() -> None:
    far = _window(_ar1(0.8, 30, 5), {"threshold": 90.0})  # 4 SD below every sample: clear even at n_eff ~ 4
    assert far.verdict is Verdict.HOLDS and far.details["independent_verdict"] == "holds"
    assert far.reason.startswith("x: serially dependent") and "effective n" in far.reason
    assert far.details["dependence"]["inflation"] > 4
    near = _window(_ar1(0.8, 30, 5), {"threshold": 98.0})  # the independent test holds; n_eff ~ 4 cannot
    assert near.details["independent_verdict"] == "holds" and near.verdict is Verdict.INCONCLUSIVE


def test_the_inflated_sign_test_is_the_sign_test_at_no_dependence() -> None:
    from claimcheck.stats._dependent import _InflatedSign

    x = np.random.default_rng(9).standard_normal(40)
    test = _InflatedSign(x, 1.0)
    assert test.p_greater(-0.3) == pytest.approx(stats.binomtest(int(np.sum(x > -0.3)), 40, 0.5,
                                                                  alternative="greater").pvalue, abs=0.01)


def test_an_early_look_that_looks_dependent_keeps_sampling() -> None:
    a, b = 100 + np.arange(8.0), 100 + 0.01 * np.random.default_rng(6).standard_normal(8)  # a steady climb
    assert early_dependence([("a", a), ("b", b)]) is not None
    iid = np.random.default_rng(8).standard_normal((2, 8)) + 100  # a seed where it passes: it flags 3 in 10
    assert early_dependence([("a", iid[0]), ("b", iid[1])]) is None


def test_a_decision_on_the_effective_n_carries_its_own_sequential_pvalue() -> None:
    """The family adjusts the p-value of the test that decided, not the independent one."""
    decision = _window(_ar1(0.8, 30, 5), {"threshold": 98.0})
    assert decision.verdict is Verdict.INCONCLUSIVE and decision.hold_pvalue > 0.05
    a, b = _ar1(0.6, 40, 11), 100 + 0.01 * np.random.default_rng(11).standard_normal(40)
    paired = _paired_run(a, b, SequentialPlan(0.05, 8, 40, 3), bound="at_least", threshold=0.9)
    assert "dependence" in paired.details and paired.verdict is Verdict.HOLDS
    alpha_k = paired.details["sequential"]["alpha_per_look"][-1]
    assert paired.hold_pvalue == pytest.approx(min(1.0, paired.details["p_holds"] * 0.05 / alpha_k))


def _blocks(pattern: str, seed: int) -> np.ndarray:
    """N(100, 2) samples, x1.25 where ``pattern`` has ``S`` (a slow clock state held for a block)."""
    x = 100 + 2 * np.random.default_rng(seed).standard_normal(len(pattern))
    return x * np.array([1.25 if c == "S" else 1.0 for c in pattern])


def test_a_leading_block_of_states_is_not_dropped_as_warm_up() -> None:
    """Five fast samples, then a slow block: the warm-up rule alone drops them and holds on the block."""
    x = _blocks("." * 5 + "S" * 25, seed=12)
    assert warm_up_count(x) == 5
    decision = _window(x, {"threshold": 101.1})
    assert decision.details["warm_up_dropped"] == 0 and decision.n == 30
    assert "sit in a block of states" in decision.reason and "effective n" in decision.reason


def test_a_true_warm_up_stays_dropped_beside_the_level_shift_check() -> None:
    dropped = 0
    for seed in range(40):
        x = 100 + 2 * np.random.default_rng(100 + seed).standard_normal(30)
        x[:3] *= 2
        dropped += _window(x, {"threshold": 95.0}).details["warm_up_dropped"] == 3
    # the lag-1 test over all 30 flags a 3-sample warm-up at times (measured 26 of 40 stay dropped): those
    # are decided on their effective n with the warm-up in, which costs power, not error (the table's rows)
    assert dropped >= 20


def test_blocks_of_states_read_the_long_run_factor_not_lag_1_alone() -> None:
    x = _blocks("." * 20 + "S" * 10, seed=13)
    decision = _window(x, {"threshold": 90.0})
    assert "the long-run factor 1 + 2 sum r_k" in decision.reason and "over 10 lags" in decision.reason
    r = decision.details["dependence"]["r"]
    assert decision.details["dependence"]["inflation"] > (1 + r) / (1 - r)


def _narrow_band_rounds() -> tuple[np.ndarray, np.ndarray]:
    """12 rounds whose per-round ratios lie between 0.036 and 0.070 and drift (serially dependent)."""
    rng = np.random.default_rng(12)
    ratios = np.array([0.036, 0.039, 0.041, 0.045, 0.047, 0.052, 0.055, 0.058, 0.061, 0.064, 0.068, 0.070])
    old = 100 + 2 * rng.standard_normal(12)
    return ratios * old, old


def _paired_run(a: np.ndarray, b: np.ndarray, plan: SequentialPlan, bound: str = "at_most",
                threshold: float = 1.0) -> Decision:
    check = rules.for_timing(rules.make_check("ratio", {"threshold": threshold, "bound": bound, "paired": True},
                                              labels=("a", "b")), timing=True)
    taken = 0

    def draw(k: int) -> list[tuple[str, np.ndarray]]:
        nonlocal taken
        taken += k
        return [("a", a[taken - k: taken]), ("b", b[taken - k: taken])]

    return rules.sequential(check, draw, plan, gate=rules.timing_gate(check))


def test_a_consistent_large_effect_is_decided_by_its_size_and_the_reason_says_so() -> None:
    """12 of 12 ratios in 0.036-0.070 against 1: the sign test on an effective n of ~3 could not decide it."""
    decision = _paired_run(*_narrow_band_rounds(), SequentialPlan(0.05, 6, 12, 3))
    assert decision.verdict is Verdict.HOLDS and decision.n == 12
    assert "decided by the effect's size" in decision.reason and "dependence factor" in decision.reason
    assert "effective n" in decision.reason and "of 12" in decision.reason and "repeated 90% CI [" in decision.reason
    assert 0 < decision.low <= decision.statistic <= decision.high < 1  # a finite interval of the median ratio
    assert decision.details["dependence"]["size_pvalues"][0] <= 0.2 * decision.details["sequential"][
        "alpha_per_look"][-1]


def test_an_early_look_decides_on_the_sign_test_alone() -> None:
    """Only the plan's last look may stop on the effect's size (a run of 8 rounds may hold one clock state)."""
    from claimcheck.stats._dependent import paired_effective

    a, b = _narrow_band_rounds()
    check = rules.make_check("ratio", {"threshold": 1.0, "bound": "at_most", "paired": True, "statistic": "median"},
                             labels=("a", "b"))
    groups = [("a", a), ("b", b)]
    decision = rules.decide_check(check, groups, 0.02)
    early = paired_effective(decision, groups, 0.02, final=False)
    last = paired_effective(decision, groups, 0.02)
    assert early.details["dependence"]["size_share"] == 0.0 and "sign test alone" in early.reason
    assert early.verdict is Verdict.INCONCLUSIVE and last.verdict is Verdict.HOLDS


@pytest.mark.parametrize("rule,params", [
    ("ratio", {"threshold": 1.0, "bound": "at_most", "paired": True, "statistic": "median"}),
    ("ratio", {"threshold": 1.0, "bound": "at_most", "paired": True, "statistic": "mean"}),
    ("equivalent", {"margin": 0.5, "paired": True, "statistic": "median"}),
    ("equivalent", {"margin": 0.5, "paired": True, "statistic": "mean"}),
])
def test_a_paired_figure_counts_its_rounds(rule: str, params: dict[str, object]) -> None:
    """A paired test's n is its rounds (the sign test over 4 rounds is a test of 4, not 8)."""
    a, b = 10 + np.random.default_rng(4).standard_normal((2, 9))
    decision = rules.decide(rule, [("a", a), ("b", b)], **params)
    assert decision.n == 9
