"""``relation``, ``level_equivalent`` and ``monotone`` with ``strict: false``: decisions, error rates, misuse."""

from __future__ import annotations

import numpy as np
import pytest

from claimcheck import rules
from claimcheck.claim import Claim
from claimcheck.errors import ClaimError
from claimcheck.claims.loader import load_claims_text
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.engine.runner import RunOptions, run_claim_item
from claimcheck.verdict import Verdict

HEAD = """\
id: c1
title: t
statement: s
source: {doc: d.md, section: "1", figure: f}
scope: {kind: portable}
"""


def _pairs(rho: float, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return x, rho * x + np.sqrt(1 - rho**2) * rng.normal(size=n)


# -- relation ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("rho", "sign", "verdict"), [(-0.8, "negative", Verdict.HOLDS),
                                                       (0.8, "negative", Verdict.REFUTED),
                                                       (0.8, "positive", Verdict.HOLDS)])
def test_relation_decides_the_sign_of_the_rank_correlation(rho: float, sign: str, verdict: Verdict) -> None:
    x, y = _pairs(rho, 40, seed=1)
    decided = rules.decide("relation", [("y", y.tolist()), ("x", x.tolist())], sign=sign)
    assert decided.verdict is verdict
    assert decided.low < decided.statistic < decided.high and "Spearman's rho of y on x" in decided.reason


def test_relation_slope_has_the_least_squares_interval() -> None:
    from scipy import stats

    x, y = _pairs(-0.6, 50, seed=2)
    decided = rules.decide("relation", [("y", y.tolist()), ("x", x.tolist())], sign="negative", measure="slope",
                           threshold=-0.2)
    fit = stats.linregress(x, y)
    assert decided.statistic == pytest.approx(fit.slope)
    assert decided.high == pytest.approx(fit.slope + stats.t.isf(0.05, 48) * fit.stderr)
    assert decided.verdict is Verdict.HOLDS


def test_relation_keeps_both_error_rates_at_the_boundary() -> None:
    """At rho = 0 a claimed negative correlation holds at most alpha of the time, and a positive one is
    refuted at most alpha of the time (1,000 seeded draws of 30 pairs, 2 SE slack)."""
    holds = refutes = 0
    runs = 1000
    for seed in range(runs):
        x, y = _pairs(0.0, 30, seed=seed)
        verdict = rules.decide("relation", [("y", y.tolist()), ("x", x.tolist())], sign="negative").verdict
        holds += verdict is Verdict.HOLDS
        refutes += verdict is Verdict.REFUTED
    slack = 2 * np.sqrt(0.05 * 0.95 / runs)
    assert holds / runs <= 0.05 + slack and refutes / runs <= 0.05 + slack


def test_relation_needs_pairs_and_varied_values() -> None:
    few = rules.decide("relation", [("y", [1.0, 2.0, 3.0]), ("x", [1.0, 2.0, 3.0])], sign="positive")
    assert few.verdict is Verdict.INCONCLUSIVE and "at least 4 pairs" in few.reason
    flat = rules.decide("relation", [("y", [1.0] * 8), ("x", list(range(8)))], sign="positive")
    assert flat.verdict is Verdict.INCONCLUSIVE and "all 8 samples are equal" in flat.reason


RELATION = HEAD + """\
probe: {name: texts, params: {temp: [0.5, 1.0, 1.5]}}
check: {rule: relation, output: repetition, over: temp, sign: negative}
budget: {min_samples: 10, max_samples: 30, looks: 3}
"""


def _texts(ctx: ProbeContext, *, temp: float) -> dict[str, list[float]]:
    """Repetition that falls with temperature, and a cross-entropy that rises as repetition falls."""
    repetition = [0.6 - 0.3 * temp + 0.05 * ctx.rng.gauss(0, 1) for _ in range(ctx.n)]
    return {"repetition": repetition, "cross_entropy": [2.0 - 2 * r + 0.05 * ctx.rng.gauss(0, 1) for r in repetition]}


TEXTS = RegisteredProbe("texts", _texts, {"repetition": Output(""), "cross_entropy": Output("nats/token")})


def _run(claim: Claim, probe: RegisteredProbe, seed: int = 0):
    return run_claim_item(claim, claim.id, dict(claim.probe.params), probe, options=RunOptions(seed=seed),
                          machine={"backend": "cpu"})


def test_relation_over_a_numeric_sweep_and_between_two_outputs_through_the_runner() -> None:
    (claim,) = load_claims_text(RELATION, "c.yaml")
    swept = _run(claim, TEXTS)
    assert swept.verdict is Verdict.HOLDS and "of repetition on temp" in swept.reason
    paired_text = RELATION.replace("params: {temp: [0.5, 1.0, 1.5]}", "params: {temp: 1.0}").replace(
        "over: temp", "reference: cross_entropy")
    (paired,) = load_claims_text(paired_text, "c.yaml")
    result = _run(paired, TEXTS)
    assert result.verdict is Verdict.HOLDS and "of repetition on cross_entropy" in result.reason
    assert rules.get("relation").expectation(paired.check) == "spearman(repetition, cross_entropy) < 0"


@pytest.mark.parametrize(("change", "where", "message"), [
    (("over: temp", "over: temp, reference: cross_entropy"), "check.reference", "either `check.reference`"),
    (("sign: negative", "sign: negative, threshold: 1.5"), "check.threshold", "must lie in (-1, 1)"),
    (("sign: negative", "sign: down"), "check.sign", "expected one of positive, negative"),
    (("temp: [0.5, 1.0, 1.5]", "temp: [low, high]"), "check.over", "needs numeric levels"),
])
def test_relation_misuse_is_one_line_at_its_field(change: tuple[str, str], where: str, message: str) -> None:
    with pytest.raises(ClaimError) as error:
        load_claims_text(RELATION.replace(*change), "c.yaml")
    assert f"c.yaml:7: {where}" in str(error.value) and message in str(error.value)


# -- level_equivalent ----------------------------------------------------------------------------------
SWEEP = HEAD + """\
probe: {name: speeds, params: {m: [1, 2, 4]}}
check: {rule: level_equivalent, output: ms, over: m, versus: 1, margin: 0.05, scale: log-ratio}
budget: {min_samples: 10, max_samples: 40, looks: 3}
"""


def _speeds(slow_at_4: float, deterministic: bool = False) -> RegisteredProbe:
    def probe(ctx: ProbeContext, *, m: int) -> dict[str, list[float]]:
        base = 10.0 * (slow_at_4 if m == 4 else 1.0)
        count = 1 if deterministic else ctx.n
        return {"ms": [base * (1 + (0 if deterministic else 0.01 * ctx.rng.gauss(0, 1))) for _ in range(count)]}

    return RegisteredProbe("speeds", probe, {"ms": Output("ms", higher_is_better=False)}, deterministic=deterministic)


def test_level_equivalent_holds_when_every_level_matches_the_reference_and_is_refuted_by_one_outlier() -> None:
    (claim,) = load_claims_text(SWEEP, "c.yaml")
    held = _run(claim, _speeds(1.0))
    assert held.verdict is Verdict.HOLDS and "all 2 pairs within the margin" in held.reason
    refuted = _run(claim, _speeds(1.3))
    assert refuted.verdict is Verdict.REFUTED and "m=4 vs m=1" in refuted.reason and "Holm over 2 pairs" in refuted.reason
    pairs = refuted.decision.details["pairs"]
    assert [p["pair"] for p in pairs] == ["m=2 vs m=1", "m=4 vs m=1"]


def test_level_equivalent_one_level_all_pairs_and_exact() -> None:
    (one,) = load_claims_text(SWEEP.replace("versus: 1,", "versus: 1, level: 2,"), "c.yaml")
    assert _run(one, _speeds(1.3)).verdict is Verdict.HOLDS  # m=4 is not compared
    (every,) = load_claims_text(SWEEP.replace("versus: 1, ", ""), "c.yaml")
    decided = _run(every, _speeds(1.0))
    assert decided.verdict is Verdict.HOLDS and len(decided.decision.details["pairs"]) == 3
    exact = _run(claim_exact := load_claims_text(SWEEP, "c.yaml")[0], _speeds(1.08, deterministic=True))
    assert claim_exact.check.over == "m"
    assert exact.verdict is Verdict.REFUTED and "m=4 vs m=1: ratio 1.08 lies outside" in exact.reason


def test_level_equivalent_keeps_its_false_hold_rate_at_the_margin() -> None:
    """Two levels 5% apart (the margin's edge, on the log scale): held at most alpha + 2 SE of 1,000 seeded runs."""
    rng = np.random.default_rng(7)
    rule, runs, held = rules.get("level_equivalent"), 1000, 0
    check = rules.make_check("level_equivalent", {"margin": 0.05, "scale": "log-ratio", "versus": "1"})
    check = check.__class__(**{**check.__dict__, "over": "m", "output": "ms"})
    for _ in range(runs):
        noise = rng.normal(0, 0.02, size=(2, 20))
        groups = rule.groups([("m=1", (10 * np.exp(noise[0])).tolist()),
                              ("m=2", (10 * 1.05 * np.exp(noise[1])).tolist())], check)
        held += rule.decide(groups, 0.05, check).verdict is Verdict.HOLDS
    assert held / runs <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / runs)


@pytest.mark.parametrize(("change", "where", "message"), [
    (("versus: 1", "versus: 3"), "check.versus", "`versus: 3` is not one of the swept `m` values (1, 2, 4)"),
    (("versus: 1,", "level: 2,"), "check.level", "set `versus` too"),
    (("margin: 0.05", "margin: -1"), "check.margin", "must be positive"),
])
def test_level_equivalent_misuse_is_one_line_at_its_field(change: tuple[str, str], where: str, message: str) -> None:
    with pytest.raises(ClaimError) as error:
        load_claims_text(SWEEP.replace(*change), "c.yaml")
    assert f"c.yaml:7: {where}" in str(error.value) and message in str(error.value)


# -- monotone, strict: false ---------------------------------------------------------------------------
def test_a_tie_refutes_a_strict_trend_exactly_and_holds_a_non_strict_one() -> None:
    groups = [("n=1", [1.0]), ("n=2", [2.0]), ("n=4", [2.0])]
    strict = rules.decide_check(_monotone_check({}), groups, 0.05, deterministic=True)
    assert strict.verdict is Verdict.REFUTED
    loose = rules.decide_check(_monotone_check({"strict": False}), groups, 0.05, deterministic=True)
    assert loose.verdict is Verdict.HOLDS and "n=4 >= n=2" in loose.reason


def test_a_sampled_non_strict_trend_holds_through_a_flat_step_within_its_tolerance() -> None:
    rng = np.random.default_rng(3)
    groups = [(f"n={n}", (mean + 0.05 * rng.normal(size=30)).tolist()) for n, mean in ((1, 1.0), (2, 2.0), (4, 2.0))]
    assert rules.decide_check(_monotone_check({}), groups, 0.05).verdict is not Verdict.HOLDS
    loose = rules.decide_check(_monotone_check({"strict": False, "tolerance": 0.2}), groups, 0.05)
    assert loose.verdict is Verdict.HOLDS and "tolerance 0.2" in loose.estimate_label
    falling = [(label, (np.asarray(x) - (1.0 if label == "n=4" else 0.0)).tolist()) for label, x in groups]
    assert rules.decide_check(_monotone_check({"strict": False, "tolerance": 0.2}), falling, 0.05).verdict \
        is Verdict.REFUTED
    assert rules.get("monotone").expectation(_monotone_check({"strict": False, "tolerance": 0.2})) \
        == "x non-decreasing (within 0.2) over n"


def test_tolerance_without_strict_false_is_refused_at_its_line() -> None:
    text = HEAD + ("probe: {name: p, params: {n: [1, 2]}}\n"
                   "check: {rule: monotone, output: x, over: n, tolerance: 0.1}\n")
    with pytest.raises(ClaimError, match=r"c\.yaml:7: check\.tolerance: .*set `strict: false`"):
        load_claims_text(text, "c.yaml")


def _monotone_check(params: dict[str, object]):
    check = rules.make_check("monotone", params)
    return check.__class__(**{**check.__dict__, "over": "n", "output": "x"})
