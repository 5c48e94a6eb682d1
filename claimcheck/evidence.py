"""Glue between the pytest session and the evidence store, reports and docs gate.

Kept apart from the plugin so the plugin stays about pytest, and so the store
and report modules know nothing about pytest.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import pytest

if TYPE_CHECKING:  # pragma: no cover
    from claimcheck.plugin import ClaimSession
    from claimcheck.store import EvidenceStore


def store_path(config: pytest.Config, rootdir: Path) -> Path:
    option = config.getoption("--claims-store")
    return Path(option) if option else rootdir / "reports" / "claimcheck.sqlite"


def reports_dir(config: pytest.Config, rootdir: Path) -> Path:
    option = config.getoption("--claims-reports")
    return Path(option) if option else rootdir / "reports"


def open_run(config: pytest.Config, rootdir: Path) -> tuple["EvidenceStore", str]:
    """Open the store and start a run with this machine's fingerprint and the options."""
    from claimcheck.machine import fingerprint, machine_class
    from claimcheck.store import EvidenceStore, git_commits

    path = store_path(config, rootdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    merge_profiles(path, rootdir)
    store = EvidenceStore(path)
    machine = fingerprint()
    suite_commit, claims_commit = git_commits(rootdir)
    options = {
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


def record(store: "EvidenceStore", run_id: str | None, outcome: dict[str, Any]) -> None:
    if run_id is not None:
        store.record(run_id, outcome)


def close_run(cs: "ClaimSession", session: pytest.Session, changes: list[Any],
              chains: dict[str, list[str]]) -> list[str]:
    """Write adjusted and stale verdicts, finish the run, build reports; returns report paths."""
    store, run_id = cs.store, cs.run_id
    for change in changes:
        record = cs.records[change.nodeid]
        store.set_verdict(run_id, record["item_id"], record["verdict"], record["reason"],
                          adjusted_verdict=change.adjusted_verdict, adjusted_pvalue=change.adjusted_pvalue)
    for claim_id, chain in chains.items():
        items = [r["item_id"] for r in cs.records.values() if r["claim_id"] == claim_id and r.get("stale")]
        if items:
            store.mark_stale(run_id, items, "stale: premise did not hold: " + " -> ".join(chain))
    interrupted = session.shouldstop or session.shouldfail or session.exitstatus == pytest.ExitCode.INTERRUPTED
    store.finish_run(run_id, complete=not interrupted)
    cs.drift_lines = [drift.message() for drift in store.drift(run_id)]
    from claimcheck.report import build_reports

    out = reports_dir(session.config, cs.rootdir)
    result = build_reports(store, run_id, out)
    return [str(result.index_md), str(result.index_html)]


def latest_verdicts(cs: "ClaimSession", claim_ids: Iterable[str]) -> dict[str, str]:
    """Latest verdict on this machine class of claims not run in this session."""
    from claimcheck.machine import fingerprint, machine_class

    wanted = set(claim_ids)
    klass = machine_class(fingerprint())
    found: dict[str, str] = {}
    for run in cs.store.runs(klass):
        if run["run_id"] == cs.run_id:
            continue
        for result in cs.store.results(run["run_id"]):
            if result["claim_id"] in wanted and result["claim_id"] not in found:
                found[result["claim_id"]] = result["verdict"]
        if wanted <= set(found):
            break
    return found


def gate_docs(cs: "ClaimSession", paths: list[str]) -> int:
    """Run the docs gate after the session; print its lines; return the error count."""
    from claimcheck.docs_gate import check_docs
    from claimcheck.machine import fingerprint, machine_class

    report = check_docs(paths, cs.store, claim_paths=[str(cs.rootdir / "claims")],
                        machine_class=machine_class(fingerprint()),
                        reports_dir=str(reports_dir(cs.config, cs.rootdir)))
    terminal = cs.config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None and report.problems:
        terminal.section("claimcheck docs gate", sep="-")
        errors = set(map(id, report.errors))
        for problem in report.problems:
            terminal.write_line(str(problem), red=id(problem) in errors)
    return len(report.errors)
