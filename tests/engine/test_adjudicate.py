"""The one place verdicts change after the decision: noise gate, family, cascade, each recorded in order."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from claimcheck import rules
from claimcheck.engine.adjudicate import adjudicate_run, correct_family, gate_noise
from claimcheck.claim import Budget, Check, Claim, ProbeSpec, Scope, Source
from claimcheck.engine.explain import failure_text
from claimcheck.engine.result import ItemResult
from claimcheck.verdict import Verdict


def _claim(claim_id: str, *, exclusive: bool = False, depends_on: tuple[str, ...] = ()) -> Claim:
    return Claim(claim_id, "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("p"),
                 Check("at_most", output="ms", params={"threshold": 9.5, "statistic": "mean"}),
                 budget=Budget(exclusive=exclusive), depends_on=depends_on)


def _result(claim: Claim, samples: list[float]) -> ItemResult:
    decision = rules.decide("at_most", [("ms", samples)], threshold=9.5)
    return ItemResult(claim, claim.id, {}, decision.verdict, decision.reason, decision, samples={"ms": tuple(samples)})


NOISY = list(np.r_[np.full(100, 8.0), np.full(100, 12.0)])  # mean 10, CV 20%: refutes "<= 9.5", too noisy


def test_noise_gate_turns_a_noisy_timing_refutation_inconclusive_and_says_so() -> None:
    raw = _result(_claim("timing", exclusive=True), NOISY)
    assert raw.verdict is Verdict.REFUTED
    gated = gate_noise(raw, [("ms", NOISY)], cv_bound=0.10)
    assert gated.verdict is Verdict.INCONCLUSIVE and gated.raw_verdict is Verdict.REFUTED
    (step,) = gated.adjustments
    assert (step.step, step.before, step.after) == ("noise-gate", Verdict.REFUTED, Verdict.INCONCLUSIVE)
    assert "too noisy" in gated.reason and "would have been refuted" in gated.reason
    assert "verdict:  refuted → noise-gate: inconclusive" in failure_text(gated)


def test_noise_gate_leaves_shared_items_and_quiet_samples_alone() -> None:
    shared = _result(_claim("shared"), NOISY)
    assert gate_noise(shared, [("ms", NOISY)], cv_bound=0.10) is shared
    quiet = list(np.linspace(10.0, 10.1, 50))
    timing = _result(_claim("quiet", exclusive=True), quiet)
    median = dataclasses.replace(timing, claim=dataclasses.replace(
        timing.claim, check=dataclasses.replace(timing.claim.check, params={"threshold": 9.5, "statistic": "median"})),
        decision=dataclasses.replace(timing.decision, details={**timing.decision.details, "statistic": "median"}))
    assert gate_noise(median, [("ms", quiet)], cv_bound=0.10).verdict is median.verdict  # a median stands
    # a timing mean is never decided: a quiet sample may have missed the spikes that move it
    assert gate_noise(timing, [("ms", quiet)], cv_bound=0.10).verdict is Verdict.INCONCLUSIVE


def test_family_overturns_a_weak_refutation_and_records_every_member() -> None:
    weak = _result(_claim("weak"), [9.4, 9.9, 9.6, 9.8, 9.5, 9.9, 9.7, 9.6])  # p = 0.015: refuted alone
    strong = _result(_claim("strong"), [12.0, 12.1, 11.9, 12.05, 12.0, 11.95])
    assert weak.verdict is Verdict.REFUTED and strong.verdict is Verdict.REFUTED
    many = [weak, strong] + [_result(_claim(f"fine-{i}"), [5.0, 5.1, 4.9, 5.05]) for i in range(30)]
    corrected = correct_family(many, "holm")
    assert corrected[1].verdict is Verdict.REFUTED, "a clear refutation survives Holm over 32"
    assert all(r.adjustment("family") is not None for r in corrected), "holds are tested by the family too"
    assert all(r.verdict is Verdict.HOLDS for r in corrected[2:]), "clear holds survive Holm over 32"
    assert weak.decision is not None and weak.decision.pvalue * 32 > 0.05
    assert corrected[0].verdict is Verdict.INCONCLUSIVE
    family = corrected[0].adjustment("family")
    # Holm: the second-smallest p of 32 is multiplied by 31
    assert family is not None and family.adjusted_pvalue == pytest.approx(31 * weak.decision.pvalue)
    assert "refutation does not survive Holm over 32 items" in corrected[0].reason


def test_cascade_follows_the_final_verdicts_and_the_order_is_fixed() -> None:
    root = _result(_claim("root"), [12.0, 12.1, 11.9, 12.05])
    child = _result(_claim("child", depends_on=("root",)), [5.0, 5.1, 4.9, 5.05])
    run = adjudicate_run([root, child], family="holm", premises={"child": ("root",)})
    final_child = run.results[1]
    assert final_child.verdict is Verdict.STALE
    assert [a.step for a in final_child.adjustments] == ["family", "cascade"]
    assert run.chains == {"child": ["root (refuted)", "child"]}
    assert run.changed([root, child]) == [(child, final_child)]


def test_a_result_round_trips_through_its_record_with_its_adjustments() -> None:
    gated = gate_noise(_result(_claim("timing", exclusive=True), NOISY), [("ms", NOISY)], cv_bound=0.10)
    again = ItemResult.from_record(gated.to_record())
    assert again.verdict is gated.verdict and again.adjustments == gated.adjustments
    assert again.claim == gated.claim and again.samples == gated.samples
    assert dataclasses.replace(again, decision=None) == dataclasses.replace(gated, decision=None)


def test_an_adjustment_must_start_from_the_current_verdict() -> None:
    result = _result(_claim("x"), [5.0, 5.1, 4.9, 5.05])
    from claimcheck.engine.result import Adjustment

    with pytest.raises(ValueError, match="adjustment from refuted applied to a holds result"):
        result.adjusted(Adjustment("family", Verdict.REFUTED, Verdict.INCONCLUSIVE, "x"))
