"""``python -m claimcheck.workflow.summary``: a run's verdicts, and every change against the lock, on the job page.

The claims step's pass or fail says *whether* something changed; this says *what*: a table of
every item's final verdict beside its expected one (``claims/verdicts.lock``), the changed ones
first, each also an annotation at its claim's file and line so it shows on the pull request.
It reports and never fails the job (the claims step does that): exit 0, or 2 when the store
cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from claimcheck.engine import expectations
from claimcheck.engine.expectations import Agreement, Expectations
from claimcheck.engine.result import ItemResult
from claimcheck.numbers import estimate
from claimcheck.outcome.run import RunOutcome, lock_digest
from claimcheck.store import DEFAULT_PATH, EvidenceStore, StoredRun, choose_class

from .github import annotation, table_cell, write_summary

#: Agreements a reviewer must look at, worst first (each is annotated at its finding's CI level).
CHANGES: tuple[Agreement, ...] = (Agreement.CHANGED, Agreement.UNREVIEWED, Agreement.UNDECIDED,
                                  Agreement.NEWLY_DECIDED)


@dataclass(frozen=True)
class VerdictRow:
    """One item of the run as the summary shows it."""

    item_id: str
    verdict: str
    expected: str | None
    agreement: Agreement | None
    figure: str
    path: str
    line: int
    level: str | None = None  # the verdict policy's annotation level for the item

    @property
    def changed(self) -> bool:
        """Whether a reviewer must look at it (it differs from, or is missing in, the lock)."""
        return self.agreement in CHANGES


def _figure(result: ItemResult) -> str:
    decision = result.decision
    if decision is None:
        return ""
    try:
        return estimate(decision.statistic, decision.low, decision.high, decision.confidence_level, decision.n,
                        result.claim.check.unit)
    except (TypeError, ValueError):
        return ""


def _relative(path: str) -> str:
    """A claim file as the repository names it (annotations need paths relative to the checkout)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def shown_outcome(outcome: RunOutcome, lock: Expectations, lock_path: Path) -> tuple[RunOutcome, str | None]:
    """The outcome the summary shows: the run's own, or (named) re-judged against ``lock`` when it differs.

    A run judged against this very lock file (same digest) is shown as it was judged, flags included; a run
    judged against another lock, or stored before judgements were kept, is re-judged against today's lock,
    and the returned note says so.
    """
    judgement = outcome.judgement
    if judgement.recorded and judgement.lock is not None and judgement.digest == lock_digest(lock_path):
        return outcome, None
    return outcome.rejudged(lock, lock_path), f"re-judged against `{lock_path}`; the run was {judgement.describe()}"


def rows(outcome: RunOutcome) -> list[VerdictRow]:
    """The summary's rows: changes first (worst first), then every other item by id."""
    out = []
    for finding in outcome.findings:
        result = finding.result
        if result.control_for is not None:
            continue
        out.append(VerdictRow(result.item_id, result.verdict.value,
                              finding.expected.value if finding.expected is not None else None, finding.agreement,
                              _figure(result), _relative(result.claim.path), result.claim.line,
                              finding.treatment.ci_level))
    order = list(CHANGES)
    return sorted(out, key=lambda r: (order.index(r.agreement) if r.agreement in CHANGES else len(order), r.item_id))


def markdown(run: StoredRun, table: Sequence[VerdictRow], lock_path: Path, lock: Expectations,
             note: str | None = None) -> str:
    """The job summary section for one run (``note``: the outcome was re-judged, and against what)."""
    counts = Counter(row.verdict for row in table)
    lines = [f"### Claims on `{run.machine_class}`", "",
             f"Run `{run.run_id}` ({run.effective_status}): "
             + ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items())) + ".", ""]
    if note:
        lines += [f"Shown {note}.", ""]
    device = run.machine.get("device_override")
    if device:
        lines += [f"MLX ran on the `{device}` device (`CLAIMCHECK_DEVICE={device}`).", ""]
    if run.machine_class not in lock.classes:
        lines += [f"`{lock_path}` has no section for this machine class: the run was judged without expected "
                  "verdicts (a refutation fails). Review the run, then `claimcheck accept` from its store "
                  "(uploaded with the reports) adds the section.", ""]
    changed = [row for row in table if row.changed]
    if changed:
        lines += [f"#### {len(changed)} verdict(s) differ from `{lock_path}`", "",
                  "| item | expected | now | | figure |", "|---|---|---|---|---|"]
        lines += [f"| `{row.item_id}` | {row.expected or '—'} | **{row.verdict}** | "
                  f"{row.agreement.value if row.agreement else ''} | {table_cell(row.figure)} |" for row in changed]
        lines.append("")
    elif run.machine_class in lock.classes:
        lines += [f"Every verdict is the one `{lock_path}` expects.", ""]
    lines += ["<details><summary>Every item</summary>", "",
              "| item | verdict | expected | figure |", "|---|---|---|---|"]
    lines += [f"| `{row.item_id}` | {row.verdict} | {row.expected or '—'} | {table_cell(row.figure)} |"
              for row in table]
    lines += ["", "</details>", ""]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m claimcheck.workflow.summary", description=__doc__.split("\n")[0])
    parser.add_argument("--store", default=str(DEFAULT_PATH), help="evidence store (default: %(default)s)")
    parser.add_argument("--lock", default=str(Path("claims") / expectations.LOCK_NAME),
                        help="expected verdicts (default: %(default)s)")
    parser.add_argument("--run", default=None, help="run id or unique prefix (default: the latest of the class)")
    parser.add_argument("--machine-class", default=None, help="machine class (default: this machine's)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Write the summary; 0 unless the store or the lock cannot be read (2)."""
    args = _parser().parse_args(argv)
    store_path, lock_path = Path(args.store), Path(args.lock)
    if not store_path.exists():
        write_summary(f"### Claims\n\nNo evidence store at `{store_path}`: the claims step stored no run.\n")
        return 0
    try:
        lock = expectations.read(lock_path)
        with EvidenceStore(store_path, readonly=True) as store:
            choice = choose_class(store, args.machine_class)
            run = store.resolve_run(args.run, choice.machine_class)
            outcome, note = shown_outcome(store.outcome(run.run_id), lock, lock_path)
    except Exception as error:  # noqa: BLE001 - StoreError, LockError, an unknown run: one line
        print(f"claimcheck summary: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    table = rows(outcome)
    write_summary(markdown(run, table, lock_path, lock, note))
    for row in table:
        if row.changed and row.agreement is not None:
            message = (f"{row.item_id}: {row.verdict} on {run.machine_class}, expected "
                       f"{row.expected or 'nothing'} ({row.agreement.value}); if it is right: claimcheck accept")
            print(annotation(row.level or "warning", message, file=row.path or None, line=row.line or None,
                             title="claimcheck verdict"))
    print(f"claimcheck summary: run {run.run_id} on {run.machine_class} ({choice.how}); "
          f"{sum(row.changed for row in table)} change(s) against {lock_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
