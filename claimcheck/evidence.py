"""Glue between a pytest run and the evidence store, reports and docs gate.

Kept apart from the plugin so the plugin stays about pytest, and so the store
and report modules know nothing about pytest. Every function takes what it
needs and returns values; none of them changes a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from claimcheck.result import ItemResult
from claimcheck.verdict import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from claimcheck.store import EvidenceStore


def store_path(config: pytest.Config, rootdir: Path) -> Path:
    """Where this run's evidence goes: ``--claims-store`` or ``<rootdir>/reports/claimcheck.sqlite``."""
    option = config.getoption("--claims-store")
    return Path(option) if option else rootdir / "reports" / "claimcheck.sqlite"


RUN_REPORTS = Path(".claimcheck") / "reports"


def reports_dir(config: pytest.Config, rootdir: Path) -> Path:
    """Where a run's reports go: ``--claims-reports`` or ``<rootdir>/.claimcheck/reports``.

    The default lies in an ignored folder, so a run never modifies tracked files; the committed
    ``reports/`` change only through ``claimcheck publish``.
    """
    option = config.getoption("--claims-reports")
    return Path(option) if option else rootdir / RUN_REPORTS


def open_run(config: pytest.Config, rootdir: Path) -> tuple[EvidenceStore, str]:
    """Open the store and start a run with this machine's fingerprint and the options."""
    from claimcheck.machine import fingerprint, machine_class
    from claimcheck.store import EvidenceStore, git_commits

    path = store_path(config, rootdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    merge_profiles(path, rootdir)
    store = EvidenceStore(path)
    machine = fingerprint()
    suite_commit, claims_commit = git_commits(rootdir)
    options: dict[str, Any] = {
        name: config.getoption(f"--claims-{name}")
        for name in ("alpha", "seed", "strict", "budget-scale", "fresh", "family", "cascade", "cv-bound", "profile")
    }
    options["args"] = list(config.args)
    run_id = store.begin_run(machine=machine, machine_class=machine_class(machine), options=options,
                             suite_commit=suite_commit, claims_commit=claims_commit)
    return store, run_id


def merge_profiles(path: Path, rootdir: Path) -> None:
    """Bring the committed machine profiles (``reports/profiles/*.sqlite``) into the store.

    They are other machines' runs (e.g. the H200), so history and reports can
    show them beside this machine's; merging is idempotent.
    """
    from claimcheck.store import merge

    profiles = sorted((rootdir / "reports" / "profiles").glob("*.sqlite"))
    if profiles:
        merge(path, profiles)


def close_run(store: EvidenceStore, run_id: str, before: Sequence[ItemResult], after: Sequence[ItemResult], *,
              complete: bool, reports: Path) -> tuple[list[str], list[str]]:
    """Append the run-level adjustments, finish the run and build reports.

    Args:
        before, after: every result as recorded and after the run-level steps, in the same order.

    Returns:
        The drift lines and the report paths.
    """
    for old, new in zip(before, after):
        store.add_adjustments(run_id, new.item_id, new.adjustments[len(old.adjustments):])
    store.finish_run(run_id, complete=complete)
    from claimcheck.report import build_reports

    built = build_reports(store, run_id, reports)  # computes the run's drift once, for reports and summary
    return [drift.message() for drift in built.drift], [str(built.index_md), str(built.index_html)]


def latest_verdicts(store: EvidenceStore, run_id: str | None, claim_ids: Iterable[str]) -> dict[str, Verdict]:
    """Latest verdict on this machine class of claims not run in this session."""
    from claimcheck.machine import fingerprint, machine_class

    wanted = set(claim_ids)
    klass = machine_class(fingerprint())
    found: dict[str, Verdict] = {}
    for run in store.runs(klass):
        if run.run_id == run_id:
            continue
        for result in store.results(run.run_id):
            if result.claim_id in wanted and result.claim_id not in found:
                found[result.claim_id] = result.verdict
        if wanted <= set(found):
            break
    return found


def gate_docs(store: EvidenceStore | None, paths: list[str], claims_dirs: Sequence[Path], reports: Path,
              write_line: Any) -> int:
    """Run the docs gate after the session; print its lines through ``write_line``; return the error count."""
    from claimcheck.docs_gate import check_docs
    from claimcheck.machine import fingerprint, machine_class

    report = check_docs(paths, store, claim_paths=[str(folder) for folder in claims_dirs],
                        machine_class=machine_class(fingerprint()), reports_dir=str(reports))
    if report.problems:
        errors = set(map(id, report.errors))
        for problem in report.problems:
            write_line(str(problem), red=id(problem) in errors)
    return len(report.errors)


def counts(results: Mapping[str, ItemResult]) -> dict[Verdict, int]:
    """How many items ended with each final verdict."""
    out: dict[Verdict, int] = {}
    for result in results.values():
        out[result.verdict] = out.get(result.verdict, 0) + 1
    return out
