"""Sequential sampling: look at the data a few times and stop as soon as the rule decides.

Re-testing after every batch at the full alpha inflates false verdicts (with 4 looks, up to
~2.5x). A :class:`SequentialPlan` instead *spends* alpha over its looks with a Lan–DeMets
spending function ``f(t)`` of the information fraction ``t = n_k / n_max``, so that the chance
of a false verdict by look k is at most ``f(t_k)`` and ``f(1) = alpha``.

How a look's nominal level comes from ``f`` (``boundary``, the rule's choice):

- ``normal``: exact group-sequential boundaries for z tests (:mod:`._boundaries`, recursive
  numerical integration): the first-crossing probability at look k is exactly
  ``f(t_k) - f(t_{k-1})``, so the nominal levels are larger than the increments (0.0133 /
  0.0228 / 0.0309 against 0.0133 / 0.0183 / 0.0183 for looks at 8, 19, 30 under the default
  linear spending) and power is close to a fixed-n test.
- ``t``: the same for t tests (the mean rules), calibrated for the estimated variance
  (0.0133 / 0.0218 / 0.0293 at 8, 19, 30).
- ``sign``: exact boundaries for sign tests (binomial dynamic programming).
- ``union``: look k runs at ``alpha_k = f(t_k) - f(t_{k-1})``, and the union bound gives
  ``P(false verdict) <= sum_k alpha_k = alpha`` with no model of how looks depend on each other:
  valid for bootstrap rules, for tests combined over steps, and at unplanned look sizes;
  conservative.
- ``none``: the full alpha at every look, for rules whose errors cannot grow with looking
  (``exact``, ``zero_rate``).

A look whose sample count differs from the plan's size (a short draw) runs at its union-bound
increment, which is never larger than its exact nominal level.

A gated (timing) item drops its warm-up samples before each decision
(:func:`~._noise.warm_up_count`: the same leading rounds from every group of equal length), and
says how many in its reason; a look whose count then differs from the plan's size runs at its
union-bound increment, as a short draw does. An item whose last look the gate finds serially
dependent (:func:`~._noise.is_dependence`) is decided on its effective n
(:func:`~._dependent.decide_dependent`: the sign test with its variance inflated, and the
effect's size at the last look), or stays
inconclusive with that reason where its statistic has no such test; its sequential p-values are
then that last look's, Bonferroni-scaled (``p * alpha / alpha_k``), since the earlier looks'
p-values assumed independent samples. A look that could stop early is also tested for
dependence at a more sensitive level (:func:`early_dependence`); a flag there only keeps it
sampling.

Sequential p-values (``pvalue`` for refuted, ``hold_pvalue`` for holds): under ``union``,
``min_k p_k * alpha / alpha_k`` (a Bonferroni over the looks taken, ``P(p_seq <= u) <= u``);
under an exact boundary, the smallest overall level whose boundary the looks crossed
(:func:`~._boundaries.repeated_pvalue`). Either way ``p_seq <= alpha`` exactly when some look
decided that way, so the family correction can adjust both.

A plan with ``stop_alpha`` below its alpha (the level its item is first tested at in its
multiplicity family) stops early only on a look whose sequential p-value reaches that level;
a look decisive at its own level alone samples on. The looks, boundaries and p-values are the
plan's own, so the sequential p-value stays valid (stopping later only adds looks the full path
would have had); the last look decides at ``alpha`` as before. Where no later look decides
(an ungated rule), the last look that was decisive at the plan's alpha stands, with its own
interval: a repeated confidence interval is valid whichever look it is read at.

The stopping look's interval is a repeated confidence interval: its nominal level is
``1 - 2 a_k``, but it is reported at the level it keeps simultaneously over all looks
(``1 - 2 alpha``), which is the coverage the plan guarantees.

Spending functions (``spending``, :mod:`._spending`):
    "linear" (default): ``alpha * t``. Between the two classic shapes: at looks 8/19/30 it keeps
        0.800 power at 0.5 SD (Pocock 0.780, O'Brien–Fleming 0.839) at 22.5 samples on average
        there (Pocock 21.8, O'Brien–Fleming 25.2).
    "pocock": ``alpha * ln(1 + (e - 1) t)``. Spends early, so a clear claim stops at the first
        looks; costs a stricter final look.
    "obf": O'Brien–Fleming type ``2 - 2 Phi(z_{1-alpha/2} / sqrt(t))``. Almost nothing early,
        nearly full alpha at the end; best when claims sit close to their thresholds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from claimcheck.numbers import level as level_text
from claimcheck.verdict import Verdict

from ._boundaries import Kind, nominal_levels, repeated_pvalue
from ._decision import LEVEL_FLOOR, Decision, check_alpha
from ._dependent import decide_dependent, paired_effective
from ._ordered_dependent import decide_ordered_dependent, is_ordered
from ._futility import (
    OFF, Adaptation, Outlook, critical, extension_clause, extension_size, futility_clause, needed_clause, outlook,
    unit, widened,
)
from ._noise import DEPENDENCE_ALPHA, EARLY_DEPENDENCE_ALPHA, is_dependence, lag1_dependence, warm_up_count
from ._spending import SPENDINGS, Spending, spent

Boundary = Literal["normal", "t", "sign", "union", "none"]
Draw = Callable[[int], Sequence[tuple[str, Sequence[float]]]]
DecideLook = Callable[[Sequence[tuple[str, Any]], float], Decision]
Gate = Callable[[Sequence[tuple[str, np.ndarray]], Decision], "str | None"]
Groups = list[tuple[str, np.ndarray]]


_FLOOR = LEVEL_FLOOR  # a sign test at n <= 39 cannot reach it: such a look decides nothing


@dataclass(frozen=True)
class SequentialPlan:
    """Cumulative sample sizes of the looks and the alpha each look may spend.

    Looks are evenly spaced from ``min_samples`` to ``max_samples`` (per group); ``sizes`` and
    ``alphas`` are computed once, at construction. ``stop_alpha`` (at most ``alpha``) is the level
    an early look's sequential p-value must reach before sampling stops: the level the decision
    is first tested at in its multiplicity family, so a decision that stops early survives it.
    The last look still decides at ``alpha``; None stops at the first decisive look.
    """

    alpha: float = 0.05
    min_samples: int = 10
    max_samples: int = 200
    looks: int = 4
    spending: Spending = "linear"
    stop_alpha: float | None = None
    sizes: tuple[int, ...] = field(init=False)
    alphas: tuple[float, ...] = field(init=False)

    def __post_init__(self) -> None:
        check_alpha(self.alpha)
        if self.stop_alpha is not None and not 0 < self.stop_alpha <= self.alpha:
            raise ValueError(f"`stop_alpha` must lie in (0, alpha = {self.alpha:g}]; got {self.stop_alpha!r}")
        for name in ("min_samples", "max_samples", "looks"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"`{name}` must be a positive integer; got {value!r}")
        if self.min_samples > self.max_samples:
            raise ValueError(f"`min_samples` ({self.min_samples}) must not exceed `max_samples` ({self.max_samples})")
        if self.spending not in SPENDINGS:
            choices = ", ".join(repr(name) for name in SPENDINGS)
            raise ValueError(f"`spending` must be one of {choices}; got {self.spending!r}")
        lo, hi, k = self.min_samples, self.max_samples, self.looks
        sizes = (hi,) if k == 1 else tuple(sorted({math.ceil(lo + (hi - lo) * i / (k - 1) - 1e-9) for i in range(k)}))
        cumulative = [spent(n / hi, self.alpha, self.spending) for n in sizes[:-1]] + [self.alpha]
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "alphas", tuple(b - a for a, b in zip([0.0, *cumulative], cumulative)))

    @classmethod
    def from_budget(cls, budget: Any, alpha: float = 0.05, spending: Spending = "linear") -> SequentialPlan:
        """Plan from a ``claimcheck.claim.Budget`` (reads ``min_samples``, ``max_samples``, ``looks``)."""
        return cls(alpha, budget.min_samples, budget.max_samples, budget.looks, spending)

    def reaches_stop(self, boundary: Boundary, exact: bool, alphas: Sequence[float], pvalues: Sequence[float]) -> bool:
        """Whether the looks so far put the sequential p-value at or below ``stop_alpha`` (True without one).

        The p-value is computed as :func:`run_sequential` reports it, so a look that stops here
        reports a p-value that reaches the level its family tests it at first.
        """
        if self.stop_alpha is None or self.stop_alpha >= self.alpha:
            return True
        if boundary == "none":
            return pvalues[-1] <= self.stop_alpha
        if exact:
            kind: Kind = boundary  # type: ignore[assignment]  # one of the exact kinds here
            return repeated_pvalue(kind, self.sizes, self.spending, self.alpha, pvalues) <= self.stop_alpha
        spent_alphas = self.alphas[: len(pvalues)] if boundary != "union" else alphas
        return sequential_pvalue(pvalues, spent_alphas, self.alpha) <= self.stop_alpha

    def levels(self, boundary: Boundary = "union") -> tuple[float, ...]:
        """Nominal level of each look under ``boundary`` (``union``: the spent increments)."""
        if boundary == "none":
            return (self.alpha,) * len(self.sizes)
        if boundary == "union":
            return self.alphas
        return nominal_levels(boundary, self.sizes, self.spending, self.alpha)

    def alpha_for(self, look: int) -> float:
        """Alpha of look ``look`` (0-based)."""
        if not 0 <= look < len(self.alphas):
            raise IndexError(f"look {look} is outside this plan's {len(self.alphas)} looks")
        return self.alphas[look]


def sequential_pvalue(pvalues: Sequence[float], alphas: Sequence[float], alpha: float) -> float:
    """Bonferroni over looks: ``min_k p_k * alpha / alpha_k``, capped at 1."""
    return min(1.0, min(p * alpha / a for p, a in zip(pvalues, alphas)))


def run_sequential(draw: Draw, decide_look: DecideLook, plan: SequentialPlan, *, boundary: Boundary = "union",
                   gate: Gate | None = None, window: bool = False, adapt: Adaptation | None = None) -> Decision:
    """Sample in looks until ``rule`` decides or the plan ends; return the final decision.

    Args:
        draw: ``draw(k)`` returns ``[(label, k more samples), ...]`` for every group, in the
            rule's group order. It may return fewer (a deterministic probe returns one value,
            a timed-out probe nothing): an empty draw ends sampling with the last decision.
        decide_look: ``decide_look(groups, alpha_k)`` decides one look (a rule bound to its check).
        boundary: how each look's level comes from the plan (see the module docstring).
        gate: ``gate(groups, decision)`` names a noise problem of the tested quantity, or None. A
            decisive look the gate flags does not stop sampling (unless it is the last); the last
            look's problem is kept in ``details["noise_gate"]`` for the adjudication step.
        window: decide once, on the whole planned window (:func:`run_window`), instead of
            stopping at the first decisive look.
        adapt: the futility stop and the promising-zone extension of the last look
            (:mod:`._futility`); None: neither (the plan as drawn). Every inconclusive reason names
            the n that would decide either way.

    Returns:
        The last look's decision with ``pvalue`` and ``hold_pvalue`` replaced by their sequential
        p-values, ``alpha`` by the plan's overall alpha, the interval relabelled as a repeated
        confidence interval, and ``details["sequential"]`` recording the looks.
    """
    if window:
        return run_window(draw, decide_look, plan, gate=gate)
    adapt = adapt or OFF
    look_sizes = list(plan.sizes)  # the last may move out (a promising-zone extension)
    extended: Outlook | None = None
    futile: Outlook | None = None
    count = 0
    collected: dict[str, list[np.ndarray]] = {}
    alphas: list[float] = []
    pvalues: list[float] = []
    hold_pvalues: list[float] = []
    gated: list[str | None] = []
    exact = boundary in ("normal", "t", "sign")
    nominal = plan.levels(boundary) if exact else plan.alphas
    decision, stopped, dropped = None, "max_samples", 0
    early_flags: dict[int, str] = {}
    family_flags: list[int] = []  # decisive looks that sampled on towards the family's level
    unsettled_looks: list[int] = []  # decisive looks that sampled on: the between-run component would undo them
    earlier: tuple[int, Decision] | None = None  # the last of them, for an ungated rule
    last_groups: list[tuple[str, np.ndarray]] | None = None

    def heading(decision: Decision) -> tuple[Outlook, Outlook, float]:
        """Where a look is heading within the run and as the item will be adjudicated, and the last look's critical z."""
        last_level = max(nominal[-1] if exact else plan.alphas[-1], _FLOOR)
        c = critical(last_level)
        view = outlook(decision.pvalue, decision.hold_pvalue, count, look_sizes[-1], c)
        return view, widened(view, decision, adapt, c, last_level), c

    for look in range(len(look_sizes)):
        size = look_sizes[look]
        have = min((sum(map(len, parts)) for parts in collected.values()), default=0)
        batch = [(str(label), _floats(label, samples)) for label, samples in draw(size - have)]
        if not any(x.size for _, x in batch):
            if decision is None:
                raise ValueError("`draw` returned no samples at the first look")
            stopped = "no more samples"
            break
        for label, x in batch:
            collected.setdefault(label, []).append(x)
        groups = [(label, np.concatenate(parts)) for label, parts in collected.items()]
        full = groups
        if gate is not None:
            groups, dropped = drop_warm_up(groups)
        count = min(len(x) for _, x in groups)
        # an extended last look keeps its planned level however far the draw reached past the planned size
        planned = count == size or (extended is not None and look == len(look_sizes) - 1 and count >= plan.sizes[-1])
        if boundary == "none":
            alpha_k = plan.alpha
        elif exact and planned:
            alpha_k = nominal[look]
        else:
            exact = exact and planned
            alpha_k = plan.alphas[look]
        alpha_k = max(alpha_k, _FLOOR)  # a look that may not spend anything still reports an interval
        decision = decide_look(groups, alpha_k)
        if gate is not None:
            decision = paired_effective(decision, groups, alpha_k, final=look == len(plan.sizes) - 1)
        alphas.append(alpha_k)
        pvalues.append(decision.pvalue)
        hold_pvalues.append(decision.hold_pvalue)
        problem, groups, dropped = _gated(gate, decision, groups, full, dropped)
        gated.append(problem)
        last_groups = groups
        early = None
        if gate is not None and problem is None and look < len(plan.sizes) - 1:
            early = early_dependence(groups)  # only keeps sampling: the next look's gate judges
            if early is not None:
                early_flags[look] = early
        if decision.verdict is not Verdict.INCONCLUSIVE:
            tested = pvalues if decision.verdict is Verdict.REFUTED else hold_pvalues
            short = look < len(plan.sizes) - 1 and not plan.reaches_stop(boundary, exact, alphas, tested)
            if short:
                family_flags.append(look)
                if gate is None:
                    earlier = (look, decision)
            last = look == len(plan.sizes) - 1
            stops = problem is None and early is None and not short
            if stops and not last and not adapt.settled(decision):  # the between-run component would undo it
                _, adjudicated, _ = heading(decision)
                if adjudicated.between_runs > 1 and adapt.futile(adjudicated):  # no later look would keep a verdict
                    futile, stopped = adjudicated, "futility"
                    break
                unsettled_looks.append(look)
                stops = False
            if stops or last:
                stopped = "decided"
                break
        elif (look < len(look_sizes) - 1 and boundary != "none" and problem is None and early is None
              and not family_flags and _tested(decision)):
            view, adjudicated, c = heading(decision)
            if adapt.futile(adjudicated):
                futile, stopped = adjudicated, "futility"
                break
            # the extension reads the within-run chance: gated on the adjudicated one it cost up to 0.03 of power
            if look == len(look_sizes) - 2 and adapt.promising <= view.power < adapt.target:
                moved = extension_size(view, c, adapt)
                if moved > look_sizes[-1]:
                    look_sizes[-1], extended = moved, view
    assert decision is not None
    decided_alpha = alphas[-1]
    if earlier is not None and decision.verdict is Verdict.INCONCLUSIVE:
        # a look decisive at the plan's alpha sampled on towards the family's level and no later look
        # decided: that look's decision stands (its repeated interval is valid with the later looks')
        look_k, decision = earlier
        decided_alpha = alphas[look_k]
        stopped = "decided"
        decision = replace(decision, reason=f"{decision.reason} (decided at look {look_k + 1} of {len(alphas)}; the "
                                            f"looks after it sampled on towards its family's level and decided nothing)")
    if gate is not None:
        decision = _noted(decision, dropped, gated[-1], last_groups)
    if decision.verdict is Verdict.INCONCLUSIVE:
        last_level = plan.alpha if boundary == "none" else nominal[-1] if exact else plan.alphas[-1]
        decision = _needed(decision, count, len(collected), last_level, futile)
    elif futile is not None:  # decisive within the run, and no later look would have kept a verdict once adjudicated
        clause = futility_clause(futile, unit(_paired(decision), len(collected)))
        decision = replace(decision, reason=f"{decision.reason}; {clause}")
    if extended is not None:
        what = unit(_paired(decision), len(collected))
        decision = replace(decision, reason=f"{decision.reason} {extension_clause(extended, count, what)}")
    dependent = "dependence" in decision.details or "undecided_verdict" in decision.details
    if boundary == "none":
        pvalue, hold_pvalue = decision.pvalue, decision.hold_pvalue
    elif dependent:  # decided on its effective n at the last look: earlier looks' p-values assumed independence
        exact = False
        pvalue = sequential_pvalue([decision.pvalue], alphas[-1:], plan.alpha)
        hold_pvalue = sequential_pvalue([decision.hold_pvalue], alphas[-1:], plan.alpha)
    elif exact:
        kind: Kind = boundary  # type: ignore[assignment]  # one of the exact kinds here
        sizes = plan.sizes
        pvalue = repeated_pvalue(kind, sizes, plan.spending, plan.alpha, pvalues)
        hold_pvalue = repeated_pvalue(kind, sizes, plan.spending, plan.alpha, hold_pvalues)
    else:  # the increments the plan allows, also for looks that ran at an exact level before a short draw
        spent_alphas = plan.alphas[: len(pvalues)] if boundary != "union" else alphas
        pvalue = sequential_pvalue(pvalues, spent_alphas, plan.alpha)
        hold_pvalue = sequential_pvalue(hold_pvalues, spent_alphas, plan.alpha)
    record: dict[str, Any] = {
        "look": len(alphas), "looks": len(plan.sizes), "sizes": list(plan.sizes), "spending": plan.spending,
        "boundary": boundary if boundary == "none" or exact else "union", "alpha_per_look": alphas,
        "pvalue_per_look": pvalues, "hold_pvalue_per_look": hold_pvalues, "stopped": stopped, "count": count,
    }
    if plan.stop_alpha is not None and plan.stop_alpha < plan.alpha:
        record["stop_alpha"] = plan.stop_alpha
        if family_flags:
            record["sampled_on_for_family_at"] = [look + 1 for look in family_flags]
    if unsettled_looks:
        record["sampled_on_between_runs_at"] = [look + 1 for look in unsettled_looks]
    if futile is not None:
        record["futility"] = {"n": futile.n, "final": futile.final, "power": futile.power, "needed": futile.needed,
                              "between_runs": futile.between_runs}
    if extended is not None:
        record["extended"] = {"from": plan.sizes[-1], "to": look_sizes[-1], "power": extended.power,
                              "at": extended.n}
    if gate is not None:
        record["gate_per_look"] = gated
        if early_flags:
            record["kept_sampling_at"] = {str(look + 1): why for look, why in early_flags.items()}
    details = {**decision.details, "sequential": record}
    if gated and gated[-1] is not None:
        details["noise_gate"] = gated[-1]
    changes: dict[str, Any] = {"pvalue": pvalue, "hold_pvalue": hold_pvalue, "alpha": plan.alpha, "details": details}
    if boundary != "none" and 0 < decision.confidence_level < 1 and decided_alpha > 0:
        simultaneous = 1 - (1 - decision.confidence_level) * plan.alpha / decided_alpha
        record["nominal_level"] = decision.confidence_level
        old, new = f"{level_text(decision.confidence_level)} CI", f"repeated {level_text(simultaneous)} CI"
        changes |= {"confidence_level": simultaneous, "reason": decision.reason.replace(old, new)}
    return replace(decision, **changes)


def run_window(draw: Draw, decide_look: DecideLook, plan: SequentialPlan, *, gate: Gate | None = None) -> Decision:
    """Draw the plan's looks, then decide once at the plan's alpha on everything drawn.

    Early stopping is valid only when every look estimates the same quantity. A quantity that
    moves with the machine (one timing output on a machine that warms up or takes on load)
    does not: a look at n = 8 estimates the first 8 samples, not the window the claim is
    checked over, and a drift too slow to detect at these n (1 SD over 30 samples; a trend
    test at n = 19 finds it about one time in six) still biases it. The window is then what
    the claim's figure means (its median or mean over the item's planned samples), and it is
    fixed before any sample is seen; an interval about it is decisive whatever the drift. The
    looks still run as planned (the probe is called in the same batches); a draw that comes
    back empty (the time budget) ends the window early, independently of the data. The gate
    reads the whole window and its finding is kept in ``details["noise_gate"]``.
    """
    collected: dict[str, list[np.ndarray]] = {}
    taken, stopped = 0, "window"
    for size in plan.sizes:
        have = min((sum(map(len, parts)) for parts in collected.values()), default=0)
        batch = [(str(label), _floats(label, samples)) for label, samples in draw(size - have)]
        if not any(x.size for _, x in batch):
            if not collected:
                raise ValueError("`draw` returned no samples at the first look")
            stopped = "no more samples"
            break
        for label, x in batch:
            collected.setdefault(label, []).append(x)
        taken += 1
    groups = [(label, np.concatenate(parts)) for label, parts in collected.items()]
    dropped, full = 0, groups
    if gate is not None:
        groups, dropped = drop_warm_up(groups)
    decision = decide_look(groups, plan.alpha)
    problem, groups, dropped = _gated(gate, decision, groups, full, dropped)
    if gate is not None:
        decision = _noted(decision, dropped, problem, groups)
    if decision.verdict is Verdict.INCONCLUSIVE:
        decision = _needed(decision, min(len(x) for _, x in groups), len(groups), plan.alpha)
    record: dict[str, Any] = {
        "look": 1, "looks": 1, "draws": taken, "sizes": list(plan.sizes), "spending": plan.spending,
        "boundary": "window", "alpha_per_look": [plan.alpha], "pvalue_per_look": [decision.pvalue],
        "hold_pvalue_per_look": [decision.hold_pvalue], "stopped": stopped,
        "count": min(len(x) for _, x in groups),
    }
    if gate is not None:
        record["gate_per_look"] = [problem]
    details = {**decision.details, "sequential": record}
    if problem is not None:
        details["noise_gate"] = problem
    return replace(decision, details=details)


# lags the long-run factor reads (up to a third of the samples) when the gate flags a decision's last
# look, for one output and for a paired contrast alike: clock states that hold for blocks of samples
# correlate them at every lag inside a block, which lag 1 alone understates
FLAGGED_LAGS = 10


def _gated(gate: Gate | None, decision: Decision, groups: Groups, full: Groups,
           dropped: int) -> tuple[str | None, Groups, int]:
    """The gate's problem with the groups and warm-up count the decision is then noted on.

    Where leading samples were dropped as warm-up, the dependence test runs again over every sample
    (:func:`level_shift`); if it flags them, the dropped samples are put back, since they were a
    state of the machine rather than a warm-up, and the item is decided on the effective n of all.
    """
    if gate is None:
        return None, groups, dropped
    problem = gate(groups, decision)
    if dropped:
        shift = level_shift(full, dropped)
        if shift is not None:
            return shift, full, 0
    return problem, groups, dropped


def level_shift(full: Groups, dropped: int) -> str | None:
    """Serial dependence of the samples with the leading ones that looked like warm-up, or None.

    A warm-up is a transient, but a clock state held for a block of samples at the start looks the
    same to the warm-up rule; dropping it hides the switch and leaves the later block to decide as
    if it were the whole run (regime blocks gave one-sample rules 0.07 false holds through it). The
    dependence test over all the samples tells them apart: a warm-up of 3 samples barely moves the
    lag-1 rank autocorrelation of 30, a block of states moves it far.
    """
    problem = early_dependence(full, DEPENDENCE_ALPHA)
    if problem is None:
        return None
    return f"{problem} (counting the first {dropped} samples, which looked like warm-up but sit in a block of states)"


def early_dependence(groups: Groups, alpha: float = EARLY_DEPENDENCE_ALPHA) -> str | None:
    """Serial dependence at a look that could stop early, tested at :data:`~._noise.EARLY_DEPENDENCE_ALPHA`.

    A small look detects dependence poorly (n = 8 of AR(1) rho = 0.8 noise); a flag here only
    keeps the item sampling to its next look, where the gate judges again, so the test may be
    sensitive. Two groups of equal length are read as rounds: their per-round log-ratio (or
    difference) is tested, the quantity a paired rule decides on.
    """
    if len(groups) == 2 and len(groups[0][1]) == len(groups[1][1]):
        (_, a), (_, b) = groups
        contrast = np.log(a / b) if np.all(a > 0) and np.all(b > 0) else a - b
        return lag1_dependence(contrast, alpha)
    return next((p for _, x in groups if (p := lag1_dependence(x, alpha)) is not None), None)


def drop_warm_up(groups: list[tuple[str, np.ndarray]]) -> tuple[list[tuple[str, np.ndarray]], int]:
    """The groups without their warm-up samples, and how many were dropped (the most of any group).

    Groups of equal length are rounds of one interleaved run: the same leading rounds leave every
    group, so the pairing stands. Groups of unequal length each lose their own warm-up.
    """
    counts = [warm_up_count(x) for _, x in groups]
    if not any(counts):
        return groups, 0
    if len({len(x) for _, x in groups}) == 1:
        counts = [max(counts)] * len(groups)
    return [(label, x[c:]) for (label, x), c in zip(groups, counts)], max(counts)


def _noted(decision: Decision, dropped: int, problem: str | None,
           groups: list[tuple[str, np.ndarray]] | None = None) -> Decision:
    """The gated decision with its warm-up stated, and undecided when its samples are serially dependent."""
    details = {**decision.details, "warm_up_dropped": dropped}
    reason = decision.reason
    if dropped:
        reason += f" (the first {dropped} samples dropped as warm-up: each beyond 4 robust SD of the later ones)"
    if is_dependence(problem) and groups is not None:
        assert problem is not None
        redecide = decide_ordered_dependent if is_ordered(decision) else decide_dependent
        adjusted = redecide(replace(decision, details=details), groups, decision.alpha, problem, lags=FLAGGED_LAGS)
        if adjusted is not None:
            warm = f" (the first {dropped} samples dropped as warm-up)" if dropped else ""
            return replace(adjusted, details={**adjusted.details, "independent_verdict": decision.verdict.value},
                           reason=adjusted.reason + warm, _interval_at=None)
        if decision.verdict is not Verdict.INCONCLUSIVE:
            details["undecided_verdict"] = decision.verdict.value
            details["undecided_pvalues"] = [decision.pvalue, decision.hold_pvalue]
            reason = (f"{problem}, so no interval that assumes independent samples can decide; would have been "
                      f"{decision.verdict.value}: {reason}")
            return replace(decision, verdict=Verdict.INCONCLUSIVE, reason=reason, pvalue=1.0, hold_pvalue=1.0,
                           details=details)
    return replace(decision, reason=reason, details=details)


def _needed(decision: Decision, count: int, groups: int, level: float, futile: Outlook | None = None) -> Decision:
    """An inconclusive decision with the n that would decide in its reason (a futility stop's clause, if it stopped).

    Read off the decision's own p-values at the last look's level: a decision taken on its
    effective n has its dependence factor inside them. A decision that tested nothing (too few
    samples, an undefined figure, samples its gate left undecided) keeps its own reason.
    """
    if count < 2 or not _tested(decision) or any(k in decision.details for k in ("undecided_verdict", "required_n")):
        return decision
    what = unit(_paired(decision), groups)
    if futile is not None:
        clause, needed = futility_clause(futile, what), futile.needed
    else:
        view = outlook(decision.pvalue, decision.hold_pvalue, count, count, critical(max(level, _FLOOR)))
        clause, needed = needed_clause(view.needed, what, "dependence" in decision.details), view.needed
    details = {**decision.details, "needed_n": needed}
    return replace(decision, reason=f"{decision.reason}; {clause}", details=details)


def _paired(decision: Decision) -> bool:
    return bool(decision.details.get("paired")) or (decision.hypothesis is not None and decision.hypothesis.paired)


def _tested(decision: Decision) -> bool:
    """Whether the decision tested its claim on an interval whose z grows as sqrt(n).

    Too few or identical samples test nothing (p-values of 1); a constant reading's p-values follow
    the chance that n samples all miss a departure, not a trend in z, and it names its own n.
    """
    return min(decision.pvalue, decision.hold_pvalue) < 1 and "reading" not in decision.details


def _floats(label: str, samples: Sequence[float]) -> np.ndarray:
    try:
        return np.asarray(samples, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"group {str(label)!r}: samples must be numbers") from None
