"""Futility stop and extension, before -> after, per noise model (``python -m tests.simulation.adaptive_table [R]``).

Each row runs the same replicates three times through the claim path (:func:`harness.run_result`): as
the plan is drawn (looks at 8, 19, 30), with the futility stop alone, and with the futility stop and the
promising-zone extension the runner takes (:class:`claimcheck.stats.Adaptation`), the replicate holding
60 samples a group (the room a time budget of twice the plan leaves). Rows are the paired timing
rules (one-sample timing rules decide once on their window and take neither) and, for independent
shared samples, the one-sample mean (a first run only: a shared item takes no history). Fixed seeds: the printed
tables are what ``docs/statistics.md`` shows.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from claimcheck.verdict import Verdict

from . import dependence_models as D
from . import harness as H

SEED = 7100
WIDTH = 60  # samples a replicate holds: the plan's 30 and the room an extension may take
HISTORY = (0, 3)
NOISES = (D.NORMAL_TIMING, H.NOISES[1], *D.NOISES)  # independent, spiky, AR(1) 0.5 / 0.8, regime, warm-up, load
SHARED = H.NOISES[0]  # independent samples of a shared (non-timing) item


@dataclass(frozen=True)
class Row:
    """One cell before and after: both error rates (boundary) or the right/wrong verdict (power), and E[n]."""

    rule: str
    noise: str
    reps: int
    before: tuple[float, float, float]  # (false refuted | right, false held | wrong, mean n): the plan as drawn
    after: tuple[float, float, float]  # futility stop and extension
    futility: tuple[float, float, float]  # the futility stop alone

    @property
    def se(self) -> float:
        return math.sqrt(H.ALPHA * (1 - H.ALPHA) / self.reps)

    def within(self, k: float = 2.0) -> bool:
        """Both error rates, with the futility stop alone and with the extension, at or below ``alpha + k SE``."""
        return max(*self.after[:2], *self.futility[:2]) <= H.ALPHA + k * self.se


def _cells() -> list[H.Cell]:
    out = []
    for noise in NOISES:
        for k in HISTORY:
            label = noise.name if k == 0 else f"{noise.name}, h={k}"
            out += [H.Cell("ratio", noise, D._paired(H.ratio_paired), label="ratio paired", history_runs=k,
                           noise_label=label),
                    H.Cell("equivalent", noise, D._paired(H.equivalent_paired), label="equivalent paired",
                           history_runs=k, noise_label=label)]
    # a shared item takes no between-run component: its run with history would repeat this row on another seed
    out.append(H.Cell("at_least", SHARED, H.bound("at_least"), history_runs=0, noise_label="normal (shared)"))
    return out


def _rates(check: H.Check, replicates: Sequence[H.Groups], timing: bool, past: list[list[float]] | None,
           adapt: bool, good: Verdict | None, extend: bool = True) -> tuple[float, float, float]:
    verdicts, used = [], []
    for r, groups in enumerate(replicates):
        verdict, n = H.run_item(check, groups, timing, None if past is None else past[r], adapt, extend)
        verdicts.append(verdict)
        used.append(n)
    if good is None:  # at the boundary: both verdicts are errors
        return (float(np.mean([v is Verdict.REFUTED for v in verdicts])),
                float(np.mean([v is Verdict.HOLDS for v in verdicts])), float(np.mean(used)))
    bad = Verdict.HOLDS if good is Verdict.REFUTED else Verdict.REFUTED
    return (float(np.mean([v is good for v in verdicts])), float(np.mean([v is bad for v in verdicts])),
            float(np.mean(used)))


def compare(cell: H.Cell, reps: int, seed: int, factor: float = 1.0, good: Verdict | None = None) -> Row:
    """The cell before and after on the same replicates; ``factor`` moves a ratio's threshold off the edge."""
    maker = cell.make if factor == 1.0 else D._shifted(cell.make, factor)
    rng = np.random.default_rng(seed)
    with H.wide(WIDTH):
        check, replicates = maker(cell.noise, rng, reps)
        past = H.histories(H.Cell(cell.rule, cell.noise, maker, history_runs=cell.history_runs), check, rng, reps)
        before = _rates(check, replicates, cell.noise.timing, past, False, good)
        after = _rates(check, replicates, cell.noise.timing, past, True, good)
        futility = _rates(check, replicates, cell.noise.timing, past, True, good, extend=False)
    return Row(cell.label or cell.rule, cell.noise_label, reps, before, after, futility)


def boundary_rows(reps: int) -> list[Row]:
    """Both error rates and E[n] at the boundary, before -> after, every cell."""
    return [compare(cell, reps, SEED + i) for i, cell in enumerate(_cells())]


POWER_CASES = ((1.03, Verdict.REFUTED, "false by 3%"), (0.97, Verdict.HOLDS, "true by 3%"))


def power_rows(reps: int) -> list[Row]:
    """Paired ratio false (true) by 3%: the right verdict's rate and E[n], before -> after, every noise and history."""
    cells = [c for c in _cells() if c.label == "ratio paired"]
    return [replace_rule(compare(cell, reps, SEED + 500 + 10 * i + j, factor, good), f"ratio {what}")
            for i, cell in enumerate(cells) for j, (factor, good, what) in enumerate(POWER_CASES)]


def replace_rule(row: Row, rule: str) -> Row:
    return Row(rule, row.noise, row.reps, row.before, row.after, row.futility)


def table(rows: list[Row], power: bool = False) -> str:
    """Rows as printed, plan -> futility stop alone -> both (``2 SE``: both error rates after within alpha + 2 SE)."""
    a, b = ("right", "wrong") if power else ("false ref", "false hold")
    head = f"{'rule':<19}{'noise':<22}{'R':>5}{a:>21}{b:>21}{'E[n]':>18}" + ("" if power else "  2 SE")
    lines = [head, "-" * len(head)]
    for r in rows:
        cols = [f"{x:.3f} {f:.3f} {y:.3f}" for x, f, y in zip(r.before, r.futility, r.after)]
        used = f"{r.before[2]:.1f} {r.futility[2]:.1f} {r.after[2]:.1f}"
        tail = "" if power else f"  {'yes' if r.within() else 'NO'}"
        lines.append(f"{r.rule:<19}{r.noise:<22}{r.reps:>5}{cols[0][:17]:>21}{cols[1][:17]:>21}{used:>18}{tail}")
    return "\n".join(lines)


def threshold_lines(paths: int = 200_000, seed: int = SEED) -> str:
    """The futility threshold's price in a normal-theory model: z paths over looks 8/19/30 (normal boundary).

    For each threshold, the rate of a verdict in the right direction at true effects of 0.3, 0.5 and 0.66 SD
    (about 45%, 83% and 96% power without a stop), and the mean n at the boundary (effect 0). Vectorised.
    """
    from scipy import special

    plan = H.PLAN
    sizes = np.array(plan.sizes, dtype=float)
    c = -special.ndtri(np.array(plan.levels("normal")))
    final = c[-1]
    rng = np.random.default_rng(seed)
    steps = np.diff(np.r_[0.0, sizes])
    lines = [f"{'threshold':>9}  {'power at 0.3 / 0.5 / 0.66 SD':>28}  {'E[n] at the edge':>16}"]
    for threshold in (0.0, 0.02, 0.05, 0.10):
        cells = []
        for drift in (0.0, 0.3, 0.5, 0.66):
            s = np.cumsum(rng.standard_normal((paths, 3)) * np.sqrt(steps) + drift * steps, axis=1)
            z = s / np.sqrt(sizes)
            done = np.zeros(paths, bool)
            right = np.zeros(paths, bool)
            used = np.full(paths, sizes[-1])
            for k in range(3):
                hit = ~done & (np.abs(z[:, k]) >= c[k])
                right |= hit & (z[:, k] > 0)
                used[hit] = sizes[k]
                done |= hit
                if k < 2:
                    t = sizes[k] / sizes[-1]
                    power = special.ndtr((np.abs(z[:, k]) / np.sqrt(t) - final) / np.sqrt(1 - t))
                    stop = ~done & (power < threshold)
                    used[stop] = sizes[k]
                    done |= stop
            cells.append((float(right.mean()), float(used.mean())))
        lines.append(f"{threshold:>9.2f}  {' / '.join(f'{p:.3f}' for p, _ in cells[1:]):>28}  {cells[0][1]:>16.1f}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Print both tables for ``argv[0]`` replicates a cell (default 1,000)."""
    reps = int(argv[0]) if argv else 1000
    print("each column: the plan as drawn, the futility stop alone, the futility stop and the extension")
    print(table(boundary_rows(reps)))
    print()
    print(table(power_rows(reps), power=True))
    print()
    print(threshold_lines())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
