"""Where chosen items spend their time, cold then warm: each pass one ``pytest`` process under cProfile.

For the items a GPU runs slower than a 2-core CPU: the cold pass starts from an empty claimcheck
cache (models converted, quantized and synthetic weights built, kernels compiled on first use), the
warm pass reuses that cache in a new process, so what the second pass no longer spends is one-time
building, and what both spend is the measurement and its per-call overhead. Prints each pass's wall
time and item durations, and the functions with the most cumulative time under MLX, mlx-lm and
claimcheck (own time beside it: time in ``mlx.core.eval`` and friends is waiting for the device).
Asserts nothing.

    python benchmarks/item_profile.py [--items ID ...] [--top 40]
"""

from __future__ import annotations

import argparse
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLOWEST_ON_GPU = [  # slower on one H200 than on a 2-core CPU (docs/gpu.md), 2026-12-04
    "moe-gather-slower-than-qmm-portable",
    "decode-prebuilt-equals-baseline-smollm2-4bit",
    "identity-curve-is-temperature-one-across-models",
    "top-k-1-is-greedy-across-seeds",
    "top-p-below-top-probability-is-greedy",
    "qmm-4bit-matches-dequantized-matmul",
    "qmm-8bit-matches-dequantized-matmul",
]
KEPT = ("mlx", "claimcheck", "probes")  # path fragments of the functions worth listing


def one_pass(items: list[str], cache: Path, folder: Path, name: str) -> tuple[float, int, Path, Path]:
    """Wall seconds, exit status, profile file and store of one profiled ``pytest claims/ -k ITEMS``."""
    profile, store = folder / f"{name}.prof", folder / f"{name}.sqlite"
    command = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "pytest", "claims/", "-q",
               "-p", "no:cacheprovider", "--claims-fresh", "--claims-store", str(store),
               "--claims-reports", str(folder / f"{name}-reports"), "-k", " or ".join(items)]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env={**os.environ, "CLAIMCHECK_CACHE": str(cache)},
                          stdout=subprocess.DEVNULL)
    return time.perf_counter() - started, done.returncode, profile, store


def durations(store: Path) -> dict[str, float]:
    """Item id -> seconds, from the pass's recorded run."""
    sys.path.insert(0, str(ROOT))
    from claimcheck.store import EvidenceStore

    with EvidenceStore.open_readonly(store) as evidence:
        run = evidence.latest_run()
        if run is None:
            return {}
        return {found.item_id: found.result.duration_s
                for found in evidence.results(run.run_id)}


def hot_functions(profile: Path, top: int) -> list[str]:
    """The ``top`` functions by own time (any code: a C call such as MLX's eval is where the device is waited
    for), then the ``top`` under MLX, mlx-lm or claimcheck by cumulative time, one line each."""
    stats = pstats.Stats(str(profile))
    rows = []
    for (file, line, function), (_, calls, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        short = file.split("site-packages/")[-1].replace(str(ROOT) + "/", "")
        kept = any(part in file for part in KEPT)
        rows.append((cumulative, own, calls, f"{short}:{line} {function}", kept))
    by_own = sorted(rows, key=lambda row: -row[1])[:top]
    by_cumulative = sorted((row for row in rows if row[4]), key=lambda row: -row[0])[:top]
    line = "{0:8.2f} s cum {1:8.2f} s own {2:9d} calls  {3}"
    return (["-- by own time --", *(line.format(*row[:4]) for row in by_own),
             "-- by cumulative time (mlx, mlx-lm, claimcheck, probes) --", *(line.format(*row[:4]) for row in by_cumulative)])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", nargs="+", default=SLOWEST_ON_GPU, help="claim ids (pytest -k terms)")
    parser.add_argument("--top", type=int, default=40, help="functions listed per pass")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="claimcheck-profile-") as scratch:
        folder, cache = Path(scratch), Path(scratch, "cache")
        seconds: dict[str, dict[str, float]] = {}
        for name in ("cold", "warm"):
            wall, status, profile, store = one_pass(options.items, cache, folder, name)
            seconds[name] = durations(store)
            print(f"== {name}: {wall:.1f} s wall, rc {status}, item time {sum(seconds[name].values()):.1f} s")
            for line in hot_functions(profile, options.top):
                print(line)
        print("== per item: cold -> warm seconds")
        for item in sorted(seconds["cold"], key=lambda i: -seconds["cold"][i]):
            print(f"{seconds['cold'][item]:8.1f} -> {seconds['warm'].get(item, float('nan')):8.1f}  {item}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
