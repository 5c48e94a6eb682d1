"""Run the claims against the lock; on a machine class the lock has no section for, propose one instead of failing.

``python -m claimcheck.workflow.claims_run [--lock PATH] [--proposal DIR] -- PYTEST_ARGS...`` runs
``pytest claims/ PYTEST_ARGS``. Where the lock has a section for this machine's class (or judges
the items through its every-class section only), pytest's exit status is the step's. On a class
with no section of its own, a refutation is not a regression but the first word on that machine:
the run is written as the proposed expectations (``DIR/verdicts.lock``, the lock with this class's
section added, and ``DIR/claimcheck.sqlite``, the run's store) for the job to upload, the job
summary tells the reviewer how to accept it, and the step passes unless an item ended in error.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from claimcheck.engine import expectations
from claimcheck.store import DEFAULT_PATH, EvidenceStore, choose_class
from claimcheck.outcome.policy import overturned, treat

from .github import annotation, write_summary

PROPOSAL = Path(".claimcheck") / "proposed"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m claimcheck.workflow.claims_run",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--lock", default=str(Path("claims") / expectations.LOCK_NAME))
    parser.add_argument("--store", default=str(DEFAULT_PATH))
    parser.add_argument("--proposal", default=str(PROPOSAL), help="folder for the proposed lock (default: %(default)s)")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed on to pytest claims/")
    return parser


def propose(store_path: Path, lock_path: Path, folder: Path) -> str | None:
    """Write the proposal for a first run on a class without a section; the summary text, or ``None`` if not one."""
    lock = expectations.read(lock_path)
    with EvidenceStore(store_path, readonly=True) as store:
        run = store.resolve_run(None, choose_class(store).machine_class)
        results = [r for r in store.results(run.run_id) if r.result.control_for is None]
    if run.machine_class in lock.classes:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    proposed = expectations.accepted(lock, run.machine_class, run.run_id, [(r.item_id, r.verdict) for r in results])
    expectations.write(folder / expectations.LOCK_NAME, proposed)
    shutil.copyfile(store_path, folder / "claimcheck.sqlite")
    section = proposed.classes[run.machine_class]
    refuted = sorted(k for k, v in section.items.items() if overturned(v))
    independent = sum(1 for r in results if overturned(r.verdict) and lock.covers(run.machine_class, r.item_id))
    errors = [r.item_id for r in results if treat(r.verdict).category == "error"]
    lines = [f"### First run on `{run.machine_class}`", "",
             f"`{lock_path}` has no section for this machine class, so run `{run.run_id}` is recorded as its "
             f"proposed expectations ({len(section.items)} item(s), {len(refuted)} overturned beyond the "
             f"{independent} the every-class section already expects) instead of failing each refutation.", "",
             "Review the uploaded artifact, then add the section:", "", "```bash",
             "claimcheck accept --from-artifact PATH/TO/DOWNLOADED/ARTIFACT", "```", ""]
    if refuted:
        lines += ["| proposed refutation or contradiction |", "|---|", *[f"| `{item}` |" for item in refuted], ""]
    if errors:
        lines += [f"{len(errors)} item(s) ended in error (not expectations): " + ", ".join(f"`{e}`" for e in errors),
                  ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """pytest's status where the lock knows this class; else 0 unless an item ended in error."""
    args = _parser().parse_args(argv)
    lock = ["--claims-lock", args.lock]  # the run is judged against the lock the proposal reads
    done = subprocess.run([sys.executable, "-m", "pytest", "claims/", *lock, *args.pytest_args])
    store_path, lock_path = Path(args.store), Path(args.lock)
    if done.returncode not in (0, 1) or not store_path.exists():
        return done.returncode or 1  # interrupted, a usage or internal error: no run to propose from
    try:
        summary = propose(store_path, lock_path, Path(args.proposal))
    except Exception as error:  # noqa: BLE001 - StoreError, LockError: one line
        print(f"claimcheck claims_run: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    if summary is None:
        return done.returncode
    return report_proposal(summary, args.proposal)


def report_proposal(summary: str, folder: str) -> int:
    """Write the proposal's summary and notice; 1 when an item ended in error, else 0 (the undecided pass)."""
    write_summary(summary)
    print(annotation("notice", f"first run on this machine class: proposed expectations in {folder}; "
                               "review them, then claimcheck accept --from-artifact", title="claimcheck lock"))
    return 1 if "ended in error" in summary else 0


if __name__ == "__main__":
    raise SystemExit(main())
