"""A 40-item family at its edge: P(any false refutation) <= alpha and P(any false hold) <= alpha.

Every item sits exactly on its boundary, where a single decision's two errors are largest (each
rate is alpha there). The items mix the rules and noise of the error-rate table: ``at_least`` and
``at_most`` on the mean of normal samples (shared items), a paired ``ratio`` under 5% spikes and a
paired ``equivalent`` under t(3) noise (timing items, decided on the median), ten of each. Each is
run as the runner runs an item (:func:`harness.run_result`: the sequential plan 8/19/30, the gate,
the noise adjudication), and the run is adjusted by :func:`claimcheck.engine.adjudicate.correct_family`
over the 40-item suite. The point estimates must be at most alpha (not alpha + k SE); without the
family both are far above it, so the test can fail.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from claimcheck.engine.adjudicate import correct_family

from . import harness as H
from .family_tally import assert_family_keeps_both_errors, tally


ITEMS = 40
KINDS = (("at_least", "normal"), ("at_most", "normal"), ("ratio paired", "spiky 5% x1.3"),
         ("equivalent paired", "heavy t(3)"))
R_FAST = 25
R_FULL = 1000


def _simulate(runs: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    per_kind = ITEMS // len(KINDS)
    cells = {(c.label or c.rule, c.noise.name): c for c in H.cells()}
    made = []
    for kind in KINDS:
        cell = cells[kind]
        check, replicates = cell.make(cell.noise, rng, per_kind * runs)
        made.append((check, replicates, cell.noise.timing))
    items = [(f"{kind[0]}/{kind[1]}#{i}", k, i) for k, kind in enumerate(KINDS) for i in range(per_kind)]
    collected = {item_id: H.ALPHA for item_id, _, _ in items}
    counts: Counter[str] = Counter()
    for run in range(runs):
        results = []
        for item_id, k, i in items:
            check, replicates, timing = made[k]
            results.append(H.run_result(check, replicates[i * runs + run], timing, item_id)[0])
        tally(counts, results, correct_family(results, "holm", collected=collected))
    return {name: count / runs for name, count in counts.items()}


def _check(runs: int, seed: int, report_table, *, bound: float = H.ALPHA) -> None:
    rates = _simulate(runs, seed)
    se = math.sqrt(H.ALPHA * (1 - H.ALPHA) / runs)
    lines = [f"{'':<26}{'no family':>10}{'Holm':>8}{'its SE':>8}{'bound':>7}",
             f"{'P(any false refutation)':<26}{rates['raw refuted']:>10.3f}{rates['refuted']:>8.3f}"
             f"{math.sqrt(max(rates['refuted'], 1e-9) * (1 - rates['refuted']) / runs):>8.3f}{H.ALPHA:>7.2f}",
             f"{'P(any false hold)':<26}{rates['raw holds']:>10.3f}{rates['holds']:>8.3f}"
             f"{math.sqrt(max(rates['holds'], 1e-9) * (1 - rates['holds']) / runs):>8.3f}{H.ALPHA:>7.2f}",
             f"false refutations per run without the family {rates['refuted items']:.2f}, "
             f"false holds {rates['held items']:.2f}"]
    report_table(f"family at its edge: {ITEMS} items ({', '.join(f'{a} {b}' for a, b in KINDS)}, ten each), "
                 f"looks 8/19/30, {runs} runs, family alpha {H.ALPHA} (SE at alpha {se:.4f})", "\n".join(lines))
    assert_family_keeps_both_errors(rates, bound)


def test_forty_items_at_their_edge(report_table) -> None:
    """The fast smoke run: 25 runs cannot resolve alpha, only that the family removes most errors."""
    _check(R_FAST, 700, report_table, bound=0.2)


@pytest.mark.slow
def test_forty_items_at_their_edge_full(report_table, request) -> None:
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("40,000 items (a few minutes of CPU) run with -m slow")
    _check(R_FULL, 7_000, report_table)
