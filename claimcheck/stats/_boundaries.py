"""Exact group-sequential boundaries: the per-look nominal levels that spend alpha exactly.

The union bound (``alpha_k = f(t_k) - f(t_{k-1})``) ignores that looks share their samples, so
its actual error rate sits well below alpha and its power well below a fixed-n test. Exact
boundaries choose per-look *nominal* levels ``a_k`` so that the probability of first crossing
at look k is exactly the spent increment: ``P(cross by look k) = f(t_k)`` under the null.

Three boundary kinds, each for the test statistics it describes:

- ``normal``: cumulative sums of iid increments, ``Z_k = S_k / sqrt(I_k)`` with
  ``corr(Z_j, Z_k) = sqrt(n_j / n_k)``, the canonical joint distribution of t and z tests at
  looks ``n_1 < n_2 < ...``. Crossing probabilities come from the recursive numerical
  integration of Armitage, McPherson and Rowe (Jennison & Turnbull 2000, ch. 19); scipy has the
  multivariate normal CDF but not the boundary search, and the recursion is deterministic and
  fast enough to tabulate.
- ``t``: the same spending for t tests, whose estimated variance makes the normal boundary cross
  slightly too often (0.051 to 0.053 for alpha 0.05); the nominal levels are calibrated on
  200,000 seeded normal paths (:func:`t_levels`), so a plan's levels are the same in every run
  and its crossing rate is within about 0.0005 of the spent alpha. A t test at look k rejects
  when its p-value is at most ``a_k``.
- ``sign``: the count of samples above a value, a binomial random walk. The boundary is found
  by exact dynamic programming over the counts under ``p = 1/2``; the discreteness means a
  look may spend less than its increment, and the remainder carries over to later looks. The
  crossing probability only falls when ``p < 1/2`` (ties, or a median past the value), so the
  boundary is valid for the whole null.

:func:`repeated_pvalue` reads the sequential p-value off a grid of overall levels ``u`` (1e-8 to
0.5, 12% apart, plus the plan's alpha): the smallest ``u`` whose boundary the data crossed. It is
a valid p-value (``P(p <= u) <= u`` at every grid point; between grid points it rounds up), and
``p <= alpha`` exactly when the plan's own boundary was crossed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy import optimize, special

from ._spending import spent

Kind = Literal["normal", "t", "sign"]
Spent = Callable[[float, float], float]

_GRID_POINTS = 401  # nodes of the integration grid per look
_TAIL = 8.0  # the grid reaches 8 SD below the mean: the mass it drops is below 1e-15
# overall levels tabulated for sequential p-values: 1e-8 .. 0.5, 12% apart
_LEVELS = tuple(float(u) for u in np.geomspace(1e-8, 0.5, 156))
_T_PATHS = 200_000  # Monte Carlo paths that calibrate the t boundary: its crossing rate is within ~0.0005
_T_SEED = 20240613  # fixed: a plan's boundary is the same in every run


def normal_levels(sizes: Sequence[int], cumulative: Sequence[float]) -> tuple[float, ...]:
    """One-sided nominal levels ``a_k`` with ``P(Z_j > z_{1-a_j} for some j <= k) = cumulative[k]``.

    Args:
        sizes: sample sizes at the looks, increasing.
        cumulative: the alpha spent by each look, increasing, each in (0, 0.5).
    """
    info = np.asarray(sizes, dtype=float) / float(sizes[-1])
    levels: list[float] = []
    crossed = 0.0
    nodes: np.ndarray | None = None  # score-scale nodes of the continuation region at the last look
    density: np.ndarray | None = None  # sub-density of the score on those nodes (not yet crossed)
    for k, (i_k, spent_k) in enumerate(zip(info, cumulative)):
        target = spent_k - crossed
        if target <= 0:
            levels.append(0.0)
            c = math.inf
        elif nodes is None or density is None:
            c = float(-special.ndtri(spent_k))
            levels.append(float(spent_k))
        else:
            step = i_k - info[k - 1]
            weights = density * _simpson(nodes)

            here = nodes

            def first_crossing(c_k: float) -> float:
                edge = c_k * math.sqrt(i_k)
                return float(weights @ special.ndtr((here - edge) / math.sqrt(step)))

            upper = 40.0
            if first_crossing(upper) >= target:
                c = upper
            else:
                c = float(optimize.brentq(lambda c_k: first_crossing(c_k) - target, -10.0, upper, xtol=1e-12))
            levels.append(float(special.ndtr(-c)))
        crossed = spent_k if target > 0 else crossed
        # density of the score at this look on the continuation region (score < c sqrt(i_k))
        top = min(c, _TAIL) * math.sqrt(i_k)
        new_nodes = np.linspace(-_TAIL * math.sqrt(i_k), top, _GRID_POINTS)
        if nodes is None or density is None:
            new_density = np.exp(-0.5 * new_nodes**2 / i_k) / math.sqrt(2 * math.pi * i_k)
        else:
            step = i_k - info[k - 1]
            kernel = np.exp(-0.5 * (new_nodes[:, None] - nodes[None, :]) ** 2 / step) / math.sqrt(2 * math.pi * step)
            new_density = kernel @ (density * _simpson(nodes))
        nodes, density = new_nodes, new_density
    return tuple(levels)


def sign_levels(sizes: Sequence[int], cumulative: Sequence[float]) -> tuple[float, ...]:
    """Nominal levels for a sign test repeated at ``sizes``: exact binomial crossing probabilities.

    Look k rejects when ``P(Bin(n_k, 1/2) >= X_k) <= a_k``; ``a_k`` is that tail at the critical
    count (computed as :func:`~claimcheck.stats._estimate.sign_pvalues` computes p, so the
    comparison is exact), or 0 when no count can reject within the increment.
    """
    alive = np.array([1.0])  # P(not crossed, count = x), x = 0..n_prev
    n_prev = 0
    crossed = 0.0
    levels: list[float] = []
    for n_k, spent_k in zip(sizes, cumulative):
        grow = int(n_k) - n_prev
        step = np.array([math.comb(grow, j) for j in range(grow + 1)], dtype=float) * 0.5**grow
        now = np.convolve(alive, step) if grow > 0 else alive
        tails = np.cumsum(now[::-1])[::-1]  # tails[c] = P(not crossed before, X_k >= c)
        budget = spent_k - crossed
        counts = np.flatnonzero(tails <= budget * (1 + 1e-12))
        c = int(counts[0]) if counts.size else len(now)
        if c < len(now):
            crossed += float(tails[c])
            levels.append(float(special.bdtr(int(n_k) - c, int(n_k), 0.5)))
            now = now.copy()
            now[c:] = 0.0
        else:
            levels.append(0.0)
        alive, n_prev = now, int(n_k)
    return tuple(levels)


@lru_cache(maxsize=16)
def _t_paths(sizes: tuple[int, ...]) -> np.ndarray:
    """One-sided t p-values (against mean <= 0) of seeded standard-normal paths at each look, (looks, paths)."""
    rng = np.random.default_rng(_T_SEED)
    total = np.zeros(_T_PATHS)
    squares = np.zeros(_T_PATHS)
    out, have = [], 0
    for n in sizes:
        step = rng.standard_normal((n - have, _T_PATHS))
        total += step.sum(axis=0)
        squares += (step**2).sum(axis=0)
        have = n
        mean = total / n
        sd = np.sqrt(np.maximum(squares - n * mean**2, 1e-300) / (n - 1))
        out.append(special.stdtr(n - 1, -mean / (sd / math.sqrt(n))))
    return np.array(out)


def t_levels(sizes: Sequence[int], cumulative: Sequence[float]) -> tuple[float, ...]:
    """Nominal levels for a one-sample t test repeated at ``sizes`` (df ``n_k - 1``).

    The normal boundary applied to t p-values crosses slightly more often than it spends
    (0.0509 at looks 8/19/30, ~0.053 over six looks from n = 11): the variance estimate makes
    the looks' statistics heavier-tailed jointly. These levels are calibrated on seeded normal
    paths instead: look 1 is the t test's own level, and each later level is the order statistic
    of the not-yet-crossed paths' p-values that spends the increment.
    """
    if min(sizes) < 2 or cumulative[-1] * _T_PATHS < 2000:  # too few paths in so small a tail
        return normal_levels(sizes, cumulative)
    paths = _t_paths(tuple(int(n) for n in sizes))
    alive = np.ones(paths.shape[1], dtype=bool)
    crossed, levels = 0, []
    for k, spent_k in enumerate(cumulative):
        quota = int(math.floor(spent_k * paths.shape[1])) - crossed
        if quota <= 0:
            levels.append(0.0)
            continue
        if k == 0:
            level = float(spent_k)
        else:
            open_p = np.sort(paths[k][alive])
            level = float(open_p[min(quota, open_p.size) - 1])
        levels.append(level)
        hit = alive & (paths[k] <= level)
        crossed += int(hit.sum())
        alive &= ~hit
    return tuple(levels)


@lru_cache(maxsize=4096)
def nominal_levels(kind: Kind, sizes: tuple[int, ...], spending: str, alpha: float) -> tuple[float, ...]:
    """Nominal level of each look for a plan that spends ``alpha`` with ``spending`` over ``sizes``."""
    cumulative = [spent(n / sizes[-1], alpha, spending) for n in sizes[:-1]] + [alpha]  # type: ignore[arg-type]
    if kind == "normal":
        return normal_levels(sizes, cumulative)
    if kind == "t":
        return t_levels(sizes, cumulative)
    return sign_levels(sizes, cumulative)


@lru_cache(maxsize=64)
def table_levels(alpha: float) -> tuple[float, ...]:
    """The overall levels a sequential p-value is read from: a fixed grid plus ``alpha``."""
    return tuple(sorted(set(_LEVELS) | {alpha}))


def repeated_pvalue(kind: Kind, sizes: tuple[int, ...], spending: str, alpha: float,
                    pvalues: Sequence[float]) -> float:
    """Smallest tabulated overall level at which some look's p-value crossed its boundary (1 if none).

    Crossing is monotone in the level (a larger level has larger nominal levels at every look), so
    the grid is searched by bisection; each level's boundary is computed once and cached.
    """
    levels = table_levels(alpha)

    def crossed(i: int) -> bool:
        row = nominal_levels(kind, sizes, spending, levels[i])
        return any(p <= a for p, a in zip(pvalues, row))

    if not crossed(len(levels) - 1):
        return 1.0
    lo, hi = -1, len(levels) - 1  # crossed(hi) holds; crossed(lo) is taken as false
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if crossed(mid) else (mid, hi)
    return levels[hi]


def _simpson(nodes: np.ndarray) -> np.ndarray:
    """Composite Simpson weights on evenly spaced nodes (an odd count)."""
    h = (nodes[-1] - nodes[0]) / (len(nodes) - 1)
    w = np.ones(len(nodes))
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return w * h / 3.0
