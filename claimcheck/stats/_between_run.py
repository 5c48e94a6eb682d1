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
inconclusive, never the other way).

With fewer than :data:`MIN_RUNS` earlier runs there is no spread to read, and the rule is
conservative by declaration: a claim's ``indifference`` margin (in the units of its threshold or
margin; a ratio's relative) moves the edge away from each verdict by that margin (HOLDS must clear
``threshold + indifference``, REFUTED ``threshold - indifference``), otherwise ``tau`` is assumed:
as large as ``se`` for the paired rules, whose rounds share a run's load and clock state, and twice
``se`` for the one-sample rules, whose estimate carries them whole. A run that caught only one clock
state cannot see the others: at tau = se, clock states in blocks of 10 samples gave one-sample rules
0.15 false refutations on a first run (one run in five caught only the fast state and sat 2.5 SE below
the long-run median); at 2 se they are within alpha + 2 SE (docs/statistics.md). The reason says
which applied.

The module knows nothing of the store: it takes the earlier estimates as plain numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import special

from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision, verdict_from

# tau on a first run, in within-run SEs: a one-sample timing rule sees the run's load and clock state in
# full (clock states in blocks of 10 samples put a first run's median 2.5 SE off in a fifth of runs), a
# paired rule's rounds share them and the contrast cancels most of it (see the module docstring)
ASSUMED_SPREAD = {"at_least": 2.0, "at_most": 2.0, "ratio": 1.0, "equivalent": 1.0}
MIN_RUNS = 3  # earlier complete runs needed before their spread is read as tau
RULES = ("at_least", "at_most", "ratio", "equivalent")


@dataclass(frozen=True)
class BetweenRun:
    """What the between-run component added: its source, ``tau`` and the SEs before and after."""

    source: str  # "history", "indifference" or "assumed"
    runs: int
    tau: float
    se: float
    total_se: float
    indifference: float = 0.0


def widen_between_runs(decision: Decision, history: Sequence[float], *, indifference: float | None = None,
                       min_runs: int = MIN_RUNS) -> Decision:
    """``decision`` with its interval widened by the between-run spread of ``history`` (see the module docstring).

    Args:
        decision: a decided (or undecided) timing decision of ``at_least``, ``at_most``, ``ratio`` or
            ``equivalent``; any other comes back unchanged.
        history: the item's estimates (``decision.statistic``) in earlier complete runs on this machine class.
        indifference: the claim's declared margin of indifference, used while history is short.
        min_runs: earlier runs needed before their spread is used.
    """
    if decision.rule not in RULES or not math.isfinite(decision.statistic):
        return decision
    details = decision.details
    log = _log_scale(decision)
    look_alpha = _look_alpha(decision)
    z = float(special.ndtri(1 - look_alpha))
    to = math.log if log else float
    if not (math.isfinite(decision.low) and math.isfinite(decision.high)) or (log and decision.low <= 0):
        return decision  # no interval to widen: it decided nothing that could flip
    estimate, low, high = to(decision.statistic), to(decision.low), to(decision.high)
    se = (high - low) / (2 * z)
    past = [to(v) for v in history if math.isfinite(v) and (v > 0 or not log)]
    shift = 0.0
    if len(past) >= min_runs:
        tau = float(np.std(past, ddof=1))
        from scipy import stats  # slow to import; only a history needs it

        # tau from k runs is itself uncertain: scaled by t_(k-1) / z at the look's level, as a t interval would be
        spread = tau * float(stats.t.ppf(1 - look_alpha, len(past) - 1)) / z
        component = BetweenRun("history", len(past), tau, se, math.hypot(se, spread))
    elif indifference is not None and indifference > 0:
        shift = math.log1p(indifference) if log and decision.rule == "ratio" else indifference
        component = BetweenRun("indifference", len(past), 0.0, se, se, indifference)
    else:
        tau = ASSUMED_SPREAD[decision.rule] * se
        component = BetweenRun("assumed", len(past), tau, se, math.hypot(se, tau))
    total = component.total_se
    if decision.rule == "equivalent":
        band = math.log1p(float(details["margin"])) if details.get("scale") == "log-ratio" else float(details["margin"])
        if details.get("scale") == "log-ratio" and component.source == "indifference":
            shift = math.log1p(indifference or 0.0)
        p_holds = max(_above(estimate, -(band - shift), total), _below(estimate, band - shift, total))
        p_refuted = min(1.0, 2 * min(_above(estimate, band + shift, total), _below(estimate, -band - shift, total)))
    else:
        threshold = to(float(details["threshold"]))
        at_least = decision.rule == "at_least" or details.get("bound") == "at_least"
        above, below = _above(estimate, threshold + shift, total), _below(estimate, threshold - shift, total)
        p_holds, p_refuted = (above, below) if at_least else (below, above)
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
    wide_low, wide_high = back(estimate - z * total), back(estimate + z * total)
    reason = f"{decision.reason}; {_said(component, log, decision.verdict, verdict)}"
    if component.source != "indifference":
        reason += f": interval with it [{fmt(wide_low)}, {fmt(wide_high)}]"
    record = {"source": component.source, "runs": component.runs, "tau": component.tau, "se": component.se,
              "total_se": total, "indifference": component.indifference, "log_scale": log,
              "verdict_within_run": decision.verdict.value}
    if component.source != "indifference":
        low_out, high_out = min(decision.low, wide_low), max(decision.high, wide_high)
    else:
        low_out, high_out = decision.low, decision.high
    return replace(decision, verdict=verdict, reason=reason, pvalue=pvalue, hold_pvalue=hold_pvalue,
                   low=low_out, high=high_out, details={**details, "between_run": record}, _interval_at=None)


def _said(component: BetweenRun, log: bool, before: Verdict, after: Verdict) -> str:
    """The reason's clause: which between-run rule applied and what it did."""
    unit = " (log scale)" if log else ""
    if component.source == "history":
        what = (f"between-run spread of {component.runs} earlier runs on this machine class tau = "
                f"{fmt(component.tau)}{unit}, SE sqrt(se^2 + tau^2) = {fmt(component.total_se)}")
    elif component.source == "indifference":
        what = (f"fewer than {MIN_RUNS} earlier runs on this machine class ({component.runs}): the declared "
                f"indifference margin {fmt(component.indifference)} must be cleared")
    else:
        times = component.tau / component.se if component.se > 0 else 1.0
        size = "as large as the within-run SE" if times == 1.0 else f"{fmt(times)} times the within-run SE"
        what = (f"fewer than {MIN_RUNS} earlier runs on this machine class ({component.runs}) and no declared "
                f"indifference margin: a between-run spread {size} assumed "
                f"(SE {fmt(component.se)} -> {fmt(component.total_se)}{unit})")
    if before is not after:
        what += f"; would have been {before.value} within the run alone"
    return what


def _log_scale(decision: Decision) -> bool:
    """Whether the decision's estimate lives on a ratio scale (read and widened as a log)."""
    if decision.rule == "ratio":
        return decision.low > 0
    return decision.rule == "equivalent" and decision.details.get("scale") == "log-ratio"


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
