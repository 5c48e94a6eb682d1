"""GitHub annotations: errors first, at most 10 (what GitHub shows for a step), the rest counted in a notice."""

from __future__ import annotations

from pathlib import Path

import pytest

from claimcheck.gate import Problem
from claimcheck.gate._annotations import emit


def test_annotations_are_capped_at_ten_errors_first_and_the_summary_keeps_them_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    problems = [Problem("docs/a.md", line, 1, f"w{line}", severity="warning") for line in range(1, 4)]
    problems += [Problem("docs/a.md", line, 1, f"`<!-- claim: ID -->` e{line}") for line in range(20, 8, -1)]
    lines = emit(problems, "headline", "github")
    assert len(lines) == 11 and all(line.startswith("::error ") for line in lines[:10])
    assert [int(line.split("line=")[1].split(",")[0]) for line in lines[:10]] == list(range(9, 19))
    assert lines[10] == "::notice title=claimcheck docs::5 more in the job summary"
    table = summary.read_text(encoding="utf-8")
    assert table.count("\n| ") == 16 and "&lt;!-- claim: ID -->" in table, "every finding, the syntax shown"
