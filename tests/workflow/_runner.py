"""A local runner for a whole workflow job: every step, ``run:`` and ``uses:``, as GitHub Actions runs it.

Unlike :mod:`tests.workflow._pr`, which plays only the steps that run claimcheck's own commands, this
runs every step of a job, install steps included: ``run:`` steps with ``bash -eo pipefail`` in the
repository, with the workflow's and the job's ``env`` (their ``${{ }}`` expressions evaluated),
``$GITHUB_OUTPUT`` per step (a job's ``outputs`` read from it), ``$GITHUB_STEP_SUMMARY`` and each
``if:``. Each job runs in a fresh clone of the repository at its checked-out branch (``origin/main`` is
the base, as after ``actions/checkout`` with ``fetch-depth: 0``), as each job gets a fresh runner. pip runs offline against a folder holding the wheel under test (``PIP_NO_INDEX``,
``PIP_FIND_LINKS``), so a pinned ``pip install "claimcheck==X"`` installs exactly that wheel or fails.
The actions are emulated: ``checkout`` (the repository is already there), ``setup-python`` (the
venv's ``bin`` is first on ``PATH``), ``cache`` (nothing cached), and ``upload-artifact`` /
``download-artifact`` through a folder shared by the jobs of one workflow run. An expression or an
action the runner does not know is an error, so it never guesses.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

KNOWN_ACTIONS = ("actions/checkout@", "actions/setup-python@", "actions/cache@", "actions/upload-artifact@",
                 "actions/download-artifact@")


@dataclass
class Context:
    """What one workflow run shares between its jobs: the event, the artifacts folder and the job outputs."""

    repo: Path
    bin_dir: Path
    wheels: Path
    artifacts: Path
    event: str = "pull_request"
    base_ref: str = "main"
    variables: dict[str, str] = field(default_factory=dict)
    needs: dict[str, dict[str, str]] = field(default_factory=dict)
    workspace: Path = Path()  # the running job's clone


@dataclass
class Ran:
    """One job as run: each step's name, exit status (``None``: skipped) and output; the summary; the outputs."""

    steps: list[tuple[str, int | None, str]] = field(default_factory=list)
    summary: str = ""
    outputs: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(code not in (None, 0) for _, code, _ in self.steps)

    @property
    def output(self) -> str:
        return "\n".join(f"--- {name} (rc={code})\n{text}" for name, code, text in self.steps)


def workflow(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _value(expression: str, ctx: Context, matrix: dict[str, Any], steps: dict[str, dict[str, str]],
           failed: bool) -> Any:
    """One ``${{ }}`` expression of the forms the workflows use."""
    text = expression.strip()
    if "&&" in text:
        return all(_value(term, ctx, matrix, steps, failed) for term in text.split("&&"))
    if "||" in text:
        for term in text.split("||"):
            found = _value(term, ctx, matrix, steps, failed)
            if found:
                return found
        return found
    compared = re.fullmatch(r"(.+?)\s*(==|!=)\s*(.+)", text)
    if compared:
        left, right = (_value(side, ctx, matrix, steps, failed) for side in (compared.group(1), compared.group(3)))
        return (left == right) == (compared.group(2) == "==")
    if text == "!cancelled()":
        return True
    if text in ("success()", ""):
        return not failed
    quoted = re.fullmatch(r"'([^']*)'", text)
    if quoted:
        return quoted.group(1)
    name = re.fullmatch(r"[a-z_]+(\.[A-Za-z0-9_-]+)+", text)
    if name:
        parts = text.split(".")
        if parts[0] == "github" and parts[1] == "event_name":
            return ctx.event
        if parts[0] == "github" and parts[1] == "base_ref":
            return ctx.base_ref if ctx.event == "pull_request" else ""
        if parts[0] == "github" and parts[1] == "ref":
            return "refs/pull/1/merge"
        if parts[0] == "matrix":
            return str(matrix[parts[1]])
        if parts[0] == "vars":
            return ctx.variables.get(parts[1], "")
        if parts[0] == "needs" and parts[2] == "outputs":
            return ctx.needs.get(parts[1], {}).get(parts[3], "")
        if parts[0] == "steps" and parts[2] == "outputs":
            return steps.get(parts[1], {}).get(parts[3], "")
        if parts[0] == "runner":
            return {"os": "Linux", "arch": "X64"}[parts[1]]
    hashed = re.fullmatch(r"hashFiles\('([^']+)'(?:,\s*'[^']+')*\)", text)
    if hashed:
        return "hash" if glob.glob(str(ctx.workspace / hashed.group(1)), recursive=True) else ""
    raise ValueError(f"the local runner does not know the expression {text!r}")


def _expand(text: str, ctx: Context, matrix: dict[str, Any], steps: dict[str, dict[str, str]]) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(_value(m.group(1), ctx, matrix, steps, False)), str(text))


def _condition(expression: Any, ctx: Context, matrix: dict[str, Any], steps: dict[str, dict[str, str]],
               failed: bool) -> bool:
    if expression is None:
        return not failed
    text = re.sub(r"^\$\{\{\s*|\s*\}\}$", "", str(expression).strip())
    uses_status = any(word in text for word in ("cancelled()", "success()", "always()", "failure()"))
    return bool(_value(text, ctx, matrix, steps, failed)) and (uses_status or not failed)


def _read_outputs(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        name, sep, value = line.partition("=")
        if sep:
            found[name] = value
    return found


def _action(step: dict[str, Any], ctx: Context, matrix: dict[str, Any], steps: dict[str, dict[str, str]]) -> str:
    """Emulate one known action; the text it would log."""
    uses, given = step["uses"], {k: _expand(v, ctx, matrix, steps) for k, v in (step.get("with") or {}).items()}
    workspace = ctx.workspace
    if not uses.startswith(KNOWN_ACTIONS):
        raise ValueError(f"the local runner does not know the action {uses!r}")
    if uses.startswith("actions/upload-artifact@"):
        target = ctx.artifacts / given["name"]
        copied = 0
        for pattern in (line.strip() for line in given["path"].splitlines() if line.strip()):
            for found in glob.glob(str(workspace / pattern), recursive=True):
                source = Path(found)
                relative = source.relative_to(workspace)
                if source.is_dir():
                    shutil.copytree(source, target / relative.name, dirs_exist_ok=True)
                else:
                    (target / relative.parent.name if pattern.endswith("/") else target).mkdir(parents=True,
                                                                                                exist_ok=True)
                    shutil.copy2(source, target / source.name)
                copied += 1
        if not copied and given.get("if-no-files-found") == "error":
            raise AssertionError(f"upload-artifact {given['name']}: no files found")
        return f"uploaded {copied} path(s) as {given['name']}"
    if uses.startswith("actions/download-artifact@"):
        destination = workspace / given["path"]
        names = sorted(p.name for p in ctx.artifacts.iterdir() if fnmatch.fnmatch(p.name, given["pattern"]))
        for name in names:
            merge = str(given.get("merge-multiple")).lower() == "true"
            shutil.copytree(ctx.artifacts / name, destination if merge else destination / name, dirs_exist_ok=True)
        return f"downloaded {', '.join(names)}"
    return f"{uses}: emulated"


def run_job(path: Path, name: str, ctx: Context, matrix: dict[str, Any] | None = None) -> Ran:
    """Run job ``name`` of the workflow at ``path`` in ``ctx.repo``, every step, as a fresh runner would."""
    flow = workflow(path)
    job = flow["jobs"][name]
    matrix = matrix or {}
    scratch = ctx.artifacts.parent / f"runner-{name}-{'-'.join(map(str, matrix.values()))}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    summary = scratch / "summary.md"
    ctx.workspace = scratch / "workspace"
    subprocess.run(["git", "clone", "-q", str(ctx.repo), str(ctx.workspace)], check=True, timeout=120)
    steps: dict[str, dict[str, str]] = {}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GITHUB_", "PYTHON", "PIP_"))}
    env.update({"PATH": f"{ctx.bin_dir}{os.pathsep}{env.get('PATH', '')}", "VIRTUAL_ENV": str(ctx.bin_dir.parent),
                "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary), "PYTHONNOUSERSITE": "1",
                "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(ctx.wheels), "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    for source in (flow.get("env") or {}, job.get("env") or {}):
        env.update({k: _expand(v, ctx, matrix, steps) for k, v in source.items()})
    ran = Ran()
    for number, step in enumerate(job["steps"]):
        label = str(step.get("name") or step.get("uses") or step.get("run"))
        if not _condition(step.get("if"), ctx, matrix, steps, ran.failed):
            ran.steps.append((label, None, ""))
            continue
        if "uses" in step:
            ran.steps.append((label, 0, _action(step, ctx, matrix, steps)))
            continue
        output = scratch / f"output-{number}"
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=ctx.workspace,
                              env={**env, "GITHUB_OUTPUT": str(output)}, capture_output=True, text=True, timeout=900)
        ran.steps.append((label, done.returncode, done.stdout + done.stderr))
        if step.get("id"):
            steps[step["id"]] = _read_outputs(output)
    ran.outputs = {k: _expand(v, ctx, matrix, steps) for k, v in (job.get("outputs") or {}).items()}
    ctx.needs[name] = ran.outputs
    ran.summary = summary.read_text(encoding="utf-8") if summary.exists() else ""
    return ran


def run_workflow(path: Path, ctx: Context) -> dict[str, Ran]:
    """Every job, in the order of their ``needs``, each matrix entry in turn; a job whose ``if:`` fails is left out."""
    flow = workflow(path)
    done: dict[str, Ran] = {}
    settled: set[str] = set()  # run or skipped
    pending = list(flow["jobs"])
    while pending:
        name = next(n for n in pending if all(need in settled for need in _needs(flow["jobs"][n])))
        pending.remove(name)
        settled.add(name)
        job = flow["jobs"][name]
        failed_needs = any(done[need].failed for need in _needs(job) if need in done)
        if not _condition(job.get("if"), ctx, {}, {}, failed_needs):
            continue
        entries = _matrix(job)
        runs = [run_job(path, name, ctx, entry) for entry in entries]
        merged = Ran(steps=[s for r in runs for s in r.steps], summary="".join(r.summary for r in runs),
                     outputs=runs[-1].outputs)
        done[name] = merged
    return done


def _needs(job: dict[str, Any]) -> list[str]:
    needs = job.get("needs") or []
    return [needs] if isinstance(needs, str) else list(needs)


def _matrix(job: dict[str, Any]) -> list[dict[str, Any]]:
    axes = ((job.get("strategy") or {}).get("matrix") or {})
    if not axes:
        return [{}]
    ((axis, values),) = axes.items()
    return [{axis: value} for value in values]
