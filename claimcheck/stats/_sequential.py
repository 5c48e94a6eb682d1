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

Sequential p-values (``pvalue`` for refuted, ``hold_pvalue`` for holds): under ``union``,
``min_k p_k * alpha / alpha_k`` (a Bonferroni over the looks taken, ``P(p_seq <= u) <= u``);
under an exact boundary, the smallest overall level whose boundary the looks crossed
(:func:`~._boundaries.repeated_pvalue`). Either way ``p_seq <= alpha`` exactly when some look
decided that way, so the family correction can adjust both.

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
from ._decision import Decision, check_alpha
from ._spending import SPENDINGS, Spending, spent

Boundary = Literal["normal", "t", "sign", "union", "none"]
Draw = Callable[[int], Sequence[tuple[str, Sequence[float]]]]
DecideLook = Callable[[Sequence[tuple[str, Any]], float], Decision]
Gate = Callable[[Sequence[tuple[str, np.ndarray]], Decision], "str | None"]


_FLOOR = 1e-12  # a sign test at n <= 39 cannot reach it: such a look decides nothing


@dataclass(frozen=True)
class SequentialPlan:
    """Cumulative sample sizes of the looks and the alpha each look may spend.

    Looks are evenly spaced from ``min_samples`` to ``max_samples`` (per group); ``sizes`` and
    ``alphas`` are computed once, at construction.
    """

    alpha: float = 0.05
    min_samples: int = 10
    max_samples: int = 200
    looks: int = 4
    spending: Spending = "linear"
    sizes: tuple[int, ...] = field(init=False)
    alphas: tuple[float, ...] = field(init=False)

    def __post_init__(self) -> None:
        check_alpha(self.alpha)
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
                   gate: Gate | None = None, window: bool = False) -> Decision:
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

    Returns:
        The last look's decision with ``pvalue`` and ``hold_pvalue`` replaced by their sequential
        p-values, ``alpha`` by the plan's overall alpha, the interval relabelled as a repeated
        confidence interval, and ``details["sequential"]`` recording the looks.
    """
    if window:
        return run_window(draw, decide_look, plan, gate=gate)
    collected: dict[str, list[np.ndarray]] = {}
    alphas: list[float] = []
    pvalues: list[float] = []
    hold_pvalues: list[float] = []
    gated: list[str | None] = []
    exact = boundary in ("normal", "t", "sign")
    nominal = plan.levels(boundary) if exact else plan.alphas
    decision, stopped = None, "max_samples"
    for look, size in enumerate(plan.sizes):
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
        count = min(len(x) for _, x in groups)
        if boundary == "none":
            alpha_k = plan.alpha
        elif exact and count == size:
            alpha_k = nominal[look]
        else:
            exact = exact and count == size
            alpha_k = plan.alphas[look]
        alpha_k = max(alpha_k, _FLOOR)  # a look that may not spend anything still reports an interval
        decision = decide_look(groups, alpha_k)
        alphas.append(alpha_k)
        pvalues.append(decision.pvalue)
        hold_pvalues.append(decision.hold_pvalue)
        problem = gate(groups, decision) if gate is not None else None
        gated.append(problem)
        if decision.verdict is not Verdict.INCONCLUSIVE:
            if problem is None or look == len(plan.sizes) - 1:
                stopped = "decided"
                break
    assert decision is not None
    if boundary == "none":
        pvalue, hold_pvalue = decision.pvalue, decision.hold_pvalue
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
        "pvalue_per_look": pvalues, "hold_pvalue_per_look": hold_pvalues, "stopped": stopped,
    }
    if gate is not None:
        record["gate_per_look"] = gated
    details = {**decision.details, "sequential": record}
    if gated and gated[-1] is not None:
        details["noise_gate"] = gated[-1]
    changes: dict[str, Any] = {"pvalue": pvalue, "hold_pvalue": hold_pvalue, "alpha": plan.alpha, "details": details}
    if boundary != "none" and 0 < decision.confidence_level < 1 and alphas[-1] > 0:
        simultaneous = 1 - (1 - decision.confidence_level) * plan.alpha / alphas[-1]
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
    decision = decide_look(groups, plan.alpha)
    problem = gate(groups, decision) if gate is not None else None
    record: dict[str, Any] = {
        "look": 1, "looks": 1, "draws": taken, "sizes": list(plan.sizes), "spending": plan.spending,
        "boundary": "window", "alpha_per_look": [plan.alpha], "pvalue_per_look": [decision.pvalue],
        "hold_pvalue_per_look": [decision.hold_pvalue], "stopped": stopped,
    }
    if gate is not None:
        record["gate_per_look"] = [problem]
    details = {**decision.details, "sequential": record}
    if problem is not None:
        details["noise_gate"] = problem
    return replace(decision, details=details)


def _floats(label: str, samples: Sequence[float]) -> np.ndarray:
    try:
        return np.asarray(samples, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"group {str(label)!r}: samples must be numbers") from None
