"""Cells for ``two_proportions``, ``dispersion`` and ``level_ratio``, each replicate a claim item run by the runner.

A cell is a claim (YAML, through the loader) and a fake probe whose true value sits exactly on
the claim's boundary. Each replicate is one ``run_claim_item`` call with its own seed: the
sampler, the sequential plan, the rule object's decision and the noise gate, as ``pytest
claims/`` runs an item. At the boundary both nulls are true, so a refutation is a false
refutation and a hold a false hold; each must stay at or below alpha + k SE.

Noise per rule:
- proportions: rare events (rates 0-8%, ties everywhere, many looks with 0 events in an arm),
  an arm that never has an event, counts of events in 20 trials per sample;
- dispersion: normal, heavy-tailed t(3) and skewed (lognormal) per-seed statistics;
- levels: multiplicative noise with 5% slow-downs of x1.3, heavy-tailed t(3) noise, and a machine
  that slows by 20% over the run (drift), each on a probe swept over ``batch``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from claimcheck.claims.loader import load_claims_text
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.engine.runner import RunOptions, run_claim_item
from claimcheck.verdict import Verdict

ALPHA = 0.05

CLAIM = """
id: cell
title: a claim at its boundary
statement: the figure sits exactly on the bound
source: {{doc: d.md, section: "1", figure: f}}
scope: {{kind: portable}}
probe: {{name: fake{params}}}
check: {{{check}}}
budget: {{{budget}, max_seconds: 600}}
"""


def claim_for(check: str, budget: str, params: str = ""):
    """The cell's claim, read by the loader (so the check is validated as a user's would be)."""
    return load_claims_text(CLAIM.format(check=check, budget=budget, params=params), "cell.yaml")[0]


# -- fake probes ----------------------------------------------------------------------------------
Probe = Callable[..., dict[str, list[float]]]


def _rng(ctx: ProbeContext) -> np.random.Generator:
    return np.random.default_rng(ctx.rng.getrandbits(64))


def events(rate_a: float, rate_b: float, trials: int = 1) -> Probe:
    """Two outputs of event counts (0/1 when ``trials`` is 1), independent arms."""

    def probe(ctx: ProbeContext, **params: Any) -> dict[str, list[float]]:
        rng = _rng(ctx)
        return {"a": rng.binomial(trials, rate_a, ctx.n).astype(float).tolist(),
                "b": rng.binomial(trials, rate_b, ctx.n).astype(float).tolist()}

    return probe


def per_seed(draw: Callable[[np.random.Generator, int], np.ndarray]) -> Probe:
    """One per-seed statistic per sample."""

    def probe(ctx: ProbeContext, **params: Any) -> dict[str, list[float]]:
        return {"score": draw(_rng(ctx), ctx.n).tolist()}

    return probe


class Swept:
    """Throughput over ``batch``: ``speedup x base`` at batch 8, ``base`` at batch 1, times shared noise.

    ``noise(rng, n)`` multiplies each sample (the same model at both levels); ``drift`` is the
    machine slowing down linearly over the item, one tick per sample in the order the sampler
    ran them (it reaches ``1 - drift`` at ``ticks`` samples).
    """

    def __init__(self, speedup: float, noise: Callable[[np.random.Generator, int], np.ndarray],
                 drift: float = 0.0, ticks: int = 60) -> None:
        self.speedup, self.noise, self.drift, self.ticks = speedup, noise, drift, ticks
        self.tick = 0

    def __call__(self, ctx: ProbeContext, *, batch: int) -> dict[str, list[float]]:
        rng = _rng(ctx)
        time_factor = 1.0 - self.drift * (self.tick + np.arange(ctx.n)) / self.ticks
        self.tick += ctx.n
        base = 100.0 * (self.speedup if batch == 8 else 1.0)
        return {"tokens_per_s": (base * time_factor * self.noise(rng, ctx.n)).tolist()}


def spiky(rng: np.random.Generator, n: int) -> np.ndarray:
    """2% log-normal noise with 5% of samples slowed x1.3 (a preempted call)."""
    slow = np.where(rng.random(n) < 0.05, 1 / 1.3, 1.0)
    return np.exp(0.02 * rng.standard_normal(n)) * slow


def heavy(rng: np.random.Generator, n: int) -> np.ndarray:
    """Multiplicative t(3) noise, 2% scale (cut at 10 t units so throughput stays positive)."""
    return np.exp(0.02 * np.clip(rng.standard_t(3, n), -10, 10))


def gentle(rng: np.random.Generator, n: int) -> np.ndarray:
    """2% log-normal noise."""
    return np.exp(0.02 * rng.standard_normal(n))


class OneArmDependent(Swept):
    """Level 8 carries its own AR(1) noise (lag-1 ``rho``, 3% log-normal), level 1 independent 3% noise.

    A dependence in one arm that the per-round ratio does not cancel: the state runs on across the
    sampler's calls, in the order it makes them.
    """

    def __init__(self, speedup: float, rho: float) -> None:
        super().__init__(speedup, gentle)
        self.rho, self.state = rho, 0.0

    def __call__(self, ctx: ProbeContext, *, batch: int) -> dict[str, list[float]]:
        rng = _rng(ctx)
        if batch != 8:
            return {"tokens_per_s": (100.0 * np.exp(0.03 * rng.standard_normal(ctx.n))).tolist()}
        out = np.empty(ctx.n)
        for i in range(ctx.n):
            self.state = self.rho * self.state + 0.03 * math.sqrt(1 - self.rho ** 2) * rng.standard_normal()
            out[i] = 100.0 * self.speedup * math.exp(self.state)
        return {"tokens_per_s": out.tolist()}


# -- cells ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """One claim at its boundary with the probe that sits on it (``probe()`` makes a fresh one)."""

    rule: str
    noise: str
    check: str
    budget: str
    probe: Callable[[], Probe]
    params: str = ""
    outputs: tuple[str, ...] = ("a", "b")


@dataclass(frozen=True)
class Rates:
    """Verdict rates of one cell over ``reps`` replicates."""

    cell: Cell
    reps: int
    refuted: float
    held: float
    mean_n: float

    @property
    def se(self) -> float:
        return math.sqrt(ALPHA * (1 - ALPHA) / self.reps)

    def within(self, k: float) -> bool:
        """Both rates at or below ``alpha + k SE``."""
        return max(self.refuted, self.held) <= ALPHA + k * self.se


def simulate(cell: Cell, reps: int, seed: int) -> Rates:
    """Run the cell's claim ``reps`` times through ``run_claim_item``, one run seed per replicate."""
    claim = claim_for(cell.check, cell.budget, cell.params)
    outputs = {name: Output("tokens/s") for name in cell.outputs}
    verdicts, used = [], []
    for r in range(reps):
        registered = RegisteredProbe("fake", cell.probe(), outputs)
        result = run_claim_item(claim, "cell", dict(claim.probe.params), registered,
                                options=RunOptions(seed=seed * 100_003 + r), machine={"backend": "cpu"})
        assert result.decision is not None, result.reason
        verdicts.append(result.verdict)
        used.append(result.decision.n)
    return Rates(cell, reps, float(np.mean([v is Verdict.REFUTED for v in verdicts])),
                 float(np.mean([v is Verdict.HOLDS for v in verdicts])), float(np.mean(used)))


def _sd_t3(scale: float) -> float:
    return scale * math.sqrt(3.0)


def _lognormal(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.exp(0.5 * rng.standard_normal(n))


LOGNORMAL_SD = math.sqrt((math.exp(0.25) - 1) * math.exp(0.25))


@cache
def expected_range(draw: Callable[[np.random.Generator, int], np.ndarray], seeds: int) -> float:
    """E[max - min] of ``seeds`` draws, from 200,000 sets (SE about 0.1% of the value)."""
    rng = np.random.default_rng(77)
    x = draw(rng, 200_000 * seeds).reshape(-1, seeds)
    return float(np.mean(x.max(axis=1) - x.min(axis=1)))


def _normal(rng: np.random.Generator, n: int) -> np.ndarray:
    return 0.7 + 0.05 * rng.standard_normal(n)


def _t3(rng: np.random.Generator, n: int) -> np.ndarray:
    return 0.7 + 0.05 * rng.standard_t(3, n)


PROPORTION_BUDGET = "min_samples: 100, max_samples: 400, looks: 3"
SEED_BUDGET = "min_samples: 10, max_samples: 40, looks: 3"
SWEEP_BUDGET = "min_samples: 8, max_samples: 30, looks: 3"
SWEEP = ", params: {batch: [1, 8]}"
LEVEL_CHECK = "rule: level_ratio, output: tokens_per_s, over: batch, level: 8, versus: 1, bound: {bound}, threshold: 1.5"


def proportion_cells() -> list[Cell]:
    p = "rule: two_proportions, output: a, reference: b, "
    return [
        Cell("two_proportions", "difference <= 0.05 at 7% vs 2%", p + "bound: at_most, threshold: 0.05",
             PROPORTION_BUDGET, lambda: events(0.07, 0.02)),
        Cell("two_proportions", "difference >= 0 at 3% vs 3%", p + "bound: at_least, threshold: 0",
             PROPORTION_BUDGET, lambda: events(0.03, 0.03)),
        Cell("two_proportions", "difference <= 0.01, B never", p + "bound: at_most, threshold: 0.01",
             PROPORTION_BUDGET, lambda: events(0.01, 0.0)),
        Cell("two_proportions", "ratio <= 2 at 4% vs 2%", p + "bound: at_most, threshold: 2, scale: ratio",
             PROPORTION_BUDGET, lambda: events(0.04, 0.02)),
        Cell("two_proportions", "ratio >= 0.5 at 1% vs 2%", p + "bound: at_least, threshold: 0.5, scale: ratio",
             PROPORTION_BUDGET, lambda: events(0.01, 0.02)),
        Cell("two_proportions", "equivalent ±0.03 at 8% vs 5%", p + "bound: equivalent, threshold: 0.03",
             PROPORTION_BUDGET, lambda: events(0.08, 0.05)),
        Cell("two_proportions", "counts of 20: diff <= 0.02", p + "bound: at_most, threshold: 0.02, trials: 20",
             "min_samples: 10, max_samples: 40, looks: 3", lambda: events(0.03, 0.01, trials=20)),
    ]


def _spread_cell(name: str, bound: str, threshold: float, draw: Callable[[np.random.Generator, int], np.ndarray],
                 seeds: int = 0) -> Cell:
    """A ``dispersion`` claim on per-seed values from ``draw``: the SD, or with ``seeds`` the mean range of that many."""
    check = f"rule: dispersion, output: score, bound: {bound}, threshold: {threshold!r}"
    check += f", measure: range, seeds: {seeds}" if seeds else ""
    return Cell("dispersion", name, check, SEED_BUDGET, lambda: per_seed(draw), outputs=("score",))


def dispersion_cells() -> list[Cell]:
    range_normal = expected_range(_normal, 5)
    range_t3 = expected_range(_t3, 5)
    return [
        _spread_cell("sd <= normal", "at_most", 0.05, _normal),
        _spread_cell("sd >= normal", "at_least", 0.05, _normal),
        _spread_cell("sd <= lognormal", "at_most", LOGNORMAL_SD, _lognormal),
        _spread_cell("sd <= t(3)", "at_most", _sd_t3(0.05), _t3),
        _spread_cell("range5 <= normal", "at_most", range_normal, _normal, seeds=5),
        _spread_cell("range5 <= t(3)", "at_most", range_t3, _t3, seeds=5),
        _spread_cell("range5 >= t(3)", "at_least", range_t3, _t3, seeds=5),
    ]


def dispersion_other_side_cells() -> list[Cell]:
    """The other bound for each noise model (listed after the level cells, so the cells before keep their seeds)."""
    return [
        _spread_cell("sd >= lognormal", "at_least", LOGNORMAL_SD, _lognormal),
        _spread_cell("sd >= t(3)", "at_least", _sd_t3(0.05), _t3),
        _spread_cell("range5 >= normal", "at_least", expected_range(_normal, 5), _normal, seeds=5),
        _spread_cell("range5 <= lognormal", "at_most", expected_range(_lognormal, 5), _lognormal, seeds=5),
    ]


def level_cells() -> list[Cell]:
    timing = SWEEP_BUDGET + ", exclusive: true"
    return [
        Cell("level_ratio", "spikes, median (timing)", LEVEL_CHECK.format(bound="at_least"), timing,
             lambda: Swept(1.5, spiky), SWEEP, ("tokens_per_s",)),
        Cell("level_ratio", "spikes, median, at_most", LEVEL_CHECK.format(bound="at_most"), timing,
             lambda: Swept(1.5, spiky), SWEEP, ("tokens_per_s",)),
        Cell("level_ratio", "t(3), median (timing)", LEVEL_CHECK.format(bound="at_least"), timing,
             lambda: Swept(1.5, heavy), SWEEP, ("tokens_per_s",)),
        Cell("level_ratio", "drift 20%, median (timing)", LEVEL_CHECK.format(bound="at_least"), timing,
             lambda: Swept(1.5, gentle, drift=0.2), SWEEP, ("tokens_per_s",)),
        Cell("level_ratio", "drift 20%, median, at_most", LEVEL_CHECK.format(bound="at_most"), timing,
             lambda: Swept(1.5, gentle, drift=0.2), SWEEP, ("tokens_per_s",)),
        Cell("level_ratio", "drift 20%, mean (shared)", LEVEL_CHECK.format(bound="at_least"), SWEEP_BUDGET,
             lambda: Swept(1.5, gentle, drift=0.2), SWEEP, ("tokens_per_s",)),
        Cell("level_ratio", "drift + 3 levels, median", LEVEL_CHECK.format(bound="at_least"), timing,
             lambda: Swept(1.5, gentle, drift=0.2), ", params: {batch: [1, 4, 8]}", ("tokens_per_s",)),
    ]


def dependent_level_cells() -> list[Cell]:
    """``level_ratio`` with one arm serially dependent (listed last, so the cells before keep their seeds).

    Before the rule declared its hypothesis (a paired ratio on the log scale), its rounds were read as
    independent: at rho 0.8 it refuted 0.092 and held 0.085 of true-at-the-edge claims (R = 1000).
    """
    timing = SWEEP_BUDGET + ", exclusive: true"
    return [Cell("level_ratio", f"one arm AR(1) {rho}, {bound}", LEVEL_CHECK.format(bound=bound), timing,
                 lambda rho=rho: OneArmDependent(1.5, rho), SWEEP, ("tokens_per_s",))
            for rho in (0.5, 0.8) for bound in ("at_least", "at_most")]


class BothArmsDependent(Swept):
    """Each level carries its own AR(1) noise (lag-1 ``rho``, 3% log-normal), the states independent of each other."""

    def __init__(self, speedup: float, rho: float) -> None:
        super().__init__(speedup, gentle)
        self.rho, self.states = rho, {1: 0.0, 4: 0.0, 8: 0.0}

    def __call__(self, ctx: ProbeContext, *, batch: int) -> dict[str, list[float]]:
        rng = _rng(ctx)
        out = np.empty(ctx.n)
        for i in range(ctx.n):
            self.states[batch] = self.rho * self.states[batch] + 0.03 * math.sqrt(1 - self.rho ** 2) * rng.standard_normal()
            out[i] = 100.0 * (self.speedup if batch == 8 else 1.0) * math.exp(self.states[batch])
        return {"tokens_per_s": out.tolist()}


class LevelStates(Swept):
    """Each level with its own state series: clock states held for blocks of 10 samples (x1.25 with chance 0.3),
    or AR(1) 0.5 driven by t(3) innovations, or AR(1) 0.5 with 5% of samples slowed x1.3 (2-3% log scale)."""

    def __init__(self, speedup: float, kind: str) -> None:
        super().__init__(speedup, gentle)
        self.kind, self.states, self.ticks_seen = kind, {1: 0.0, 4: 0.0, 8: 0.0}, {1: 0, 4: 0, 8: 0}
        self.phase = {1: -1, 4: -1, 8: -1}

    def _one(self, rng: np.random.Generator, batch: int) -> float:
        if self.kind == "regime":
            tick = self.ticks_seen[batch]
            if self.phase[batch] < 0:
                self.phase[batch] = int(rng.integers(10))
            if (tick + self.phase[batch]) % 10 == 0 or tick == 0:
                self.states[batch] = math.log(1.25) if rng.random() < 0.3 else 0.0
            self.ticks_seen[batch] += 1
            return self.states[batch] + 0.02 * rng.standard_normal()
        shock = float(np.clip(rng.standard_t(3), -10, 10)) / math.sqrt(3) if self.kind == "t3" else rng.standard_normal()
        self.states[batch] = 0.5 * self.states[batch] + 0.03 * math.sqrt(1 - 0.25) * shock
        spike = math.log(1 / 1.3) if self.kind == "spikes" and rng.random() < 0.05 else 0.0
        return self.states[batch] + spike

    def __call__(self, ctx: ProbeContext, *, batch: int) -> dict[str, list[float]]:
        rng = _rng(ctx)
        base = 100.0 * (self.speedup if batch == 8 else 1.0)
        return {"tokens_per_s": [base * math.exp(self._one(rng, batch)) for _ in range(ctx.n)]}


MONOTONE_CHECK = "rule: monotone, output: tokens_per_s, over: batch, direction: increasing"


def dependent_monotone_cells() -> list[Cell]:
    """``monotone`` with serially dependent levels, all at the boundary (equal medians: both verdicts are false).

    Before the rule declared its hypothesis, a level the gate flagged left the item undecided whatever
    the effect, so these cells could not err; the effect-size route they now take must keep both rates.
    """
    timing = SWEEP_BUDGET + ", exclusive: true"
    cells = [Cell("monotone", f"one level AR(1) {rho}", MONOTONE_CHECK, timing,
                  lambda rho=rho: OneArmDependent(1.0, rho), SWEEP, ("tokens_per_s",)) for rho in (0.5, 0.8)]
    cells += [
        Cell("monotone", "both levels AR(1) 0.8", MONOTONE_CHECK, timing, lambda: BothArmsDependent(1.0, 0.8), SWEEP,
             ("tokens_per_s",)),
        Cell("monotone", "3 levels AR(1) 0.8", MONOTONE_CHECK, timing, lambda: BothArmsDependent(1.0, 0.8),
             ", params: {batch: [1, 4, 8]}", ("tokens_per_s",)),
        Cell("monotone", "both AR(1) 0.8, paired", MONOTONE_CHECK + ", paired: true", timing,
             lambda: BothArmsDependent(1.0, 0.8), SWEEP, ("tokens_per_s",)),
    ]
    cells += [Cell("monotone", name, MONOTONE_CHECK, timing, lambda kind=kind: LevelStates(1.0, kind), SWEEP,
                   ("tokens_per_s",))
              for kind, name in (("regime", "regime blocks a level"), ("t3", "AR(1) 0.5 + t(3) a level"),
                                 ("spikes", "AR(1) 0.5 + spikes a level"))]
    return cells


def monotone_power_cells() -> list[Cell]:
    """The same claims true by 5% and by 10x (batch 8 that much faster), where the right verdict is HOLDS."""
    timing = SWEEP_BUDGET + ", exclusive: true"
    return [Cell("monotone", f"{label}, {what} AR(1) {rho}", MONOTONE_CHECK, timing,
                 lambda speedup=speedup, rho=rho, make=make: make(speedup, rho), SWEEP, ("tokens_per_s",))
            for speedup, label in ((1.05, "5% faster"), (10.0, "10x faster"))
            for what, make in (("one level", OneArmDependent), ("both levels", BothArmsDependent))
            for rho in (0.5, 0.8)]


def all_cells() -> list[Cell]:
    return (proportion_cells() + dispersion_cells() + level_cells() + dispersion_other_side_cells()
            + dependent_level_cells() + dependent_monotone_cells())


def table(results: list[Rates], k: float) -> str:
    """One line per cell: both rates, the bound alpha + k SE and whether both are within it."""
    head = f"{'rule':<16}{'cell':<32}{'R':>6}{'false ref':>10}{'false hold':>11}{'SE':>7}{'bound':>7}{'E[n]':>7}  ok"
    lines = [head, "-" * len(head)]
    for r in results:
        lines.append(f"{r.cell.rule:<16}{r.cell.noise:<32}{r.reps:>6}{r.refuted:>10.3f}{r.held:>11.3f}{r.se:>7.4f}"
                     f"{ALPHA + k * r.se:>7.3f}{r.mean_n:>7.1f}  {'yes' if r.within(k) else 'NO'}")
    return "\n".join(lines)
