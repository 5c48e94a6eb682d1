"""What splitting a timing item's samples into bouts spread over the session could decide: a design study.

Not a rule the suite runs. A one-sample timing ``at_least`` whose figure is the long-run median of
the machine's times, under the noise models of ``tests/simulation`` (its indifference table's five), 30
samples a run, taken either in one block or in ``k`` bouts of ``30 / k`` separated by ``GAP`` samples of other work (far longer than a clock-state
block or the AR(1) memory, so the bouts see independent states; a per-run load stays shared). Three
decisions on a first run, one look, alpha 0.05 one-sided per verdict:

- ``contiguous``: the sign test on the 30 samples' median, as if independent (what a rule that
  ignores between-state variance decides);
- ``bout sign``: the sign test over the k bout medians (distribution-free; needs every bout on one side
  for k = 6);
- ``bout t``: a t interval (k - 1 df) on the mean of the bout medians.

Prints, per noise model and design, the false-refutation and false-hold rates with the long-run median
at the threshold (the claim at its edge), and the power with it 3.5 SE (of a 30-sample median of
independent N(100, 2) noise) above the threshold. ``!`` marks an error rate above alpha + 2 SE.

    python benchmarks/bout_design.py --reps 4000
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.simulation import dependence_models as D  # noqa: E402
from tests.simulation import harness as H  # noqa: E402
from tests.simulation.indifference_table import NOISES  # noqa: E402  (the same five models as that table)

ALPHA = H.ALPHA
N = 30
GAP = 200
SE = D.SE_MEDIAN  # SE of a 30-sample median of N(100, 2): the power goal's unit


def samples(noise: H.Noise, rng: np.random.Generator, reps: int, bouts: int) -> np.ndarray:
    """(reps, bouts, N / bouts): the bouts' samples, each bout GAP samples of session time after the last.

    The models draw one series over the session (:func:`tests.simulation.harness.wide`): an AR(1) series
    goes on, clock blocks keep switching and a run's load stays.
    """
    per = N // bouts
    with H.wide(bouts * (per + GAP)):
        series = noise.draw(rng, reps)
    starts = np.arange(bouts) * (per + GAP)
    index = starts[:, None] + np.arange(per)[None, :]
    return series[:, index]


def sign_verdicts(values: np.ndarray, threshold: float) -> np.ndarray:
    """+1 holds, -1 refuted, 0 undecided: one-sided sign tests of the median against ``threshold`` per row."""
    above = (values > threshold).sum(axis=1)
    k = values.shape[1]
    holds = stats.binom.sf(above - 1, k, 0.5) <= ALPHA
    refuted = stats.binom.cdf(above, k, 0.5) <= ALPHA
    return holds.astype(int) - refuted.astype(int)


def t_verdicts(values: np.ndarray, threshold: float) -> np.ndarray:
    k = values.shape[1]
    mean = values.mean(axis=1)
    half = stats.t.ppf(1 - ALPHA, k - 1) * values.std(axis=1, ddof=1) / math.sqrt(k)
    return (mean - half > threshold).astype(int) - (mean + half < threshold).astype(int)


def decide(design: str, data: np.ndarray, threshold: float) -> np.ndarray:
    if design == "contiguous":
        return sign_verdicts(data.reshape(data.shape[0], -1), threshold)
    medians = np.median(data, axis=2)
    return sign_verdicts(medians, threshold) if design.startswith("bout sign") else t_verdicts(medians, threshold)


def row(noise: H.Noise, design: str, bouts: int, reps: int, seed: int) -> tuple[float, float, float]:
    truth = H.population(noise, np.median)  # the figure a claim states: the long-run median
    rng = np.random.default_rng(seed)
    verdicts = decide(design, samples(noise, rng, reps, bouts), truth)
    effect = decide(design, samples(noise, rng, reps, bouts), truth - 3.5 * SE)
    return float(np.mean(verdicts == -1)), float(np.mean(verdicts == 1)), float(np.mean(effect == 1))


DESIGNS = (("contiguous", 1), ("bout sign, k=6", 6), ("bout t, k=6", 6), ("bout t, k=10", 10), ("bout t, k=15", 15))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    args = parser.parse_args()
    bound = ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / args.reps)
    print(f"{'noise':<16}{'design':<18}{'false refuted':>15}{'false held':>12}{'power 3.5 SE':>14}")
    for i, noise in enumerate(NOISES):
        for j, (design, bouts) in enumerate(DESIGNS):
            refuted, held, power = row(noise, design, bouts, args.reps, seed=7000 + 10 * i + j)
            marks = ["!" if value > bound else " " for value in (refuted, held)]
            print(f"{noise.name:<16}{design:<18}{refuted:>14.3f}{marks[0]}{held:>11.3f}{marks[1]}{power:>14.3f}")


if __name__ == "__main__":
    main()
