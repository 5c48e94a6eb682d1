"""Whether a workflow run must measure, and whether it must run the tests: on a schedule or by hand always.

A docs-only pull request is judged in seconds by the ``docs-gate`` job against the committed
evidence; re-measuring every claim for it would only make it wait. A pull request that touches
``claims/``, ``probes/``, the package or its dependencies can change verdicts, so it is measured.
The tests run when they, the package, the workflows or the project configuration change: a pull
request that breaks only a test must not go green.
``python -m claimcheck.workflow.should_measure --event NAME [--base REF]`` writes ``measure=...`` and
``test=...`` (``true`` or ``false``) to ``$GITHUB_OUTPUT`` (and prints them). Standard library only.
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


#: Paths whose change can break a test: the tests, the package, the workflows and the project's configuration.
TESTED = ("tests/", "conftest.py", "claimcheck/", "probes/", ".github/", "README.md", "pyproject.toml", "setup.py", "setup.cfg",
          "pytest.ini", "tox.ini")


def _matching(paths: Sequence[str], prefixes: Sequence[str]) -> list[str]:
    return [p for p in paths if any(p == m or (m.endswith("/") and p.startswith(m)) for m in prefixes)]


def can_change_verdicts(paths: Sequence[str]) -> list[str]:
    """The changed paths that can change a verdict."""
    return _matching(paths, MEASURED)


def can_break_tests(paths: Sequence[str]) -> list[str]:
    """The changed paths that can break a test."""
    return _matching(paths, TESTED)


def main(argv: Sequence[str] | None = None) -> int:
    """0, with ``measure=...`` written; 2 when git cannot say what changed."""
    parser = argparse.ArgumentParser(prog="python -m claimcheck.workflow.should_measure")
    parser.add_argument("--event", required=True, help="github.event_name")
    parser.add_argument("--base", default="", help="the base ref of a pull request (origin/main)")
    args = parser.parse_args(argv)
    if args.event != "pull_request" or not args.base:
        measured = tested = [f"a {args.event} run"]
    else:
        done = subprocess.run(["git", "diff", "--name-only", f"{args.base}...HEAD"], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"claimcheck should_measure: git diff {args.base}...HEAD: {done.stderr.strip()}", file=sys.stderr)
            return 2
        changed = done.stdout.split()
        measured, tested = can_change_verdicts(changed), can_break_tests(changed)
    lines = [(f"measure={'true' if measured else 'false'}",
              ", ".join(measured[:5]) if measured else "nothing that can change a verdict changed"),
             (f"test={'true' if tested else 'false'}",
              ", ".join(tested[:5]) if tested else "no test, package, workflow or project config changed")]
    output = os.environ.get("GITHUB_OUTPUT")
    if output:
        with Path(output).open("a", encoding="utf-8") as handle:
            handle.writelines(line + "\n" for line, _ in lines)
    for line, why in lines:
        print(f"{line} ({why})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
