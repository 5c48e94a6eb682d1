"""A pull request played through the workflow's own steps, on a small docs repository built in a temp dir.

The steps are read from ``.github/workflows/claims.yml`` (the hosted Apple Silicon job) and run
as GitHub Actions would: in order, with ``bash -eo pipefail``, the job's ``env``, a step summary
file and ``$GITHUB_ENV`` carried to the later steps, each step's ``if:`` honoured, and the job
failing when any step fails. Only the steps that install software or use actions are left out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "claims.yml"
BIN = str(Path(sys.executable).parent)
#: The commands the played steps start with: the package's scripts, pytest and the report.
PLAYED = ("python -m claimcheck.workflow.", "python3 -m claimcheck.workflow.", "python -m claimcheck.gate ",
          "pytest claims/", "claimcheck report")


@dataclass(frozen=True)
class Step:
    """A workflow step as the player runs it."""

    name: str
    run: str
    condition: str | None


@dataclass
class StepResult:
    """One played step."""

    step: Step
    returncode: int | None  # None: skipped by its `if:`
    output: str = ""


@dataclass
class Job:
    """A played job: every step's result, the summary it wrote, and whether it failed."""

    steps: list[StepResult] = field(default_factory=list)
    summary: str = ""

    @property
    def exit_status(self) -> int:
        """1 when a step failed, as the job's check on the pull request."""
        return 1 if any(s.returncode not in (None, 0) for s in self.steps) else 0

    @property
    def output(self) -> str:
        return "\n".join(f"--- {s.step.name} (rc={s.returncode})\n{s.output}" for s in self.steps)

    def step(self, prefix: str) -> StepResult:
        """The played step whose command starts with ``prefix``."""
        return next(s for s in self.steps if s.step.run.startswith(prefix) and s.returncode is not None)


def workflow_job(name: str = "apple-silicon") -> dict[str, Any]:
    """A job of the workflow as YAML data."""
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"][name]


def played_steps(job: dict[str, Any]) -> list[Step]:
    """The job's steps that run the package's scripts, pytest or the report (install steps are left out)."""
    return [Step(str(s.get("name", s["run"])), str(s["run"]).strip(), s.get("if")) for s in job["steps"]
            if "run" in s and str(s["run"]).strip().startswith(PLAYED)]


def _condition(expression: str | None, event: str, failed: bool) -> bool:
    """The forms of ``if:`` the workflow uses; anything else is an error, so the player never guesses."""
    if expression is None:
        return not failed  # success()
    text = re.sub(r"^\$\{\{\s*|\s*\}\}$", "", expression.strip())
    result = True
    for term in (t.strip() for t in text.split("&&")):
        if term == "!cancelled()":
            continue
        match = re.fullmatch(r"github\.event_name\s*(==|!=)\s*'([a-z_]+)'", term)
        if not match:
            raise ValueError(f"the player does not know the condition {term!r}")
        result &= (event == match.group(2)) == (match.group(1) == "==")
    return result


def _env_file(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        name, sep, value = line.partition("=")
        if sep:
            out[name] = value
    return out


def clean_env() -> dict[str, str]:
    """This process's environment without the outer pytest's and CI's variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GITHUB_", "CLAIMCHECK_DEVICE"))}
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    return env


def play(repo: Path, *, event: str = "pull_request", base_ref: str = "main", job_name: str = "apple-silicon",
         skip: tuple[str, ...] = ("claimcheck report",), env_extra: dict[str, str] | None = None) -> Job:
    """Run the job's steps in ``repo`` as a fresh runner would (no evidence store from an earlier run).

    ``skip``: commands left out (by default the HTML report, which only feeds the artifact).
    """
    job = workflow_job(job_name)
    for leftover in (repo / "reports").glob("claimcheck.sqlite*"):
        leftover.unlink()
    shutil.rmtree(repo / ".claimcheck", ignore_errors=True)
    scratch = repo.parent / f"{repo.name}-runner"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    summary, env_file = scratch / "summary.md", scratch / "env"
    env = clean_env()
    env.update({"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ENV": str(env_file), "GITHUB_ACTIONS": "true",
                "BASE_REF": base_ref if event == "pull_request" else "", "EVENT": event, **(env_extra or {})})
    played = Job()
    for step in played_steps(job):
        if step.run.startswith(skip):
            continue
        if not _condition(step.condition, event, played.exit_status != 0):
            played.steps.append(StepResult(step, None))
            continue
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step.run], cwd=repo,
                              env={**env, **_env_file(env_file)}, capture_output=True, text=True, timeout=600)
        played.steps.append(StepResult(step, done.returncode, done.stdout + done.stderr))
    played.summary = summary.read_text(encoding="utf-8") if summary.exists() else ""
    return played


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` (an author set, no global configuration needed)."""
    done = subprocess.run(["git", "-c", "user.name=Docs", "-c", "user.email=docs@example.org", "-C", str(repo), *args],
                          capture_output=True, text=True, check=True)
    return done.stdout


def claimcheck(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The ``claimcheck`` command, as a maintainer runs it in the repository."""
    return subprocess.run([str(Path(BIN) / "claimcheck"), *args], cwd=repo, env=clean_env(), capture_output=True,
                          text=True, timeout=900)
