"""Prompts (and fork-map branches) a curve claim measures in prompt groups against the whole selection.

Two parts, numbers only, no asserts:

1. Synthetic per-prompt values (``tests/simulation/prompt_groups.py``): for each claim shape, on its
   boundary and at clear effects, the mean prompts measured by the grouped design (looks at 2, 4
   and 5 prompts per pole, stopping once decided) and by the whole selection, and how often each
   holds or refutes.
2. ``--model ordering|funnel``: one real item on SmolLM2 fp32, run by the claim runner twice with
   empty caches: the one-look budget the claims run today, then a three-look budget (looks at 2, 4,
   5 prompts per pole). ``ordering`` is the fork-share ordering over the fifteen prompts,
   ``funnel`` the factual funnel (at_least 14 over the five factual prompts). Prints the verdict,
   prompts and genuine branches traced, and the wall time.

    .venv/bin/python benchmarks/curve_groups.py --replicates 1000 [--model funnel]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.simulation.prompt_groups import CASES, PER_POLE, SKEWED_SHARE, Case, simulate  # noqa: E402

POLES = ("creative_fork_share", "advice_fork_share", "factual_fork_share")


def _shifted_funnel(mean: float):
    return lambda rng: {"funnel_length": mean + 6.0 * rng.standard_normal(PER_POLE)}


def _ordered(means: tuple[float, float, float]):
    def values(rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {pole: rng.beta(4.0 * m, 4.0 * (1 - m), PER_POLE) for pole, m in zip(POLES, means)}

    return values


def synthetic_cases() -> list[tuple[str, Case]]:
    funnel, ordering = CASES
    return [
        ("on the boundary", funnel),
        ("clear hold (mean 30)", replace(funnel, values=_shifted_funnel(30.0))),
        ("clear refute (mean 4)", replace(funnel, values=_shifted_funnel(4.0))),
        ("on the boundary", ordering),
        ("clear order 0.7 > 0.4 > 0.1", replace(ordering, values=_ordered((0.7, 0.4, 0.1)))),
        ("reversed 0.1 < 0.4 < 0.7", replace(ordering, values=_ordered((0.1, 0.4, 0.7)))),
        ("on the boundary", SKEWED_SHARE),
    ]


def synthetic(replicates: int) -> None:
    print(f"synthetic per-prompt values, {replicates} seeded selections each (5 prompts per pole)")
    print(f"{'claim':<40} {'values':<28} {'prompts full':>12} {'grouped':>8} {'saved':>6} "
          f"{'full H/R':>11} {'grouped H/R':>12} {'flips':>6}")
    for label, case in synthetic_cases():
        t = simulate(case, replicates)
        full, grouped = t.prompts_full / t.replicates, t.prompts_grouped / t.replicates
        print(f"{case.name:<40} {label:<28} {full:>12.1f} {grouped:>8.1f} {1 - grouped / full:>6.0%} "
              f"{t.rate(t.full_holds):>5.3f}/{t.rate(t.full_refuted):.3f} "
              f"{t.rate(t.grouped_holds):>6.3f}/{t.rate(t.grouped_refuted):.3f} {t.flips:>6d}")


CLAIM = """id: groups-bench
title: t
statement: s
source: {{doc: d.md, section: '1', figure: f}}
scope: {{kind: portable}}
probe: {{name: bisector_trace, params: {{model: smollm2-135m-instruct, variant: fp32, prompts: {prompts}}}}}
check: {check}
budget: {{min_samples: {lo}, max_samples: {hi}, max_seconds: 900, looks: {looks}}}
"""
ITEMS = {
    "ordering": ("all", "{rule: ordering, outputs: [creative_fork_share, advice_fork_share, factual_fork_share], alpha: 0.05}"),
    "funnel": ("factual", "{rule: at_least, output: funnel_length, threshold: 14, alpha: 0.05}"),
}


def real_item(which: str) -> None:
    from claimcheck.claims.loader import load_claims_text
    from claimcheck.engine.runner import RunOptions, run_claim_item
    from claimcheck.probing.registry import get_probe
    import probes.curves.fork_map  # noqa: F401  (registers the probe)

    prompts, check = ITEMS[which]
    print(f"\none {which} item on smollm2-135m-instruct fp32, empty cache each time")
    for name, lo, hi, looks in (("whole selection (one look)", 2, 15, 1), ("prompt groups (looks 2/4/5)", 2, 5, 3)):
        claim = load_claims_text(CLAIM.format(prompts=prompts, check=check, lo=lo, hi=hi, looks=looks), "bench.yaml")[0]
        with tempfile.TemporaryDirectory() as cache:
            started = time.perf_counter()
            result = run_claim_item(claim, claim.id, dict(claim.probe.params), get_probe("bisector_trace"),
                                    options=RunOptions(cache_dir=cache), machine={})
            seconds = time.perf_counter() - started
        branches = sum(len(entry["nodes"]) for entry in result.artifacts.get("fork_map", []))
        prompts = sum(map(len, result.info.get("prompt_groups", [])))
        print(f"  {name:<30} {result.verdict.value:<13} prompts {prompts:>2}  genuine branches {branches:>4}  "
              f"{seconds:6.1f} s  ({result.reason[:90]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--model", choices=sorted(ITEMS), help="also run one real item twice (minutes on 2 cores)")
    args = parser.parse_args()
    synthetic(args.replicates)
    if args.model:
        real_item(args.model)


if __name__ == "__main__":
    main()
