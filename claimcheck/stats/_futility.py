"""Where an undecided look is heading: a non-binding futility stop, a promising-zone extension, the n that decides.

A look that decides nothing reads its two p-values (refuted, holds) as z scores, ``z = Phi^-1(1 - p)``,
and takes the likelier verdict's. Under the current trend (the estimate stays where it is) the
B-value ``z sqrt(t)`` drifts linearly in the information fraction ``t = n / N``, so the chance that
the planned last look ``N`` crosses its critical value ``c`` is the conditional power
``Phi((z / sqrt(t) - c) / sqrt(1 - t))`` (Lan & Wittes 1988). The same trend puts the n that
decides at ``n (c / z)^2``; none does when ``z <= 0`` (the estimate sits on the edge).

- **Futility** (:data:`FUTILITY_POWER`): a look before the last whose conditional power is below
  it stops, inconclusive. The stop is non-binding: no boundary or p-value changes, a look that
  stops only gives up verdicts it might have reached, so both error rates can only fall. In a
  normal-theory model of looks 8/19/30 it costs 0.009-0.014 of power (0.829 -> 0.815 at an
  83%-power effect) and cuts the samples of a claim on its edge from 29.0 to 24.1
  (``tests/simulation/adaptive_table.py``, ``threshold_lines``; 0.05 would cost 0.05).
- **Read as adjudicated** (:attr:`Adaptation.inflation`): a timing item is decided once more after the
  loop, with the between-run component (:func:`._between_run.widen_between_runs`), so the last look's
  verdict survives only if its within-run z clears ``c`` times the factor that component widens the SE
  by at that n (constant for an assumed spread; growing with n for one read off earlier runs). The
  futility stop reads the conditional power against that critical value, with its own threshold
  (:data:`SPREAD_FUTILITY_POWER`, lower: measured, 0.02 there cost up to 0.05 of power with 3 earlier
  runs), and stops there also a look decisive within the run that the component would undo. Still
  non-binding. The extension keeps the within-run reading (gated on this one it cost up to 0.03).
- **Extension** (:data:`PROMISING_POWER` to :data:`TARGET_POWER`): at the look before the last, a
  conditional power in the promising zone moves the last look out to the n that reaches the target
  power, at most :data:`EXTENSION_FACTOR` times the planned last look and never beyond what the
  time budget still allows. The last look keeps its planned critical value and the pooled
  statistic (Chen, DeMets & Lan 2004: raising n only where the conditional power under the current
  trend is at least 0.5 does not inflate the one-sided type I error), so an item that does not
  extend keeps its boundaries, p-values and interval exactly, and an extended one reports the
  interval of all its samples. Deciding to extend at the last look itself would need alpha held
  back from every plan (the spending function gives it all out by the last look); a weighted
  (Cui–Hung–Wang) statistic keeps alpha exactly but decides on a figure that differs from the
  estimate the reason reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from scipy import special, stats

from claimcheck.verdict import Verdict

from ._decision import Decision

FUTILITY_POWER = 0.02  # stop a look before the last whose chance of a verdict by the last look is below this
SPREAD_FUTILITY_POWER = 0.005  # ... the same, where that chance counts the between-run component (it costs more power)
PROMISING_POWER = 0.5  # extend only from here (Chen-DeMets-Lan: no inflation of the type I error)
TARGET_POWER = 0.8  # ... to the n whose conditional power reaches this
EXTENSION_FACTOR = 2.0  # the last look moves out at most this many times its planned size


@dataclass(frozen=True)
class Adaptation:
    """The futility stop and the extension a sequential run may take, and the room its time budget leaves.

    ``room()`` returns how many more samples per group the time budget still allows at the rate
    measured so far (None: no time limit beyond ``factor``). ``futility = 0`` and ``factor = 1``
    turn the two off. ``between_runs`` re-reads a look's decision as the item will be adjudicated
    (the between-run component of a timing item): a look decisive within the run that it would leave
    undecided samples on to the next look instead of stopping (None: every decisive look stops).
    ``inflation(decision, z, level)(shrink)`` says how much wider that component makes the SE once the
    within-run SE is ``shrink`` times as large (the last look's critical z grows by as much), so the
    futility stop reads the chance of a verdict that survives it
    (:func:`claimcheck.stats._between_run.spread_ratio`; None: the within-run chance alone) and stops a
    look below ``spread_futility``; the extension keeps the within-run chance.
    """

    futility: float = FUTILITY_POWER
    spread_futility: float = SPREAD_FUTILITY_POWER
    promising: float = PROMISING_POWER
    target: float = TARGET_POWER
    factor: float = EXTENSION_FACTOR
    room: Callable[[], int] | None = None
    between_runs: Callable[[Decision], Decision] | None = None
    inflation: Callable[[Decision, float, float], Callable[[float], float]] | None = None

    def futile(self, view: Outlook) -> bool:
        """Whether a look heading to ``view`` stops: its chance of a verdict is below the threshold that applies."""
        return view.power < (self.spread_futility if view.between_runs > 1 else self.futility)

    def settled(self, decision: Decision) -> bool:
        """Whether a decisive look keeps its verdict once adjudicated (see ``between_runs``)."""
        return self.between_runs is None or self.between_runs(decision).verdict is decision.verdict

    def __post_init__(self) -> None:
        if not 0 <= self.spread_futility <= self.futility or not self.futility < self.promising <= self.target < 1:
            raise ValueError("need 0 <= spread_futility <= futility < promising <= target < 1; got "
                             f"{self.spread_futility!r}, {self.futility!r}, {self.promising!r}, {self.target!r}")
        if not self.factor >= 1:
            raise ValueError(f"`factor` must be at least 1; got {self.factor!r}")


OFF = Adaptation(futility=0.0, spread_futility=0.0, factor=1.0)  # the plan as drawn: no futility stop, no extension


def z_score(pvalue: float) -> float:
    """``Phi^-1(1 - p)``: +inf at p = 0, -inf at p = 1."""
    return float(stats.norm.isf(min(max(pvalue, 0.0), 1.0)))


def critical(level: float) -> float:
    """The one-sided critical z of a look at nominal ``level``."""
    return float(special.ndtri(1 - level))


def conditional_power(z: float, n: int, final: int, c: float) -> float:
    """Chance that the look at ``final`` crosses ``c`` given ``z`` at ``n``, under the current trend."""
    if not math.isfinite(z):
        return 1.0 if z > 0 else 0.0
    if final <= n:
        return float(z >= c)
    t = n / final
    return float(special.ndtr((z / math.sqrt(t) - c) / math.sqrt(1 - t)))


def n_to_decide(z: float, n: int, c: float) -> int | None:
    """The n at which the current estimate and SE reach ``c`` (``n (c / z)^2``); None when ``z <= 0``."""
    if not z > 0 or n < 1 or not math.isfinite(c):
        return None
    if not math.isfinite(z):
        return n
    needed = n * (c / z) ** 2
    return max(n, math.ceil(needed - 1e-9)) if needed < 1e15 else None  # beyond any run: on the edge


@dataclass(frozen=True)
class Outlook:
    """The likelier verdict of an undecided look, its z, its conditional power by ``final``, the n that decides."""

    verdict: Verdict
    z: float
    power: float
    needed: int | None
    n: int
    final: int
    between_runs: float = 1.0  # how much the between-run component widened the last look's critical z


def widened(view: Outlook, decision: Decision, adapt: Adaptation, c: float, level: float) -> Outlook:
    """``view`` read against the critical z a last look must reach within the run for its verdict to survive adjudication.

    That z is ``c`` times how much the between-run component widens the SE once the within-run SE has
    shrunk from ``view.n`` to the last look's size (:attr:`Adaptation.inflation`, read once); the
    conditional power and the n that decides are read against it.
    """
    if adapt.inflation is None or not (math.isfinite(view.z) and view.z > 0):
        return view
    ratio = adapt.inflation(decision, view.z, level)

    def at(final: int) -> float:
        return c * max(1.0, ratio(math.sqrt(view.n / max(final, view.n))))

    scaled = at(view.final)
    if not scaled > c:
        return view
    return replace(view, power=conditional_power(view.z, view.n, view.final, scaled), between_runs=scaled / c,
                   needed=_n_reaching(view, at))


def _n_reaching(view: Outlook, at: Callable[[int], float], most: int = 2 ** 40) -> int | None:
    """The least n at which the trend's z, ``z sqrt(n / view.n)``, reaches the critical ``at(n)``; None below ``most``.

    A spread read off earlier runs raises the critical z as fast as the trend's z grows once the
    within-run SE is below it, so past some distance to the edge no n reaches it.
    """
    if not (math.isfinite(view.z) and view.z > 0):
        return None

    def reached(n: int) -> bool:
        return view.z * math.sqrt(n / view.n) >= at(n)

    if reached(view.n):
        return view.n
    low, high = view.n, 2 * view.n  # not reached at low; double until reached, then bisect
    while not reached(high):
        if high >= most:
            return None
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if not reached(middle) else (low, middle)
    return high


def outlook(pvalue: float, hold_pvalue: float, n: int, final: int, c: float) -> Outlook:
    """Where a look with these p-values (refuted, holds) is heading at ``n`` per group."""
    z_refuted, z_holds = z_score(pvalue), z_score(hold_pvalue)
    verdict, z = (Verdict.HOLDS, z_holds) if z_holds >= z_refuted else (Verdict.REFUTED, z_refuted)
    return Outlook(verdict, z, conditional_power(z, n, final, c), n_to_decide(z, n, c), n, final)


def extension_size(view: Outlook, c: float, adapt: Adaptation) -> int:
    """The last look's new size: the n reaching ``adapt.target`` power, within the factor and the time room."""
    cap = math.floor(view.final * adapt.factor)
    if adapt.room is not None:
        cap = min(cap, view.n + max(0, adapt.room()))
    if cap <= view.final:
        return view.final

    def power(final: int) -> float:
        return conditional_power(view.z, view.n, final, c)

    low, high = view.final, cap  # conditional power grows with the final n: bisect for the target
    if power(high) < adapt.target:
        return high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if power(middle) < adapt.target else (low, middle)
    return high


def unit(paired: bool, groups: int) -> str:
    """What one n counts: rounds of a paired item, samples of one group, or samples per group."""
    return "rounds" if paired else "samples" if groups == 1 else "per group"


def needed_clause(needed: int | None, what: str, dependent: bool = False) -> str:
    """The reason's clause naming the n that would decide (or that none would)."""
    if needed is None and dependent:
        return "no n would decide at this estimate: on its effective n neither test leans towards a verdict"
    if needed is None:
        return "no n would decide: the estimate sits on the edge"
    effective = " (its dependence factor included)" if dependent else ""
    return f"about {needed:,} {what} would decide at this estimate{effective}"


def extension_clause(view: Outlook, to: int, what: str) -> str:
    """The reason's clause for an extended last look: from where to where, and why."""
    return (f"(last look moved out from n = {view.final} to {to} {what}: at n = {view.n} a verdict by "
            f"n = {view.final} had chance {view.power:.2f} at the estimate then)")


def futility_clause(view: Outlook, what: str) -> str:
    """The reason's clause for a futility stop: where it stopped, the estimate's chance, the n that decides.

    Where the between-run component set the chance, the n that decides counts it too (the within-run
    n would understate it), and the adjudication does not name it again.
    """
    if view.between_runs > 1:
        needed = (f"with it, about {view.needed:,} {what} would decide at this estimate" if view.needed is not None
                  else "no n in one run would decide: the between-run spread alone is wider than the estimate's "
                       "distance to the edge")
        return (f"stopped for futility at n = {view.n} of {view.final} {what} planned: a verdict that survives the "
                f"between-run spread by n = {view.final} had chance {view.power:.3f} at this estimate; {needed}")
    return (f"stopped for futility at n = {view.n} of {view.final} {what} planned: a verdict by n = {view.final} "
            f"had chance {view.power:.3f} at this estimate; {needed_clause(view.needed, what)}")
