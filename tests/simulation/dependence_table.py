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
    """Both error rates of every timing rule under every dependent-noise model."""
    return [H.simulate(cell, reps, seed=SEED + index) for index, cell in enumerate(D.cells())]


def main(argv: list[str]) -> int:
    """Print both tables for ``argv[0]`` replicates a cell."""
    reps = int(argv[0]) if argv else 1000
    print(H.table(error_results(reps)))
    print()
    print(D.power_table(D.power_rows(reps, seed=SEED + 1000)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
