"""The gate's findings as GitHub Actions sees them: ``::error file=…,line=…::`` commands and a summary table.

A workflow step's output lines of this form become annotations on the pull request's diff,
at the doc line that disagrees; the table goes to ``$GITHUB_STEP_SUMMARY``, the job's page.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ._model import Problem

FORMATS = ("github",)
#: GitHub shows at most 10 error annotations of a step on the diff; the rest are in the job summary.
CAP = 10
SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
TITLE = "claimcheck docs"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(problem: Problem) -> str:
    """``::error file=docs/a.md,line=3,col=7,title=claimcheck docs::message`` (``::warning`` for warnings)."""
    command = "error" if problem.severity == "error" else "warning"
    properties = ",".join(f"{key}={_escape_property(str(value))}" for key, value in (
        ("file", problem.path), ("line", problem.line), ("col", problem.column), ("title", TITLE)))
    return f"::{command} {properties}::{_escape_data(problem.message)}"


def summary_markdown(problems: Sequence[Problem], headline: str) -> str:
    """A Markdown section for the job summary: the headline, then one table row per finding."""
    lines = ["### Docs gate", "", headline, ""]
    if problems:
        lines += ["| | where | finding |", "|---|---|---|"]
        for problem in problems:
            mark = "❌" if problem.severity == "error" else "⚠️"
            message = problem.message.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")
            lines.append(f"| {mark} | `{problem.path}:{problem.line}` | {message} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def emit(problems: Sequence[Problem], headline: str, fmt: str) -> list[str]:
    """The annotation lines for ``fmt``; the summary is appended to ``$GITHUB_STEP_SUMMARY`` when it is set."""
    if fmt not in FORMATS:
        raise ValueError(f"--annotations {fmt!r}: expected one of {', '.join(FORMATS)}")
    summary = os.environ.get(SUMMARY_ENV)
    if summary:
        with Path(summary).open("a", encoding="utf-8") as handle:
            handle.write(summary_markdown(problems, headline))
    ranked = sorted(problems, key=lambda p: (p.severity != "error", p.path, p.line, p.column))
    lines = [github_annotation(problem) for problem in ranked[:CAP]]
    if len(ranked) > CAP:
        lines.append(f"::notice title={TITLE}::{len(ranked) - CAP} more in the job summary")
    return lines
