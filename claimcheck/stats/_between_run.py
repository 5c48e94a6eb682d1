"""A between-run variance component: a timing decision widened by how much its estimate moves between runs.

Within one run the samples share the run's load and clock state, so the run's interval covers
the run's own value, not the machine's: a per-run load of one standard error of the median
(a shift shared by all samples of a run) made 2.7% of edge items flip holds <-> refuted between
two runs of one commit, and clock states that switch in blocks longer than a sample put
0.10-0.26 false verdicts on every timing rule. No test inside a run sees either.

:func:`widen_between_runs` folds the spread of the item's estimate over earlier complete runs on
the machine class into the decision: the within-run standard error ``se`` (read off the
decision's own interval) becomes ``sqrt(se^2 + tau^2)``, ``tau`` the SD of the earlier runs'
estimates (on the log scale for ratios). That SD includes the earlier runs' own within-run noise,
so it overstates the between-run part (a conservative choice: with 3-5 runs an estimate that
subtracts the within-run part is below the truth half the time), and it is scaled by
``t_(k-1) / z`` at the look's level, since ``k`` runs estimate it with ``k - 1`` degrees of
freedom (x1.78 at k = 3, x1.11 at k = 10 for alpha = 0.05). The p-values are re-read on the
normal approximation with that SE, and a verdict only ever weakens (a decisive verdict can become
inconclusive, never the other way). ``se`` is read on each side of the estimate apart (the distance
to the interval's end over the look's z), and a p-value against an edge uses the side that faces it:
an order-statistic interval is asymmetric, and its end is exactly where the run's own test stops
rejecting, so at ``tau = 0`` the widened decision is the run's. An assumed spread (below) scales
with the interval's half-width, which is not directional.

With fewer than :data:`MIN_RUNS` earlier runs there is no spread to read, and the rule is
conservative by declaration: a claim's ``indifference`` margin (in the units of its threshold or
margin; a ratio's relative) moves the edge away from each verdict by that margin (HOLDS must clear
``threshold + indifference``, REFUTED ``threshold - indifference``), otherwise ``tau`` is assumed at
the multiple of ``se`` the rule declares on its hypothesis (:attr:`~._hypothesis.Hypothesis.assumed_spread`):
as large as ``se`` for the two-arm rules, whose arms share a run's load and clock state, and twice
``se`` for the one-sample rules, whose estimate carries them whole. A run that caught only one clock
state cannot see the others: at tau = se, clock states in blocks of 10 samples gave one-sample rules
0.15 false refutations on a first run (one run in five caught only the fast state and sat 2.5 SE below
the long-run median); at 2 se they are within alpha + 2 SE (docs/statistics.md). The reason says
which applied.

Which decisions take it, on which scale and against which edge, is read off the decision's
:class:`~._hypothesis.Hypothesis` alone (a ratio's on the log scale while its interval is positive),
so a rule that declares an assumed spread is widened without this module naming it. The module
knows nothing of the store: it takes the earlier estimates as plain numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import special

from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision, verdict_from

MIN_RUNS = 3  # earlier complete runs needed before their spread is read as tau


@dataclass(frozen=True)
class BetweenRun:
    """What the between-run component added: its source, ``tau`` and the SEs before and after."""

    source: str  # "history", "indifference" or "assumed"
    runs: int
    tau: float
    se: float  # the within-run SE read off the interval's half-width
    indifference: float = 0.0
    spread: float = 0.0  # the between-run SD added (tau, t-scaled where read off earlier runs)

    def widened(self, within: float) -> float:
        """A within-run SE (one side's) with the between-run spread added."""
        return math.hypot(within, self.spread)

    @property
    def total_se(self) -> float:
        """The half-width's SE with the spread added."""
        return self.widened(self.se)


def widen_between_runs(decision: Decision, history: Sequence[float], *, indifference: float | None = None,
                       min_runs: int = MIN_RUNS) -> Decision:
    """``decision`` with its interval widened by the between-run spread of ``history`` (see the module docstring).

    Args:
        decision: a decided (or undecided) decision whose hypothesis declares an assumed between-run
            spread (:attr:`Hypothesis.assumed_spread`); any other comes back unchanged.
        history: the item's estimates (``decision.statistic``) in earlier complete runs on this machine class.
        indifference: the claim's declared margin of indifference, used while history is short.
        min_runs: earlier runs needed before their spread is used.
    """
    hypothesis = decision.hypothesis
    if hypothesis is None or hypothesis.assumed_spread is None or not math.isfinite(decision.statistic):
        return decision
    log = hypothesis.scale == "log" and decision.low > 0
    look_alpha = _look_alpha(decision)
    z = float(special.ndtri(1 - look_alpha))
    to = math.log if log else float
    if not (math.isfinite(decision.low) and math.isfinite(decision.high)):
        return decision  # no interval to widen: it decided nothing that could flip
    if hypothesis.scale == "log" and not log and hypothesis.bound == "within":
        return decision  # a band on the log scale has no linear reading
    estimate, low, high = to(decision.statistic), to(decision.low), to(decision.high)
    below_se, above_se = _sides(estimate, low, high, z)
    component = _component(hypothesis.assumed_spread, history, log, (high - low) / (2 * z), look_alpha,
                           indifference, min_runs)
    shift = 0.0
    if component.source == "indifference":
        shift = math.log1p(component.indifference) if log else component.indifference  # a ratio's margin is relative

    def facing(value: float) -> float:
        """The within-run SE on the side of the estimate that ``value`` lies on."""
        return below_se if value <= estimate else above_se

    def above(value: float) -> tuple[float, float]:
        """The p-value against ``true <= value`` with the SE it was read with."""
        return _above(estimate, value, component.widened(facing(value))), facing(value)

    def below(value: float) -> tuple[float, float]:
        """The p-value against ``true >= value`` with the SE it was read with."""
        return _below(estimate, value, component.widened(facing(value))), facing(value)

    if hypothesis.bound == "within":
        band = math.log1p(hypothesis.edge) if log else hypothesis.edge
        holds = max(above(-(band - shift)), below(band - shift))
        refuted = min(above(band + shift), below(-band - shift))
        refuted = (min(1.0, 2 * refuted[0]), refuted[1])
    else:
        threshold = to(hypothesis.edge)
        holds, refuted = above(threshold + shift), below(threshold - shift)
        if not hypothesis.at_least:
            holds, refuted = below(threshold - shift), above(threshold + shift)
    (p_holds, holds_se), (p_refuted, refuted_se) = holds, refuted
    verdict = verdict_from(p_holds, p_refuted, look_alpha)
    verdict = decision.verdict if verdict is decision.verdict else Verdict.INCONCLUSIVE  # it only ever weakens
    scale = decision.alpha / look_alpha  # the sequential p-values are Bonferroni-scaled to the plan's alpha
    pvalue = max(decision.pvalue, min(1.0, p_refuted * scale))
    hold_pvalue = max(decision.hold_pvalue, min(1.0, p_holds * scale))
    if verdict is Verdict.REFUTED:
        pvalue = min(pvalue, decision.alpha)
    if verdict is Verdict.HOLDS:
        hold_pvalue = min(hold_pvalue, decision.alpha)
    back = math.exp if log else float
    wide_low = back(estimate - z * component.widened(below_se))
    wide_high = back(estimate + z * component.widened(above_se))
    within_se = holds_se if p_holds <= p_refuted else refuted_se  # the side facing the likelier verdict's edge
    edge_se = component.widened(within_se)
    sided = not math.isclose(below_se, above_se, rel_tol=1e-6)
    reason = f"{decision.reason}; {_said(component, log, decision.verdict, verdict, within_se, edge_se, sided)}"
    if component.source != "indifference":
        reason += f": interval with it [{fmt(wide_low)}, {fmt(wide_high)}]"
    needed = None
    if verdict is Verdict.INCONCLUSIVE:
        needed = _needed(decision, component, min(max(p_holds, 0.0), max(p_refuted, 0.0)), within_se, edge_se, z)
        stop = (decision.details.get("sequential") or {}).get("futility") or {}
        if not stop.get("between_runs", 1.0) > 1:  # a futility stop on this component already named the n
            reason += f"; {needed[1]}"
    record = {"source": component.source, "runs": component.runs, "tau": component.tau, "se": component.se,
              "total_se": component.total_se, "se_below": below_se, "se_above": above_se,
              "indifference": component.indifference, "log_scale": log,
              "verdict_within_run": decision.verdict.value}
    if needed is not None:
        record["needed_n"] = needed[0]
    if component.source != "indifference":
        low_out, high_out = min(decision.low, wide_low), max(decision.high, wide_high)
    else:
        low_out, high_out = decision.low, decision.high
    return replace(decision, verdict=verdict, reason=reason, pvalue=pvalue, hold_pvalue=hold_pvalue,
                   low=low_out, high=high_out, details={**decision.details, "between_run": record}, _interval_at=None)


def _component(assumed: float, history: Sequence[float], log: bool, se: float, look_alpha: float,
               indifference: float | None, min_runs: int) -> BetweenRun:
    """Which between-run rule applies (earlier runs, a declared indifference, the assumed spread) and its SE.

    ``history`` are the earlier runs' estimates as recorded; those that cannot be read on the decision's
    scale (not finite, or not positive on the log scale) are left out, here only, so the adjudication and
    the futility stop count the same runs.
    """
    past = [math.log(v) if log else float(v) for v in history if math.isfinite(v) and (v > 0 or not log)]
    if len(past) >= min_runs:
        tau = float(np.std(past, ddof=1))
        from scipy import stats  # slow to import; only a history needs it

        # tau from k runs is itself uncertain: scaled by t_(k-1) / z at the look's level, as a t interval would be
        spread = tau * float(stats.t.ppf(1 - look_alpha, len(past) - 1)) / float(special.ndtri(1 - look_alpha))
        return BetweenRun("history", len(past), tau, se, spread=spread)
    if indifference is not None and indifference > 0:
        return BetweenRun("indifference", len(past), 0.0, se, indifference)
    return BetweenRun("assumed", len(past), assumed * se, se, spread=assumed * se)


def spread_ratio(decision: Decision, z: float, level: float, *, history: Sequence[float] = (),
                 indifference: float | None = None, min_runs: int = MIN_RUNS) -> Callable[[float], float]:
    """How much wider the between-run component makes ``decision``'s SE, by how far its within-run SE has shrunk.

    For the sequential loop to read where an undecided look is heading as the item will be
    adjudicated (:class:`claimcheck.stats.Adaptation`): called with ``shrink`` (a later look's
    within-run SE over this look's), the returned function gives how many times the plain critical z a
    later look must reach within the run. An assumed spread scales with the SE (a constant ratio); a
    spread read off earlier runs does not, so the ratio grows as the within-run SE shrinks, without
    bound. The SE and the spread are read once: the SE off the look's interval on the side facing the
    edge (as :func:`widen_between_runs` reads it), or, where that is
    unbounded (a sign test at an early look's small level), off the distance to the likelier edge over
    its z (``z``). The ratio is 1.0 where :func:`widen_between_runs` leaves the decision alone, where a
    declared indifference applies (it moves the edge instead of widening), or where no SE can be read.
    ``level``: the last look's nominal level.
    """
    hypothesis = decision.hypothesis
    if (hypothesis is None or hypothesis.assumed_spread is None or hypothesis.ordered
            or not math.isfinite(decision.statistic)):
        return _unwidened
    log = hypothesis.scale == "log" and decision.statistic > 0
    if hypothesis.scale == "log" and not log:
        return _unwidened
    to = math.log if log else float
    estimate = to(decision.statistic)
    if hypothesis.bound == "within":
        band = math.log1p(hypothesis.edge) if log else hypothesis.edge
        edge = band if estimate >= 0 else -band  # the nearer end of the band
    else:
        edge = to(hypothesis.edge)
    if math.isfinite(decision.low) and math.isfinite(decision.high) and (decision.low > 0 or not log):
        look_z = float(special.ndtri(1 - _look_alpha(decision)))
        low, high = to(decision.low), to(decision.high)
        se = (high - low) / (2 * look_z)
        below, above = _sides(estimate, low, high, look_z)
        side = below if edge <= estimate else above  # as widen_between_runs reads it
        within = side if side > 0 else se
    else:
        distance = abs(estimate - edge)
        se = within = distance / z if z > 0 and math.isfinite(z) else math.nan
    if not (se > 0 and math.isfinite(se)):
        return _unwidened
    component = _component(hypothesis.assumed_spread, history, log, se, level, indifference, min_runs)
    if component.source == "indifference":
        return _unwidened
    if component.source == "assumed":
        ratio = component.widened(within) / within  # the assumed spread shrinks with the within-run SE
        return lambda shrink: ratio
    spread = component.spread  # read off earlier runs: fixed whatever the within-run SE
    return lambda shrink: math.hypot(within * shrink, spread) / (within * shrink)


def _sides(estimate: float, low: float, high: float, z: float) -> tuple[float, float]:
    """The within-run SE below and above the estimate: each end's distance over the look's ``z`` (none past it)."""
    return max(estimate - low, 0.0) / z, max(high - estimate, 0.0) / z


def _unwidened(shrink: float) -> float:
    """The ratio where the between-run component does not widen the SE."""
    return 1.0


def _said(component: BetweenRun, log: bool, before: Verdict, after: Verdict, within_se: float,
          edge_se: float, sided: bool) -> str:
    """The reason's clause: which between-run rule applied and what it did (``sided``: the interval is asymmetric)."""
    unit = " (log scale)" if log else ""
    side = " on the side facing the edge" if sided else ""
    if component.source == "history":
        what = (f"between-run spread of {component.runs} earlier runs on this machine class tau = "
                f"{fmt(component.tau)}{unit}, SE sqrt(se^2 + tau^2) = {fmt(edge_se)}{side}")
    elif component.source == "indifference":
        what = (f"fewer than {MIN_RUNS} earlier runs on this machine class ({component.runs}): the declared "
                f"indifference margin {fmt(component.indifference)} must be cleared")
    else:
        times = component.tau / component.se if component.se > 0 else 1.0
        size = "as large as the within-run SE" if times == 1.0 else f"{fmt(times)} times the within-run SE"
        what = (f"fewer than {MIN_RUNS} earlier runs on this machine class ({component.runs}) and no declared "
                f"indifference margin: a between-run spread {size} assumed "
                f"(SE {fmt(within_se)} -> {fmt(edge_se)}{unit}{side})")
    if before is not after:
        what += f"; would have been {before.value} within the run alone"
    return what


def _needed(decision: Decision, component: BetweenRun, p_likelier: float, within_se: float, edge_se: float,
            z: float) -> tuple[int | None, str]:
    """The n (per group; rounds when paired) at which the widened interval would decide at this estimate.

    The within-run SE (``within_se``, the side facing the likelier verdict's edge; ``edge_se`` with the
    spread) falls as ``1 / sqrt(n)``; an assumed spread falls with it, a spread read off earlier runs
    does not, so past some distance to the edge no n in one run decides.
    """
    count = (decision.details.get("sequential") or {}).get("count")
    hypothesis = decision.hypothesis
    what = "rounds" if hypothesis is not None and hypothesis.paired else (
        "samples" if decision.rule in ("at_least", "at_most") else "per group")
    distance = float(special.ndtri(1 - p_likelier)) * edge_se  # to the likelier edge
    if not isinstance(count, int) or count < 2 or not distance > 0 or within_se <= 0:
        return None, "no n would decide with the between-run spread: the estimate sits on the edge"
    fixed = component.spread ** 2 if component.source == "history" else 0.0
    room = (distance / z) ** 2 - fixed  # what the within-run variance may be at the n that decides
    if room <= 0:
        return None, ("no n in one run would decide: the between-run spread alone is wider than the estimate's "
                      "distance to the edge")
    share = room / edge_se ** 2 if component.source != "history" else room / within_se ** 2
    needed = max(count, math.ceil(count / share - 1e-9))
    return needed, f"with it, about {needed:,} {what} would decide at this estimate"


def _look_alpha(decision: Decision) -> float:
    """The nominal level of the look that decided (the interval's one-sided level)."""
    looks = decision.details.get("sequential") or {}
    alphas = looks.get("alpha_per_look") or []
    return float(alphas[-1]) if alphas else decision.alpha


def _above(estimate: float, value: float, se: float) -> float:
    """p-value against ``true <= value`` on the normal approximation."""
    return float(special.ndtr(-(estimate - value) / se)) if se > 0 else float(estimate <= value)


def _below(estimate: float, value: float, se: float) -> float:
    """p-value against ``true >= value``."""
    return float(special.ndtr(-(value - estimate) / se)) if se > 0 else float(estimate >= value)
