"""A declared ``indifference:`` margin on a first run, through the claim path (:mod:`.indifference_table`).

Fast part: a margin of one within-run SE buys power at a 3.5-SE effect under independent noise that
the assumed spread does not give, and keeps both error rates outside the margin within alpha + 3 SE
under independent noise and clock-state blocks; half an SE does not keep them under blocks (the
reason no claim may declare a margin below the spread it stands in for). The full table, 1,000 runs a
rate, runs under ``-m slow`` and is what ``docs/statistics.md`` publishes.
"""

from __future__ import annotations

import math

import pytest

from . import dependence_models as D
from . import harness as H
from . import indifference_table as T

R_FAST = 300


def _bound(reps: int, k: float) -> float:
    return H.ALPHA + k * math.sqrt(H.ALPHA * (1 - H.ALPHA) / reps)


def test_a_margin_of_one_se_buys_first_run_power_under_independent_noise() -> None:
    none, one = T.rows(R_FAST, noises=[D.NORMAL_TIMING], margins=[None, 1.0])
    assert one.power >= 0.65 and one.power >= none.power + 0.25, (none, one)
    assert max(one.false_refuted, one.false_held) <= _bound(R_FAST, 3), one


def test_a_margin_of_one_se_keeps_both_error_rates_under_clock_state_blocks() -> None:
    (one,) = T.rows(R_FAST, noises=[D.NOISES[2]], margins=[1.0])
    assert max(one.false_refuted, one.false_held) <= _bound(R_FAST, 3), one


def test_half_an_se_does_not_keep_false_refutations_under_clock_state_blocks() -> None:
    """The table can fail: a margin below the spread it stands in for refutes runs that caught a fast state."""
    (half,) = T.rows(R_FAST, noises=[D.NOISES[2]], margins=[0.5])
    assert half.false_refuted > _bound(R_FAST, 2), half


def test_the_table_marks_a_rate_above_its_bound() -> None:
    row = T.Row("regime blocks", 0.5, 0.111, 0.030, 0.134, 1000)
    assert "0.111!" in T.table([row]) and "0.030!" not in T.table([row])


@pytest.mark.slow
def test_the_published_table() -> None:
    """The table ``docs/statistics.md`` shows: every margin of at least one SE within alpha + 2 SE."""
    rows = T.rows(1000)
    print(T.table(rows))
    for row in rows:
        if row.margin_se is None or row.margin_se >= 1.0:
            assert max(row.false_refuted, row.false_held) <= row.bound, row
