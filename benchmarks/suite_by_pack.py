"""Whole-suite cold time by pack: ``pytest claims/<pack>`` with empty model and result caches, one pack at a time.

Each pack runs in its own ``pytest`` process against a fresh ``CLAIMCHECK_CACHE`` (so models are
converted and every result computed, as on a fresh machine) and without writing the evidence store,
then the whole suite runs once more in one process against one fresh cache (packs then share the
converted models and the curve traces). Prints each wall time, the slowest items, the load average
before and after (on a shared machine the times are only as good as what else ran), and asserts
nothing. Run it in a snapshot of the tree, not in a tree others are editing.

    python benchmarks/suite_by_pack.py --packs curves roofline arithmetic --whole

``--runs STORE:RUN ...`` measures nothing: it prints the item time by pack of runs already recorded (an
evidence store or a committed profile, and a run id or its unique prefix), side by side, so that runs on
two machines, or before and after a change, compare pack by pack; then, for each run after the first,
the items that took longer there than in the first run, each with whether the two ran the same params
(a machine profile that asks for more work explains a slower item; the same params do not):

    python benchmarks/suite_by_pack.py --runs reports/profiles/cuda-nvidia-h100-80gb-hbm3-64-128gib.sqlite:20261206T101532Z \
        reports/profiles/cuda-nvidia-h100-80gb-hbm3-64-128gib.sqlite:20261206T100857Z
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

from _common import recorded_run

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


Timed = dict[str, tuple[float, str]]  # item id -> (seconds, the params it ran with, as recorded)


def recorded(spec: str) -> tuple[str, dict[str, float], float, Timed]:
    """``STORE:RUN`` -> (the run's label, item seconds by pack, wall seconds from start to finish, its items)."""
    with recorded_run(spec) as (connection, run_id, machine_class):
        started, finished = connection.execute("SELECT started, finished FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        rows = connection.execute(
            "SELECT c.path, r.item_id, r.duration, r.params FROM results r "
            "JOIN claims c ON c.run_id = r.run_id AND c.claim_id = r.claim_id WHERE r.run_id = ?", (run_id,)).fetchall()
        wall = connection.execute("SELECT (julianday(?) - julianday(?)) * 86400", (finished, started)).fetchone()[0]
    packs: dict[str, float] = {}
    timed: Timed = {}
    for path, item, duration, params in rows:
        parts = Path(path or "?").parts
        pack = parts[parts.index("claims") + 1] if "claims" in parts[:-1] else Path(path or "?").parent.name
        packs[pack] = packs.get(pack, 0.0) + float(duration or 0.0)
        timed[item] = (float(duration or 0.0), params or "")
    return f"{run_id} ({machine_class})", packs, float(wall or 0.0), timed


def slower_lines(first: Timed, other: Timed, *, at_least: float = 1.0) -> list[str]:
    """Items of ``other`` slower than in ``first`` by ``at_least`` seconds or more, most slower first."""
    slower = [(item, first[item], timed) for item, timed in other.items()
              if item in first and timed[0] >= first[item][0] + at_least]
    slower.sort(key=lambda row: row[1][0] - row[2][0])
    return [f"  {there:7.1f} s against {here:7.1f} s  {'same params' if p == q else 'params differ'}  {item}"
            for item, (here, p), (there, q) in slower]


def compare(specs: list[str]) -> None:
    runs = [recorded(spec) for spec in specs]
    packs = sorted({pack for _, by_pack, _, _ in runs for pack in by_pack})
    for index, (label, _, _, _) in enumerate(runs):
        print(f"[{index}] {label}")
    print(f"{'pack':14s}" + "".join(f"{f'[{i}] s':>12s}" for i in range(len(runs))))
    for pack in packs:
        print(f"{pack:14s}" + "".join(f"{by_pack.get(pack, 0.0):12.1f}" for _, by_pack, _, _ in runs))
    print(f"{'item time':14s}" + "".join(f"{sum(by_pack.values()):12.1f}" for _, by_pack, _, _ in runs))
    print(f"{'start->finish':14s}" + "".join(f"{wall:12.1f}" for _, _, wall, _ in runs))
    first = runs[0][3]
    for index, (_, _, _, timed) in enumerate(runs[1:], start=1):
        lines = slower_lines(first, timed)
        print(f"items slower on [{index}] than on [0] by 1 s or more: {len(lines)}")
        print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--packs", nargs="*", default=["curves", "roofline", "arithmetic"])
    parser.add_argument("--whole", action="store_true", help="also the whole suite in one process")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments, e.g. '-n 2'")
    parser.add_argument("--runs", nargs="+", metavar="STORE:RUN", help="print recorded runs' time by pack instead")
    args = parser.parse_args()
    if args.runs:
        compare(args.runs)
        return
    extra = args.pytest_args.split()
    total = sum(run([f"claims/{pack}"], pack, extra) for pack in args.packs)
    print(f"{'packs, sum':12s} {total:7.1f} s")
    if args.whole:
        run(["claims/"], "whole suite", extra)


if __name__ == "__main__":
    main()
