"""Print the dependent-noise error-rate table and its power rows (``python -m tests.simulation.dependence_table [R]``).

Each cell runs ``R`` replicates (default 1,000) through the claim path with a fixed seed, so the
printed table is reproducible; ``docs/statistics.md`` shows its output.
"""

from __future__ import annotations

import sys

from . import dependence_models as D
from . import harness as H

SEED = 4100


def error_results(reps: int) -> list[H.Result]:
    """Both error rates of every timing rule under every dependent-noise model, as a first run decides them."""
    return [H.simulate(cell, reps, seed=SEED + index) for index, cell in enumerate(D.cells())]


def history_results(reps: int) -> list[H.Result]:
    """The between-run models again, each replicate reading earlier complete runs of the item as history."""
    return [H.simulate(cell, reps, seed=SEED + 500 + index) for index, cell in enumerate(D.history_cells())]


def main(argv: list[str]) -> int:
    """Print both tables for ``argv[0]`` replicates a cell."""
    reps = int(argv[0]) if argv else 1000
    print(H.table(error_results(reps)))
    print()
    print(H.table(history_results(reps)))
    print()
    print(D.power_table(D.power_rows(reps, seed=SEED + 1000)))
    print()
    print(flip_lines(reps))
    print()
    print(effect_lines(reps))
    return 0


def effect_lines(reps: int) -> str:
    """Large effects on small budgets: the right verdict's rate and the wrong one's (:data:`D.EFFECTS`)."""
    lines = []
    for index, effect in enumerate(D.EFFECTS):
        right, wrong = D.effect_rate(effect, reps, seed=SEED + 3000 + index)
        lines.append(f"{effect.label:<40} {effect.right:<8} right {right:.3f} wrong {wrong:.3f} ({reps} runs)")
    return "\n".join(lines)


FLIP_CONDITIONS = ((None, "within-run only"), (0, "first run"), (3, "3 earlier runs"), (10, "10 earlier runs"))


def flip_lines(items: int) -> str:
    """The between-run flip rate of edge items, at equal load and at a per-run load of 1 SE, per history."""
    lines = []
    for load in (0.0, 1.0):
        for position, (history_runs, label) in enumerate(FLIP_CONDITIONS):
            flips, decided = D.flip_rate(items, load, seed=SEED + 2000 + int(load), history_runs=history_runs)
            lines.append(f"per-run load {load:.0f} SE, {label:<16}: {flips:.3f} of {items} edge items flip holds "
                         f"<-> refuted between two runs ({decided:.3f} decided in both)")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
