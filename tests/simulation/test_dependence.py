"""Timing rules under dependent noise (AR(1), regime blocks, warm-up), through the claim path.

Fast part (default run): the harness is shown able to fail (the same cell without the gate, the
regime cell without its between-run component), a subset of cells keeps both error rates at
R = 200 within alpha + 3 SE (regime blocks on a first run among them), a regime cell with 3
earlier runs as history keeps them at R = 150, and history keeps between-run flips under a
per-run load at or below 1%, and a paired ratio 10x (or 0.036-0.070) in every one of 8-12
AR(1) rounds is decided the right way in at least 95% of runs at R = 60. The full table, 1,000
runs a cell with its history rows, power rows, flip lines and large-effect rows, runs under
``-m slow`` and is what ``docs/statistics.md`` publishes; every cell is asserted within alpha + 2 SE.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from claimcheck import rules
from claimcheck.verdict import Verdict

from . import dependence_models as D
from . import dependence_table as T
from . import harness as H

R_FAST = 200
FAST = [("at_least", "AR(1) 0.8"), ("at_most", "AR(1) 0.5"), ("ratio paired", "AR(1) 0.5"),
        ("at_least", "warm-up 3x2"), ("ratio paired", "warm-up 3x2"), ("ratio paired", "AR(1) 0.8"),
        ("equivalent paired", "AR(1) 0.8"), ("at_most", "load 1 SE"), ("at_least", "regime blocks"),
        ("at_most", "regime blocks")]
KNOWN_LIMITS: set[tuple[str, str]] = set()  # first-run cells outside alpha + 2 SE: none since the blocks' mechanisms
HISTORY_LIMITS: set[tuple[str, str]] = set()


def _se(reps: int) -> float:
    return math.sqrt(H.ALPHA * (1 - H.ALPHA) / reps)


def _cell(label: str, noise: str) -> H.Cell:
    return next(c for c in D.cells() if (c.label or c.rule) == label and c.noise.name == noise)


def test_without_the_gate_dependent_samples_break_the_bound() -> None:
    """The failure the gate removes: a median's sign test over AR(1) 0.8 samples, no gate."""
    cell = _cell("at_least", "AR(1) 0.8")
    check, replicates = cell.make(cell.noise, np.random.default_rng(21), R_FAST)
    median = rules.make_check("at_least", {"threshold": check.number("threshold"), "statistic": "median"},
                              labels=("x",))
    verdicts = [H.run_item(median, groups, timing=False)[0] for groups in replicates]
    wrong = np.mean([v is not Verdict.INCONCLUSIVE for v in verdicts])  # at the boundary both verdicts are wrong
    assert wrong > 2 * (H.ALPHA + 3 * _se(R_FAST))  # measured 0.45


@pytest.mark.parametrize(("label", "noise"), FAST, ids=[f"{a}-{b}" for a, b in FAST])
def test_fast_dependent_cells_keep_both_error_rates(label: str, noise: str) -> None:
    result = H.simulate(_cell(label, noise), R_FAST, seed=31 + FAST.index((label, noise)))
    limit = H.ALPHA + 3 * _se(R_FAST)
    assert result.refuted <= limit and result.held <= limit, H.table([result])


def _history_cell(label: str, noise: str, runs: int | None) -> H.Cell:
    cell = next(c for c in D.history_cells() if (c.label or c.rule) == label and c.noise.name == noise)
    return replace(cell, history_runs=runs)


def test_regime_blocks_with_three_earlier_runs_keep_both_error_rates() -> None:
    """The between-run component: 3 earlier runs' spread widens the interval enough for clock states."""
    limit = H.ALPHA + 3 * _se(150)
    without = H.simulate(_history_cell("at_least", "regime blocks", None), 150, seed=41)
    assert without.refuted > limit, H.table([without])  # the within-run decision alone: measured 0.24
    result = H.simulate(_history_cell("at_least", "regime blocks", 3), 150, seed=41)
    assert result.refuted <= limit and result.held <= limit, H.table([result])


def test_history_of_earlier_runs_stops_flips_under_per_run_load() -> None:
    within, _ = D.flip_rate(500, 1.0, seed=44, history_runs=None)
    widened, _ = D.flip_rate(500, 1.0, seed=44, history_runs=3)
    assert within > 0.01 >= widened, (within, widened)  # measured 0.016 and 0.002


R_EFFECT = 60


@pytest.mark.parametrize("index", range(len(D.EFFECTS)), ids=[e.label for e in D.EFFECTS])
def test_a_large_effect_in_every_round_is_decided_on_a_small_budget(index: int) -> None:
    """Its size decides it: the sign test over 8-12 dependent rounds could not (measured 0.48-0.60 before)."""
    effect = D.EFFECTS[index]
    right, wrong = D.effect_rate(effect, R_EFFECT, seed=T.SEED + 3000 + index)
    assert right >= 0.95 and wrong == 0.0, (effect.label, right, wrong)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(D.EFFECTS)), ids=[e.label for e in D.EFFECTS])
def test_a_large_effect_is_decided_in_95_percent_of_1000_runs(index: int) -> None:
    effect = D.EFFECTS[index]
    right, wrong = D.effect_rate(effect, 1000, seed=T.SEED + 3000 + index)
    assert right >= 0.95 and wrong == 0.0, (effect.label, right, wrong)


@pytest.mark.slow
def test_full_dependent_noise_table(report_table) -> None:  # type: ignore[no-untyped-def]
    results = T.error_results(1000)
    with_history = T.history_results(1000)
    report_table("dependent-noise error rates, 1,000 runs a cell", H.table(results))
    report_table("between-run models with earlier runs as history, 1,000 runs a cell", H.table(with_history))
    report_table("dependent-noise power rows, 1,000 runs a row", D.power_table(D.power_rows(1000, T.SEED + 1000)))
    report_table("between-run flips of edge items (at_least, timing, n = 30)", T.flip_lines(1000))
    outside = {(r.rule, r.noise) for r in results if not r.within(2.0)}
    assert outside <= KNOWN_LIMITS, sorted(outside - KNOWN_LIMITS)
    assert all(r.within(3.0) for r in results if (r.rule, r.noise) not in KNOWN_LIMITS)
    outside_history = {(r.rule, r.noise) for r in with_history if not r.within(2.0)}
    assert outside_history <= HISTORY_LIMITS, sorted(outside_history - HISTORY_LIMITS)
    for history_runs in (3, 10):
        flips, _ = D.flip_rate(1000, 1.0, seed=T.SEED + 2001, history_runs=history_runs)
        assert flips <= 0.01, (history_runs, flips)
