"""The between-run variance component and the always-on effective n of paired timing rules."""

from __future__ import annotations

import importlib.util
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from claimcheck.rules import decide
from claimcheck.stats import Decision, widen_between_runs
from claimcheck.stats._dependent import PAIRED_ALWAYS, paired_effective
from claimcheck.store import EvidenceStore
from claimcheck.verdict import Verdict

ALPHA = 0.05


def _holding_median(shift: float = 1.0, seed: int = 3) -> Decision:
    """A median ``at_least 100`` on 30 N(100 + shift, 2) samples: held within the run."""
    x = 100.0 + shift + 2.0 * np.random.default_rng(seed).standard_normal(30)
    decision = decide("at_least", [("x", x)], alpha=ALPHA, threshold=100.0, statistic="median")
    assert decision.verdict is Verdict.HOLDS
    return decision


def test_a_wide_history_makes_a_held_median_inconclusive() -> None:
    decision = _holding_median()
    widened = widen_between_runs(decision, [97.0, 101.0, 104.0, 99.0])
    assert widened.verdict is Verdict.INCONCLUSIVE
    assert "between-run spread of 4 earlier runs" in widened.reason and "would have been holds" in widened.reason
    record = widened.details["between_run"]
    assert record["source"] == "history" and record["tau"] == pytest.approx(np.std([97, 101, 104, 99], ddof=1))
    assert widened.low < decision.low and widened.hold_pvalue > ALPHA


def test_a_tight_history_keeps_the_verdict_and_its_pvalues_agree() -> None:
    decision = _holding_median(shift=2.0)
    widened = widen_between_runs(decision, [102.0, 102.01, 101.99])
    assert widened.verdict is Verdict.HOLDS and widened.hold_pvalue <= ALPHA < widened.pvalue
    assert widened.details["between_run"]["total_se"] >= widened.details["between_run"]["se"]


def test_without_history_a_one_sample_rule_assumes_twice_the_se() -> None:
    decision = _holding_median(shift=1.2)
    widened = widen_between_runs(decision, [100.5])
    record = widened.details["between_run"]
    assert record["source"] == "assumed" and record["runs"] == 1
    assert record["tau"] == pytest.approx(2 * record["se"])
    assert record["total_se"] == pytest.approx(math.sqrt(5) * record["se"])
    assert "no declared indifference margin" in widened.reason and "2 times the within-run SE" in widened.reason


def _held_paired_ratio() -> tuple[Decision, np.ndarray, np.ndarray]:
    """A paired median ``ratio`` at least 1 of arms 5% apart with 1% noise: held within the run."""
    rng = np.random.default_rng(8)
    b = 100.0 * (1 + 0.01 * rng.standard_normal(30))
    a = 1.05 * b * (1 + 0.01 * rng.standard_normal(30))
    ratio = decide("ratio", [("a", a), ("b", b)], alpha=ALPHA, threshold=1.0, bound="at_least",
                         statistic="median", paired=True)
    return ratio, a, b


def test_without_history_a_paired_rule_assumes_the_se() -> None:
    ratio, _, _ = _held_paired_ratio()
    record = widen_between_runs(ratio, []).details["between_run"]
    assert record["source"] == "assumed" and record["tau"] == pytest.approx(record["se"])
    assert record["total_se"] == pytest.approx(math.sqrt(2) * record["se"])


def test_a_median_held_within_the_run_by_2_se_is_not_held_on_a_first_run() -> None:
    """What a first run cannot see: the run's median 2.5 SE off the long-run value must not decide."""
    x = 100.0 + 2.0 * np.random.default_rng(11).standard_normal(30)
    probe = decide("at_least", [("x", x)], alpha=ALPHA, threshold=90.0, statistic="median")
    se = (probe.high - probe.low) / (2 * 1.6449)  # the SE the component reads off the interval
    decision = decide("at_least", [("x", x)], alpha=ALPHA, threshold=float(np.median(x)) - 2.5 * se,
                            statistic="median")
    assert decision.verdict is Verdict.HOLDS
    assert widen_between_runs(decision, []).verdict is Verdict.INCONCLUSIVE


def test_a_declared_indifference_margin_must_be_cleared() -> None:
    decision = _holding_median(shift=1.5)
    assert widen_between_runs(decision, [], indifference=0.01).verdict is Verdict.HOLDS
    wide = widen_between_runs(decision, [], indifference=decision.statistic - 100.0)
    assert wide.verdict is Verdict.INCONCLUSIVE and "indifference margin" in wide.reason


def test_it_never_strengthens_a_verdict() -> None:
    x = 100.0 + 2.0 * np.random.default_rng(5).standard_normal(30)
    decision = decide("at_least", [("x", x)], alpha=ALPHA, threshold=100.0, statistic="median")
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert widen_between_runs(decision, [120.0, 120.0, 120.0]).verdict is Verdict.INCONCLUSIVE


def test_ratio_and_equivalence_widen_on_the_log_scale() -> None:
    ratio, a, b = _held_paired_ratio()
    assert ratio.verdict is Verdict.HOLDS
    assert widen_between_runs(ratio, [1.05, 1.051, 1.049]).verdict is Verdict.HOLDS
    assert widen_between_runs(ratio, [0.9, 1.2, 1.05]).verdict is Verdict.INCONCLUSIVE
    equal = decide("equivalent", [("a", a / 1.05), ("b", b)], alpha=ALPHA, margin=0.05, scale="log-ratio",
                              paired=True, statistic="median")
    assert equal.verdict is Verdict.HOLDS
    widened = widen_between_runs(equal, [0.9, 1.1, 1.0])
    assert widened.verdict is Verdict.INCONCLUSIVE and widened.details["between_run"]["log_scale"]


def test_only_the_hypothesis_says_whether_a_decision_is_widened() -> None:
    """No hypothesis, or one that declares no between-run spread: unchanged; the rule's name plays no part."""
    decision = _holding_median()
    assert decision.hypothesis is not None and decision.hypothesis.assumed_spread == 2.0
    for other in (replace(decision, hypothesis=None),
                  replace(decision, hypothesis=replace(decision.hypothesis, assumed_spread=None))):
        assert widen_between_runs(other, [1.0, 50.0, 300.0]) is other
    renamed = replace(decision, rule="exact")
    assert widen_between_runs(renamed, [1.0, 50.0, 300.0]).verdict is Verdict.INCONCLUSIVE


def test_a_paired_contrast_is_decided_on_its_effective_n_without_a_flag() -> None:
    rng = np.random.default_rng(13)
    e = np.empty(30)
    e[0] = rng.standard_normal()
    for t in range(1, 30):
        e[t] = 0.8 * e[t - 1] + 0.6 * rng.standard_normal()
    b = 100.0 + 2.0 * rng.standard_normal(30)
    a = 100.0 + 2.0 * e
    decision = decide("ratio", [("a", a), ("b", b)], alpha=ALPHA, threshold=0.97, bound="at_least",
                            statistic="median", paired=True)
    inflated = paired_effective(decision, [("a", a), ("b", b)], ALPHA)
    assert inflated.details["dependence"]["inflation"] > 1.2
    assert inflated.reason.startswith(PAIRED_ALWAYS) and inflated.high - inflated.low > decision.high - decision.low
    one_sample = decide("at_least", [("x", a)], alpha=ALPHA, threshold=99.0, statistic="median")
    assert paired_effective(one_sample, [("x", a)], ALPHA) is one_sample


def _synthetic():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("cc_synthetic_between",
                                                  Path(__file__).parents[1] / "store" / "synthetic.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_store_gives_an_items_estimates_from_complete_runs_of_its_machine_class(tmp_path: Path) -> None:
    synth = _synthetic()
    path = tmp_path / "ev.sqlite"
    with EvidenceStore(path) as store:
        for statistic, machine_class, complete in ((0.41, synth.CLASS_A, True), (0.52, synth.CLASS_A, True),
                                                   (0.90, synth.CLASS_A, False), (0.33, "other", True)):
            run_id = store.begin_run(machine=synth.MACHINE_A, machine_class=machine_class, suite_commit="s",
                                     claims_commit="c")
            store.record(run_id, synth.outcome(statistic=statistic, machine_class=machine_class))
            store.finish_run(run_id, complete=complete)
    item_id = synth.outcome().item_id
    with EvidenceStore.open_readonly(path) as store:
        assert store.item_estimates(item_id, synth.CLASS_A) == [0.41, 0.52]
        assert store.item_estimates(item_id, "other") == [0.33]
        assert store.item_estimates("missing", synth.CLASS_A) == []


def test_only_runs_of_the_same_design_count_as_history(tmp_path: Path) -> None:
    """A control whose params changed measured something else before: its old figures are no between-run spread."""
    import dataclasses

    from claimcheck.claim import ProbeSpec
    from claimcheck.engine.result import ItemResult

    synth = _synthetic()
    path = tmp_path / "ev.sqlite"

    def measured(statistic: float, params: dict[str, int]) -> ItemResult:
        result = synth.outcome(statistic=statistic, machine_class=synth.CLASS_A)
        return dataclasses.replace(result, claim=dataclasses.replace(result.claim, probe=ProbeSpec("decode_arms", params)))

    padded, twice = measured(2.5, {"pad_ms": 1000}), measured(2.0, {"pad_passes": 2})
    with EvidenceStore(path) as store:
        for outcome in (padded, padded, twice):
            run_id = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, suite_commit="s", claims_commit="c")
            store.record(run_id, outcome)
            store.finish_run(run_id, complete=True)
    with EvidenceStore.open_readonly(path) as store:
        item_id = padded.item_id
        assert store.item_estimates(item_id, synth.CLASS_A) == [2.5, 2.5, 2.0], "without a design every run counts"
        assert store.item_estimates(item_id, synth.CLASS_A, probe=twice.claim.to_record()["probe"]) == [2.0]
        assert store.item_estimates(item_id, synth.CLASS_A, probe=padded.claim.to_record()["probe"]) == [2.5, 2.5]


def test_a_carried_forward_result_is_not_counted_again_as_history(tmp_path: Path) -> None:
    import dataclasses

    synth = _synthetic()
    path = tmp_path / "ev.sqlite"
    with EvidenceStore(path) as store:
        first = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, suite_commit="s", claims_commit="c")
        store.record(first, synth.outcome(statistic=0.41, machine_class=synth.CLASS_A))
        store.finish_run(first, complete=True)
        second = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, suite_commit="s", claims_commit="c")
        carried = dataclasses.replace(synth.outcome(statistic=0.41, machine_class=synth.CLASS_A), carried_from=first)
        store.record(second, carried)
        store.finish_run(second, complete=True)
    with EvidenceStore.open_readonly(path) as store:
        assert store.item_estimates(synth.outcome().item_id, synth.CLASS_A) == [0.41]


def test_a_claims_indifference_margin_survives_its_stored_record() -> None:
    from claimcheck.claim import Check, Claim, ProbeSpec, Scope, Source

    claim = Claim("c", "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("p"), Check("at_least"),
                  indifference=0.5)
    assert Claim.from_record(claim.to_record()).indifference == 0.5
    assert Claim.from_record({**claim.to_record(), "indifference": None}).indifference is None


def _host_build_refutation() -> Decision:
    """A paired ratio 'at most 0.95' refuted by its signs: estimate 1.008, interval [0.978, 1.161] (a README run)."""
    from claimcheck.stats._hypothesis import Hypothesis

    hypothesis = Hypothesis(statistic="median", bound="at_most", threshold=0.95, paired=True, scale="log",
                            assumed_spread=1.0)
    return Decision(rule="ratio", statistic=1.008, low=0.978, high=1.161, confidence_level=0.9, n=24,
                    verdict=Verdict.REFUTED, reason="signs", pvalue=0.01, hold_pvalue=1.0, alpha=ALPHA, mde=None,
                    hypothesis=hypothesis)


def test_an_asymmetric_interval_is_read_on_the_side_facing_the_edge() -> None:
    """The estimate sits 0.03 (log) above the interval's low end and 0.14 below its high end: the low side decides."""
    decision = _host_build_refutation()
    unchanged = widen_between_runs(decision, [1.008, 1.008, 1.008, 1.008])
    assert unchanged.verdict is Verdict.REFUTED, unchanged.reason
    record = unchanged.details["between_run"]
    assert record["se_below"] < record["se"] < record["se_above"]
    assert "on the side facing the edge" in unchanged.reason
    assert widen_between_runs(decision, [0.95, 1.0, 1.05, 1.1]).verdict is Verdict.INCONCLUSIVE  # a real spread still undoes it
    first = widen_between_runs(decision, [])  # the assumed spread is the interval's half-width, whichever side faces the edge
    assert first.details["between_run"]["tau"] == pytest.approx(first.details["between_run"]["se"])


def test_at_no_between_run_spread_a_dependent_decision_stands_as_the_run_made_it() -> None:
    """Earlier runs that all agree add nothing: the sign test's decision, asymmetric bounds and all, is kept."""
    from claimcheck.stats._dependent import decide_dependent
    from claimcheck.stats._hypothesis import Hypothesis

    hypothesis = Hypothesis(statistic="median", bound="at_most", threshold=1.0, paired=True, scale="log",
                            assumed_spread=1.0)
    decided_count = 0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(10, 30))
        ratios = np.exp(rng.uniform(-0.12, 0.12) + 0.08 * (rng.exponential(size=n) - 1.0) * rng.choice([-1, 1]))
        start = Decision(rule="ratio", statistic=float(np.median(ratios)), low=0.0, high=np.inf, confidence_level=0.9,
                         n=n, verdict=Verdict.INCONCLUSIVE, reason="", pvalue=1.0, hold_pvalue=1.0, alpha=ALPHA,
                         mde=None, hypothesis=hypothesis)
        decided = decide_dependent(start, [("a", ratios), ("b", np.ones(n))], ALPHA, "per-round contrast", lags=3)
        if decided is None or decided.verdict is Verdict.INCONCLUSIVE or not np.isfinite(decided.high - decided.low):
            continue  # undecided or unbounded: nothing to keep
        decided_count += 1
        kept = widen_between_runs(decided, [decided.statistic] * 3)
        assert kept.verdict is decided.verdict, (seed, decided.low, decided.statistic, decided.high, kept.reason)
    assert decided_count >= 15, "too few decided cases to say anything"
