"""What a declared ``indifference:`` margin buys and costs on a first run (``python -m tests.simulation.indifference_table [R]``).

A first run has no earlier runs to measure the item's between-run spread, so it either assumes one
(twice the within-run SE for a one-sample bound) or, where the claim declares a margin of
indifference ``d``, moves the edge by ``d`` instead (holds must clear ``threshold + d``, refuted
``threshold - d``). The errors a declared margin answers for are those outside it: refuted where
the true figure is ``d`` or more above the threshold, holds where it is ``d`` or more below.

Each row is a one-sample timing ``at_least`` through the claim path (the common 8/19/30 plan,
first run), ``d`` in standard errors of a 30-sample median of independent N(100, 2) noise (the
unit of the power goal): the false-refutation rate with the true median at ``threshold + d``, the
false-hold rate with it at ``threshold - d``, and the power (holds) with it 3.5 SE above the
threshold. ``d = -`` is the claim with no margin declared (the assumed spread). ``docs/statistics.md``
shows the output.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from claimcheck.verdict import Verdict

from . import dependence_models as D
from . import harness as H

SEED = 4900
MARGINS_SE: tuple[float | None, ...] = (None, 0.5, 1.0, 2.5)  # None: no margin declared
EFFECT_SE = 3.5  # the power goal's effect
NOISES = (D.NORMAL_TIMING, H.NOISES[1], D.NOISES[0], D.NOISES[2], D.NOISES[4])  # normal, spiky, AR(1) 0.5, regime, load


@dataclass(frozen=True)
class Row:
    """One noise model and margin: both error rates outside the margin and the power at 3.5 SE."""

    noise: str
    margin_se: float | None
    false_refuted: float
    false_held: float
    power: float
    reps: int

    @property
    def bound(self) -> float:
        """alpha + 2 SE of a rate over ``reps`` replicates: the error rates' bound."""
        return H.ALPHA + 2 * float(np.sqrt(H.ALPHA * (1 - H.ALPHA) / self.reps))


def rate(noise: H.Noise, threshold: float, verdict: Verdict, margin: float | None, reps: int, seed: int) -> float:
    """Share of ``reps`` first runs of ``at_least threshold`` under ``noise`` that end ``verdict``."""
    rng = np.random.default_rng(seed)
    check = H.rules.make_check("at_least", {"threshold": threshold}, labels=("x",))
    data = noise.draw(rng, reps)
    return float(np.mean([H.run_item(check, [("x", data[r])], True, (), indifference=margin)[0] is verdict
                          for r in range(reps)]))


def rows(reps: int, noises: Sequence[H.Noise] = NOISES, margins: Sequence[float | None] = MARGINS_SE) -> list[Row]:
    """Every noise model x margin, each rate over ``reps`` replicates of its own."""
    out = []
    for i, noise in enumerate(noises):
        median = H.population(noise, np.median)
        for j, margin_se in enumerate(margins):
            margin = None if margin_se is None else margin_se * D.SE_MEDIAN
            d = margin or 0.0
            seed = SEED + 100 * i + 10 * j
            out.append(Row(noise.name, margin_se,
                           rate(noise, median - d, Verdict.REFUTED, margin, reps, seed),
                           rate(noise, median + d, Verdict.HOLDS, margin, reps, seed + 1),
                           rate(noise, median - EFFECT_SE * D.SE_MEDIAN, Verdict.HOLDS, margin, reps, seed + 2),
                           reps))
    return out


def table(results: Sequence[Row]) -> str:
    """The rows as printed; ``!`` marks an error rate above alpha + 2 SE."""
    head = f"{'noise':<18}{'margin d':>10}{'false refuted':>15}{'false held':>12}{'power 3.5 SE':>14}"
    lines = [head, "-" * len(head)]
    for row in results:
        margin = "-" if row.margin_se is None else f"{row.margin_se:g} SE"
        flag = ["!" if value > row.bound else " " for value in (row.false_refuted, row.false_held)]
        lines.append(f"{row.noise:<18}{margin:>10}{row.false_refuted:>14.3f}{flag[0]}{row.false_held:>11.3f}{flag[1]}"
                     f"{row.power:>14.3f}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Print the table for ``argv[0]`` replicates a rate (default 1,000)."""
    reps = int(argv[0]) if argv else 1000
    print(table(rows(reps)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
