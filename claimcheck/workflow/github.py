"""Talking to GitHub Actions from a step: the job summary, environment for later steps, annotations.

Each is a file whose path the runner puts in an environment variable; outside Actions the
summary goes to stdout and the environment change is only printed, so a step runs the same
locally and in the tests.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
ENV_FILE_ENV = "GITHUB_ENV"


def write_summary(markdown: str) -> None:
    """Append a Markdown section to the job summary (stdout outside Actions)."""
    target = os.environ.get(SUMMARY_ENV)
    if not target:
        sys.stdout.write(markdown if markdown.endswith("\n") else markdown + "\n")
        return
    with Path(target).open("a", encoding="utf-8") as handle:
        handle.write(markdown if markdown.endswith("\n") else markdown + "\n")


def set_env_for_later_steps(name: str, value: str) -> None:
    """Set ``name=value`` for the job's later steps (``$GITHUB_ENV``); printed outside Actions."""
    target = os.environ.get(ENV_FILE_ENV)
    if not target:
        print(f"{name}={value} (set it for the later steps; $GITHUB_ENV is not set)")
        return
    with Path(target).open("a", encoding="utf-8") as handle:
        handle.write(f"{name}={value}\n")


def _escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def annotation(level: str, message: str, *, file: str | None = None, line: int | None = None,
               title: str | None = None) -> str:
    """A workflow command line: ``::error file=claims/a.yaml,line=3,title=…::message``."""
    properties = [f"{key}={_escape(str(value), prop=True)}" for key, value in
                  (("file", file), ("line", line), ("title", title)) if value not in (None, "")]
    return f"::{level}{' ' + ','.join(properties) if properties else ''}::{_escape(message)}"


def table_cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")
