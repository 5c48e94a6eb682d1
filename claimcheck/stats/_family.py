"""Suite-level multiplicity: a run checks many claims, so some will look decided by chance.

Two families are tested, each over the same members with the same weights:

- the *refutation* family (each member's ``pvalue``): a refutation survives only if Holm
  rejects it, so P(any true claim refuted) <= alpha;
- the *hold* family (each member's ``hold_pvalue``): a hold survives only if Holm rejects the
  claim's negation, so P(any false claim held) <= alpha. For a docs gate this is the harmful
  error: a figure marked "holds" that is not true.

A member that did not produce a decision (not run, errored, out of budget) counts with p = 1,
so the family's size is fixed by the suite, not by what ran. Members with different alphas get
weights ``alpha_i / family_alpha`` (weighted Holm, Holm 1979), and the family's level is the mean
of its members' alphas: the first step then tests member i at ``alpha_i / m``, its own alpha
shared among the m members, whatever the others' alphas, so a lax member cannot loosen the
others (with the largest alpha as the level, one member at 0.25 among 40 at 0.05 tested each of
them at 0.0056 instead of 0.0012). The guarantee is P(any false verdict) <= the mean alpha, each way. Holm holds for any
dependence between claims. Benjamini–Hochberg (``"bh"``) controls the expected share of wrong
decisions instead (for independent or positively dependent p-values), on ``p / weight``.
Deterministic decisions (``exact``, an observed event for ``zero_rate``) carry p = 0 and
always survive.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision

Method = Literal["holm", "bh", "none"]
_NAMES = {"holm": "Holm", "bh": "Benjamini–Hochberg", "none": "no adjustment"}


class FamilyAdjustment(NamedTuple):
    """Adjusted verdict of one claim, its adjusted p-value, and why it changed (None if it did not)."""

    verdict: Verdict
    pvalue: float
    reason: str | None


def _clean(pvalues: Sequence[float | None]) -> np.ndarray:
    return np.array([1.0 if v is None or not math.isfinite(v) else min(1.0, max(0.0, v)) for v in pvalues],
                    dtype=float)


def adjust_pvalues(pvalues: Sequence[float], method: Method = "holm",
                   weights: Sequence[float] | None = None) -> np.ndarray:
    """Adjusted p-values (missing/NaN count as 1), rejected where ``<= alpha``.

    Args:
        pvalues: one per member.
        method: ``holm`` (step-down), ``bh`` (via ``scipy.stats.false_discovery_control``) or ``none``.
        weights: each member's share, ``alpha_i / family_alpha`` (default 1 each: plain Holm or BH).
            Weighted Holm orders members by ``p / w`` and multiplies by the weight still in the
            family, never by less than 1, so a member is never tested above ``w * alpha``.
    """
    if method not in _NAMES:
        raise ValueError(f"`method` must be one of {', '.join(map(repr, _NAMES))}; got {method!r}")
    p = _clean(pvalues)
    w = np.ones(p.size) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != p.shape or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"`weights` must be one positive number per p-value; got {list(w)}")
    if p.size == 0 or method == "none":
        return p
    q = p / w
    if method == "bh":
        from scipy import stats  # scipy.stats takes seconds to import; keep `import claimcheck.stats` light

        return np.asarray(stats.false_discovery_control(np.minimum(1.0, q * w.mean()), method="bh"))
    order = np.argsort(q, kind="stable")
    remaining = np.cumsum(w[order][::-1])[::-1]  # weight of the members not yet rejected at each step
    stepped = np.maximum.accumulate(np.minimum(1.0, q[order] * np.maximum(1.0, remaining)))
    adjusted = np.empty(p.size)
    adjusted[order] = stepped
    return adjusted


def family_adjustment(
    decisions: Sequence[Decision], method: Method = "holm", alpha: float = 0.05
) -> list[FamilyAdjustment]:
    """Adjust the refutations of a run together; the decisions themselves are not modified.

    One-sided on purpose (only refutations): :func:`two_sided_family` is what a run applies.
    """
    adjusted = adjust_pvalues([d.pvalue for d in decisions], method)
    out = []
    for d, p in zip(decisions, adjusted):
        if d.verdict is Verdict.REFUTED and p > alpha:
            why = f"refutation does not survive {_NAMES[method]} over {len(decisions)} claims (adjusted p = {fmt(p)})"
            out.append(FamilyAdjustment(Verdict.INCONCLUSIVE, float(p), why))
        else:
            out.append(FamilyAdjustment(d.verdict, float(p), None))
    return out


def adjust_family(decisions: Sequence[Decision], method: Method = "holm", alpha: float = 0.05) -> list[Verdict]:
    """Verdicts after the refutation-only adjustment, in the order of ``decisions``."""
    return [a.verdict for a in family_adjustment(decisions, method, alpha)]


@dataclass(frozen=True)
class FamilyMember:
    """One member of a run's family as the adjustment sees it.

    Attributes:
        verdict: the member's verdict going in (only HOLDS and REFUTED can be rejected).
        pvalue, hold_pvalue: its refutation and hold p-values (1 for a member with no decision).
        alpha: the error rate its claim was decided at; sets its weight.
    """

    verdict: Verdict
    pvalue: float
    hold_pvalue: float
    alpha: float

    @classmethod
    def absent(cls, alpha: float) -> FamilyMember:
        """A member of the suite that produced no decision in this run: it counts at p = 1."""
        return cls(Verdict.INCONCLUSIVE, 1.0, 1.0, alpha)


class FamilyVerdict(NamedTuple):
    """A member's verdict after the family, with the adjusted p-value of the test behind it.

    ``pvalue`` is the adjusted refutation p-value for a member that came in refuted, the
    adjusted hold p-value for one that came in holding, and 1 otherwise (nothing was tested).
    """

    verdict: Verdict
    pvalue: float
    survived: bool


def family_alpha(alphas: Sequence[float]) -> float:
    """The family's level when none is given: the mean of its members' alphas (see the module docstring)."""
    return float(np.mean(alphas)) if len(alphas) else 0.05


def samples_to_survive(n: int, pvalue: float, adjusted: float, level: float) -> int | None:
    """About how many samples would let a decision that did not survive the family survive it.

    The member survives when its own p-value reaches ``pvalue * level / adjusted`` (the family's
    multiplier is fixed by the others). At the effect it measured, its z statistic grows with
    ``sqrt(n)``, so it needs ``n * (z_needed / z_now)**2``: an estimate at the measured effect,
    the n a user can plan the budget with. None when the measured p-value shows no effect.
    """
    if not (0 < pvalue < 0.5 and adjusted > level > 0 and n >= 1):
        return None
    from scipy import special

    needed = pvalue * level / adjusted
    z_now, z_needed = float(special.ndtri(1 - pvalue)), float(special.ndtri(1 - needed))
    return max(n + 1, math.ceil(n * (z_needed / z_now) ** 2))


def two_sided_family(members: Sequence[FamilyMember], method: Method = "holm",
                     alpha: float | None = None) -> list[FamilyVerdict]:
    """Adjust refutations and holds of one family; each survives only if its own family rejects it.

    Args:
        members: every member of the family (absent ones included, see :meth:`FamilyMember.absent`).
        method: ``holm``, ``bh`` or ``none``.
        alpha: the family's level (default :func:`family_alpha` of the members' alphas).

    Returns:
        One :class:`FamilyVerdict` per member, in order: a refutation or hold that does not
        survive becomes INCONCLUSIVE; every other verdict passes through.
    """
    level = family_alpha([m.alpha for m in members]) if alpha is None else alpha
    if not members:
        return []
    weights = [m.alpha / level for m in members]
    refuted = adjust_pvalues([m.pvalue if m.verdict is Verdict.REFUTED else 1.0 for m in members], method, weights)
    held = adjust_pvalues([m.hold_pvalue if m.verdict is Verdict.HOLDS else 1.0 for m in members], method, weights)
    out = []
    for member, p_refuted, p_held in zip(members, refuted, held):
        if method == "none":
            p_refuted, p_held = member.pvalue, member.hold_pvalue
            cut = member.alpha
        else:
            cut = level
        if member.verdict is Verdict.REFUTED:
            survived = bool(p_refuted <= cut)
            out.append(FamilyVerdict(member.verdict if survived else Verdict.INCONCLUSIVE, float(p_refuted), survived))
        elif member.verdict is Verdict.HOLDS:
            survived = bool(p_held <= cut)
            out.append(FamilyVerdict(member.verdict if survived else Verdict.INCONCLUSIVE, float(p_held), survived))
        else:
            out.append(FamilyVerdict(member.verdict, 1.0, False))
    return out
