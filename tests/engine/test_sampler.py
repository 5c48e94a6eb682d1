"""Balanced order: `over:` levels interleaved within every look, so drift is not read as a trend."""

from __future__ import annotations

import math
import random

import numpy as np

from claimcheck.claims.loader import load_claims_text
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.rules import decide
from claimcheck.engine.runner import RunOptions, run_claim_item
from claimcheck.engine.sampler import Sampler
from claimcheck.verdict import Verdict

CLAIM = """
id: sweep
title: x rises with size
statement: x increases over size
source: {{doc: d.md, section: "1", figure: f}}
scope: {{kind: portable}}
probe: {{name: clocked, params: {{size: [1, 2, 3]}}}}
check: {{rule: monotone, output: x, over: size, direction: increasing}}
budget: {{min_samples: {n}, max_samples: {n}, looks: 1}}
"""


class Clocked:
    """A probe whose samples drift with time (one tick per sample), with no effect of ``size``."""

    def __init__(self, drift: float = 1.0, sd: float = 0.0, seed: int = 0, whole: int | None = None) -> None:
        self.tick, self.drift, self.sd, self.whole = 0, drift, sd, whole
        self.rng = random.Random(seed)
        self.calls: list[tuple[int, int]] = []

    def __call__(self, ctx: ProbeContext, *, size: int) -> dict[str, list[float]]:
        count = self.whole if self.whole is not None else ctx.n
        self.calls.append((size, ctx.n))
        values = [self.drift * (self.tick + i) + self.rng.gauss(0.0, self.sd) for i in range(count)]
        self.tick += count
        return {"x": values}


def _sampler(probe: Clocked, n: int = 8) -> Sampler:
    claim = load_claims_text(CLAIM.format(n=n), "s.yaml")[0]
    registered = RegisteredProbe("clocked", probe, {"x": Output("ms")})
    return Sampler(claim, registered, dict(claim.probe.params), ProbeContext(seed=0, rng=random.Random(0)))


def test_levels_run_forward_then_backward_in_every_look() -> None:
    probe = Clocked()
    sampler = _sampler(probe)
    sampler.draw(8, 0)
    sampler.draw(5, 1)
    assert probe.calls == [(1, 4), (2, 4), (3, 4), (3, 4), (2, 4), (1, 4), (1, 2), (2, 2), (3, 2), (3, 3), (2, 3), (1, 3)]
    assert [len(values) for _, values in sampler.groups()] == [13, 13, 13]
    assert sampler.ctx.artifacts["level_order"][3] == {"look": 0, "round": 1, "position": 0, "level": "size=3",
                                                        "samples": 4}


def test_a_linear_drift_adds_the_same_to_every_level() -> None:
    """Block order (one call per level) turns a drift of one unit per sample into a 'trend' of 8 per level."""
    sampler = _sampler(Clocked())
    sampler.draw(8, 0)
    means = [float(np.mean(values)) for _, values in sampler.groups()]
    assert means == [means[0]] * 3
    blocks = [[float(8 * level + i) for i in range(8)] for level in range(3)]  # what one call per level gave
    assert [float(np.mean(b)) for b in blocks] == [3.5, 11.5, 19.5]


def test_a_probe_that_returns_its_whole_design_is_called_once_per_level() -> None:
    probe = Clocked(whole=10)
    sampler = _sampler(probe)
    sampler.draw(8, 0)
    assert probe.calls == [(1, 4), (2, 4), (3, 4)]
    assert [len(values) for _, values in sampler.groups()] == [10, 10, 10]


RUNS = 300


def test_drift_within_a_look_does_not_make_a_flat_sweep_hold() -> None:
    """No effect of size, a drift of 0.3 SD per sample, through the runner: 'increasing' must not hold.

    Under block order the same data hold almost always (computed on block-ordered samples of the
    same probe with the same rule, to show the test can fail). 300 runs, bound alpha + 2 SE.
    """
    claim = load_claims_text(CLAIM.format(n=8), "s.yaml")[0]
    held_balanced = 0
    held_blocks = 0
    for run in range(RUNS):
        probe = Clocked(drift=0.3, sd=1.0, seed=run)
        registered = RegisteredProbe("clocked", probe, {"x": Output("ms")})
        result = run_claim_item(claim, "sweep", dict(claim.probe.params), registered,
                                options=RunOptions(seed=run), machine={"backend": "cpu"})
        held_balanced += result.verdict is Verdict.HOLDS
        blocks = Clocked(drift=0.3, sd=1.0, seed=run)
        groups = [(f"size={size}", blocks(ProbeContext(seed=0, rng=random.Random(0), n=8), size=size)["x"])
                  for size in (1, 2, 3)]
        held_blocks += decide("monotone", groups, direction="increasing").verdict is Verdict.HOLDS
    bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / RUNS)
    assert held_blocks / RUNS > 0.5
    assert held_balanced / RUNS <= bound
