"""Glue between a pytest run and the evidence store, reports and docs gate.

Kept apart from the plugin so the plugin stays about pytest, and so the store
and report modules know nothing about pytest. Every function takes what it
needs and returns values; none of them changes a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from claimcheck.errors import ClaimcheckError
from claimcheck.engine.result import ItemResult
from claimcheck.verdict import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from claimcheck.outcome.run import RunOutcome
    from claimcheck.pytest_plugin.session import ClaimSession
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


def prepare_store(config: pytest.Config, rootdir: Path) -> None:
    """Check the store and the report folder before any item runs; a fault is one line (exit 4).

    A file at the store's path that is not a claimcheck store is left untouched: the run writes
    a fresh store beside it, and the warning naming that store is shown now and in the summary.
    """
    from claimcheck.pytest_plugin import store_faults

    if config.getoption("--claims-no-store") or store_faults.plan_key in config.stash:
        return
    try:
        plan = store_faults.plan_store(store_path(config, rootdir))
        store_faults.check_reports(reports_dir(config, rootdir))
    except store_faults.StoreFault as fault:
        raise pytest.UsageError(str(fault)) from None
    config.stash[store_faults.plan_key] = plan
    if plan.warning:
        store_faults.note(config, plan.warning)
        terminal = config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(plan.warning, yellow=True)


def record_result(cs: ClaimSession, result: ItemResult) -> None:
    """Store one item's result as it arrives (opening the run on the first); a failed write is one line.

    The write is one transaction per item, so every result stored before a failure is kept; the
    failure ends the session as a usage error, since later items could not be stored either.
    """
    import sqlite3

    from claimcheck.pytest_plugin import store_faults
    from claimcheck.store import StoreError

    config = cs.config
    try:
        if cs.store is None:  # opened on the first claim result, so plain test runs leave no store
            prepare_store(config, cs.rootdir)
            cs.store, cs.run_id = open_run(config, cs.rootdir)
        if cs.run_id is not None:
            _record_plot(cs, cs.store, cs.run_id, result.claim.probe.name)
            cs.store.record(cs.run_id, result)
    except (StoreError, sqlite3.Error, OSError) as error:
        path = chosen_store(config, cs.rootdir)
        stored = len(cs.store.results(cs.run_id)) if cs.store is not None and cs.run_id else 0
        line = store_faults.write_fault(path, error, stored)
        store_faults.note(config, line, raised=True)
        raise pytest.UsageError(line) from None


_plotted_key = pytest.StashKey[set[str]]()


def _record_plot(cs: ClaimSession, store: EvidenceStore, run_id: str, probe_name: str) -> None:
    """Keep the plot declaration of an item's probe with the run, once per probe (reports read it there)."""
    from claimcheck.probing.registry import UnknownProbeError, get_probe
    from claimcheck.store import OutputUnit, StoredPlot

    done = cs.config.stash.setdefault(_plotted_key, set())
    if probe_name in done:
        return
    done.add(probe_name)
    try:
        cs.ensure_probes()  # under xdist the controller has not loaded them yet
        registered = get_probe(probe_name)
    except (UnknownProbeError, ClaimcheckError):
        return
    if registered.plot is not None:
        units = {name: OutputUnit(output.unit) for name, output in registered.outputs.items()}
        store.record_plot(run_id, StoredPlot(probe_name, registered.plot, units))


def record_hung(cs: ClaimSession, result: ItemResult) -> str:
    """Store the ``error`` result of an item stuck in native code and close the run as incomplete.

    Called from the watcher thread just before the process ends (:mod:`claimcheck.engine.hang_watch`);
    returns the one line printed then. Under xdist a worker cannot write the store: its item is
    reported by xdist as crashed.
    """
    where = ""
    if not _is_worker(cs.config) and not cs.config.getoption("--claims-no-store"):
        try:
            record_result(cs, result)
            if cs.store is not None and cs.run_id is not None:
                cs.store.finish_run(cs.run_id, complete=False)
                where = f"; stored as `error` in run {cs.run_id} of {cs.store.path}, marked incomplete"
        except Exception as error:  # noqa: BLE001 - the process ends either way; the line says what was kept
            where = f"; it could not be stored ({' '.join(str(error).split())})"
    capture = cs.config.pluginmanager.get_plugin("capturemanager")
    if capture is not None:  # give the line the terminal, not the item's captured output
        try:
            capture.suspend_global_capture(in_=False)
        except Exception:  # noqa: BLE001 - the line still goes to stderr, captured or not
            pass
    return f"claimcheck: {result.item_id}: {result.reason}{where}"


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def chosen_store(config: pytest.Config, rootdir: Path) -> Path:
    """The store this run writes: the one asked for, or the fresh one beside a file that is not a store."""
    from claimcheck.pytest_plugin import store_faults

    plan = config.stash.get(store_faults.plan_key, None)
    return plan.path if plan is not None else store_path(config, rootdir)


def item_history(config: pytest.Config, rootdir: Path, item_id: str, machine_class: str,
                 probe: Mapping[str, Any] | None = None) -> list[float]:
    """The item's estimates in earlier complete runs on this machine class, for its between-run component.

    ``probe`` (the claim's recorded probe) keeps only runs that measured the same design.

    Read-only; no store (or ``--claims-no-store``, or a store that cannot be read) means no
    history, and the item's decision then says it had none.
    """
    if config.getoption("--claims-no-store"):
        return []
    path = chosen_store(config, rootdir)
    if not path.is_file():
        return []
    from claimcheck.store import EvidenceStore

    try:
        with EvidenceStore.open_readonly(path) as store:
            return store.item_estimates(item_id, machine_class, probe=probe)
    except (ClaimcheckError, sqlite3.Error):
        return []


def open_run(config: pytest.Config, rootdir: Path) -> tuple[EvidenceStore, str]:
    """Open the store and start a run with this machine's fingerprint and the options."""
    from claimcheck.machine import fingerprint, machine_class
    from claimcheck.store import EvidenceStore, git_commits

    path = chosen_store(config, rootdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    merge_profiles(path, rootdir)
    store = EvidenceStore(path)
    machine = fingerprint()
    klass = machine_class(machine)
    from claimcheck.pytest_plugin.shard import shards_key

    shards = config.stash.get(shards_key, None)
    if shards:  # adjudicated from shards: the run is theirs, measured on their machine
        machine, klass = dict(shards[0].machine), shards[0].machine_class
    suite_commit, claims_commit = git_commits(rootdir)
    options: dict[str, Any] = {
        name: config.getoption(f"--claims-{name}")
        for name in ("alpha", "seed", "strict", "budget-scale", "fresh", "family", "cascade", "cv-bound", "profile")
    }
    options.update(run_selection(config))
    if shards:
        options["merged_from"] = [run.run_id for run in shards]
    options["args"] = list(config.args)
    options["selection"] = {"keyword": config.option.keyword, "markexpr": config.option.markexpr}
    run_id = store.begin_run(machine=machine, machine_class=klass, options=options,
                             suite_commit=suite_commit, claims_commit=claims_commit)
    return store, run_id


def run_selection(config: pytest.Config) -> dict[str, Any]:
    """What the run's record keeps of carrying and sharding, and the family options a merged run reuses.

    A shard's record names its shard and matrix (``shard: {index, total, group}``), so that
    ``claimcheck adjudicate`` finds the shards of one matrix in a merged store.
    """
    found: dict[str, Any] = {"family-alpha": config.getoption("--claims-family-alpha"),
                             "controls": bool(config.getoption("--claims-controls"))}
    if config.getoption("--claims-changed") or config.getoption("--since-run"):
        found["changed"] = {"since_run": config.getoption("--since-run")}
    chosen = config.getoption("--claims-shard")
    if chosen:
        from claimcheck.pytest_plugin.shard import parse_shard, shard_group

        shard = parse_shard(chosen)
        found["shard"] = {"index": shard.index, "total": shard.total, "group": shard_group()}
    return found


def merge_profiles(path: Path, rootdir: Path) -> None:
    """Bring the committed machine profiles (``reports/profiles/*.sqlite``) into the store.

    They are other machines' runs (e.g. the H200), so history and reports can
    show them beside this machine's; merging is idempotent.
    """
    from claimcheck.store import merge

    profiles = sorted((rootdir / "reports" / "profiles").glob("*.sqlite"))
    if profiles:
        merge(path, profiles)


#: The exit statuses of a session that ran to its end (whatever its verdicts); any other
#: (interrupted, internal error, usage error) leaves its run ``incomplete``.
FINISHED = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED)


def session_finished(session: pytest.Session) -> bool:
    """Whether the session ran to its end: only then is its run ``complete``."""
    return session.exitstatus in FINISHED


def close_run(store: EvidenceStore, run_id: str, before: Sequence[ItemResult], after: Sequence[ItemResult], *,
              complete: bool, reports: Path, config: pytest.Config | None = None,
              outcome: RunOutcome | None = None) -> tuple[list[str], list[str]]:
    """Append the run-level adjustments, record the run's outcome, finish the run and build reports.

    A store or report folder that fails here is one line (shown in the summary; the session
    ends with exit 4), never a traceback: what was stored stays stored.

    Args:
        before, after: every result as recorded and after the run-level steps, in the same order.
        config: where a fault line is noted (without it a fault is raised as :class:`StoreFault`).
        outcome: the run's outcome; its judgement is stored with the run, and the reports render it.

    Returns:
        The drift lines and the report paths.
    """
    import sqlite3

    from claimcheck.pytest_plugin import store_faults
    from claimcheck.report import ReportError, build_reports
    from claimcheck.store import StoreError

    def fault(line: str) -> tuple[list[str], list[str]]:
        if config is None:
            raise store_faults.StoreFault(line)
        if not store_faults.stopped(config):  # the line that stopped the run already says where and why
            store_faults.note(config, line)
        return [], []

    try:
        stored = {result.item_id for result in store.results(run_id)}  # a result whose write failed is not
        for old, new in zip(before, after):
            if new.item_id in stored:
                store.add_adjustments(run_id, new.item_id, new.adjustments[len(old.adjustments):])
        if outcome is not None:
            store.record_outcome(outcome)
        store.finish_run(run_id, complete=complete)
    except (StoreError, sqlite3.Error, OSError) as error:
        return fault(store_faults.write_fault(store.path, error, len(store.results(run_id))))
    if config is not None and store_faults.stopped(config):
        return [], []  # the run stopped on a store fault: its reports would show a part as the whole
    try:
        built = build_reports(store, run_id, reports)  # renders the recorded outcome; the run's drift computed once
    except (ReportError, OSError, sqlite3.Error) as error:
        return fault(store_faults.report_fault(reports, store.path, error))
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
    from claimcheck.gate import check_docs
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
