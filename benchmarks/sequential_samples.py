"""Samples to a verdict: the sequential plan against the fixed-n test with the same error rates.

The common plan (looks at n = 8, 19, 30, linear spending ``alpha * t``, exact t boundaries) decides
``at_least`` on the mean of normal samples (SD 1). The fixed-n test it is set against has the
same alpha (0.05, one-sided each way) and the same power at the design effect of 0.5 SD as the
plan (measured here), with n from the exact noncentral t (``scipy.stats.nct``). For each true
departure below the threshold the script prints the plan's refutation rate and mean samples
used, the fixed test's n and power, and their ratio; the first row is the boundary itself,
where both refute at most alpha. The union-bound plan and the Pocock-type spending (the default
until linear spending replaced it, for its power at 0.5 SD) are shown too. One run, one machine:
the ratios are what to compare.

    .venv/bin/python benchmarks/sequential_samples.py [--reps 4000]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scipy import stats  # noqa: E402

from claimcheck import rules  # noqa: E402
from claimcheck.stats import SequentialPlan  # noqa: E402
from claimcheck.stats import run_sequential as run_looks  # noqa: E402
from claimcheck.verdict import Verdict  # noqa: E402

ALPHA = 0.05
PLAN = SequentialPlan(ALPHA, 8, 30, 3)
DESIGN = 0.5


def fixed_power(n: int, effect: float) -> float:
    """Power of the one-sided level-alpha t test at n for a departure of ``effect`` SD (exact, nct)."""
    return float(stats.nct.sf(stats.t.ppf(1 - ALPHA, n - 1), n - 1, effect * math.sqrt(n)))


def fixed_n_for(power: float, effect: float) -> int:
    """Smallest n whose fixed test reaches ``power`` at ``effect``."""
    n = 2
    while fixed_power(n, effect) < power:
        n += 1
    return n


def run(effect: float, reps: int, boundary: str, seed: int, plan: SequentialPlan = PLAN) -> tuple[float, float]:
    """Refutation rate and mean samples used by ``plan`` when the mean sits ``effect`` SD below 10."""
    rng = np.random.default_rng(seed)
    data = rng.normal(10.0 - effect, 1.0, (reps, plan.max_samples))
    check = rules.make_check("at_least", {"threshold": 10.0, "statistic": "mean"}, labels=("x",))
    rule = rules.get("at_least")
    refuted, used = 0, 0

    def decide_look(groups, alpha):  # type: ignore[no-untyped-def]
        return rule.decide(rule.groups(groups, check), alpha, check)

    for r in range(reps):
        taken = 0

        def draw(k: int, row: np.ndarray = data[r]) -> list[tuple[str, np.ndarray]]:
            nonlocal taken
            taken += k
            return [("x", row[taken - k: taken])]

        decision = run_looks(draw, decide_look, plan, boundary=boundary)  # type: ignore[arg-type]
        refuted += decision.verdict is Verdict.REFUTED
        used += taken
    return refuted / reps, used / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    reps = parser.parse_args().reps
    effects = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
    pocock = SequentialPlan(ALPHA, 8, 30, 3, "pocock")
    rows = [(effect, run(effect, reps, "t", seed=10 + i), run(effect, reps, "union", seed=10 + i),
             run(effect, reps, "t", seed=10 + i, plan=pocock)) for i, effect in enumerate(effects)]
    design_power = next(seq[0] for effect, seq, _, _ in rows if effect == DESIGN)
    pocock_power = next(poc[0] for effect, _, _, poc in rows if effect == DESIGN)
    n_fixed = fixed_n_for(design_power, DESIGN)
    se = math.sqrt(design_power * (1 - design_power) / reps)
    print(f"plan: looks {PLAN.sizes}, alpha {ALPHA}, {PLAN.spending} spending; {reps} replicates per row "
          f"(same samples for every plan)")
    print(f"sequential power at {DESIGN} SD: {design_power:.3f} (SE {se:.3f}; Pocock-type spending "
          f"{pocock_power:.3f}); the fixed test with that power needs n = {n_fixed}")
    head = (f"{'effect (SD)':>11}{'seq refuted':>13}{'seq E[n]':>10}{'union refuted':>15}{'union E[n]':>12}"
            f"{'pocock ref':>12}{'pocock E[n]':>13}{'fixed n':>9}{'fixed power':>13}{'E[n] / fixed n':>16}")
    print(head)
    print("-" * len(head))
    for effect, (seq, seq_n), (union, union_n), (poc, poc_n) in rows:
        power = fixed_power(n_fixed, effect) if effect else ALPHA
        print(f"{effect:>11.2f}{seq:>13.3f}{seq_n:>10.1f}{union:>15.3f}{union_n:>12.1f}{poc:>12.3f}{poc_n:>13.1f}"
              f"{n_fixed:>9d}{power:>13.3f}{seq_n / n_fixed:>16.2f}")


if __name__ == "__main__":
    main()
