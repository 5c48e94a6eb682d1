"""What interleaving `over:` levels costs: a balanced look (two rounds) vs one call per level.

A balanced look calls the probe twice per level (levels forward, then backward), so every
per-call setup a probe does (warm-up, a raw-read floor, a model build it does not cache) is paid
twice. This script times the same look both ways for the suite's swept (`over:`) claims that are
in scope here, alternating the two orders over several repeats in one process, and prints the
median seconds per look and their ratio.

    .venv/bin/python benchmarks/interleave_cost.py [--repeats 3] [--claims id ...]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from claimcheck.claims.loader import check_probe, load_claims  # noqa: E402
from claimcheck.machine import detect_backend  # noqa: E402
from claimcheck.probing.registry import ProbeContext, load_probe_modules  # noqa: E402
from claimcheck.engine.sampler import Sampler  # noqa: E402

DEFAULT = ["qmv-bw-rises-with-size-portable", "roofline-bigger-closer-portable"]


def look_seconds(sampler: Sampler, n: int, balanced: bool) -> float:
    """Seconds for one look of ``n`` samples per level, balanced or one call per level."""
    start = time.perf_counter()
    if balanced:
        sampler.draw(n, 1)
    else:
        sampler._round(sampler.levels, n, 1, 0)  # the order before interleaving: one block per level
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--claims", nargs="*", default=DEFAULT)
    args = parser.parse_args()
    load_probe_modules(str(ROOT))
    claims = {c.id: c for c in load_claims([ROOT / "claims"])}
    backend = detect_backend()
    print(f"{'claim':<36}{'n':>4}{'block s':>10}{'balanced s':>12}{'ratio':>8}")
    for claim_id in args.claims:
        claim = claims[claim_id]
        claim = claim.for_profile(backend) if claim.profiles else claim
        probe = check_probe(claim)
        n = claim.budget.min_samples
        sampler = Sampler(claim, probe, dict(claim.probe.params), ProbeContext(seed=0, rng=random.Random(0)))
        sampler.draw(n, 0)  # first look: builds and caches what the probe reuses, as a run does
        block, balanced = [], []
        for repeat in range(args.repeats):
            for order in ((False, True) if repeat % 2 == 0 else (True, False)):
                (balanced if order else block).append(look_seconds(sampler, n, order))
        b, i = statistics.median(block), statistics.median(balanced)
        print(f"{claim_id:<36}{n:>4}{b:>10.2f}{i:>12.2f}{i / b:>8.2f}")


if __name__ == "__main__":
    main()
