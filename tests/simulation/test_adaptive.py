"""Futility stop and extension through the claim path: both error rates at the boundary, power, samples saved.

Fast part (default run): a few boundary cells at R = 200 keep both error rates within alpha + 3 SE with
the adaptation on, and the same replicates show it saving samples at the edge. The full tables
(:mod:`adaptive_table`, 1,000 runs a cell, every noise model on a first run and with 3 earlier runs)
run under ``-m slow`` and are what ``docs/statistics.md`` publishes; every cell is asserted within
alpha + 2 SE, and no row loses more than 0.03 of power to the futility stop.
"""

from __future__ import annotations

import math

import pytest

from . import adaptive_table as A
from . import harness as H

R_FAST = 200
FAST = [("ratio paired", "normal (timing)"), ("equivalent paired", "AR(1) 0.8"), ("ratio paired", "load 1 SE"),
        ("at_least", "normal (shared)")]


def _cell(label: str, noise: str) -> H.Cell:
    return next(c for c in A._cells() if (c.label or c.rule) == label and c.noise_label == noise)


@pytest.mark.parametrize(("label", "noise"), FAST, ids=[f"{a}-{b}" for a, b in FAST])
def test_fast_cells_keep_both_error_rates_and_save_samples(label: str, noise: str) -> None:
    row = A.compare(_cell(label, noise), R_FAST, seed=61 + FAST.index((label, noise)))
    limit = H.ALPHA + 3 * math.sqrt(H.ALPHA * (1 - H.ALPHA) / R_FAST)
    assert max(row.after[:2]) <= limit, A.table([row])
    assert row.after[2] < row.before[2] - 1.0, A.table([row])  # at the edge the futility stop saves samples


@pytest.mark.slow
def test_full_adaptive_tables(report_table) -> None:  # type: ignore[no-untyped-def]
    boundary = A.boundary_rows(1000)
    power = A.power_rows(1000)
    report_table("futility stop and extension at the boundary, before -> after, 1,000 runs a cell", A.table(boundary))
    report_table("futility stop and extension, power rows, before -> after, 1,000 runs a row", A.table(power, True))
    assert all(row.within(2.0) for row in boundary), A.table([r for r in boundary if not r.within(2.0)])
    assert all(row.after[0] >= row.before[0] - 0.03 for row in power), A.table(power, True)
