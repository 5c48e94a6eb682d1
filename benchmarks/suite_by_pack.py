"""Whole-suite cold time by pack: ``pytest claims/<pack>`` with empty model and result caches, one pack at a time.

Each pack runs in its own ``pytest`` process against a fresh ``CLAIMCHECK_CACHE`` (so models are
converted and every result computed, as on a fresh machine) and without writing the evidence store,
then the whole suite runs once more in one process against one fresh cache (packs then share the
converted models and the curve traces). Prints each wall time, the slowest items, the load average
before and after (on a shared machine the times are only as good as what else ran), and asserts
nothing. Run it in a snapshot of the tree, not in a tree others are editing.

    python benchmarks/suite_by_pack.py --packs curves roofline arithmetic --whole
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(paths: list[str], label: str, extra: list[str]) -> float:
    with tempfile.TemporaryDirectory(prefix="claimcheck-cold-") as cache:
        environment = {**os.environ, "CLAIMCHECK_CACHE": cache, "PYTHONPATH": str(ROOT)}
        load = os.getloadavg()[0]
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", *paths, "--claims-fresh", "--claims-no-store", "-p", "no:cacheprovider",
                               "-q", "--durations=5", *extra], cwd=ROOT, env=environment, capture_output=True, text=True)
        wall = time.perf_counter() - started
    summary = next((line for line in reversed(done.stdout.splitlines()) if re.search(r"\d+ (passed|failed)", line)), "(no summary)")
    slowest = [line.strip() for line in done.stdout.splitlines() if re.match(r"^\s*[\d.]+s (call|setup)", line)][:5]
    print(f"{label:12s} {wall:7.1f} s  load {load:.1f} -> {os.getloadavg()[0]:.1f}  {summary}")
    for line in slowest:
        print(f"{'':14s}{line}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--packs", nargs="*", default=["curves", "roofline", "arithmetic"])
    parser.add_argument("--whole", action="store_true", help="also the whole suite in one process")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments, e.g. '-n 2'")
    args = parser.parse_args()
    extra = args.pytest_args.split()
    total = sum(run([f"claims/{pack}"], pack, extra) for pack in args.packs)
    print(f"{'packs, sum':12s} {total:7.1f} s")
    if args.whole:
        run(["claims/"], "whole suite", extra)


if __name__ == "__main__":
    main()
