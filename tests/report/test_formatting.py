"""One formatter for estimates, intervals, levels and units: every figure reads true and fits its quantity."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from claimcheck.numbers import apart, level, within_range
from claimcheck.report import text
from claimcheck.report.corrections import text_md
from claimcheck.engine.result import ItemResult
from claimcheck.stats import noise_gate
from claimcheck.stats._rates import decide_zero_rate
from claimcheck.verdict import Verdict

_spec = importlib.util.spec_from_file_location("cc_synthetic", Path(__file__).resolve().parents[1] / "store" / "synthetic.py")
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)


def _with(record_overrides: dict, **decision: object) -> ItemResult:
    record = synth.outcome_record(**record_overrides)
    record["decision"].update(decision)
    return ItemResult.from_record(record)


def test_a_zero_rate_refuted_by_events_reads_as_its_exact_upper_bound() -> None:
    events = np.array([1.0] * 25 + [0.0] * 287)
    decision = decide_zero_rate("zero_rate", [("event", events)], 0.05, threshold=0.0)
    result = dataclasses.replace(synth.outcome(claim=synth.claim_record(check={"rule": "zero_rate", "output": "event",
                                                                               "threshold": 0})), decision=decision)
    assert decision.verdict is Verdict.REFUTED and decision.low == 0.0
    assert text.figure(result) == "0.080 [≤ 0.110]"
    assert "(95% upper bound 0.110, 25 of 312)" in text.measured(result)
    assert "0.00 " not in text.measured(result) and "[0.0" not in text.figure(result)


def test_a_length_never_reads_a_negative_bound_but_a_difference_may() -> None:
    claim = synth.claim_record(check={"rule": "at_least", "output": "funnel_length", "threshold": 14})
    length = _with({"claim": claim, "samples": {"funnel_length": [0.0, 0.0, 0.0, 2.0]}, "n": 4},
                   rule="at_least", statistic=0.5, low=-0.18, high=1.18, confidence_level=0.90, estimate_label="mean")
    assert text.figure(length) == "0.5 [0.0, 1.2]"
    assert "90% CI 0.0–1.2" in text.measured(length)
    gap = _with({"claim": synth.claim_record(check={"rule": "equivalent", "output": "gap", "margin": 0.2})},
                rule="equivalent", statistic=0.10, low=-0.05, high=0.25, estimate_label="mean difference")
    assert text.figure(gap) == "0.10 [-0.05, 0.25]"
    assert within_range(-0.2, 1.2, non_negative=True) == (0.0, 1.2)
    assert within_range(-0.2, 1.2, non_negative=False) == (-0.2, 1.2)


def test_a_ratio_is_non_negative_whatever_its_samples() -> None:
    ratio = _with({}, statistic=0.02, low=-0.01, high=0.05, estimate_label="ratio of means")
    assert text.figure(ratio).endswith("[0.00, 0.05]")


@pytest.mark.parametrize("cv", [0.10004, 0.1001, 0.118, 0.25])
def test_a_coefficient_of_variation_just_over_its_bound_reads_larger_than_it(cv: float) -> None:
    spread = cv * math.sqrt(2)
    reason = noise_gate([1 - spread / 2, 1 + spread / 2])
    assert reason is not None
    shown = reason.split("coefficient of variation ")[1].split("%")[0]
    assert float(shown) > 10 and reason.endswith("exceeds 10%"), reason
    assert apart(0.1, 0.1, as_percent=True) == ("10.0%", "10%")


def test_a_level_prints_once_the_same_way() -> None:
    assert [level(x) for x in (0.95, 0.9, 0.962011, 0.93573)] == ["95%", "90%", "96.2%", "93.6%"]


def test_code_spans_stay_code_in_correction_markdown() -> None:
    assert text_md("Decided by rule `at_least` at α=0.05") == "Decided by rule `at_least` at α=0.05"
    assert text_md("a_b *c* <x> `y_z`") == "a\\_b \\*c\\* &lt;x&gt; `y_z`"


def test_an_unknown_model_lists_prefix_registrations_with_a_name() -> None:
    from claimcheck.errors import NotApplicable
    from claimcheck.models import resolve

    with pytest.raises(NotApplicable) as raised:
        resolve("no-such-model-anywhere")
    message = str(raised.value)
    assert "synthetic:NAME" in message and "synthetic:;" not in message and not message.rstrip().endswith(":")
