"""The pytest plugin: claim YAML files become test items decided by statistics.

Registered through the ``pytest11`` entry point so that any repository that
installs claimcheck can run ``pytest claims/`` without copying a conftest.
Heavy libraries are imported lazily: collecting claims never imports MLX.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from claimcheck.engine import exclusive as locking
from claimcheck.pytest_plugin import progress as progress_report
from claimcheck.claim import Claim
from claimcheck.errors import ClaimcheckError, ClaimError
from claimcheck.engine.options import RunOptions
from claimcheck.pytest_plugin.session import ClaimSession
from claimcheck.suggest import closest

if TYPE_CHECKING:  # pragma: no cover - the statistics load with the first claim, not with the plugin
    from claimcheck.engine.result import ItemResult

PROPERTY = "claimcheck"

options_key = pytest.StashKey[RunOptions]()
outcome_key = pytest.StashKey["ItemResult"]()
session_key = pytest.StashKey["ClaimSession"]()
started_key = pytest.StashKey[float]()
probe_error_key = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("claimcheck", "claim verification")
    group.addoption("--claims-alpha", type=float, default=None, help="override every claim's alpha (error rate of each decision)")
    group.addoption("--claims-seed", type=int, default=0, help="run seed; each item derives a stable seed from it")
    group.addoption("--claims-strict", action="store_true",
                    help="treat inconclusive, inconsistent and stale verdicts as failures")
    group.addoption("--claims-lock", default=None, metavar="PATH",
                    help="expected verdicts per machine class (default: <rootdir>/claims/verdicts.lock, written by "
                         "`claimcheck accept`); with it a known refutation is an expected failure and a changed "
                         "or unreviewed verdict fails the run")
    group.addoption("--claims-budget-scale", type=float, default=1.0, help="multiply every claim's sample and time budget")
    group.addoption("--claims-fresh", action="store_true",
                    help="recompute expensive probe results cached by earlier runs (once per run, shared by its claims)")
    group.addoption("--claims-family", choices=("holm", "bh", "none"), default="holm",
                    help="multiple-comparison control of refutations and holds over the suite's sampled, "
                         "in-scope items (default: holm)")
    group.addoption("--claims-family-alpha", type=float, default=None,
                    help="the family's error rate (default: the mean alpha of its items)")
    group.addoption("--claims-controls", action="store_true",
                    help="also run each claim's positive control (`control:`), which must be refuted; a claim "
                         "whose control is not refuted is reported as not shown able to fail here")
    group.addoption("--claims-cascade", choices=("report", "fail"), default="report",
                    help="stale claims (a premise did not hold): report them, or fail them")
    group.addoption("--claims-store", default=None, help="evidence store file (default: <rootdir>/reports/claimcheck.sqlite)")
    group.addoption("--claims-reports", default=None, help="folder for the run's reports (default: <rootdir>/.claimcheck/reports, "
                     "ignored by git; `claimcheck publish` writes the committed reports/)")
    group.addoption("--claims-no-store", action="store_true", help="do not write the evidence store or reports")
    group.addoption("--claims-docs", nargs="*", default=None, metavar="PATH", help="after the run, gate these findings docs against the results")
    group.addoption("--claims-profile", default=None, metavar="NAME",
                    help="machine profile whose params/budgets scale the claims (default: this machine's backend)")
    group.addoption("--claims-warm-start", type=int, default=None, metavar="N",
                    help="background processes that compile GPU kernels ahead of the items (default: up to 2 on a "
                         "CUDA backend, none elsewhere; 0 turns them off)")
    group.addoption("--claims-cv-bound", type=float, default=0.10, help="timing claims with a coefficient of variation above this are inconclusive")
    group.addoption("--claims-progress", type=float, default=10.0, metavar="SECONDS",
                    help="in a log (not a TTY), print each running item's look, samples and elapsed time at least "
                         "this often, under xdist too (0: never)")
    group.addoption("--claims-changed", action="store_true",
                    help="measure only items whose content key (claim, probe source, model weights, versions, "
                         "machine class) differs from the newest complete run of this machine class in the store "
                         "or the committed profiles; carry the others forward")
    group.addoption("--since-run", default=None, metavar="ID",
                    help="with or without --claims-changed: compare each item's content key with this run only")
    group.addoption("--claims-shard", default=None, metavar="K/N",
                    help="run shard K of N: the items split by recorded durations, a timing claim whole on one "
                         "shard; merge the shards' stores (`claimcheck merge`), then `claimcheck adjudicate`")
    group.addoption("--claims-adjudicate", default=None, metavar="STORE",
                    help="measure nothing: decide the shard runs of one matrix in STORE as one run (family, cascade, "
                         "lock), stored as a new run; what `claimcheck adjudicate` runs")
    # `claimcheck validate --root` has no pytest twin: claimed here so that `pytest --root X` is a clear error.
    group.addoption("--root", default=None, help=argparse.SUPPRESS)
    parser.addini("claims_dirs", "folders (relative to rootdir) whose YAML files are claims", type="args", default=["claims"])
    parser.addini("claims_probes", "the project's probe sources: folders or .py files relative to rootdir, or dotted "
                  "module names (default: [tool.claimcheck] probes in pyproject.toml, else <rootdir>/probes)",
                  type="args", default=[])


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "portable: claim meant to hold on every backend")
    config.addinivalue_line("markers", "as_stated: claim scoped to the machine the source doc measured")
    config.addinivalue_line("markers", "exclusive: timing claim that never runs beside another item")
    config.addinivalue_line("markers", "control: a claim's positive control (--claims-controls), which must be refuted")
    from claimcheck.engine.options import option_problems

    problems = option_problems(config.getoption)
    if problems:  # one line per bad value, before anything is collected or run
        raise pytest.UsageError("\n".join(problems))
    try:
        from claimcheck.harness.blas import ensure_fast_blas

        ensure_fast_blas()
    except ImportError:  # pragma: no cover - optional on platforms without the harness
        pass
    from claimcheck.machine import apply_device

    try:
        apply_device()  # CLAIMCHECK_DEVICE: MLX's default device, set before any probe makes a stream
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    from claimcheck.harness.device_memory import share_device_memory, worker_share

    try:
        worker_share(0, os.environ)  # a bad $CLAIMCHECK_DEVICE_MEMORY is one line, before anything runs
        if _is_worker(config):
            share_device_memory()  # several workers on one GPU: each caps its pool at its share
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    rootdir = Path(str(config.rootpath))
    config.stash[options_key] = RunOptions(
        alpha=config.getoption("--claims-alpha"),
        seed=config.getoption("--claims-seed"),
        budget_scale=config.getoption("--claims-budget-scale"),
        fresh=_run_started(config) if config.getoption("--claims-fresh") else False,
        cv_bound=config.getoption("--claims-cv-bound"),
        progress=progress_report.install(config, config.getoption("--claims-progress")),
    )
    config.stash[session_key] = ClaimSession(config, rootdir)
    from claimcheck.pytest_plugin.hang_record import hang_recorder

    config.stash[options_key] = dataclasses.replace(config.stash[options_key],
                                                    on_hang=hang_recorder(config.stash[session_key]))
    config.pluginmanager.register(RunHooks(config.stash[session_key]), "claimcheck-session")
    from claimcheck.pytest_plugin.collection import CollectionGuard

    config.pluginmanager.register(CollectionGuard(config.stash[session_key]), "claimcheck-collection")
    from claimcheck.pytest_plugin.store_faults import StoreGuard

    config.pluginmanager.register(StoreGuard(config), "claimcheck-store")
    if not _is_worker(config) and not config.getoption("numprocesses", None):
        from claimcheck.pytest_plugin.warm import WarmStart

        config.pluginmanager.register(WarmStart(config.stash[session_key]), "claimcheck-warm-start")
    _check_setup(config, config.stash[session_key])


def _check_setup(config: pytest.Config, session: ClaimSession) -> None:
    """Refuse ``--root``, an unknown ``--claims-profile`` and a malformed model alias table in one line each."""
    if config.getoption("--root") is not None:
        raise pytest.UsageError(f"claimcheck: pytest has no --root option (that is `claimcheck validate --root`); "
                                f"use --rootdir={config.getoption('--root')}")
    from claimcheck.models import aliases

    try:
        aliases.use_project(session.rootdir)  # the claims' model names -> this project's directories or repos
    except ClaimcheckError as error:
        raise pytest.UsageError(f"claimcheck: {error}") from None
    if config.getoption("--claims-shard"):
        from claimcheck.pytest_plugin.shard import parse_shard

        try:
            parse_shard(config.getoption("--claims-shard"))
        except ValueError as error:
            raise pytest.UsageError(f"claimcheck: {error}") from None
    chosen = config.getoption("--claims-profile")
    if chosen:
        known = {"cpu", "cuda", "metal"} | {name for claim in session.all_claims().values() for name in claim.profiles}
        if chosen not in known:
            match = closest(chosen, sorted(known))
            hint = f"did you mean `{match}`? " if match else ""
            raise pytest.UsageError(f"claimcheck: unknown --claims-profile `{chosen}`; {hint}known: {', '.join(sorted(known))}")


STARTED = "claimcheck_started"


def _run_started(config: pytest.Config) -> float:
    """When the run began: the controller's clock, shared with xdist workers through ``workerinput``."""
    if _is_worker(config):
        return float(config.workerinput.get(STARTED, time.time()))  # type: ignore[attr-defined]
    return config.stash.setdefault(started_key, time.time())


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: give each worker the controller's start time, so ``--claims-fresh`` means one run everywhere."""
    node.workerinput[STARTED] = _run_started(node.config)


def _explicit_args(config: pytest.Config) -> set[Path]:
    paths = set()
    for arg in config.args:
        candidate = Path(arg.split("::")[0])
        if not candidate.is_absolute():
            candidate = Path(config.invocation_params.dir) / candidate
        paths.add(candidate.resolve())
    return paths


class ProjectSetupError(ClaimcheckError):
    """The run cannot find the project's claims or probes (a pytest rootdir problem); one line says how to fix it."""


setup_reported_key = pytest.StashKey[bool]()


def _claims_folder(path: Path, dirs: list[str]) -> Path | None:
    """The nearest folder above ``path`` named in ``claims_dirs`` (by absolute path), if any."""
    return next((parent for parent in path.parents if parent.name in dirs), None)


def rootdir_problem(config: pytest.Config, file_path: Path) -> str | None:
    """Why a claim file under a claims folder would not find its project, or None when it would.

    Without a pytest config file pytest picks the rootdir from the command line, so it moves with
    the working directory: from inside ``claims/`` nothing is collected, and from elsewhere the
    project's probes are not found.
    """
    dirs = config.getini("claims_dirs")
    folder = _claims_folder(file_path.resolve(), dirs)
    if folder is None:
        return None
    rootdir = Path(str(config.rootpath)).resolve()
    project = folder.parent
    inside = rootdir == folder or rootdir.is_relative_to(folder)
    if not inside and (config.inipath is not None or rootdir == project):
        return None
    found = f"config file {config.inipath}" if config.inipath is not None else "no pytest config file"
    return (f"claimcheck: pytest's rootdir is {rootdir} ({found}), so the claims in {folder} and the project's probes "
            f"are not found: add a pyproject.toml with [tool.pytest.ini_options] (or a pytest.ini) to {project} and "
            f"run pytest there, or pass --rootdir={project}")


class ProjectSetupProblem(pytest.File):
    """Stands in for the first claim file of a project the run cannot find, to report why once."""

    def collect(self) -> Iterator[pytest.Item]:
        raise ProjectSetupError(str(rootdir_problem(self.config, self.path)))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(excinfo.value)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    config = parent.config
    dirs = config.getini("claims_dirs")
    if rootdir_problem(config, file_path) is not None:
        if config.stash.get(setup_reported_key, False):
            return None
        config.stash[setup_reported_key] = True
        return ProjectSetupProblem.from_parent(parent, path=file_path)
    try:
        relative = file_path.resolve().relative_to(Path(str(config.rootpath)).resolve())
    except ValueError:
        relative = file_path
    in_claims = any(part in dirs for part in relative.parts[:-1])
    if not in_claims and file_path.resolve() not in _explicit_args(config):
        return None
    return ClaimFile.from_parent(parent, path=file_path)


def pytest_report_collectionfinish(config: pytest.Config, start_path: Path, items: list[pytest.Item]) -> list[str]:
    """One line per folder given on the command line whose claim files were not collected, saying how to."""
    dirs = config.getini("claims_dirs")
    collected = {Path(str(item.path)).resolve() for item in items}
    lines = []
    for arg in sorted(_explicit_args(config)):
        if not arg.is_dir() or any(part in dirs for part in arg.parts):
            continue
        skipped = [p for p in sorted(arg.rglob("*.y*ml")) if p.suffix in (".yaml", ".yml") and p.resolve() not in collected
                   and not any(part in dirs for part in p.parts)]
        if skipped:
            lines.append(f"claimcheck: {arg} is outside claims_dirs ({', '.join(dirs)}): its {len(skipped)} YAML "
                         f"file(s) were not collected as claims; add the folder's name to claims_dirs in the pytest "
                         "ini, or pass the files themselves")
    from claimcheck.probing.registry import shadow_notices

    return lines + [f"claimcheck: {notice}" for notice in shadow_notices()]


class RunHooks:
    """Controller hooks bound to one session (pytest passes no config to ``pytest_runtest_logreport``)."""

    def __init__(self, cs: ClaimSession) -> None:
        self.cs = cs

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect each claim item's result and store it as it arrives, so a killed run keeps it."""
        cs = self.cs
        result = result_from_report(report)
        if result is None:
            return
        cs.results[report.nodeid] = result
        cs.reports[report.nodeid] = report
        if _is_worker(cs.config) or cs.config.getoption("--claims-no-store"):
            return
        from claimcheck.pytest_plugin import evidence

        evidence.record_result(cs, result)  # opens the store on the first claim result; a fault is one line

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Adjudicate, store and report once every item has a result (controller only)."""
        if _is_worker(session.config):
            return
        from claimcheck.pytest_plugin import finish as suite

        suite.finish_session(self.cs, session)


def result_from_report(report: pytest.TestReport) -> ItemResult | None:
    """The result carried by a report (it survives xdist serialisation)."""
    if report.when != "call":
        return None
    for name, value in report.user_properties:
        if name == PROPERTY:
            from claimcheck.engine.result import ItemResult

            return ItemResult.from_record(json.loads(str(value)))
    return None


class ClaimFile(pytest.File):
    """A YAML file holding one or more claims."""

    def collect(self) -> Iterator[pytest.Item]:
        from claimcheck.claims.loader import check_dependencies, check_probe, expand_grid, item_id

        session: ClaimSession = self.config.stash[session_key]
        if self.config.stash.get(probe_error_key, None) is not None:
            return  # the probes failed to load: reported once, on the first claim file
        try:
            session.ensure_probes()
        except ClaimcheckError as error:  # a probe source missing or broken, a probe name defined twice
            self.config.stash[probe_error_key] = str(error)
            raise
        claims = session.file_claims(self.path)
        from claimcheck.pytest_plugin.collection import note_claims

        note_claims(self.config, claims)
        known = dict(session.all_claims())
        known.update({claim.id: claim for claim in claims})
        try:
            check_dependencies(known.values())
        except ClaimError as error:
            # With another file broken the graph is partial: premises may only look unknown.
            if error.path == str(self.path) and not session.suite_broken:
                raise
        for claim in claims:
            probe = check_probe(claim)
            if claim.profiles:
                claim = claim.for_profile(session.profile())
            for name, params in expand_grid(claim):
                item = ClaimItem.from_parent(self, name=item_id(claim.id, name),
                                             claim=claim, params=params, probe=probe)
                for tag in claim.tags:
                    marker = tag.replace("-", "_")
                    self.config.addinivalue_line("markers", f"{marker}: claims tagged {tag}")
                    item.add_marker(marker)
                item.add_marker("portable" if claim.scope.kind == "portable" else "as_stated")
                if claim.budget.exclusive:
                    item.add_marker("exclusive")
                yield item
            if claim.control is not None and self.config.getoption("--claims-controls"):
                yield self._control_item(claim, probe)

    def _control_item(self, claim: Claim, probe: Any) -> ClaimItem:
        """The claim's positive control, collected beside it (``-k <claim-id>`` selects both)."""
        control = claim.for_control()
        item = ClaimItem.from_parent(self, name=f"{claim.id}[control]", claim=control,
                                     params=dict(control.probe.params), probe=probe, control_for=claim.id)
        item.add_marker("control")
        if claim.budget.exclusive:
            item.add_marker("exclusive")
        return item

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ClaimError) or str(excinfo.value) == self.config.stash.get(probe_error_key, None):
            return str(excinfo.value)
        if isinstance(excinfo.value, Exception) and type(excinfo.value).__module__.startswith("claimcheck"):
            return f"{self.path}: {excinfo.value}"
        return str(super().repr_failure(excinfo))


class ClaimFailed(Exception):
    """The item's finding fails the run (refuted, errored, changed against the lock, or strict); ``str()`` says why."""


class ClaimItem(pytest.Item):
    """One claim at one grid point."""

    def __init__(self, *, claim: Claim, params: dict[str, Any], probe: Any, control_for: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.claim = claim
        self.params = params
        self.probe = probe
        self.control_for = control_for  # set on a positive control: the claim it must refute
        self.carried: ItemResult | None = None  # set by --claims-changed: an earlier result under the same key
        self._content_key: str | None = None

    def content_key(self) -> str:
        """What this item's result depends on, hashed (empty when it cannot be computed: never carried)."""
        if self._content_key is None:
            from claimcheck.engine.item_key import item_key, model_name
            from claimcheck.models.identity import weights_identity

            try:
                model = model_name(self.probe, self.params)
                self._content_key = item_key(self.claim, self.params, self.probe, self.config.stash[options_key],
                                             weights=weights_identity(model) if model else None)
            except Exception:  # noqa: BLE001 - an item whose key cannot be read is measured, never carried
                self._content_key = ""
        return self._content_key

    def runtest(self) -> None:
        from claimcheck.machine import fingerprint, machine_class

        config = self.config
        options = config.stash[options_key]
        machine = fingerprint()
        session: ClaimSession = config.stash[session_key]
        from claimcheck.engine.runner import run_claim_item, scope_problem

        # An item outside its scope measures nothing, so it never waits for the lock.
        in_scope = scope_problem(self.claim, self.params, machine) is None
        mode = ("exclusive" if self.claim.budget.exclusive else "shared") if in_scope else None
        if self.carried is not None:  # measured by an earlier run under the same content key
            outcome = self.carried
        else:
            klass = machine_class(machine)
            history: list[float] = []
            if in_scope and self.claim.timing:  # timing items widen by their class's between-run spread
                from claimcheck.pytest_plugin.evidence import item_history

                history = item_history(config, session.rootdir, self.name, klass, self.claim.to_record()["probe"])
            with locking.hold(session.lock_path, mode=mode):
                outcome = run_claim_item(self.claim, self.name, self.params, self.probe, options=options,
                                         machine=machine, machine_class=klass, history=history,
                                         stop_alpha=None if self.control_for else session.stop_alpha(self.name, machine))
            outcome = dataclasses.replace(outcome, content_key=self.content_key())
        if self.control_for is not None:
            outcome = dataclasses.replace(outcome, control_for=self.control_for)
        self.stash[outcome_key] = outcome
        for key in ("backend", "device", "cpu", "memory_gib", "os", "python", "mlx", "mlx_lm", "blas"):
            if key in machine:
                self.user_properties.append((f"machine.{key}", str(machine[key])))
        if self.control_for is not None:
            self.user_properties.append(("control", self.control_for))
        if outcome.carried_from:
            self.user_properties.append(("carried_from", outcome.carried_from))
        self.user_properties.append((PROPERTY, json.dumps(outcome.to_record(), default=str)))
        finding = session.provisional_finding(self.nodeid, outcome)
        if finding.treatment.skips:
            # Point the skip at the claim's YAML, not at this line.
            raise pytest.skip.Exception(f"not applicable: {outcome.reason}", _use_item_location=True)
        self.user_properties.extend(finding.properties())
        if finding.fails_run:
            raise ClaimFailed(finding.message(session.expectations_path, config.option.tbstyle))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ClaimFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, max(self.claim.line - 1, 0), f"claim: {self.name}"


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, Any] | None:
    """A claim item's category, letter and word, from its finding (final once the run-level steps ran)."""
    if report.when != "call" or report.skipped:
        return None
    session: ClaimSession | None = config.stash.get(session_key, None)
    if session is None:
        return None
    finding = session.findings.get(report.nodeid) or session.provisional.get(report.nodeid)
    if finding is None:
        result = result_from_report(report)
        if result is None:
            return None
        finding = session.provisional_finding(report.nodeid, result)
    from claimcheck.pytest_plugin.adapter import status

    return status(finding)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    session: ClaimSession | None = config.stash.get(session_key, None)
    if session is None or _is_worker(config) or not session.results:
        return
    from claimcheck.pytest_plugin import finish as suite

    suite.terminal_summary(session, terminalreporter)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Rewrite the JUnit file pytest wrote so it carries the final findings (controller only)."""
    session: ClaimSession | None = config.stash.get(session_key, None)
    xmlpath = getattr(config.option, "xmlpath", None)
    if session is None or _is_worker(config) or not xmlpath or not Path(xmlpath).exists():
        return
    findings = session.current_findings()
    if not findings:
        return
    from claimcheck.pytest_plugin.junit import finalize

    finalize(Path(xmlpath), findings, session.expectations_path)
