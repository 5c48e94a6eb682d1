"""The docs gate's GitHub output: annotation lines GitHub can parse, and the job summary table."""

from __future__ import annotations

from claimcheck.gate._annotations import emit, github_annotation
from claimcheck.gate._model import Problem


def test_an_error_is_an_annotation_at_its_file_line_and_column() -> None:
    problem = Problem("docs/a, b.md", 12, 7, "\"0.794 GB\" disagrees: measured 0.694 [0.69, 0.70]\nsecond line: 100%")
    assert github_annotation(problem) == (
        "::error file=docs/a%2C b.md,line=12,col=7,title=claimcheck docs::"
        "\"0.794 GB\" disagrees: measured 0.694 [0.69, 0.70]%0Asecond line: 100%25")


def test_a_warning_stays_a_warning() -> None:
    line = github_annotation(Problem("d.md", 3, 1, "claim `x` is inconclusive", severity="warning"))
    assert line.startswith("::warning file=d.md,line=3,col=1,")


def test_the_summary_table_is_appended_when_the_runner_asks_for_one(tmp_path, monkeypatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    problems = [Problem("d.md", 3, 1, "a | b"), Problem("d.md", 9, 2, "w", severity="warning")]
    lines = emit(problems, "2 claim anchor(s): 1 error(s), 1 warning(s)", "github")
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "::warning"]
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### Docs gate")
    assert "| ❌ | `d.md:3` | a \\| b |" in text and "| ⚠️ | `d.md:9` | w |" in text
