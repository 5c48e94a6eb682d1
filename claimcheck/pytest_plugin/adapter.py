"""The one place findings reach pytest: the item's outcome, its progress letter, the run's exit status.

pytest prints each item as it finishes, before the run-level steps (family correction, cascade,
controls) can change a verdict. An item is therefore reported with its *provisional* finding (its
own verdict judged against the lock), and :func:`apply` brings pytest's reports in line with the final
findings at the end, from the same policy table. Nothing else edits a pytest report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from claimcheck.outcome import Finding, Flags

#: The ``user_properties`` key that carries a result through xdist.
PROPERTY = "claimcheck"


def flags_of(config: pytest.Config) -> Flags:
    """The run options the verdict policy reads."""
    return Flags(strict=bool(config.getoption("--claims-strict")),
                 cascade_fails=config.getoption("--claims-cascade") == "fail")


def status(finding: Finding) -> tuple[str, str, tuple[str, dict[str, bool]]]:
    """pytest's (category, letter, (word, markup)) for a finding; a carried result says where it was measured."""
    treatment = finding.treatment
    word = treatment.word
    if finding.result.carried_from:  # not measured now: the verbose word says so
        word = f"{word} (carried from {finding.result.carried_from})"
    return treatment.category, treatment.letter, (word, {treatment.markup: True})


def _move(terminal: Any, report: pytest.TestReport, category: str) -> None:
    """File the report under its final category in the terminal's counts (the summary line reads them)."""
    if terminal is None:
        return
    for reports in terminal.stats.values():
        if report in reports:
            reports.remove(report)
    terminal.stats.setdefault(category, []).append(report)


def apply(session: pytest.Session, reports: dict[str, pytest.TestReport], nodeids: Sequence[str],
          findings: Sequence[Finding], lock: Any = None) -> None:
    """Make pytest's reports, counts and exit status say the final findings.

    Args:
        reports: the call report of each claim item by node id.
        nodeids: the node id of each finding, in the same order.
        lock: the lock file's path, named in the failure text of an item the lock fails.
    """
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    for nodeid, finding in zip(nodeids, findings):
        report = reports.get(nodeid)
        if report is None:
            continue
        failing = finding.fails_run
        if failing and not report.failed:
            report.outcome = "failed"
            session.testsfailed += 1
        elif not failing and report.failed:
            report.outcome = "passed"
            report.longrepr = None
            session.testsfailed = max(0, session.testsfailed - 1)
        if failing:
            report.longrepr = finding.message(lock, session.config.option.tbstyle)
        shown = dict(finding.properties())
        report.user_properties = [(k, v) for k, v in report.user_properties if k not in shown] + list(shown.items())
        if not report.skipped:
            _move(terminal, report, finding.treatment.category)
    if session.testsfailed == 0 and session.exitstatus == pytest.ExitCode.TESTS_FAILED:
        session.exitstatus = pytest.ExitCode.OK
    elif session.testsfailed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
