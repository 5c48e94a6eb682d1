"""A SmolLM2 batch-64 decode step quiet and beside two busy loops, under the ``auto`` thread policy and with 2 threads.

Each (load, policy) cell runs in its own process, since the BLAS thread count is chosen when the
process starts (:mod:`claimcheck.harness.blas_threads`). "Busy" is two ``while True: pass``
processes started before the cell and ended (by their pids) after it. Prints the policy's choice,
the load seen, the median and best decode step, and the threads runnable during the cell
(the cell's own included: another program's work shows as more); asserts nothing. About a minute on 2 cores.

    .venv/bin/python benchmarks/blas_threads.py --steps 8
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import json, os, statistics, sys, time
from claimcheck.harness.blas import ensure_fast_blas
info = ensure_fast_blas()
import mlx.core as mx
from claimcheck.models import load
from mlx_lm.models.cache import make_prompt_cache
steps = int(sys.argv[1])
lm = load("smollm2-135m-instruct", variant="fp32", needs_text=True)
cache = make_prompt_cache(lm.model)
mx.eval(lm.model(mx.array([[5] * 16] * 64), cache=cache))
times = []
for _ in range(steps):
    t0 = time.perf_counter()
    mx.eval(lm.model(mx.array([[7]] * 64), cache=cache)[:, -1, :])
    times.append(time.perf_counter() - t0)
print(json.dumps({"policy": info.thread_policy, "threads": info.threads, "median_ms": 1000 * statistics.median(times),
                  "best_ms": 1000 * min(times), "load_after": os.getloadavg()[0]}))
"""

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from claimcheck.harness.blas_threads import runnable_others  # noqa: E402


def cell(policy: str, steps: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                                            "BLIS_NUM_THREADS")}
    env["CLAIMCHECK_BLAS_THREADS"] = policy
    env["PYTHONPATH"] = str(ROOT)
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(steps)], stdout=subprocess.PIPE, text=True, env=env)
    seen = []
    while child.poll() is None:  # what else runs during the cell: the runnable threads besides this sampler
        seen.append(runnable_others(reads=1, pause=0))
        time.sleep(0.2)
    stdout, _ = child.communicate()
    if child.returncode:
        raise SystemExit(f"cell {policy!r} failed with exit status {child.returncode}")
    row = json.loads(stdout.strip().splitlines()[-1])
    return row | {"runnable_during": statistics.median(seen) if seen else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    print(f"cores available: {len(os.sched_getaffinity(0))}; load at start: {os.getloadavg()[0]:.2f}")
    print(f"{'load':<6} {'policy asked':<13} {'choice':<42} {'median ms':>10} {'best ms':>8} {'runnable during':>16}")
    for load in ("quiet", "busy"):
        loops = []
        if load == "busy":
            loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
            time.sleep(1.0)  # both loops runnable before the cell chooses its threads
        try:
            for policy in ("auto", "2"):
                row = cell(policy, args.steps)
                print(f"{load:<6} {policy:<13} {row['policy']:<42} {row['median_ms']:>10.0f} {row['best_ms']:>8.0f} "
                      f"{row['runnable_during']:>16.1f}")
        finally:
            for loop in loops:
                loop.kill()
                loop.wait()


if __name__ == "__main__":
    main()
