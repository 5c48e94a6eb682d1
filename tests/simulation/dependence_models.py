"""Timing noise whose samples depend on each other, and the cells that put each timing rule at its boundary.

The models (all timing, N(100, 2) at heart, so the harness's thresholds and arms apply):

- ``AR(1) rho``: serial dependence, ``e_t = rho e_(t-1) + sqrt(1 - rho^2) z_t`` started from its
  stationary law, so every sample has the same marginal N(100, 2).
- ``regime blocks``: the clock switches state in blocks of 10 samples (random phase); a block
  is slow (x1.25) with probability 0.3.
- ``warm-up``: the first 3 samples of a run take twice as long; the claim is about the steady
  state, so the boundary is the steady-state value.
- ``AR(1)+spikes`` / ``AR(1)+t(3)``: AR(1) 0.5 with 5% of samples x1.3, or driven by t(3)
  innovations: skewed or heavy-tailed dependent noise, where a mean and the median part.

:func:`effect_rate` runs the large-effect cases (:data:`EFFECTS`): a paired ratio far from its
threshold in every round under AR(1) 0.5, decided within a small budget.

Cells reuse the harness's makers (one-sample bound, paired ratio, paired equivalent), whose
paired arms carry the model in one arm and normal noise in the other, under a shared
per-round factor.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from claimcheck.stats import SequentialPlan

from . import harness as H

ROUNDS = H.N_MAX


def ar1(rho: float) -> H.Draw:
    """AR(1) noise with lag-1 correlation ``rho`` and marginal N(100, 2)."""

    def draw(rng: np.random.Generator, reps: int) -> np.ndarray:
        z = rng.standard_normal((reps, ROUNDS))
        e = np.empty_like(z)
        e[:, 0] = z[:, 0]
        innovation = math.sqrt(1 - rho**2)
        for t in range(1, ROUNDS):
            e[:, t] = rho * e[:, t - 1] + innovation * z[:, t]
        return 100.0 + 2.0 * e

    return draw


def regime_blocks(rng: np.random.Generator, reps: int, block: int = 10, share: float = 0.3) -> np.ndarray:
    """N(100, 2) times 1.25 in slow blocks of ``block`` samples (each slow with probability ``share``)."""
    base = 100.0 + 2.0 * rng.standard_normal((reps, ROUNDS))
    phase = rng.integers(0, block, reps)
    blocks = (np.arange(ROUNDS)[None, :] + phase[:, None]) // block
    slow = rng.random((reps, ROUNDS // block + 2)) < share
    return base * np.where(np.take_along_axis(slow, blocks, axis=1), 1.25, 1.0)


def ar1_spiky(rng: np.random.Generator, reps: int) -> np.ndarray:
    """AR(1) 0.5 noise with marginal N(100, 2), 5% of samples x1.3 (preemption on a dependent clock)."""
    base = ar1(0.5)(rng, reps)
    return np.where(rng.random((reps, ROUNDS)) < 0.05, 1.3 * base, base)


def ar1_heavy(rng: np.random.Generator, reps: int) -> np.ndarray:
    """100 + 2 e, e AR(1) 0.5 driven by t(3) innovations (cut at +-40 t units so that a time stays positive)."""
    z = np.clip(rng.standard_t(3, (reps, ROUNDS)), -40.0, 40.0)
    e = np.empty_like(z)
    e[:, 0] = z[:, 0]
    for t in range(1, ROUNDS):
        e[:, t] = 0.5 * e[:, t - 1] + math.sqrt(1 - 0.25) * z[:, t]
    return 100.0 + 2.0 * e


def warm_up(rng: np.random.Generator, reps: int, first: int = 3, factor: float = 2.0) -> np.ndarray:
    """N(100, 2) whose first ``first`` samples take ``factor`` times as long."""
    x = 100.0 + 2.0 * rng.standard_normal((reps, ROUNDS))
    x[:, :first] *= factor
    return x


SE_MEDIAN = math.sqrt(math.pi / 2) * 2.0 / math.sqrt(ROUNDS)  # SE of the median of 30 N(100, 2) samples


def per_run_load(load_se: float) -> H.Draw:
    """N(100, 2) plus a per-run load: one N(0, (``load_se`` SE of the median)^2) shift shared by a run's samples."""

    def draw(rng: np.random.Generator, reps: int) -> np.ndarray:
        shift = load_se * SE_MEDIAN * rng.standard_normal((reps, 1))
        return 100.0 + 2.0 * rng.standard_normal((reps, ROUNDS)) + shift

    return draw


def steady(rng: np.random.Generator, reps: int) -> np.ndarray:
    """The warm-up model without its warm-up: what the claim is about."""
    return 100.0 + 2.0 * rng.standard_normal((reps, ROUNDS))


NOISES = (
    H.Noise("AR(1) 0.5", ar1(0.5), True),
    H.Noise("AR(1) 0.8", ar1(0.8), True),
    H.Noise("regime blocks", regime_blocks, True),
    H.Noise("warm-up 3x2", warm_up, True),
    H.Noise("load 1 SE", per_run_load(1.0), True),
)
# dependence with spikes or heavy tails: the mean the effect-size test reads moves with them, the median does not
SKEWED_NOISES = (
    H.Noise("AR(1)+spikes", ar1_spiky, True),
    H.Noise("AR(1)+t(3)", ar1_heavy, True),
)
HISTORY_RUNS = (3, 10)  # earlier complete runs read as history in the between-run rows
BETWEEN_RUN = ("regime blocks", "load 1 SE")  # the models whose excess is a between-run effect
STEADY = {"warm-up 3x2": H.Noise("warm-up 3x2", steady, True)}  # the boundary's model, where it differs


Maker = Callable[[H.Noise, np.random.Generator, int], H.Made]


def _bound(rule: str) -> Maker:
    def make(noise: H.Noise, rng: np.random.Generator, reps: int) -> H.Made:
        threshold = H.population(STEADY.get(noise.name, noise), np.median)
        check = H.rules.make_check(rule, {"threshold": threshold}, labels=("x",))
        data = noise.draw(rng, reps)
        return check, [[("x", data[r])] for r in range(reps)]

    return make


def _paired(maker: Maker) -> Maker:
    """A harness paired maker with its boundary taken from the steady-state model."""

    def make(noise: H.Noise, rng: np.random.Generator, reps: int) -> H.Made:
        reference = STEADY.get(noise.name)
        if reference is None:
            return maker(noise, rng, reps)
        check, _ = maker(reference, np.random.default_rng(0), 1)
        _, groups = maker(noise, rng, reps)
        return check, groups

    return make


def _rules(noise: H.Noise, history_runs: int | None = 0, noise_label: str = "") -> list[H.Cell]:
    extra = {"history_runs": history_runs, "noise_label": noise_label}
    return [
        H.Cell("at_least", noise, _bound("at_least"), **extra),  # type: ignore[arg-type]
        H.Cell("at_most", noise, _bound("at_most"), **extra),  # type: ignore[arg-type]
        H.Cell("ratio", noise, _paired(H.ratio_paired), label="ratio paired", **extra),  # type: ignore[arg-type]
        H.Cell("equivalent", noise, _paired(H.equivalent_paired), label="equivalent paired",
               **extra),  # type: ignore[arg-type]
    ]


def cells() -> list[H.Cell]:
    """Every timing rule under every dependent-noise model, as a first run (no history) decides it."""
    return [cell for noise in (*NOISES, *SKEWED_NOISES) for cell in _rules(noise)]


def history_cells() -> list[H.Cell]:
    """The between-run models with ``HISTORY_RUNS`` earlier complete runs of the item read as history."""
    by_name = {noise.name: noise for noise in NOISES}
    short = {"regime blocks": "regime", "load 1 SE": "load 1SE"}
    return [cell for name in BETWEEN_RUN for k in HISTORY_RUNS
            for cell in _rules(by_name[name], k, f"{short[name]}, h={k}")]


NORMAL_TIMING = H.Noise("normal (timing)", H.NOISES[0].draw, True)
POWER_NOISES = (NORMAL_TIMING, *NOISES)
_BY_NAME = {noise.name: noise for noise in POWER_NOISES}
# (noise, earlier runs read as history (None: the within-run decision alone), the row's label)
POWER_CONDITIONS: tuple[tuple[H.Noise, int | None, str], ...] = (
    (NORMAL_TIMING, None, "normal, within-run"),
    *((noise, 0, noise.name) for noise in POWER_NOISES),
    (NORMAL_TIMING, 3, "normal, h=3"),
    (NORMAL_TIMING, 10, "normal, h=10"),
    (_BY_NAME["regime blocks"], 3, "regime, h=3"),
    (_BY_NAME["load 1 SE"], 3, "load 1SE, h=3"),
)


def _shifted(maker: Maker, factor: float) -> Maker:
    """A cell maker with its threshold multiplied by ``factor`` (a claim false or true by a known amount)."""

    def make(noise: H.Noise, rng: np.random.Generator, reps: int) -> H.Made:
        check, groups = maker(noise, rng, reps)
        threshold = check.number("threshold") * factor
        labels = [label for label in (check.output, check.reference) if label is not None]
        return H.rules.make_check(check.rule, {**check.params, "threshold": threshold}, labels=labels), groups

    return make


POWER_CASES = (  # (label, rule label, maker, factor, the verdict that is right)
    ("at_least false by 0.75 SD", "at_least", _bound("at_least"), 1.015, "refuted"),
    ("at_least true by 0.75 SD", "at_least", _bound("at_least"), 0.985, "holds"),
    ("ratio paired false by 2%", "ratio paired", _paired(H.ratio_paired), 1.02, "refuted"),
    ("ratio paired true by 2%", "ratio paired", _paired(H.ratio_paired), 0.98, "holds"),
)


def power_rows(reps: int, seed: int) -> list[tuple[str, str, float, float, float]]:
    """(case, condition, rate of the right verdict, rate of the wrong one, mean samples) for every case x condition."""
    from claimcheck.verdict import Verdict

    rows = []
    for index, (case, rule, maker, factor, right) in enumerate(POWER_CASES):
        for position, (noise, history_runs, label) in enumerate(POWER_CONDITIONS):
            rng = np.random.default_rng(seed + 100 * index + position)
            shifted = _shifted(maker, factor)
            check, replicates = shifted(noise, rng, reps)
            past = H.histories(H.Cell(rule, noise, shifted, history_runs=history_runs), check, rng, reps)
            verdicts, used = [], []
            for r, groups in enumerate(replicates):
                verdict, n = H.run_item(check, groups, noise.timing, None if past is None else past[r])
                verdicts.append(verdict)
                used.append(n)
            wrong = Verdict.HOLDS if right == "refuted" else Verdict.REFUTED
            rows.append((case, label, float(np.mean([v.value == right for v in verdicts])),
                         float(np.mean([v is wrong for v in verdicts])), float(np.mean(used))))
    return rows


def power_table(rows: list[tuple[str, str, float, float, float]]) -> str:
    """The power rows as printed: the right verdict's rate (power), the wrong one's, samples used."""
    head = f"{'case':<28}{'noise':<20}{'power':>7}{'wrong':>7}{'E[n]':>6}"
    return "\n".join([head, "-" * len(head)] + [f"{c:<28}{n:<20}{p:>7.3f}{w:>7.3f}{e:>6.1f}" for c, n, p, w, e in rows])


def flip_rate(items: int, load_se: float, seed: int, history_runs: int | None = None) -> tuple[float, float]:
    """Share of edge items whose verdict flips holds <-> refuted between two runs of one commit.

    Each item is a one-sample timing ``at_least`` with its true median at the threshold; each run
    of it adds a per-run load, a shift of ``load_se`` standard errors of the median (N(0, 1) times
    that), shared by all its samples. ``history_runs``: earlier complete runs of the item, with
    their own loads, whose estimates both runs read (None: the within-run decision alone; 0: a
    first run). Returns (flips, share decided in both runs).
    """
    from claimcheck.verdict import Verdict

    rng = np.random.default_rng(seed)
    check = H.rules.make_check("at_least", {"threshold": 100.0}, labels=("x",))
    draw = per_run_load(load_se)
    flips = decided = 0
    for _ in range(items):
        past: list[float] | None = None
        if history_runs is not None:
            past = [H.estimate_of(check, [("x", draw(rng, 1)[0])], True) for _run in range(history_runs)]
        verdicts = [H.run_item(check, [("x", draw(rng, 1)[0])], True, past)[0] for _run in range(2)]
        decisive = {Verdict.HOLDS, Verdict.REFUTED}
        decided += all(v in decisive for v in verdicts)
        flips += set(verdicts) == decisive
    return flips / items, decided / items


def _ar1_unit(rng: np.random.Generator, reps: int, rounds: int, rho: float) -> np.ndarray:
    """Stationary AR(1) of unit variance, ``rounds`` long."""
    z = rng.standard_normal((reps, rounds))
    e = np.empty_like(z)
    e[:, 0] = z[:, 0]
    for t in range(1, rounds):
        e[:, t] = rho * e[:, t - 1] + math.sqrt(1 - rho**2) * z[:, t]
    return e


def ten_x(rng: np.random.Generator, reps: int, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """A 10x ratio in every round: an AR(1) 0.5 N(100, 2) arm times 10, an N(100, 2) one, a shared round factor."""
    c = 1.0 + 0.1 * rng.standard_normal((reps, rounds))
    u = 100.0 + 2.0 * _ar1_unit(rng, reps, rounds, 0.5)
    v = 100.0 + 2.0 * rng.standard_normal((reps, rounds))
    return 10.0 * u * c, v * c


def narrow_band(rng: np.random.Generator, reps: int, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-round ratios between 0.036 and 0.070 (log-ratio 0.05 x exp(0.15 AR(1) 0.5), cut to that band)."""
    log_ratio = np.clip(math.log(0.05) + 0.15 * _ar1_unit(rng, reps, rounds, 0.5), math.log(0.036), math.log(0.070))
    c = 1.0 + 0.1 * rng.standard_normal((reps, rounds))
    v = 100.0 + 2.0 * rng.standard_normal((reps, rounds))
    return np.exp(log_ratio) * v * c, v * c


@dataclass(frozen=True)
class Effect:
    """A paired ratio far from its threshold of 1 in every round, on a small budget, and the verdict that is right."""

    label: str
    arms: Callable[[np.random.Generator, int, int], tuple[np.ndarray, np.ndarray]]
    bound: str
    plan: SequentialPlan
    right: str


EFFECTS = (
    Effect("10x, 8 rounds, at_least 1", ten_x, "at_least", SequentialPlan(0.05, 8, 8, 1), "holds"),
    Effect("10x, 8 rounds, at_most 1", ten_x, "at_most", SequentialPlan(0.05, 8, 8, 1), "refuted"),
    Effect("0.036-0.070, 12 rounds, at_most 1", narrow_band, "at_most", SequentialPlan(0.05, 12, 12, 1), "holds"),
    Effect("0.036-0.070, looks 6/9/12, at_most 1", narrow_band, "at_most", SequentialPlan(0.05, 6, 12, 3), "holds"),
)


def effect_rate(effect: Effect, reps: int, seed: int) -> tuple[float, float]:
    """(rate of the right verdict, rate of the wrong one) of ``effect`` through the claim path, first runs."""
    rng = np.random.default_rng(seed)
    a, b = effect.arms(rng, reps, effect.plan.max_samples)
    check = H.rules.make_check("ratio", {"threshold": 1.0, "bound": effect.bound, "paired": True},
                               labels=("a", "b"))
    verdicts = [H.run_item(check, [("a", a[r]), ("b", b[r])], True, plan=effect.plan)[0].value for r in range(reps)]
    wrong = "refuted" if effect.right == "holds" else "holds"
    return float(np.mean([v == effect.right for v in verdicts])), float(np.mean([v == wrong for v in verdicts]))
