"""One process against N workers on one GPU: wall time, and every item whose final verdict differs.

Runs ``pytest claims/`` twice from fresh result caches (models stay converted between the two):
once in one process, once with ``-n N`` (each worker capped at its share of the device's memory,
``claimcheck/harness/device_memory.py``; timing items still run alone under the exclusive lock).
Prints both wall times and the items whose recorded outcome differs, with both verdicts and
whether the item times anything. Asserts nothing. Meant for the GPU machine:

    python benchmarks/gpu_workers.py --workers 4 [-- extra pytest args]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(store: Path, workers: int, extra: list[str]) -> tuple[float, int]:
    """Wall seconds and exit status of one ``pytest claims/`` into ``store``."""
    command = [sys.executable, "-m", "pytest", "claims/", "--claims-fresh", "--claims-store", str(store), "-q",
               "-p", "no:cacheprovider", *(["-n", str(workers)] if workers > 1 else []), *extra]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return time.perf_counter() - started, done.returncode


def verdicts(store: Path) -> dict[str, tuple[str, bool]]:
    """Each item's final verdict in the store's newest run (the profiles merged in are older), and whether it times."""
    from claimcheck.store import EvidenceStore

    evidence = EvidenceStore.open_readonly(store)
    try:
        newest = evidence.latest_run()
        assert newest is not None, f"{store}: no run recorded"
        run_id = newest.run_id
        return {finding.item_id: (finding.verdict.value, finding.result.claim.timing)
                for finding in evidence.outcome(run_id).findings}
    finally:
        evidence.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("extra", nargs="*", help="more pytest arguments (after --)")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="claimcheck-workers-") as folder:
        one, many = Path(folder, "one.sqlite"), Path(folder, "many.sqlite")
        wall_one, rc_one = run(one, 1, options.extra)
        wall_many, rc_many = run(many, options.workers, options.extra)
        first, second = verdicts(one), verdicts(many)
    print(f"one process       {wall_one:7.1f} s  rc {rc_one}  {len(first)} items")
    print(f"{options.workers} workers         {wall_many:7.1f} s  rc {rc_many}  {len(second)} items  "
          f"({wall_one / wall_many:.2f}x)")
    moved = sorted(item for item in first.keys() & second.keys() if first[item][0] != second[item][0])
    print(f"verdicts that differ: {len(moved)} of {len(first.keys() & second.keys())}")
    for item in moved:
        kind = "timing" if first[item][1] else "untimed"
        print(f"  {item}: {first[item][0]} -> {second[item][0]} ({kind})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
