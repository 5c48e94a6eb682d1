"""Faults of the evidence store and the report folder, each one line with the path and what to do.

Checked before anything runs, so an unusable store costs no measurement:

* a file at the store's path that is not a claimcheck store (not SQLite, another
  application's database, a newer schema) is never touched; the run's evidence goes to a
  fresh store beside it, named in a warning, and the session ends with exit 4 so that CI
  notices;
* a store, or a folder, that cannot be written ends the session before it starts (exit 4).

A write that fails during the run (disk full, the file removed or made read-only) ends the
session at once as a usage error: every item stored before it is kept, and the line says
where and why. A report folder that fails at the end is one line too; the evidence is in
the store and ``claimcheck report`` rebuilds the reports from it.
"""

from __future__ import annotations

import datetime as _dt
import os
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from claimcheck.errors import ClaimcheckError

faults_key = pytest.StashKey[list[str]]()
raised_key = pytest.StashKey[list[str]]()
plan_key = pytest.StashKey["StorePlan"]()

#: What a fault line ends with, per kind of path.
STORE_HELP = "pass --claims-store PATH (or --claims-no-store)"
REPORTS_HELP = "pass --claims-reports DIR (or --claims-no-store)"


class StoreFault(ClaimcheckError):
    """The store or the report folder cannot be used; ``str()`` is the line shown to the user."""


@dataclass(frozen=True)
class StorePlan:
    """Where this run's evidence goes, and the warning to show when that is not where it was asked to go."""

    path: Path
    warning: str | None = None


def _reason(error: BaseException) -> str:
    """An OS or SQLite error's own words, without its errno prefix or file name."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return " ".join(str(error).split()) or type(error).__name__


def _writable_folder(folder: Path, help_text: str, what: str) -> None:
    """``folder``, or the nearest folder above it that exists, takes a new file (``os.access`` says yes to root).

    Nothing is created: a run that collects no claim leaves no folder behind.
    """
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    try:
        if existing is None or not existing.is_dir():
            raise NotADirectoryError(20, "not a folder")
        with tempfile.NamedTemporaryFile(prefix=".claimcheck-write-check-", dir=existing):
            pass
    except OSError as error:
        raise StoreFault(f"claimcheck: cannot write {what} ({_reason(error)}); make {existing or folder} "
                         f"writable, or {help_text}") from None


def _store_problem(path: Path) -> str | None:
    """Why the file at ``path`` is not a claimcheck store, read without writing; None when it is one.

    Raises:
        StoreFault: it is a store this claimcheck must not write (a newer schema).
    """
    from claimcheck.store import NotAStore, StoreError
    from claimcheck.store._base import connect_readonly
    from claimcheck.store._schema import classify

    try:
        conn = connect_readonly(path)
        try:
            classify(conn, str(path))
        finally:
            conn.close()
    except NotAStore as error:
        return error.detail
    except sqlite3.DatabaseError as error:
        return _reason(error)
    except StoreError as error:
        raise StoreFault(f"claimcheck: {error}; {STORE_HELP}") from None
    return None


def fresh_beside(path: Path, now: _dt.datetime | None = None) -> Path:
    """A new store's name beside ``path``: ``claimcheck.fresh-20261202T1300Z.sqlite`` (a number added if taken)."""
    stamp = (now or _dt.datetime.now(_dt.timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.stem}.fresh-{stamp}{path.suffix or '.sqlite'}")
    count = 1
    while candidate.exists():
        count += 1
        candidate = path.with_name(f"{path.stem}.fresh-{stamp}-{count}{path.suffix or '.sqlite'}")
    return candidate


def plan_store(path: Path) -> StorePlan:
    """Where the run writes its evidence, checked before anything runs.

    Raises:
        StoreFault: the store or its folder cannot be written.
    """
    _writable_folder(path.parent, STORE_HELP, f"the evidence store {path}")
    if not path.exists():
        return StorePlan(path)
    problem = _store_problem(path)
    if problem is not None:
        fresh = fresh_beside(path)
        return StorePlan(fresh, f"claimcheck: the store {path} is not a claimcheck store ({problem}); it was left "
                                f"untouched and this run's evidence goes to {fresh}; move it away or {STORE_HELP}")
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
    except OSError as error:
        raise StoreFault(f"claimcheck: the store {path} cannot be written ({_reason(error)}); make it writable, "
                         f"or {STORE_HELP}") from None
    return StorePlan(path)


def check_reports(folder: Path) -> None:
    """The report folder can be created and written (checked before anything runs)."""
    _writable_folder(folder, REPORTS_HELP, f"the run's reports to {folder}")


def write_fault(path: Path, error: BaseException, stored: int) -> str:
    """The line for a store write that failed during the run."""
    return (f"claimcheck: cannot write to the store {path} ({_reason(error)}); the {stored} result(s) stored "
            f"before it are kept and the run stops here; free the disk or make the store writable, or {STORE_HELP}")


def report_fault(folder: Path, store: Path, error: BaseException) -> str:
    """The line for reports that could not be written at the end of the run."""
    return (f"claimcheck: cannot write the run's reports to {folder} ({_reason(error)}); the evidence is in "
            f"{store}: rebuild them with `claimcheck report --store {store} --out DIR`, or {REPORTS_HELP}")


def note(config: pytest.Config, line: str, *, raised: bool = False) -> None:
    """Remember a fault line: the session ends with exit 4, and the line is shown in the summary.

    Args:
        raised: the line ends the session as a usage error, which pytest prints itself.
    """
    found = config.stash.setdefault(raised_key if raised else faults_key, [])
    if line not in found:
        found.append(line)


def stopped(config: pytest.Config) -> bool:
    """Whether a failed store write ended this session (a later fault would only repeat its line)."""
    return bool(config.stash.get(raised_key, []))


class StoreGuard:
    """The pytest hooks that show the store's fault lines and end a session that had one with exit 4."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.config.stash.get(faults_key, []) and session.exitstatus in (pytest.ExitCode.OK,
                                                                           pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        lines = self.config.stash.get(faults_key, [])
        if lines:
            terminalreporter.section("claimcheck store", sep="-", red=True)
            for line in lines:
                terminalreporter.write_line(line, red=True)

