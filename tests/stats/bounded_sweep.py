"""Every power and resolution computation over df 1-60 and levels 1e-15-0.5, one call at a time.

Run as a script by ``test_bounded.py``: before each call it prints ``start <call>``, after it
``done <seconds>``, so the parent can tell a call that never returns (a C routine that loops
cannot be interrupted in-process) from a slow one, and name it. The last line is a JSON
summary: the number of calls and the slowest call per kind.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

import numpy as np

from claimcheck import rules
from claimcheck.stats import SequentialPlan, mde, required_n

DFS = tuple(range(1, 61))
DECIDE_DFS = (1, 2, 3, 4, 5, 7, 10, 15, 22, 30, 45, 60)
LEVELS = tuple(float(a) for a in np.geomspace(1e-15, 0.499, 24))

RULE_CHECKS: tuple[tuple[str, dict[str, object], int], ...] = (  # (rule, check params, groups)
    ("at_least", {"threshold": 1.0, "statistic": "mean"}, 1),
    ("at_most", {"threshold": 1.0, "statistic": "median"}, 1),
    ("ratio", {"threshold": 1.0, "bound": "at_least", "statistic": "mean", "paired": True}, 2),
    ("ratio", {"threshold": 1.0, "bound": "at_least", "statistic": "mean"}, 2),
    ("ratio", {"threshold": 1.0, "bound": "at_most", "statistic": "median", "paired": True}, 2),
    ("ratio", {"threshold": 1.0, "bound": "at_most", "statistic": "median"}, 2),
    ("equivalent", {"margin": 0.05, "statistic": "mean", "paired": True}, 2),
    ("equivalent", {"margin": 0.05, "statistic": "mean"}, 2),
    ("equivalent", {"margin": 0.05, "statistic": "median", "paired": True, "scale": "log-ratio"}, 2),
    ("equivalent", {"margin": 0.05, "statistic": "median"}, 2),
    ("rate_at_most", {"threshold": 0.1}, 1),
    ("zero_rate", {"threshold": 0.1}, 1),
    ("two_proportions", {"threshold": 0.1, "bound": "at_most"}, 2),
    ("dispersion", {"threshold": 1.0, "bound": "at_most"}, 1),
)
PLANS = ((3, 40, 3), (5, 10, 3), (4, 20, 3), (2, 3, 2))  # short plans whose first looks spend nothing


def _samples(rule: str, n: int, groups: int, seed: int) -> list[tuple[str, list[float]]]:
    rng = np.random.default_rng(seed)
    labels = ("x", "reference")[:groups]
    if rule in ("rate_at_most", "zero_rate", "two_proportions"):
        return [(label, (rng.random(n) < 0.05).astype(float).tolist()) for label in labels]
    return [(label, (1.0 + 0.02 * rng.standard_normal(n)).tolist()) for label in labels]


def _timed(kind: str, call: str, run: Callable[[], object], slowest: dict[str, tuple[float, str]]) -> None:
    print(f"start {kind} {call}", flush=True)
    start = time.perf_counter()
    run()
    took = time.perf_counter() - start
    print(f"done {took:.6f}", flush=True)
    if took > slowest.get(kind, (0.0, ""))[0]:
        slowest[kind] = (took, call)


def main() -> int:
    """Run every call; print the progress protocol and the JSON summary."""
    slowest: dict[str, tuple[float, str]] = {}
    calls = 0
    for df in DFS:
        for level in LEVELS:
            for test in ("one-sided", "tost"):
                _timed("mde", f"mde(se=1, df={df}, alpha={level:.3g}, test={test})",
                       lambda: mde(1.0, df, alpha=level, test=test), slowest)
                calls += 1
            for ratio in (0.05, 1.0, 4.0):
                _timed("required_n", f"required_n({ratio}, 1, alpha={level:.3g})",
                       lambda: required_n(ratio, 1.0, alpha=level), slowest)
                calls += 1
    for rule, params, groups in RULE_CHECKS:
        for df in DECIDE_DFS:
            data = _samples(rule, df + 1, groups, seed=df)
            for level in LEVELS:
                _timed("decide", f"{rule} {params} n={df + 1} alpha={level:.3g}",
                       lambda: rules.decide(rule, data, alpha=level, **params), slowest)
                calls += 1
        for low, high, looks in PLANS:
            plan = SequentialPlan(0.05, low, high, looks)
            rng_seed = low * 100 + high

            def draw(k: int, rule: str = rule, groups: int = groups, seed: list[int] = [rng_seed]) -> list:
                seed[0] += 1
                return _samples(rule, k, groups, seed[0])

            _timed("sequential", f"{rule} {params} plan {low}/{high}/{looks}",
                   lambda: rules.run_sequential(draw, rule, plan, **params), slowest)
            calls += 1
    print(json.dumps({"calls": calls, "slowest": slowest}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
