"""A position effect in interleaved arms, through the sampler and the runner, with and without positions.

Two arms run once per round in ABBA order, restarted with every probe call (as
``probes/decode_loop.py`` does), so an odd call puts one arm first once more than the other.
The arm that runs first in its round is ``POSITION_EFFECT`` slower. The probe reports each
sample's position (``<output>.position``) or not; the claim is a paired ``equivalent`` on the
log-ratio, decided on the median as a timing item or on the mean as a shared one, sampled by
:func:`claimcheck.engine.runner.run_claim_item` with looks at n = 8, 19, 30.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from claimcheck.harness.position import POSITION
from claimcheck.harness.timing import interleaved_order
from claimcheck.claims.loader import load_claims_text
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.engine.runner import RunOptions, run_claim_item
from claimcheck.verdict import Verdict

MARGIN = 0.05
EDGE = math.log1p(MARGIN)  # the margin as a log-ratio: the band is [1/1.05, 1.05]
POSITION_EFFECT = 0.03  # the first arm of a round runs 3% slower
NOISE = 0.02  # each sample's own log-normal noise
SHARED = 0.05  # what both arms of a round share (load, clocks); it cancels in the contrast

CLAIM = """
id: arms-equal
title: a equals b within 5%
statement: the two arms take the same time
source: {{doc: d.md, section: "1", figure: f}}
scope: {{kind: portable}}
probe: {{name: abba}}
check: {{rule: equivalent, output: a, reference: b, margin: 0.05, scale: log-ratio, paired: true}}
budget: {{min_samples: 8, max_samples: 30, looks: 3, max_seconds: 60, exclusive: {timing}}}
"""


def abba_probe(log_ratio: float, report_positions: bool) -> RegisteredProbe:
    """Arms ``a`` (``log_ratio`` above ``b``) and ``b`` in ABBA rounds, the first of each round slowed."""

    def probe(ctx: ProbeContext, **params: object) -> dict[str, list[float]]:
        rng = np.random.default_rng([ctx.seed, ctx.look])
        out: dict[str, list[float]] = {"a": [], "b": [], f"a{POSITION}": [], f"b{POSITION}": []}
        for round_arms in interleaved_order(["a", "b"], ctx.n):
            shared = rng.normal(0.0, SHARED)
            for position, arm in enumerate(round_arms):
                level = log_ratio if arm == "a" else 0.0
                slow = POSITION_EFFECT if position == 0 else 0.0
                out[arm].append(100 * math.exp(level + shared + slow + rng.normal(0.0, NOISE)))
                out[f"{arm}{POSITION}"].append(float(position))
        if not report_positions:
            del out[f"a{POSITION}"], out[f"b{POSITION}"]
        return out

    return RegisteredProbe("abba", probe, {"a": Output("ms"), "b": Output("ms")})


@dataclass(frozen=True)
class Rates:
    """One configuration: verdict rates at the margin and at half of it, and the estimate's bias."""

    timing: bool
    positions: bool
    runs: int
    false_hold: float  # true ratio exactly 1.05: a hold is false
    false_refutation: float  # same runs: a refutation is false too (the margin is the boundary)
    power: float  # true ratio at half the margin: holds
    bias: float  # mean log estimate minus the true log-ratio, at a true ratio of 1
    sd: float  # spread of that log estimate (at whichever look each run stopped)

    @property
    def se(self) -> float:
        return math.sqrt(0.05 * 0.95 / self.runs)


def _runs(log_ratio: float, timing: bool, positions: bool, runs: int, seed: int) -> list[tuple[Verdict, float]]:
    claim = load_claims_text(CLAIM.format(timing="true" if timing else "false"), "abba.yaml")[0]
    probe = abba_probe(log_ratio, positions)
    out = []
    for run in range(runs):
        result = run_claim_item(claim, "arms-equal", {}, probe, options=RunOptions(seed=seed + run),
                                machine={"backend": "cpu"})
        estimate = result.decision.statistic if result.decision is not None else math.nan
        out.append((result.verdict, estimate))
    return out


def measure(timing: bool, positions: bool, runs: int, seed: int) -> Rates:
    """All rates of one configuration; the same seeds with and without positions (paired comparison)."""
    edge = _runs(EDGE, timing, positions, runs, seed)
    half = _runs(EDGE / 2, timing, positions, runs, seed + 1_000_000)
    null = _runs(0.0, timing, positions, runs, seed + 2_000_000)
    logs = np.log([estimate for _, estimate in null])
    return Rates(timing, positions, runs,
                 false_hold=float(np.mean([v is Verdict.HOLDS for v, _ in edge])),
                 false_refutation=float(np.mean([v is Verdict.REFUTED for v, _ in edge])),
                 power=float(np.mean([v is Verdict.HOLDS for v, _ in half])),
                 bias=float(np.mean(logs)), sd=float(np.std(logs)))


def table(rows: list[Rates]) -> str:
    head = (f"{'statistic':<10}{'positions':<11}{'R':>6}{'false hold':>11}{'false ref':>10}{'a+2SE':>7}"
            f"{'power@m/2':>10}{'bias (log)':>11}{'its SE':>8}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{'median' if r.timing else 'mean':<10}{'modelled' if r.positions else 'ignored':<11}{r.runs:>6}"
                     f"{r.false_hold:>11.3f}{r.false_refutation:>10.3f}{0.05 + 2 * r.se:>7.3f}{r.power:>10.3f}"
                     f"{r.bias:>+11.4f}{r.sd / math.sqrt(r.runs):>8.4f}")
    return "\n".join(lines)
