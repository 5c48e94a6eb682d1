"""Report files are written readable by others (0644 under umask 022, not mkstemp's 0600), and the headline
counts claim items only: positive controls, which must refute, are said apart."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from claimcheck.report.corrections import write_text


def test_report_files_take_the_umask_not_0600(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        write_text(tmp_path / "index.md", "# report\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "index.md").stat().st_mode) == 0o644


def test_the_headline_counts_claims_and_says_controls_apart() -> None:
    from types import SimpleNamespace

    from claimcheck.report.model import RunReport
    from claimcheck.verdict import Verdict

    def item(verdict: Verdict, control_for: str | None) -> SimpleNamespace:
        return SimpleNamespace(verdict=verdict, result=SimpleNamespace(control_for=control_for))

    items = [item(Verdict.REFUTED, None), item(Verdict.HOLDS, None)] + [item(Verdict.REFUTED, "c")] * 5
    report = SimpleNamespace(items=items)
    counts = RunReport.counts.fget(report)  # type: ignore[attr-defined]
    report.controls = RunReport.controls.fget(report)  # type: ignore[attr-defined]
    assert counts["refuted"] == 1 and counts["holds"] == 1
    assert RunReport.control_counts.fget(report)["refuted"] == 5  # type: ignore[attr-defined]
