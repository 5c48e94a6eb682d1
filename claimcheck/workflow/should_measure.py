"""Whether a workflow run must measure: on a schedule or by hand always, on a pull request only if it can change a verdict.

A docs-only pull request is judged in seconds by the ``docs-gate`` job against the committed
evidence; re-measuring every claim for it would only make it wait. A pull request that touches
``claims/``, ``probes/``, the package or its dependencies can change verdicts, so it is measured.
``python -m claimcheck.workflow.should_measure --event NAME [--base REF]`` writes ``measure=true``
or ``measure=false`` to ``$GITHUB_OUTPUT`` (and prints it). Standard library only: it runs before
anything is installed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

#: Paths whose change can change a verdict (folders end with "/").
MEASURED = ("claims/", "probes/", "claimcheck/", "pyproject.toml", "setup.py")


def can_change_verdicts(paths: Sequence[str]) -> list[str]:
    """The changed paths that can change a verdict."""
    return [p for p in paths if any(p == m or (m.endswith("/") and p.startswith(m)) for m in MEASURED)]


def main(argv: Sequence[str] | None = None) -> int:
    """0, with ``measure=...`` written; 2 when git cannot say what changed."""
    parser = argparse.ArgumentParser(prog="python -m claimcheck.workflow.should_measure")
    parser.add_argument("--event", required=True, help="github.event_name")
    parser.add_argument("--base", default="", help="the base ref of a pull request (origin/main)")
    args = parser.parse_args(argv)
    if args.event != "pull_request" or not args.base:
        reasons, measure = [f"a {args.event} run"], True
    else:
        done = subprocess.run(["git", "diff", "--name-only", f"{args.base}...HEAD"], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"claimcheck should_measure: git diff {args.base}...HEAD: {done.stderr.strip()}", file=sys.stderr)
            return 2
        reasons = can_change_verdicts(done.stdout.split())
        measure = bool(reasons)
    line = f"measure={'true' if measure else 'false'}"
    output = os.environ.get("GITHUB_OUTPUT")
    if output:
        with Path(output).open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    print(f"{line} ({', '.join(reasons[:5]) if reasons else 'only docs changed: the docs-gate job judges them'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
