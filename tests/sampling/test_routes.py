"""Hazard bookkeeping on hand-made departures, including the undefined cases."""

from __future__ import annotations

import pytest

from claimcheck.probing.sampling.forkmap import FORK, LOCKED, REMERGE
from claimcheck.probing.sampling.routes import (
    Counts,
    Value,
    first_departure,
    hazard,
    jackknife_pseudovalues,
    ratio,
    sample_counts,
    selectivity,
    total,
)

LABELS = [LOCKED, FORK, REMERGE, LOCKED, FORK, REMERGE]


def test_first_departure() -> None:
    ref = [5, 6, 7, 8]
    assert first_departure([5, 6, 9, 8], ref) == 2
    assert first_departure([5, 6, 7, 8, 1], ref) == 4  # never departs
    assert first_departure([5, 6], ref) == 2  # ended (stop token) early: departs where it ended
    assert first_departure([], ref) == 0


def test_one_sample_contributes_risk_up_to_and_including_its_departure() -> None:
    c = sample_counts(2, LABELS)  # on the path at 0, 1, 2; departs at 2 (a REMERGE position)
    assert c.at_risk == {FORK: 1, REMERGE: 1, LOCKED: 1}
    assert c.departures == {FORK: 0, REMERGE: 1, LOCKED: 0}
    never = sample_counts(6, LABELS)
    assert never.at_risk == {FORK: 2, REMERGE: 2, LOCKED: 2} and sum(never.departures.values()) == 0
    with pytest.raises(ValueError):
        sample_counts(7, LABELS)


def test_hazards_by_hand() -> None:
    # Four seeds depart at 1 (FORK), 2 (REMERGE), 4 (FORK), never.
    pooled = total(sample_counts(d, LABELS) for d in (1, 2, 4, 6))
    # at risk at FORK positions 1 and 4: 4 seeds at 1 (all have d >= 1), at 4: seeds with d >= 4 -> 2
    assert pooled.at_risk[FORK] == 6 and pooled.departures[FORK] == 2
    # at risk at REMERGE positions 2 and 5: d >= 2 -> 3 seeds, d >= 5 -> 1 seed
    assert pooled.at_risk[REMERGE] == 4 and pooled.departures[REMERGE] == 1
    assert hazard(pooled, FORK).value == pytest.approx(2 / 6)
    assert hazard(pooled, REMERGE).value == pytest.approx(1 / 4)
    assert selectivity(pooled).value == pytest.approx((2 / 6) / (1 / 4))


def test_nothing_at_risk_is_undefined_not_zero() -> None:
    # Every seed departs at position 1 (a FORK), before the first REMERGE position (2).
    pooled = total(sample_counts(1, LABELS) for _ in range(5))
    h = hazard(pooled, REMERGE)
    assert h.value is None and "at risk" in h.reason
    s = selectivity(pooled)
    assert s.value is None and "denominator undefined" in s.reason
    # A reference without nodes: every position LOCKED.
    flat = total(sample_counts(d, [LOCKED] * 4) for d in (0, 4))
    assert hazard(flat, FORK).value is None


def test_ratios_of_zero_hazards_are_undefined() -> None:
    assert ratio(Value(0.0), Value(0.0), "x").reason == "x: both hazards are 0"
    assert ratio(Value(0.2), Value(0.0), "x").value is None
    assert ratio(Value(0.0), Value(0.5), "x").value == 0.0


def test_jackknife_of_a_mean_returns_the_observations() -> None:
    # With one unit at risk per seed the pooled hazard is a plain mean, whose jackknife
    # pseudo-values are exactly the per-seed values (a textbook identity).
    labels = [FORK]
    per_seed = [sample_counts(d, labels) for d in (0, 1, 1, 0, 1)]  # departs (1) or not (0)
    pseudo, full, reason = jackknife_pseudovalues(per_seed, lambda c: hazard(c, FORK))
    assert full.value == pytest.approx(2 / 5) and reason is None
    assert pseudo == pytest.approx([1, 0, 0, 1, 0])


def test_jackknife_reports_why_it_is_undefined() -> None:
    per_seed = [sample_counts(1, LABELS), sample_counts(1, LABELS)]
    pseudo, full, reason = jackknife_pseudovalues(per_seed, selectivity)
    assert pseudo == [] and full.value is None and "denominator" in reason
    # Defined on all seeds but undefined without the only seed that departs at a REMERGE position.
    per_seed = [sample_counts(2, LABELS), sample_counts(1, LABELS), sample_counts(4, LABELS)]
    pseudo, full, reason = jackknife_pseudovalues(per_seed, selectivity)
    assert full.defined and pseudo == [] and reason.startswith("undefined without seed #0")
    assert jackknife_pseudovalues([sample_counts(1, LABELS)], selectivity)[2].startswith("a jackknife needs")


def test_jackknife_pairs_two_arms() -> None:
    a = [sample_counts(d, LABELS) for d in (1, 2, 4, 6, 1, 2)]
    b = [sample_counts(d, LABELS) for d in (1, 2, 4, 6, 1, 4)]
    pseudo, full, _ = jackknife_pseudovalues(list(zip(a, b)), lambda x, y: ratio(hazard(x, FORK), hazard(y, FORK), "factor"))
    assert len(pseudo) == 6
    assert full.value == pytest.approx(hazard(total(a), FORK).value / hazard(total(b), FORK).value)


def test_counts_add_and_subtract() -> None:
    a, b = sample_counts(1, LABELS), sample_counts(4, LABELS)
    both = a + b
    assert (both - b).at_risk == {k: a.at_risk.get(k, 0) for k in (FORK, REMERGE, LOCKED)}
    assert isinstance(both, Counts)
