"""Every rule at its boundary under six noise models, through the path a claim takes.

A cell is one rule x one noise model. Its samples are drawn so that the claim sits exactly on
its boundary (the population value of the statistic the rule decides on, computed once from
400,000 draws of the model, equals the threshold or margin), and each replicate runs what the
runner runs for an item: the check with ``statistic: auto`` resolved for the item
(:func:`claimcheck.rules.for_timing`: the median for the timing models, the mean otherwise), the
sequential loop with the common plan (looks at n = 8, 19, 30; a one-sample timing check draws them
all and decides once on the window) and, for timing models, the noise gate inside the loop and
:func:`claimcheck.engine.adjudicate.gate_noise` after it.

At the boundary both nulls are true, so a refutation is a false refutation and a hold a false
hold; each must stay at or below alpha + 2 SE (SE = sqrt(alpha (1 - alpha) / R)).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from claimcheck import rules
from claimcheck.engine.adjudicate import between_runs_inflation, between_runs_rereading, gate_noise, widen
from claimcheck.claim import Budget, Check, Claim, ProbeSpec, Scope, Source
from claimcheck.engine.result import ItemResult
from claimcheck.stats import Adaptation, SequentialPlan
from claimcheck.stats._futility import EXTENSION_FACTOR
from claimcheck.verdict import Verdict

ALPHA = 0.05
PLAN = SequentialPlan(ALPHA, 8, 30, 3)  # the common plan: looks at 8, 19, 30
N_MAX = PLAN.max_samples

Draw = Callable[[np.random.Generator, int], np.ndarray]  # (rng, replicates) -> (replicates, N_MAX)


def _normal(rng: np.random.Generator, reps: int) -> np.ndarray:
    return 100.0 + 2.0 * rng.standard_normal((reps, N_MAX))


def _spiky(rng: np.random.Generator, reps: int) -> np.ndarray:
    """95% N(100, 2), 5% of samples x1.3 (preemption on a shared machine; CV 6.7%)."""
    base = _normal(rng, reps)
    return np.where(rng.random((reps, N_MAX)) < 0.05, 1.3 * base, base)


def _heavy(rng: np.random.Generator, reps: int) -> np.ndarray:
    """100 + 2 t(3), cut at +-40 t units so that a time stays positive (it matters once in 10^5)."""
    return 100.0 + 2.0 * np.clip(rng.standard_t(3, (reps, N_MAX)), -40.0, 40.0)


def _drift(rng: np.random.Generator, reps: int) -> np.ndarray:
    """N(100, 2) with a linear drift of 1 SD over the run (-0.5 SD at the first sample, +0.5 at the last).

    The boundary is the value at the middle of the planned window (the drift averages to zero over
    it): what a one-sample claim's figure means on a drifting machine is its value over the item's
    planned samples, fixed before any is seen. A look at n = 8 sees the first 8 samples only
    (0.38 SD below it), and the drift is too slow to detect there, so a one-sample timing rule that
    stopped early refuted a true claim 0.12 of the time; it now decides once, on the window
    (:func:`claimcheck.stats._sequential.run_window`). Paired rules see the drift in both arms (it moves the
    shared per-round factor), so it cancels in their contrast and they still stop early.
    """
    return _normal(rng, reps) + 2.0 * (np.arange(N_MAX) / (N_MAX - 1) - 0.5)


def _integer(rng: np.random.Generator, reps: int) -> np.ndarray:
    """9 with probability 2/3, 12 with 1/3: mean 10, median 9, often n equal values in a row."""
    return np.where(rng.random((reps, N_MAX)) < 2 / 3, 9.0, 12.0)


def _bernoulli(rng: np.random.Generator, reps: int, p: float = 0.3) -> np.ndarray:
    return (rng.random((reps, N_MAX)) < p).astype(float)


@dataclass(frozen=True)
class Noise:
    """A noise model; ``timing`` models run as exclusive (timing) items, the others as shared ones."""

    name: str
    draw: Draw
    timing: bool
    positive: bool = True


NOISES = (
    Noise("normal", _normal, False),
    Noise("spiky 5% x1.3", _spiky, True),
    Noise("heavy t(3)", _heavy, True),
    Noise("slow drift", _drift, True),
    Noise("integer 9/12", _integer, False),
    Noise("Bernoulli", _bernoulli, False, positive=False),
)


@dataclass(frozen=True)
class Result:
    """Verdict rates of one cell."""

    rule: str
    noise: str
    statistic: str
    reps: int
    refuted: float
    held: float
    mean_n: float
    held_reps: int = 0  # replicates behind ``held`` when it comes from a separate false-edge run

    @property
    def se(self) -> float:
        return math.sqrt(ALPHA * (1 - ALPHA) / self.reps)

    @property
    def held_se(self) -> float:
        return math.sqrt(ALPHA * (1 - ALPHA) / (self.held_reps or self.reps))

    def within(self, k: float = 2.0) -> bool:
        """Both rates at or below ``alpha + k SE``."""
        return self.refuted <= ALPHA + k * self.se and self.held <= ALPHA + k * self.held_se


def _claim(check: Check, timing: bool, plan: SequentialPlan = PLAN, indifference: float | None = None) -> Claim:
    return Claim("sim", "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("p"), check,
                 budget=Budget(min_samples=plan.min_samples, max_samples=plan.max_samples, looks=plan.looks,
                               exclusive=timing), indifference=indifference)


def run_result(check: Check, groups: list[tuple[str, np.ndarray]], timing: bool,
               item_id: str = "sim", history: Sequence[float] | None = (),
               adapt: bool = True, extend: bool = True, *, plan: SequentialPlan = PLAN,
               indifference: float | None = None) -> tuple[ItemResult, int]:
    """One replicate as the runner runs an item: resolve the statistic, sample in looks, widen, gate.

    ``history``: the item's estimates in earlier complete runs, folded in as the runner folds them
    (:func:`claimcheck.engine.adjudicate.widen`); ``()`` is a first run, None leaves the
    between-run component out (the within-run decision alone, for comparison). ``plan``: the item's
    looks (the common plan unless a cell states its own budget). ``adapt``: the futility stop and the
    extension as the runner takes them, the room being the samples the replicate holds beyond those
    drawn (its time budget); False runs the plan as drawn. ``extend`` False keeps the futility stop alone.
    ``indifference``: the claim's declared margin of indifference (None: it declares none).
    """
    check = rules.for_timing(check, timing)
    taken = 0
    width = min(len(x) for _, x in groups)

    def draw(k: int) -> list[tuple[str, np.ndarray]]:
        nonlocal taken
        batch = [(label, x[taken: taken + k]) for label, x in groups]
        taken += k
        return batch

    gate = rules.timing_gate(check) if timing else None
    claim = _claim(check, timing, plan, indifference)
    between_runs = between_runs_rereading(claim, history) if history is not None else None
    inflation = between_runs_inflation(claim, history) if history is not None else None
    adaptation = Adaptation(room=lambda: width - taken, factor=EXTENSION_FACTOR if extend else 1.0,
                            between_runs=between_runs, inflation=inflation) if adapt else None
    decision = rules.sequential(check, draw, plan, gate=gate, adapt=adaptation)
    result = ItemResult(claim, item_id, {}, decision.verdict, decision.reason, decision)
    if history is not None:
        result = widen(result, history)
    if timing:
        result = gate_noise(result, [], 0.10)
    return result, min(taken, width)


def run_item(check: Check, groups: list[tuple[str, np.ndarray]], timing: bool,
             history: Sequence[float] | None = (), adapt: bool = True, extend: bool = True, *,
             plan: SequentialPlan = PLAN, indifference: float | None = None) -> tuple[Verdict, int]:
    """The verdict of :func:`run_result` and the samples per group it drew."""
    result, taken = run_result(check, groups, timing, history=history, plan=plan, adapt=adapt, extend=extend,
                               indifference=indifference)
    return result.verdict, taken


@contextlib.contextmanager
def wide(width: int) -> Iterator[None]:
    """Models draw ``width`` samples a replicate (room for an extended last look); the plan stays 8/19/30.

    Every model reads :data:`N_MAX` when it draws (the dependent ones :data:`dependence_models.ROUNDS`),
    so the first 30 samples keep each model's law and the rest continue it (an AR(1) series goes on,
    a run's load stays, clock blocks keep switching). Not for the drift model, whose slope is per run.
    """
    from . import dependence_models

    global N_MAX
    saved = N_MAX, dependence_models.ROUNDS
    N_MAX = dependence_models.ROUNDS = width
    try:
        yield
    finally:
        N_MAX, dependence_models.ROUNDS = saved


def estimate_of(check: Check, groups: list[tuple[str, np.ndarray]], timing: bool) -> float:
    """The estimate one complete run of the item stores (what a later run reads as its history)."""
    result, _ = run_result(check, groups, timing)
    return result.decision.statistic if result.decision is not None else math.nan


def histories(cell: "Cell", check: Check, rng: np.random.Generator, reps: int) -> list[list[float]] | None:
    """Per replicate, the estimates of ``cell.history_runs`` earlier runs of the same item (None: no history).

    Each earlier run is a fresh draw of the cell's model (its own load, its own clock states) run
    through the claim path; a cell with ``history_runs = 0`` is a first run (empty history).
    """
    if cell.history_runs is None:
        return None
    if cell.history_runs == 0:
        return [[] for _ in range(reps)]
    _, past = cell.make(cell.noise, rng, reps * cell.history_runs)
    k = cell.history_runs
    return [[estimate_of(check, past[r * k + j], cell.noise.timing) for j in range(k)] for r in range(reps)]


@dataclass(frozen=True)
class Cell:
    """One rule under one noise model at its boundary.

    ``make(noise, rng, reps)`` returns the check and per-replicate groups; ``false_edge`` makes a
    second set whose claim is false at its edge (rules whose two nulls differ: ordering, monotone).
    """

    rule: str
    noise: Noise
    make: Callable[[Noise, np.random.Generator, int], tuple[Check, list[list[tuple[str, np.ndarray]]]]]
    false_edge: Callable[[Noise, np.random.Generator, int], tuple[Check, list[list[tuple[str, np.ndarray]]]]] | None = None
    label: str = field(default="")
    history_runs: int | None = 0  # earlier complete runs each replicate reads; None: no between-run component
    noise_label: str = ""  # the table's noise column, when it says more than the model (e.g. its history)


def simulate(cell: Cell, reps: int, seed: int, adapt: bool = True) -> Result:
    """Run ``reps`` replicates of ``cell``; both error rates and the mean samples per group used."""
    rng = np.random.default_rng(seed)
    check, replicates = cell.make(cell.noise, rng, reps)
    past = histories(cell, check, rng, reps)
    verdicts, used = [], []
    for r, groups in enumerate(replicates):
        verdict, n = run_item(check, groups, cell.noise.timing, None if past is None else past[r], adapt)
        verdicts.append(verdict)
        used.append(n)
    refuted = float(np.mean([v is Verdict.REFUTED for v in verdicts]))
    held = float(np.mean([v is Verdict.HOLDS for v in verdicts]))
    held_reps = 0
    if cell.false_edge is not None:
        false_check, false_replicates = cell.false_edge(cell.noise, rng, reps)
        held = float(np.mean([run_item(false_check, g, cell.noise.timing, adapt=adapt)[0] is Verdict.HOLDS
                              for g in false_replicates]))
        held_reps = reps
    statistic = rules.statistic(rules.for_timing(check, cell.noise.timing)) if "statistic" in check.params else "-"
    return Result(cell.label or cell.rule, cell.noise_label or cell.noise.name, statistic, reps, refuted, held,
                  float(np.mean(used)), held_reps)


# -- population values ---------------------------------------------------------------------------
_POPULATION = 400_000


def population(noise: Noise, statistic: Callable[[np.ndarray], float], *, seed: int = 99) -> float:
    """The statistic of the model's distribution (a large sample of it), e.g. its mean or median."""
    rng = np.random.default_rng(seed)
    draws = noise.draw(rng, _POPULATION // N_MAX).ravel()
    if noise.name == "slow drift":  # the drift is a function of the index, averaging to zero
        draws = draws - 2.0 * np.tile(np.arange(N_MAX) / (N_MAX - 1) - 0.5, _POPULATION // N_MAX)
    return float(statistic(draws))


def stat_of(noise: Noise) -> Callable[[np.ndarray], float]:
    return np.median if noise.timing else np.mean


# -- the cells -------------------------------------------------------------------------------------
Groups = list[tuple[str, np.ndarray]]
Made = tuple[Check, list[Groups]]


def _sd(noise: Noise) -> float:
    return population(noise, lambda x: float(np.std(x)))


def bound(rule: str) -> Callable[[Noise, np.random.Generator, int], Made]:
    """``at_least`` / ``at_most`` with the threshold at the model's median (timing) or mean."""

    def make(noise: Noise, rng: np.random.Generator, reps: int) -> Made:
        threshold = population(noise, stat_of(noise))
        check = rules.make_check(rule, {"threshold": threshold}, labels=("x",))
        data = noise.draw(rng, reps)
        return check, [[("x", data[r])] for r in range(reps)]

    return make


def _arms(noise: Noise, rng: np.random.Generator, reps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-round arms ``u``, ``v`` and a per-round factor ``c`` both arms share (it cancels in the contrast).

    ``u`` comes from the model and ``v`` from the model too, or from the normal model for spiky and
    heavy-tailed timing (the noise in one arm only, as a preempted arm). Drift is the machine's: it
    moves ``c``, both arms alike.
    """
    c = 1.0 + 0.1 * rng.standard_normal((reps, N_MAX))
    if noise.name == "slow drift":
        drift = 1.0 + 0.02 * (np.arange(N_MAX) / (N_MAX - 1) - 0.5)  # 1 SD of a sample over the run
        return _normal(rng, reps), _normal(rng, reps), c * drift
    u = noise.draw(rng, reps)
    v = (_normal if noise.timing else noise.draw)(rng, reps)
    return u, v, c


def ratio_paired(noise: Noise, rng: np.random.Generator, reps: int) -> Made:
    """Paired ``ratio`` at_least, threshold at the population ratio of means (or median per-round ratio)."""
    big_u, big_v, _ = _arms(noise, np.random.default_rng(98), _POPULATION // N_MAX)
    if noise.timing:
        edge = float(np.median(big_u / big_v))
    else:
        edge = float(big_u.mean() / big_v.mean())
    check = rules.make_check("ratio", {"threshold": 0.74 * edge, "bound": "at_least", "paired": True},
                             labels=("a", "b"))
    u, v, c = _arms(noise, rng, reps)
    return check, [[("a", 0.74 * u[r] * c[r]), ("b", v[r] * c[r])] for r in range(reps)]


def ratio_unpaired(noise: Noise, rng: np.random.Generator, reps: int) -> Made:
    """Unpaired ``ratio`` of means at_least (non-timing models; the timing default pairs rounds)."""
    check = rules.make_check("ratio", {"threshold": 0.74, "bound": "at_least"}, labels=("a", "b"))
    u, v = noise.draw(rng, reps), noise.draw(rng, reps)
    return check, [[("a", 0.74 * u[r]), ("b", v[r])] for r in range(reps)]


def equivalent_paired(noise: Noise, rng: np.random.Generator, reps: int) -> Made:
    """Paired ``equivalent`` with the true difference (log-ratio for timing) exactly at the margin."""
    big_u, big_v, _ = _arms(noise, np.random.default_rng(97), _POPULATION // N_MAX)
    u, v, c = _arms(noise, rng, reps)
    if noise.timing:
        margin = 0.05
        offset = math.log1p(margin) - float(np.median(np.log(big_u / big_v)))
        check = rules.make_check("equivalent", {"margin": margin, "scale": "log-ratio", "paired": True},
                                 labels=("a", "b"))
        return check, [[("a", u[r] * c[r] * math.exp(offset)), ("b", v[r] * c[r])] for r in range(reps)]
    margin = 0.5 * _sd(noise)
    offset = margin - float(np.mean(big_u - big_v))
    check = rules.make_check("equivalent", {"margin": margin, "paired": True}, labels=("a", "b"))
    common = 10.0 * (c - 1.0)
    return check, [[("a", u[r] + offset + common[r]), ("b", v[r] + common[r])] for r in range(reps)]


def levels(rule: str, offsets: tuple[float, ...]) -> Callable[[Noise, np.random.Generator, int], Made]:
    """``ordering`` / ``monotone`` (decreasing) over unpaired levels shifted by ``offsets`` model SDs."""

    def make(noise: Noise, rng: np.random.Generator, reps: int) -> Made:
        params = {} if rule == "ordering" else {"direction": "decreasing"}
        labels = [f"L{i}" for i in range(len(offsets))]
        check = rules.make_check(rule, params, labels=labels)
        check = Check(rule=check.rule, outputs=tuple(labels) if rule == "ordering" else None,
                      output=None if rule == "ordering" else "y", over=None if rule == "ordering" else "level",
                      alpha=check.alpha, params=check.params)
        sd = _sd(noise)
        arms = [noise.draw(rng, reps) + shift * sd for shift in offsets]
        return check, [[(label, arm[r]) for label, arm in zip(labels, arms)] for r in range(reps)]

    return make


def rate(rule: str, p: float) -> Callable[[Noise, np.random.Generator, int], Made]:
    """``rate_at_most`` / ``zero_rate`` on Bernoulli(``p``) events, threshold 0.1."""

    def make(noise: Noise, rng: np.random.Generator, reps: int) -> Made:
        check = rules.make_check(rule, {"threshold": 0.1}, labels=("event",))
        data = _bernoulli(rng, reps, p)
        return check, [[("event", data[r])] for r in range(reps)]

    return make


def cells() -> list[Cell]:
    """Every rule x every noise model it applies to (rates: Bernoulli only; ``exact`` is deterministic)."""
    out = []
    for noise in NOISES:
        out += [
            Cell("at_least", noise, bound("at_least")),
            Cell("at_most", noise, bound("at_most")),
            Cell("ratio", noise, ratio_paired, label="ratio paired"),
            Cell("equivalent", noise, equivalent_paired, label="equivalent paired"),
            Cell("ordering", noise, levels("ordering", (0.0, 0.0, 0.0)), levels("ordering", (0.0, 0.0, -10.0))),
            Cell("monotone", noise, levels("monotone", (0.0, 0.0, 0.0, 0.0)),
                 levels("monotone", (10.0, 0.0, 0.0, -10.0))),
        ]
        if not noise.timing:
            out.append(Cell("ratio", noise, ratio_unpaired, label="ratio unpaired"))
    bernoulli = NOISES[-1]
    out += [
        Cell("rate_at_most", bernoulli, rate("rate_at_most", 0.1)),
        Cell("zero_rate", bernoulli, rate("zero_rate", 0.0), rate("zero_rate", 0.1)),
    ]
    return out


def table(results: list[Result]) -> str:
    """The error-rate table as printed in the test summary (``2 SE``: both rates within alpha + 2 SE)."""
    head = (f"{'rule':<19}{'noise':<15}{'stat':<7}{'R':>6}{'false ref':>10}{'false hold':>11}{'SE':>7}"
            f"{'a+2SE':>7}{'E[n]':>6}  2 SE")
    lines = [head, "-" * len(head)]
    for r in results:
        lines.append(f"{r.rule:<19}{r.noise:<15}{r.statistic:<7}{r.reps:>6}{r.refuted:>10.3f}{r.held:>11.3f}"
                     f"{r.se:>7.4f}{ALPHA + 2 * r.se:>7.3f}{r.mean_n:>6.1f}  {'yes' if r.within() else 'NO'}")
    return "\n".join(lines)


# -- power and samples to a verdict -----------------------------------------------------------------
@dataclass(frozen=True)
class Power:
    """Refutation rate of a claim false by ``shift`` SD, sequential and at fixed n, and the samples used."""

    sequential: float
    fixed: float
    union: float
    mean_n: float
    fixed_n: int
    reps: int


def power_at(effect: float, reps: int, seed: int) -> Power:
    """``at_least`` on the mean under normal noise, the true mean ``effect`` SD below the threshold.

    The same data run three ways: the common plan with exact (t) boundaries, the same plan with
    the union bound, and one look at n = 30.
    """
    from claimcheck.stats import run_sequential as run_looks

    rng = np.random.default_rng(seed)
    data = _normal(rng, reps)
    threshold = 100.0 + 2.0 * effect
    check = rules.make_check("at_least", {"threshold": threshold, "statistic": "mean"}, labels=("x",))
    rule = rules.get("at_least")
    fixed_plan = SequentialPlan(ALPHA, N_MAX, N_MAX, 1)
    seq, union, fixed, used = [], [], [], []
    for r in range(reps):
        verdict, n = run_item(check, [("x", data[r])], timing=False)
        seq.append(verdict is Verdict.REFUTED)
        used.append(n)
        taken = 0

        def draw(k: int, row: np.ndarray = data[r]) -> list[tuple[str, np.ndarray]]:
            nonlocal taken
            taken += k
            return [("x", row[taken - k: taken])]

        def decide_look(groups, alpha):  # type: ignore[no-untyped-def]
            return rule.decide(rule.groups(groups, check), alpha, check)

        union.append(run_looks(draw, decide_look, PLAN, boundary="union").verdict is Verdict.REFUTED)
        taken = 0
        fixed.append(run_looks(draw, decide_look, fixed_plan, boundary="t").verdict is Verdict.REFUTED)
    return Power(float(np.mean(seq)), float(np.mean(fixed)), float(np.mean(union)), float(np.mean(used)), N_MAX,
                 reps)
