"""Sequential sampling: look at the data a few times and stop as soon as the rule decides.

Re-testing after every batch at the full alpha inflates false verdicts (with 4 looks, up to
~2.5x). A :class:`SequentialPlan` instead *spends* alpha over its looks with a Lan–DeMets
spending function ``f(t)`` of the information fraction ``t = n_k / n_max``: look k runs the
rule at ``alpha_k = f(t_k) - f(t_{k-1})``, and ``sum_k alpha_k = alpha``.

Guarantee: a true claim is refuted only if some look refutes it, so by the union bound
``P(false refutation) <= sum_k alpha_k = alpha``; the same holds for a false claim reported as
HOLDS. The union bound needs no model of how looks depend on each other, so it stays valid
for t, sign-test, binomial and bootstrap rules alike, for looks at unplanned sizes, and when
a run stops early for time (unspent alpha is simply lost). It is conservative: actual error
rates sit below alpha.

Spending functions (``spending``):
    "pocock" (default): ``alpha * ln(1 + (e - 1) t)``. Spends early, so a clear claim stops
        at the first looks; costs a stricter final look.
    "obf": O'Brien–Fleming type ``2 - 2 Phi(z_{1-alpha/2} / sqrt(t))``. Almost nothing early,
        nearly full alpha at the end; best when claims sit close to their thresholds.

Sequential p-value: ``p_seq = min_k p_k * alpha / alpha_k`` (capped at 1), a Bonferroni over
the looks taken. ``P(p_seq <= u) <= sum_k u alpha_k / alpha = u``, so it is a valid p-value
for suite-level multiplicity, and ``p_seq <= alpha`` exactly when some look refuted.
Rules whose ``spends_alpha`` is False (``exact``, ``zero_rate``) use the full
alpha at every look: their errors cannot grow with looking.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from scipy import special

from claimcheck.verdict import Verdict

from ._decision import Decision, check_alpha

Spending = Literal["pocock", "obf"]
Draw = Callable[[int], Sequence[tuple[str, Sequence[float]]]]
DecideLook = Callable[[Sequence[tuple[str, Any]], float], Decision]


def spent(t: float, alpha: float, spending: Spending) -> float:
    """Cumulative alpha spent by information fraction ``t`` in [0, 1]."""
    if t <= 0:
        return 0.0
    if spending == "pocock":
        return alpha * math.log1p((math.e - 1) * min(t, 1.0))
    return float(2 * special.ndtr(-special.ndtri(1 - alpha / 2) / math.sqrt(min(t, 1.0))))


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
    spending: Spending = "pocock"
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
        if self.spending not in ("pocock", "obf"):
            raise ValueError(f"`spending` must be 'pocock' or 'obf'; got {self.spending!r}")
        lo, hi, k = self.min_samples, self.max_samples, self.looks
        sizes = (hi,) if k == 1 else tuple(sorted({math.ceil(lo + (hi - lo) * i / (k - 1) - 1e-9) for i in range(k)}))
        cumulative = [spent(n / hi, self.alpha, self.spending) for n in sizes[:-1]] + [self.alpha]
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "alphas", tuple(b - a for a, b in zip([0.0, *cumulative], cumulative)))

    @classmethod
    def from_budget(cls, budget: Any, alpha: float = 0.05, spending: Spending = "pocock") -> SequentialPlan:
        """Plan from a ``claimcheck.claim.Budget`` (reads ``min_samples``, ``max_samples``, ``looks``)."""
        return cls(alpha, budget.min_samples, budget.max_samples, budget.looks, spending)

    def alpha_for(self, look: int) -> float:
        """Alpha of look ``look`` (0-based)."""
        if not 0 <= look < len(self.alphas):
            raise IndexError(f"look {look} is outside this plan's {len(self.alphas)} looks")
        return self.alphas[look]


def sequential_pvalue(pvalues: Sequence[float], alphas: Sequence[float], alpha: float) -> float:
    """Bonferroni over looks: ``min_k p_k * alpha / alpha_k``, capped at 1."""
    return min(1.0, min(p * alpha / a for p, a in zip(pvalues, alphas)))


def run_sequential(draw: Draw, decide_look: DecideLook, plan: SequentialPlan, *, spends_alpha: bool = True) -> Decision:
    """Sample in looks until ``rule`` decides or the plan ends; return the final decision.

    Args:
        draw: ``draw(k)`` returns ``[(label, k more samples), ...]`` for every group, in the
            rule's group order. It may return fewer (a deterministic probe returns one value,
            a timed-out probe nothing): an empty draw ends sampling with the last decision.
        decide_look: ``decide_look(groups, alpha_k)`` decides one look (a rule bound to its check).
        spends_alpha: False for rules whose errors cannot grow with looking (each look uses all of alpha).

    Returns:
        The last look's decision with ``pvalue`` replaced by the sequential p-value, ``alpha``
        by the plan's overall alpha, and ``details["sequential"]`` recording the looks.
    """
    collected: dict[str, list[np.ndarray]] = {}
    alphas, pvalues = [], []
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
        alpha_k = plan.alpha_for(look) if spends_alpha else plan.alpha
        groups = [(label, np.concatenate(parts)) for label, parts in collected.items()]
        decision = decide_look(groups, alpha_k)
        alphas.append(alpha_k)
        pvalues.append(decision.pvalue)
        if decision.verdict is not Verdict.INCONCLUSIVE:
            stopped = "decided"
            break
    assert decision is not None
    pvalue = sequential_pvalue(pvalues, alphas, plan.alpha) if spends_alpha else decision.pvalue
    record = {
        "look": len(alphas), "looks": len(plan.sizes), "sizes": list(plan.sizes), "spending": plan.spending,
        "alpha_per_look": alphas, "pvalue_per_look": pvalues, "stopped": stopped,
    }
    return replace(decision, pvalue=pvalue, alpha=plan.alpha, details={**decision.details, "sequential": record})


def _floats(label: str, samples: Sequence[float]) -> np.ndarray:
    try:
        return np.asarray(samples, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"group {str(label)!r}: samples must be numbers") from None
