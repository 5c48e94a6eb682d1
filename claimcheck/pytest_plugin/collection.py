"""Problems found while collecting claims stop the session before anything runs.

A malformed claim file, an unknown probe or op, a probe source that fails to import, or one
claim id defined twice makes the run's evidence ambiguous (two items would share an id in the
store, premises would resolve to either). So every such problem is gathered while pytest
collects, each as its one line at ``file:line``, and the session then ends as a usage error
(exit 4) before any item runs; no run is stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from claimcheck.claim import Claim
from claimcheck.errors import ClaimError
from claimcheck.claims.premises import duplicate_problems

if TYPE_CHECKING:  # pragma: no cover
    from claimcheck.pytest_plugin.session import ClaimSession

CLAIM_SUFFIXES = (".yaml", ".yml")

problems_key = pytest.StashKey[list[str]]()
collected_key = pytest.StashKey[list[Claim]]()


def note_claims(config: pytest.Config, claims: Iterable[Claim]) -> None:
    """Remember the claims of one collected file, so ids repeated across files are found."""
    config.stash.setdefault(collected_key, []).extend(claims)


def note_report(config: pytest.Config, report: pytest.CollectReport) -> None:
    """Remember a claim file whose collection failed, as its own one-line message."""
    if not report.failed or not report.nodeid.split("::")[0].endswith(CLAIM_SUFFIXES):
        return
    text = report.longreprtext.strip()
    line = text.splitlines()[-1] if text else f"{report.nodeid}: collection failed"
    found = config.stash.setdefault(problems_key, [])
    if line not in found:
        found.append(line)


def duplicate_lines(collected: Sequence[Claim], suite: Iterable[Claim] = ()) -> list[str]:
    """One line per repeated claim id: where it is repeated and where it was first defined.

    Args:
        collected: the claims this run collected, in collection order.
        suite: the other claims of the project's claims folders (a repeat of one of them counts too).
    """
    seen = {(claim.path, claim.line) for claim in collected}
    others = [claim for claim in suite if (claim.path, claim.line) not in seen]
    return [str(problem) for problem in duplicate_problems([*collected, *others])]


def suite_claims(folders: Iterable[Path]) -> list[Claim]:
    """Every claim of the claims folders that parses (a file that does not reports itself)."""
    from claimcheck.claims.loader import iter_claim_files, read_claim_file

    claims: list[Claim] = []
    for path in iter_claim_files(list(folders)):
        try:
            claims.extend(c for c in read_claim_file(path) if isinstance(c, Claim))
        except ClaimError:
            continue
    return claims


def stop_if_any(config: pytest.Config, folders: Iterable[Path], suite_broken: bool) -> None:
    """End the session as a usage error when collection found a problem; each problem one line.

    Args:
        folders: the project's claims folders, searched for repeats only when ``suite_broken``
            (the suite-wide parse failed, so a repeat may lie in a file this run did not select).
        suite_broken: the suite-wide parse of the claims folders failed.
    """
    noted: list[str] = config.stash.get(problems_key, [])
    problems = list(noted)
    collected: list[Claim] = config.stash.get(collected_key, [])
    suite = suite_claims(folders) if suite_broken else []
    problems.extend(line for line in duplicate_lines(collected, suite) if line not in problems)
    if problems:
        count = f"{len(problems)} problem(s)" if len(problems) > 1 else "1 problem"
        raise pytest.UsageError("\n".join([*problems, f"claimcheck: {count} in the claim files; nothing was run"]))


class CollectionGuard:
    """The pytest hooks that gather collection problems and stop the session on them."""

    def __init__(self, cs: ClaimSession) -> None:
        self.cs = cs

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        note_report(self.cs.config, report)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Under xdist the controller collects nothing: it checks the claims folders for repeated ids itself."""
        config = session.config
        if _xdist_controller(config):
            lines = duplicate_lines([], suite_claims([*self.cs.claims_dirs(), *_claim_args(config)]))
            if lines:
                raise pytest.UsageError("\n".join([*lines, f"claimcheck: {len(lines)} repeated claim id(s); "
                                                               "nothing was run"]))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Under xdist a worker's collection error reaches the controller, which ends the run: a usage error."""
        if _xdist_controller(session.config) and session.config.stash.get(problems_key, []) and \
                session.exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        """``--claims-changed`` / ``--since-run`` mark the items carried forward; ``--claims-shard`` keeps this shard's."""
        from claimcheck.pytest_plugin import selection

        if selection.wanted(config) and not config.stash.get(problems_key, []):
            selection.select(self.cs, config, items)

    def pytest_report_collectionfinish(self, config: pytest.Config, items: list[pytest.Item]) -> list[str]:
        from claimcheck.pytest_plugin import selection

        done = config.stash.get(selection.selection_key, None)
        line = selection.summary_line(items, done) if done else None
        return [line] if line else []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Stop on a collection problem; else, when claims will run here, check the store before the first."""
        config = session.config
        if hasattr(config, "workerinput"):
            return  # an xdist worker: the controller has checked, and sees this worker's collection errors
        stop_if_any(config, self.cs.claims_dirs(), self.cs.suite_broken)
        claims = any(item.nodeid.split("::")[0].endswith(CLAIM_SUFFIXES) for item in session.items)
        if claims and not config.option.collectonly:
            from claimcheck.pytest_plugin import evidence

            evidence.prepare_store(config, self.cs.rootdir)


def _xdist_controller(config: pytest.Config) -> bool:
    """Whether this process hands the items to xdist workers (and collects none itself)."""
    return config.pluginmanager.has_plugin("dsession") and not hasattr(config, "workerinput")


def _claim_args(config: pytest.Config) -> list[Path]:
    """Claim files named on the command line (outside the claims folders they are collected too)."""
    root = Path(config.invocation_params.dir)
    paths = [root / arg.split("::")[0] for arg in config.args]
    return [path for path in paths if path.suffix in CLAIM_SUFFIXES and path.is_file()]
